//! The log directories: their names, their `server` files, and pruning.

use std::fs::OpenOptions;
use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

use tmux_control::command::{OptionScope, SetOption, ShowOption};
use tmux_control::{PaneId, Tmux};

/// The pane option naming the pane's log directory.
pub(super) const OPTION: &str = "@tmux-mcp-log";

/// The file in a local pane's log directory that holds the process id of
/// its tmux server.
const SERVER_FILE: &str = "server";

/// Writes the tmux server's process id into a log directory.
pub(super) fn write_server_file(dir: &Path, server: u32) {
    let written = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(dir.join(SERVER_FILE))
        .and_then(|mut f| writeln!(f, "{server}"));
    if let Err(e) = written {
        tracing::debug!(dir = %dir.display(), error = %e, "cannot note the log's tmux server");
    }
}

/// The log directories under `root` that name their tmux server, with its
/// process id.
fn owned_dirs(root: &Path) -> Vec<(PathBuf, u32)> {
    let Ok(entries) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| {
            let dir = e.path();
            let owner = std::fs::read_to_string(dir.join(SERVER_FILE)).ok()?;
            Some((dir, owner.trim().parse().ok()?))
        })
        .collect()
}

/// Removes the log directories under `root` whose tmux server process is
/// gone; returns how many, and the directories of `server`'s panes.
pub(super) fn prune_dead(root: &Path, server: u32) -> (usize, Vec<PathBuf>) {
    let mut ours = Vec::new();
    let mut removed = 0;
    for (dir, owner) in owned_dirs(root) {
        if owner == server {
            ours.push(dir);
        } else if !process_exists(owner) && remove_log_dir(&dir) {
            removed += 1;
        }
    }
    (removed, ours)
}

/// Whether a process with this id exists and has not ended (a zombie that
/// nobody has reaped yet has ended). From `/proc` where it is mounted,
/// else by signal 0 (one of another user's counts).
fn process_exists(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state is the first field after the command name's `)`.
        Ok(stat) => stat
            .rsplit_once(')')
            .is_none_or(|(_, rest)| !rest.trim_start().starts_with(['Z', 'X'])),
        Err(_) if Path::new("/proc/self/stat").exists() => false,
        Err(_) => {
            let Some(pid) = i32::try_from(pid)
                .ok()
                .and_then(rustix::process::Pid::from_raw)
            else {
                return false;
            };
            !matches!(
                rustix::process::test_kill_process(pid),
                Err(rustix::io::Errno::SRCH)
            )
        }
    }
}

/// Removes a log directory; whether it did.
pub(super) fn remove_log_dir(dir: &Path) -> bool {
    match std::fs::remove_dir_all(dir) {
        Ok(()) => {
            tracing::debug!(dir = %dir.display(), "removed the log of a pane that is gone");
            true
        }
        Err(e) => {
            tracing::debug!(dir = %dir.display(), error = %e, "cannot remove the log of a pane that is gone");
            false
        }
    }
}

/// The pane's log id from its option, set the first time.
pub(super) async fn log_id(tmux: &Tmux, pane: PaneId) -> String {
    if let Ok(Some(value)) = tmux
        .run(ShowOption::new(OptionScope::Pane, OPTION).target(pane))
        .await
        && let Some(id) = value.as_str().map(str::trim)
        && !id.is_empty()
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
    {
        return id.to_owned();
    }
    let id = format!("{}-{}", pane.0, tmux_control::shell::shell_nonce());
    if let Err(e) = tmux
        .run(SetOption::new(OptionScope::Pane, OPTION, id.clone()).target(pane))
        .await
    {
        tracing::debug!(%pane, error = %e, "cannot name the pane's log in its option");
    }
    id
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn only_the_logs_of_servers_that_are_gone_are_pruned() {
        let root =
            std::env::temp_dir().join(format!("tmux-mcp-journal-prune-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        // A process that has ended: its id names no process (until reused,
        // which would only keep a log longer).
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let me = std::process::id();
        let make = |name: &str, owner: Option<u32>| {
            let dir = root.join(name);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("log.jsonl"), "").unwrap();
            if let Some(owner) = owner {
                write_server_file(&dir, owner);
            }
            dir
        };
        let gone = make("1-gone", Some(dead));
        let other = make("2-other-live-server", Some(me));
        let ours = make("3-ours", Some(4_000_000));
        let unowned = make("4-no-server-file", None);
        let (removed, mine) = prune_dead(&root, 4_000_000);
        assert_eq!(removed, 1);
        assert!(!gone.exists());
        assert!(other.exists() && unowned.exists() && ours.exists());
        assert_eq!(mine, vec![ours]);
        std::fs::remove_dir_all(&root).unwrap();
    }
}
