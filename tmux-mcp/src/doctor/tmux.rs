//! The checks of tmux and its socket: the tmux binary, the socket directory and the isolated server.

use std::os::unix::fs::{FileTypeExt as _, MetadataExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use tmux_control::Version;

use super::command::{find_program, version_output};
use super::mode_text;
use super::report::{Check, Status};
use crate::config::SocketChoice;
use crate::terminal::guard;

/// What tmux-mcp and the library do differently by tmux version; the
/// thresholds are the ones `tmux-control/src/version.rs` uses (see
/// docs/compatibility.md).
fn features(v: &Version) -> Map<String, Value> {
    let mut m = Map::new();
    let mut put = |k: &str, on: bool| {
        m.insert(k.to_owned(), Value::Bool(on));
    };
    put("control_mode", true);
    put("show_buffer_raw", v.at_least(3, 4));
    put("capture_trim_flag", v.at_least(3, 4));
    put("replies_vis_escaped", v.at_least(3, 4) && !v.at_least(3, 6));
    put("capture_keeps_tabs", v.at_least(3, 6));
    put("clean_names", v.at_least(3, 7));
    put("paste_raw_flag", v.at_least(3, 7));
    m
}

pub(super) fn tmux_check(program: &str) -> Check {
    let Some(path) = find_program(program) else {
        let where_ = if program.contains('/') {
            format!("{program} is not an executable file")
        } else {
            format!("{program:?} is not on PATH")
        };
        return Check::new("tmux", Status::Fail, format!("tmux not found: {where_}"))
            .hint(format!(
                "Install tmux {} or newer (Debian/Ubuntu: apt-get install tmux), or pass --tmux PATH (TMUX_MCP_TMUX)",
                Version::OLDEST_SUPPORTED
            ))
            .fact("program", program);
    };
    let shown = path.display().to_string();
    let output = match version_output(&path, "-V") {
        Ok(text) => text,
        Err(why) => {
            return Check::new("tmux", Status::Fail, format!("{shown}: {why}"))
                .hint("Point --tmux at a working tmux binary")
                .fact("path", shown);
        }
    };
    let text = output.trim();
    if !text.starts_with("tmux ") {
        return Check::new(
            "tmux",
            Status::Fail,
            format!("{shown} does not look like tmux (`-V` printed {text:?})"),
        )
        .hint("Point --tmux at the tmux binary")
        .fact("path", shown);
    }
    let version = Version::parse(text);
    let facts = features(&version);
    let check = if version < Version::OLDEST_SUPPORTED {
        Check::new(
            "tmux",
            Status::Fail,
            format!(
                "tmux {version} at {shown} is older than {}, the oldest version tmux-mcp supports",
                Version::OLDEST_SUPPORTED
            ),
        )
        .hint(format!(
            "Install tmux {} or newer",
            Version::OLDEST_SUPPORTED
        ))
    } else {
        Check::new("tmux", Status::Ok, format!("tmux {version} at {shown}"))
    };
    check
        .fact("path", shown)
        .fact("version", version.to_string())
        .fact("supported", version >= Version::OLDEST_SUPPORTED)
        .fact("features", Value::Object(facts))
}

/// The socket file the choice resolves to; `None` for the default server.
fn socket_file(socket: &SocketChoice) -> Option<PathBuf> {
    match socket {
        SocketChoice::Named(name) => Some(guard::socket_for_name(name)),
        SocketChoice::Path(path) => Some(path.clone()),
        SocketChoice::Default => None,
    }
}

pub(super) fn socket_dir_check(socket: &SocketChoice) -> Check {
    let Some(file) = socket_file(socket) else {
        return Check::new(
            "socket_dir",
            Status::Skipped,
            "--default-server is set: the doctor does not look at the default server's socket",
        );
    };
    let Some(dir) = file.parent().map(Path::to_path_buf) else {
        return Check::new(
            "socket_dir",
            Status::Fail,
            format!("the socket path {} has no directory", file.display()),
        )
        .hint("Give --socket-path a full path");
    };
    let named = matches!(socket, SocketChoice::Named(_));
    let shown = dir.display().to_string();
    let meta = match std::fs::symlink_metadata(&dir) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let base = dir.parent().map(Path::to_path_buf).unwrap_or_default();
            return if named && base.is_dir() {
                Check::new(
                    "socket_dir",
                    Status::Ok,
                    format!("{shown} does not exist yet; tmux creates it (mode 0700) when it starts the server"),
                )
                .fact("path", shown)
                .fact("exists", false)
            } else if named {
                Check::new(
                    "socket_dir",
                    Status::Fail,
                    format!(
                        "{} does not exist, so tmux cannot create {shown} in it",
                        base.display()
                    ),
                )
                .hint("Create the directory or point TMUX_TMPDIR at one that exists")
                .fact("path", shown)
                .fact("exists", false)
            } else {
                Check::new(
                    "socket_dir",
                    Status::Fail,
                    format!("{shown}, the directory of --socket-path, does not exist"),
                )
                .hint("Create it (mode 0700) or choose another --socket-path")
                .fact("path", shown)
                .fact("exists", false)
            };
        }
        Err(e) => {
            return Check::new(
                "socket_dir",
                Status::Fail,
                format!("cannot read {shown}: {e}"),
            )
            .hint("Check the permissions of the directory and its parents")
            .fact("path", shown);
        }
    };
    let mode = meta.permissions().mode();
    let base = Check::new("socket_dir", Status::Ok, "")
        .fact("path", shown.clone())
        .fact("exists", true)
        .fact("mode", mode_text(mode))
        .fact("owner_uid", meta.uid());
    if !meta.is_dir() {
        return Check {
            status: Status::Fail,
            message: format!("{shown} is not a directory"),
            ..base
        }
        .hint("Remove it, or choose another TMUX_TMPDIR or --socket-path");
    }
    let uid = guard::current_uid();
    if named && meta.uid() != uid {
        return Check {
            status: Status::Fail,
            message: format!(
                "{shown} belongs to user {}, not to you ({uid}); tmux refuses it",
                meta.uid()
            ),
            ..base
        }
        .hint("Point TMUX_TMPDIR at a directory of your own");
    }
    if named && mode & 0o077 != 0 {
        return Check {
            status: Status::Fail,
            message: format!(
                "{shown} has mode {}; tmux refuses a socket directory others can reach",
                mode_text(mode)
            ),
            ..base
        }
        .hint(format!("chmod 700 {shown}"));
    }
    if !named && mode & 0o002 != 0 && mode & 0o1000 == 0 {
        return Check {
            status: Status::Warn,
            message: format!(
                "{shown} has mode {}: anyone can replace the socket in it",
                mode_text(mode)
            ),
            ..base
        }
        .hint("Keep --socket-path in a directory only you can write (mode 0700)");
    }
    Check {
        message: format!("{shown} (mode {})", mode_text(mode)),
        ..base
    }
}

