//! Evidence from the kernel about what a pane's program is doing: its
//! terminal's foreground process group, whether that group's leader is
//! blocked reading the terminal, and the terminal's settings (echo off
//! means a secret is being typed).
//!
//! Read from `/proc` and the pane's tty, so only for a tmux server on this
//! machine; every fact is optional and a missing one is "unknown", never a
//! guess. Nothing here polls: a probe is a handful of small file reads,
//! taken when the caller asks, and [`exited`] waits for the kernel to
//! push a process's exit (its pidfd).

use std::path::Path;

/// What a probe found.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Evidence {
    /// The terminal's foreground process group (its leader's pid).
    pub(crate) foreground: Option<u32>,
    /// The foreground leader's name (`/proc/PID/comm`).
    pub(crate) command: Option<String>,
    /// Whether the foreground leader is blocked reading the terminal.
    pub(crate) reading_terminal: Option<bool>,
    /// Whether the terminal echoes what is typed (off: a password prompt).
    pub(crate) echo: Option<bool>,
}

/// Probes the program in a pane whose first process is `pid` and whose
/// terminal is `tty`.
pub(crate) fn probe(pid: u32, tty: &Path) -> Evidence {
    let foreground = stat_fields(pid).and_then(|f| f.get(5).and_then(|v| v.parse::<i64>().ok()));
    let foreground = foreground
        .and_then(|g| u32::try_from(g).ok())
        .filter(|g| *g > 0);
    let command = foreground.and_then(|g| {
        std::fs::read_to_string(format!("/proc/{g}/comm"))
            .ok()
            .map(|c| c.trim_end().to_owned())
    });
    // A shell's own line reader waits in poll or select: the pane's first
    // process, or a shell in the foreground under it (a shell started as a
    // command, or one that `exec`ed another).
    let shell = match (foreground, command.as_deref()) {
        (Some(g), Some(name))
            if tmux_control::PaneState::is_posix_shell(name)
                || tmux_control::shell::ShellKind::of(name).is_some() =>
        {
            g
        }
        _ => pid,
    };
    let reading_terminal = foreground.and_then(|g| reading(g, tty, Some(shell)));
    Evidence {
        foreground,
        command,
        reading_terminal,
        echo: echo(tty),
    }
}

/// Whether process `pid` sleeps in the kernel (state `S`: blocked in a
/// system call), by `/proc/PID/stat`.
pub(crate) fn sleeping(pid: u32) -> bool {
    stat_fields(pid).is_some_and(|f| f.first().is_some_and(|s| s == "S"))
}

/// Completes once process `pid` has exited: at once when it is gone
/// already, else when its pidfd becomes readable (pushed by the kernel).
/// Where pidfds are not available it never completes (the caller's
/// heartbeat stands in).
pub(crate) async fn exited(pid: u32) {
    use rustix::process::{Pid, PidfdFlags, pidfd_open};
    let Some(id) = i32::try_from(pid).ok().and_then(Pid::from_raw) else {
        return;
    };
    let fd = match pidfd_open(id, PidfdFlags::empty()) {
        Ok(fd) => fd,
        Err(rustix::io::Errno::SRCH) => return,
        Err(_) => return std::future::pending().await,
    };
    // Deprecated because a registered descriptor that its owner closes
    // early is unsound; here the AsyncFd owns the OwnedFd itself, so it is
    // closed only after it is deregistered (and the safe constructor keeps
    // the workspace free of unsafe code).
    #[allow(deprecated)]
    let registered = tokio::io::unix::AsyncFd::with_interest(fd, tokio::io::Interest::READABLE);
    match registered {
        Ok(fd) => {
            let _ = fd.readable().await;
        }
        Err(_) => std::future::pending().await,
    }
}

/// After a foreground process exits, the shell needs a moment to run the
/// next command of the line or to read: the terminal is looked at after
/// each of these pauses until its new foreground process blocks (a true
/// timer: a settling backoff, about 120 ms in all).
const SETTLE_MS: [u64; 6] = [2, 4, 8, 16, 32, 64];

/// Completes once process `foreground` has exited (pushed by its pidfd)
/// and the terminal `tty` of the pane whose first process is `pid` has a
/// foreground process blocked in the kernel again, or the settling
/// backoff ([`SETTLE_MS`]) is over: the moment to look at what the pane's
/// program does next (`sleep 1; read x` reads once `sleep` is gone).
pub(crate) async fn foreground_exited(foreground: u32, pid: u32, tty: &Path) {
    exited(foreground).await;
    for ms in SETTLE_MS {
        // A true timer: the settling backoff (see SETTLE_MS).
        tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
        if probe(pid, tty).foreground.is_some_and(sleeping) {
            return;
        }
    }
}

