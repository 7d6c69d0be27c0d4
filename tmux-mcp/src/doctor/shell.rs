//! The check of the shell (`$SHELL`) and whether tmux-mcp's shell hooks suit it.

use std::path::PathBuf;

use tmux_control::Version;
use tmux_control::shell::ShellKind;

use super::command::version_output;
use super::report::{Check, Status};

pub(super) fn shell_check(shell: Option<PathBuf>, enabled: bool) -> Check {
    let Some(shell) = shell.filter(|s| !s.as_os_str().is_empty()) else {
        return Check::new(
            "shell_integration",
            Status::Warn,
            "SHELL is not set: new terminals run tmux's default shell, without hooks; run types its wrapped form",
        )
        .hint("Set SHELL to bash, zsh or fish for exact exit statuses and command boundaries")
        .fact("enabled", enabled);
    };
    let shown = shell.display().to_string();
    let kind = ShellKind::of(&shown);
    let base = Check::new("shell_integration", Status::Ok, "")
        .fact("shell", shown.clone())
        .fact("kind", kind.map(ShellKind::name))
        .fact("enabled", enabled);
    if !enabled {
        return Check {
            status: Status::Skipped,
            message: format!(
                "--no-shell-integration is set: {shown} runs without hooks; run types its wrapped form"
            ),
            ..base
        };
    }
    match kind {
        Some(kind) if shell.is_file() => {
            // The hooks need bash 4.4 (PS0) and fish 3; any zsh with
            // precmd and preexec (every zsh in use) has what they need.
            let (major, minor) = match kind {
                ShellKind::Bash => (4, 4),
                ShellKind::Fish => (3, 0),
                _ => (0, 0),
            };
            match version_output(&shell, "--version") {
                Ok(text) => {
                    let first = text.lines().next().unwrap_or("").trim().to_owned();
                    let version = Version::parse(&first);
                    let base = base.fact("shell_version", first.clone());
                    if version.major() != u32::MAX && !version.at_least(major, minor) {
                        Check {
                            status: Status::Warn,
                            message: format!(
                                "{shown} is {first}; the {} hooks need {major}.{minor} or later, so run types its wrapped form",
                                kind.name()
                            ),
                            ..base
                        }
                        .hint(format!("Install {} {major}.{minor} or later", kind.name()))
                    } else {
                        Check {
                            message: format!(
                                "{shown} ({first}) gets tmux-mcp's shell hooks",
                            ),
                            ..base
                        }
                    }
                }
                Err(why) => Check {
                    status: Status::Warn,
                    message: format!("{shown} ({}): cannot read its version: {why}", kind.name()),
                    ..base
                }
                .hint("Check that SHELL names a working shell"),
            }
        }
        Some(_) => Check {
            status: Status::Warn,
            message: format!("SHELL is {shown}, which does not exist"),
            ..base
        }
        .hint("Set SHELL to the path of an installed bash, zsh or fish"),
        None => Check {
            status: Status::Warn,
            message: format!(
                "{shown} has no hooks (bash, zsh and fish have): run types its wrapped form and idle detection is by silence"
            ),
            ..base
        }
        .hint("Use bash, zsh or fish as SHELL for exact exit statuses and command boundaries"),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn shells() {
        let c = shell_check(Some("/bin/sh".into()), true);
        assert_eq!(c.status, Status::Warn);
        let c = shell_check(None, true);
        assert_eq!(c.status, Status::Warn);
        let c = shell_check(Some("/bin/bash".into()), false);
        assert_eq!(c.status, Status::Skipped);
    }
}