pub(super) fn server_check(socket: &SocketChoice) -> Check {
    let Some(file) = socket_file(socket) else {
        return Check::new(
            "server",
            Status::Skipped,
            "--default-server is set: the doctor never contacts the user's default tmux server",
        );
    };
    let flag = match socket {
        SocketChoice::Named(name) => format!("-L {name}"),
        _ => format!("-S {}", file.display()),
    };
    let shown = file.display().to_string();
    let base = Check::new("server", Status::Ok, "")
        .fact("socket", shown.clone())
        .fact("tmux_flags", flag.clone());
    let meta = match std::fs::symlink_metadata(&file) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Check {
                message: format!(
                    "the isolated server (tmux {flag}) is not started yet; tmux-mcp starts it on first use"
                ),
                ..base
            }
            .fact("running", false);
        }
        Err(e) => {
            return Check {
                status: Status::Fail,
                message: format!("cannot read {shown}: {e}"),
                ..base
            }
            .hint("Check the permissions of the socket directory");
        }
    };
    if !meta.file_type().is_socket() {
        return Check {
            status: Status::Fail,
            message: format!("{shown} exists but is not a socket"),
            ..base
        }
        .hint("Remove the file or choose another socket");
    }
    // Connecting and closing at once: tmux sees a client that went away
    // without a word. Nothing is started and no command is sent.
    match std::os::unix::net::UnixStream::connect(&file) {
        Ok(stream) => {
            drop(stream);
            Check {
                message: format!("the isolated server (tmux {flag}) is running and reachable"),
                ..base
            }
            .fact("running", true)
        }
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => Check {
            message: format!(
                "no server listens on {shown} (a socket left by a server that exited); tmux-mcp starts a new one on first use"
            ),
            ..base
        }
        .fact("running", false),
        Err(e) => Check {
            status: Status::Fail,
            message: format!("cannot connect to {shown}: {e}"),
            ..base
        }
        .hint("Check that the socket belongs to you and has mode 0600 or 0700")
        .fact("running", Value::Null),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn versions_map_to_features() {
        let f = features(&Version::parse("3.3a"));
        assert_eq!(f["capture_trim_flag"], false);
        let f = features(&Version::parse("3.7c"));
        assert_eq!(f["paste_raw_flag"], true);
        assert_eq!(f["replies_vis_escaped"], false);
    }

    #[test]
    fn a_missing_program_fails_with_a_hint() {
        let c = tmux_check("/nonexistent/tmux");
        assert_eq!(c.status, Status::Fail);
        assert!(c.hint.unwrap().contains("--tmux"));
    }
}
