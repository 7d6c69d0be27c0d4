//! The checks of the state directory and of the token file of `serve --http`.

use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
use std::path::Path;

use super::mode_text;
use super::report::{Check, Status};
use crate::terminal::guard;

pub(super) fn state_dir_check(dir: &Path) -> Check {
    let shown = dir.display().to_string();
    let meta = match std::fs::symlink_metadata(dir) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Check::new(
                "state_dir",
                Status::Ok,
                format!(
                    "{shown} does not exist yet; tmux-mcp creates it with mode 0700 on first use"
                ),
            )
            .fact("path", shown)
            .fact("exists", false);
        }
        Err(e) => {
            return Check::new(
                "state_dir",
                Status::Fail,
                format!("cannot read {shown}: {e}"),
            )
            .hint("Set --state-dir (TMUX_MCP_STATE_DIR) to a directory only you can write")
            .fact("path", shown);
        }
    };
    let mode = meta.permissions().mode();
    let base = Check::new("state_dir", Status::Ok, "")
        .fact("path", shown.clone())
        .fact("exists", true)
        .fact("mode", mode_text(mode));
    if !meta.is_dir() {
        return Check {
            status: Status::Fail,
            message: format!("{shown} is not a directory (or is a symbolic link)"),
            ..base
        }
        .hint("Set --state-dir (TMUX_MCP_STATE_DIR) to a directory only you can write");
    }
    if meta.uid() != guard::current_uid() {
        return Check {
            status: Status::Fail,
            message: format!("{shown} belongs to another user ({})", meta.uid()),
            ..base
        }
        .hint("Set --state-dir (TMUX_MCP_STATE_DIR) to a directory of your own");
    }
    if mode & 0o077 != 0 {
        return Check {
            status: Status::Warn,
            message: format!(
                "{shown} has mode {}; tmux-mcp narrows it to 0700 when it next starts a server",
                mode_text(mode)
            ),
            ..base
        }
        .hint(format!("chmod 700 {shown}"));
    }
    Check {
        message: format!("{shown} (mode {})", mode_text(mode)),
        ..base
    }
}

/// The token file of `serve --http`: `--token-file` (or
/// `TMUX_MCP_TOKEN_FILE`), else `http-token` in the state directory, as
/// `serve --http` uses. It is judged by the function `serve --http` uses,
/// [`crate::transport::http::read_token_file`], so the doctor passes exactly the files
/// the server accepts (the token itself is read, never shown).
pub(super) fn token_check(path: Option<&Path>) -> Check {
    use crate::transport::http::TokenFileProblem;
    let Some(path) = path else {
        return Check::new(
            "token_file",
            Status::Skipped,
            "no --token-file given (TMUX_MCP_TOKEN_FILE is not set)",
        );
    };
    let shown = path.display().to_string();
    let base = Check::new("token_file", Status::Ok, "").fact("path", shown.clone());
    match crate::transport::http::read_token_file(path) {
        Ok(None) => Check {
            message: format!("{shown} does not exist yet; serve --http creates it with mode 0600"),
            ..base
        }
        .fact("exists", false),
        Ok(Some(file)) => Check {
            message: format!("{shown} (mode {})", mode_text(file.mode)),
            ..base
        }
        .fact("exists", true)
        .fact("mode", mode_text(file.mode)),
        Err(refusal) => {
            let hint = match refusal.problem {
                TokenFileProblem::NotRegular => {
                    "Point --token-file at a regular file (not a symbolic link, FIFO or directory)"
                        .to_owned()
                }
                TokenFileProblem::OtherOwner => "Use a token file of your own".to_owned(),
                TokenFileProblem::NotPrivate => {
                    format!("chmod 600 {shown}, and replace the token if others may have read it")
                }
                TokenFileProblem::Contents => format!(
                    "Put one token of at least 16 printable characters (at most {} bytes) in {shown}, \
                     or delete it to have serve --http make a new one",
                    crate::transport::http::MAX_TOKEN_FILE_BYTES
                ),
                TokenFileProblem::Unreadable => "Check the file and its directory".to_owned(),
            };
            let check = Check {
                status: Status::Fail,
                message: format!("{shown}: {}", refusal.reason),
                ..base
            }
            .fact("exists", true)
            .hint(hint);
            match refusal.mode {
                Some(mode) => check.fact("mode", mode_text(mode)),
                None => check,
            }
        }
    }
}
