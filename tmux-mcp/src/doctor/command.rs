//! Finding a program and running it (`tmux -V`, `$SHELL --version`) within a deadline.

use std::io::Read as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long `tmux -V` or `$SHELL --version` may take. A true timer: a
/// deadline, so that a program that never exits cannot hang the doctor.
const VERSION_DEADLINE: Duration = Duration::from_secs(5);

/// Where `program` is: itself when it names a path, else the first
/// executable of that name on `PATH`.
pub(super) fn find_program(program: &str) -> Option<PathBuf> {
    let executable = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.contains('/') {
        let path = PathBuf::from(program);
        return executable(&path).then_some(path);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .filter(|dir| !dir.as_os_str().is_empty())
        .map(|dir| dir.join(program))
        .find(|candidate| executable(candidate))
}

/// What `program FLAG` (`tmux -V`, `bash --version`) printed, within
/// [`VERSION_DEADLINE`].
pub(super) fn version_output(program: &Path, flag: &str) -> Result<String, String> {
    command_output(program, &[flag.to_owned()], flag)
}

/// The most characters of a failed command's standard error quoted in a
/// check.
const STDERR_QUOTED: usize = 400;

/// What `program ARGS` printed, within [`VERSION_DEADLINE`]; `what` names
/// it in errors, which quote the last line of its standard error (`Error:
/// No such container: web`, ssh's `Permission denied (publickey)`).
pub(super) fn command_output(
    program: &Path,
    args: &[String],
    what: &str,
) -> Result<String, String> {
    // `tmux -V` prints the version and exits; it contacts no server.
    let mut child = std::process::Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run it: {e}"))?;
    let (Some(mut stdout), Some(mut stderr)) = (child.stdout.take(), child.stderr.take()) else {
        let _ = child.kill();
        let _ = child.wait();
        return Err("cannot read its output".into());
    };
    // Read on a thread of its own, so that a full stderr pipe never
    // blocks the program; it ends when the program (or its kill) closes it.
    let errors = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = stderr.read_to_end(&mut bytes);
        let text = String::from_utf8_lossy(&bytes);
        let last = text.lines().map(str::trim).rfind(|l| !l.is_empty());
        let last = last.unwrap_or_default();
        match last.char_indices().nth(STDERR_QUOTED) {
            Some((at, _)) => format!("{}…", &last[..at]),
            None => last.to_owned(),
        }
    });
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut text = String::new();
        let read = stdout.read_to_string(&mut text).map(|_| text);
        let _ = tx.send(read);
    });
    // A true timer: the deadline for `-V` (see VERSION_DEADLINE).
    let outcome = rx.recv_timeout(VERSION_DEADLINE);
    let result = match outcome {
        Ok(Ok(text)) => Ok(text),
        Ok(Err(e)) => Err(format!("cannot read its output: {e}")),
        Err(_) => {
            let _ = child.kill();
            Err(format!(
                "`{what}` did not finish within {} s",
                VERSION_DEADLINE.as_secs()
            ))
        }
    };
    let status = child.wait();
    let said = errors.join().unwrap_or_default();
    let text = result?;
    match status {
        Ok(s) if s.success() => Ok(text),
        Ok(s) if said.is_empty() => Err(format!("`{what}` failed ({s})")),
        Ok(s) => Err(format!("`{what}` failed ({s}): {said}")),
        Err(e) => Err(format!("cannot wait for it: {e}")),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_command_is_quoted() {
        let sh = find_program("sh").unwrap();
        let args = [
            "-c".to_owned(),
            "echo out; echo 'W1 warning' >&2; echo 'Error: No such container: x' >&2; echo >&2; exit 1".to_owned(),
        ];
        let e = command_output(&sh, &args, "docker").unwrap_err();
        assert!(
            e.ends_with("`docker` failed (exit status: 1): Error: No such container: x"),
            "{e}"
        );
        let args = ["-c".to_owned(), "echo fine".to_owned()];
        assert_eq!(command_output(&sh, &args, "sh").unwrap(), "fine\n");
    }
}
