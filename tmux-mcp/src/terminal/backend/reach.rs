//! How a server is reached: its tmux and ssh words, attach commands, `host_unreachable` errors.

use std::time::Duration;

use crate::config::{HostKind, HostSpec, SocketChoice};
use crate::reply::ToolError;
use tmux_control::shell;

use super::{Backend, HOME_SESSION};

/// ssh options tmux-mcp adds after the host's own (ssh keeps the first
/// value it reads, so the host's options win): give up on an unreachable
/// machine after 10 s instead of the system's TCP timeout, and notice a
/// connection that went silent within 45 s.
const SSH_DEFAULTS: [&str; 6] = [
    "-o",
    "ConnectTimeout=10",
    "-o",
    "ServerAliveInterval=15",
    "-o",
    "ServerAliveCountMax=3",
];

impl Backend {
    /// The ssh arguments for an ssh host: its own options, tmux-mcp's
    /// defaults, then the destination.
    pub(super) fn ssh_args(options: &[String], destination: &str) -> Vec<String> {
        let mut args = options.to_vec();
        args.extend(SSH_DEFAULTS.iter().map(|s| (*s).to_owned()));
        args.push(destination.to_owned());
        args
    }

    /// The words that select this server to a tmux on its machine
    /// (`-L NAME`, `-S PATH`, or none).
    pub(super) fn socket_words(&self) -> Vec<String> {
        match &self.choice {
            SocketChoice::Named(name) => vec!["-L".into(), name.clone()],
            SocketChoice::Path(path) => vec!["-S".into(), path.display().to_string()],
            SocketChoice::Default => Vec::new(),
        }
    }

    /// For a host of a kind that hands its words on (all but ssh): the
    /// command that stands for `tmux -L NAME` there, such as
    /// `docker exec -i CONTAINER tmux -L tmux-mcp`; `terminal` gives the
    /// form a human runs from a terminal (`exec -it`).
    pub(super) fn through_words(&self, spec: &HostSpec, terminal: bool) -> Option<Vec<String>> {
        let mut words = spec.tmux_command(&self.program, terminal)?;
        words.extend(self.socket_words());
        Some(words)
    }

    /// The tmux command that selects this server on its machine.
    fn tmux_prefix(&self) -> String {
        let program = shell::quote(&self.program);
        match &self.choice {
            SocketChoice::Named(name) => format!("{program} -L {}", shell::quote(name)),
            SocketChoice::Path(path) => {
                format!("{program} -S {}", shell::quote(&path.display().to_string()))
            }
            SocketChoice::Default => program.into_owned(),
        }
    }

    /// `ssh -t ARGS` for an ssh host (the words quoted for a shell), or
    /// `None` for the other kinds.
    fn ssh_prefix(spec: &HostSpec) -> Option<String> {
        let mut words = vec!["ssh".to_owned(), "-t".to_owned()];
        words.extend(spec.ssh_args()?);
        Some(shell::join(&words))
    }

    /// `tmux -L tmux-mcp`, `tmux -S /path` or `tmux`: the start of a
    /// command a human runs to reach this server. For a remote host, after
    /// `ssh -t ARGS` (the tmux words quoted once more for the remote
    /// shell), or the host's own words (`docker exec -it CONTAINER tmux -L
    /// tmux-mcp`, `kubectl exec -it POD -- tmux -L tmux-mcp`, the `exec:`
    /// command with `-L tmux-mcp`).
    pub(crate) fn attach_prefix(&self) -> String {
        let Some(r) = &self.remote else {
            return self.tmux_prefix();
        };
        if let Some(ssh) = Self::ssh_prefix(&r.spec) {
            return format!("{ssh} {}", shell::quote(&self.tmux_prefix()));
        }
        shell::join(self.through_words(&r.spec, true).unwrap_or_default())
    }

    /// The command a human runs to watch session `name`: over `ssh -t` for
    /// an ssh host (the remote command is quoted once more for the remote
    /// shell), through `exec -it` for a container or a pod. An `exec:`
    /// host's is its command with `-L NAME attach -t NAME`, which works from
    /// a terminal when the command hands the terminal on (`sudo`, `env`,
    /// `sh -c` do; one that needs a flag of its own for a terminal needs it
    /// added).
    pub(crate) fn attach_command(&self, session_name: &str) -> String {
        let local = format!(
            "{} attach -t {}",
            self.tmux_prefix(),
            shell::quote(session_name)
        );
        let Some(r) = &self.remote else {
            return local;
        };
        if let Some(ssh) = Self::ssh_prefix(&r.spec) {
            return format!("{ssh} {}", shell::quote(&local));
        }
        let mut words = self.through_words(&r.spec, true).unwrap_or_default();
        words.extend([
            "attach".to_owned(),
            "-t".to_owned(),
            session_name.to_owned(),
        ]);
        shell::join(&words)
    }