/// The command line of process `pid` (`/proc/PID/cmdline`), to tell
/// whether the program a pane's first process runs was replaced (`exec`).
pub(crate) fn cmdline(pid: u32) -> Option<Vec<u8>> {
    std::fs::read(format!("/proc/{pid}/cmdline")).ok()
}

/// The fields of `/proc/PID/stat` after the command name: state, ppid,
/// pgrp, session, tty_nr, tpgid, …
fn stat_fields(pid: u32) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    Some(rest.split_whitespace().map(str::to_owned).collect())
}

/// Whether process `pid` sleeps in a read of the terminal `tty`: from the
/// system call it is in (`/proc/PID/syscall`: `read` on a descriptor that
/// is the terminal; poll or select when `pid` is the pane's shell `shell`)
/// when that is readable, else from its wait channel.
fn reading(pid: u32, tty: &Path, shell: Option<u32>) -> Option<bool> {
    let state = stat_fields(pid)?.first()?.clone();
    if state != "S" {
        return Some(false);
    }
    if let Ok(syscall) = std::fs::read_to_string(format!("/proc/{pid}/syscall")) {
        let mut fields = syscall.split_whitespace();
        let number = fields.next();
        // read(2) is system call 0 on x86_64 and 63 on aarch64.
        let is_read = match std::env::consts::ARCH {
            "x86_64" => number == Some("0"),
            "aarch64" => number == Some("63"),
            _ => false,
        };
        if is_read {
            let fd = fields
                .next()
                .and_then(|f| u64::from_str_radix(f.trim_start_matches("0x"), 16).ok())?;
            let target = std::fs::read_link(format!("/proc/{pid}/fd/{fd}")).ok()?;
            return Some(target == tty);
        }
        // A shell's own line reader (fish's `read`) waits in poll or
        // select, not read; that counts only for the pane's first process
        // (the shell), not for any program that polls sockets or pipes.
        let waits = match std::env::consts::ARCH {
            "x86_64" => ["7", "23", "270", "271"].contains(&number.unwrap_or("")),
            "aarch64" => ["72", "73"].contains(&number.unwrap_or("")),
            _ => false,
        };
        if waits && shell == Some(pid) {
            return Some(true);
        }
        if number.is_some_and(|n| n.parse::<u64>().is_ok()) {
            return Some(false);
        }
    }
    let wchan = std::fs::read_to_string(format!("/proc/{pid}/wchan")).ok()?;
    match wchan.trim() {
        "n_tty_read" | "tty_read" | "wait_woken" => Some(true),
        "" | "0" => None,
        _ => Some(false),
    }
}

/// Whether the terminal echoes input (`ECHO` in its local modes).
fn echo(tty: &Path) -> Option<bool> {
    use rustix::fs::{Mode, OFlags};
    let fd = rustix::fs::open(
        tty,
        OFlags::RDONLY | OFlags::NOCTTY | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .ok()?;
    let termios = rustix::termios::tcgetattr(&fd).ok()?;
    Some(
        termios
            .local_modes
            .contains(rustix::termios::LocalModes::ECHO),
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_process_gives_no_evidence() {
        let e = probe(u32::MAX - 1, Path::new("/nonexistent/tty"));
        assert_eq!(e, Evidence::default());
    }

    #[tokio::test]
    async fn an_exit_is_pushed_by_the_pidfd() {
        let mut child = std::process::Command::new("sleep")
            .arg("0.2")
            .spawn()
            .unwrap();
        let pid = child.id();
        assert!(!sleeping(u32::MAX - 1));
        let started = std::time::Instant::now();
        exited(pid).await;
        assert!(started.elapsed() >= std::time::Duration::from_millis(150));
        child.wait().unwrap();
        // Gone already: at once.
        exited(pid).await;
    }

    #[test]
    fn this_process_is_not_reading_a_terminal() {
        let me = std::process::id();
        let fields = stat_fields(me).unwrap();
        assert!(fields.len() > 6, "{fields:?}");
        // The test thread is running, not sleeping in a read.
        assert_eq!(reading(me, Path::new("/dev/null"), None), Some(false));
    }
}