    /// A description like `tmux -L tmux-mcp`, or for a remote host
    /// `host box: ssh me@box tmux -L tmux-mcp`,
    /// `host web: docker exec -i web tmux -L tmux-mcp`.
    pub(crate) fn describe(&self) -> String {
        let Some(r) = &self.remote else {
            return self.tmux_prefix();
        };
        match r.spec.ssh_args() {
            Some(args) => format!(
                "host {}: ssh {} {}",
                r.spec.name,
                shell::join(&args),
                self.tmux_prefix()
            ),
            None => format!(
                "host {}: {}",
                r.spec.name,
                shell::join(self.through_words(&r.spec, false).unwrap_or_default())
            ),
        }
    }

    /// Who speaks for a remote host in its errors: `ssh`, `docker`,
    /// `podman`, `kubectl`, or `the exec: command`.
    pub(super) fn speaker(spec: &HostSpec) -> &'static str {
        match &spec.kind {
            HostKind::Exec { .. } => "the exec: command",
            _ => spec.kind_name(),
        }
    }

    /// The `host_unreachable` error of this (remote) host, with the check
    /// its kind calls for.
    pub(super) fn unreachable(&self, why: &str, retry_in: Duration) -> ToolError {
        let check = self.remote.as_ref().map_or_else(String::new, |r| {
            let version = |words: Option<Vec<String>>| {
                let mut words = words.unwrap_or_default();
                words.push("-V".to_owned());
                shell::join(&words)
            };
            match &r.spec.kind {
                HostKind::Ssh { .. } => format!(
                    "Check that the machine is up and that `{}` logs in without a prompt (keys or an agent; tmux-mcp runs ssh with BatchMode=yes)",
                    self.attach_prefix()
                ),
                HostKind::Container { engine, container } => format!(
                    "Check that the container {container} is running (`{} ps`) and that `{}` prints tmux's version (tmux installed in the container; --host-tmux names it)",
                    engine.program(),
                    version(r.spec.tmux_command(&self.program, false))
                ),
                HostKind::Kubectl { .. } => format!(
                    "Check that the pod is running in kubectl's current context (`kubectl get pods`) and that `{}` prints tmux's version (tmux installed in the container; --host-tmux names it)",
                    version(r.spec.tmux_command(&self.program, false))
                ),
                HostKind::Exec { argv } => format!(
                    "Check that `{}` prints tmux's version: an exec: command stands for tmux, and tmux-mcp runs it with `{} -u -C new-session -A -s {HOME_SESSION} …` appended, so it must hand its arguments on (as `sh -c 'exec tmux \"$@\"' sh` does)",
                    version(Some(argv.clone())),
                    shell::join(self.socket_words())
                ),
            }
        });
        self.host_unreachable(
            why,
            format!(
                "{check}. tmux-mcp tries again on the first call after {:.0} s; calls before then get this answer at once. Terminals on other hosts are not affected",
                retry_in.as_secs_f64().ceil()
            ),
        )
    }

    /// [`ToolError::host_unreachable`] for this host, saying how it is
    /// reached: `over ssh`, `through docker exec`, …
    pub(super) fn host_unreachable(&self, why: &str, next: String) -> ToolError {
        let how = match self.remote.as_ref().map(|r| &r.spec) {
            None => "over ssh".to_owned(),
            Some(spec) => match spec.kind {
                HostKind::Ssh { .. } => "over ssh".to_owned(),
                HostKind::Exec { .. } => "through its exec: command".to_owned(),
                _ => format!("through {} exec", spec.kind_name()),
            },
        };
        ToolError::host_unreachable(self.host(), &how, why, next)
    }
}

/// What `speaker` (ssh, docker, the exec: command, …) said, for a failed
/// connection to a remote host.
pub(super) fn remote_detail(e: &tmux_control::Error, speaker: &str) -> String {
    match e {
        tmux_control::Error::Closed(closed) => closed_detail(closed, speaker),
        tmux_control::Error::Spawn { program, source } => {
            format!("cannot start {program}: {source}")
        }
        other => other.to_string(),
    }
}

/// A closed connection to a remote host in words: what `speaker` (ssh,
/// docker, …, or tmux behind it) wrote to its standard error, and its exit
/// status.
pub(super) fn closed_detail(closed: &tmux_control::Closed, speaker: &str) -> String {
    let mut s = if closed.stderr.is_empty() {
        format!("{speaker} ended without a message")
    } else {
        format!("{speaker} said: {}", closed.stderr)
    };
    if let Some(reason) = closed.reason.as_ref().filter(|r| !r.is_empty()) {
        s.push_str("; tmux said: ");
        s.push_str(reason);
    }
    if let Some(code) = closed.exit_status {
        s.push_str(&format!(" (exit status {code})"));
    }
    s
}
