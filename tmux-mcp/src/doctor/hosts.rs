//! The checks of the remote hosts (`--host`): ssh, container engines, kubectl and exec: hosts.

use serde_json::Value;

use super::command::{command_output, find_program};
use super::report::{Check, Status};
use crate::config::{Config, DEFAULT_SOCKET_NAME, HostKind, HostSpec, SocketChoice};
use tmux_control::shell;

/// One check per configured host (`--host`), by its kind; none starts a
/// tmux server there:
///
/// - ssh: ssh reaches it without a prompt and the remote tmux answers
///   `-V` (`ssh -T -o BatchMode=yes -o ConnectTimeout=4 OPTIONS
///   DESTINATION tmux -V`);
/// - docker, podman, kubectl: the engine is on `PATH` and the container's
///   tmux answers `-V` (`docker exec -i CONTAINER tmux -V`,
///   `kubectl exec -i … POD … -- tmux -V`);
/// - exec: the command's program is on `PATH`; the command itself is not
///   run (it could do anything), the check says what tmux-mcp would run.
pub(super) fn host_checks(config: Option<&Config>) -> Vec<Check> {
    let Some(config) = config.filter(|c| !c.hosts.is_empty()) else {
        return vec![Check::new(
            "hosts",
            Status::Skipped,
            "no remote hosts configured",
        )];
    };
    // A remote host's server is on the local socket name (else tmux-mcp's).
    let socket = match &config.socket {
        SocketChoice::Named(name) => name.clone(),
        SocketChoice::Path(_) | SocketChoice::Default => DEFAULT_SOCKET_NAME.to_owned(),
    };
    config
        .hosts
        .iter()
        .map(|host| {
            host_check(host, &config.host_tmux, &socket)
                .fact("host", Value::String(host.name.clone()))
                .fact("kind", Value::String(host.kind_name().to_owned()))
                .fact("target", Value::String(host.target()))
        })
        .collect()
}

/// The check of one host (see [`host_checks`]).
fn host_check(host: &HostSpec, remote_tmux: &str, socket: &str) -> Check {
    let name = &host.name;
    let (words, hint) = match &host.kind {
        HostKind::Ssh {
            options,
            destination,
        } => {
            let mut words: Vec<String> = [
                "ssh",
                "-T",
                "-o",
                "BatchMode=yes",
                "-o",
                "ConnectTimeout=4",
            ]
            .into_iter()
            .map(str::to_owned)
            .collect();
            words.extend(options.iter().cloned());
            words.push(destination.clone());
            words.extend([remote_tmux.to_owned(), "-V".to_owned()]);
            let hint = "Check that `ssh -o BatchMode=yes TARGET tmux -V` works without a prompt (a key or agent, a known host key) and that tmux is installed there".to_owned();
            let check = run_host_check(name, &words, "reachable over ssh", hint, "Install the OpenSSH client");
            return check.fact("destination", Value::String(destination.clone()));
        }
        HostKind::Exec { argv } => {
            let mut words = argv.clone();
            words.extend(["-L", socket, "-u", "-C", "new-session", "-A", "-s", crate::terminal::backend::HOME_SESSION].map(str::to_owned));
            let program = argv.first().map_or("", String::as_str);
            return match find_program(program) {
                Some(path) => Check::new(
                    "host",
                    Status::Ok,
                    format!(
                        "{name}: an exec: host; tmux-mcp runs `{} …`, which must hand its arguments on to tmux (the doctor does not run it: it could do anything; {program} is {})",
                        shell::join(&words),
                        path.display()
                    ),
                ),
                None => Check::new(
                    "host",
                    Status::Fail,
                    format!("{name}: the exec: command's program {program:?} is not on PATH"),
                )
                .hint("Install it, or name it by its path in the exec: command"),
            };
        }
        HostKind::Container { engine, container } => {
            let program = engine.program();
            (
                host.tmux_command(remote_tmux, false),
                format!(
                    "Check that the container {container} is running (`{program} ps`) and has tmux (on its PATH, or named by --host-tmux)"
                ),
            )
        }
        HostKind::Kubectl { .. } => (
            host.tmux_command(remote_tmux, false),
            "Check that the pod is running in kubectl's current context (`kubectl get pods`) and that its container has tmux (on its PATH, or named by --host-tmux)".to_owned(),
        ),
    };
    let mut words = words.unwrap_or_default();
    words.push("-V".to_owned());
    let program = host.kind_name();
    run_host_check(
        name,
        &words,
        &format!("reachable through {program} exec"),
        hint,
        &format!("Install {program}, or use an exec: host that names it by its path"),
    )
}

/// Runs `words` (a host's `tmux -V`, through ssh or an engine's exec) for
/// host `name`: ok with the version it printed, or failed with `hint`
/// (`install` when the program is not on `PATH`).
fn run_host_check(
    name: &str,
    words: &[String],
    reached: &str,
    hint: String,
    install: &str,
) -> Check {
    let quoted = shell::join(words);
    let Some((program, args)) = words.split_first() else {
        return Check::new("host", Status::Fail, format!("{name}: nothing to run"));
    };
    let Some(path) = find_program(program) else {
        return Check::new(
            "host",
            Status::Fail,
            format!("{name}: {program} is not on PATH (to run `{quoted}`)"),
        )
        .hint(install);
    };
    match command_output(&path, args, program) {
        Ok(out) => Check::new(
            "host",
            Status::Ok,
            format!("{name}: {reached}, {}", out.trim()),
        )
        .fact("tmux_version", Value::String(out.trim().to_owned())),
        Err(why) => Check::new(
            "host",
            Status::Fail,
            format!("{name}: not reachable as `{quoted}`: {why}"),
        )
        .hint(hint),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn host_checks_follow_the_kind() {
        let config = |specs: &[&str]| Config {
            hosts: specs.iter().map(|s| HostSpec::parse(s).unwrap()).collect(),
            socket: SocketChoice::Named("work".into()),
            ..Config::default()
        };
        let [c] = &host_checks(Some(&config(&[])))[..] else {
            panic!()
        };
        assert_eq!((c.name, c.status), ("hosts", Status::Skipped));
        let checks = host_checks(Some(&config(&[
            r#"vm=exec:sh -c 'exec tmux "$@"' sh"#,
            "nope=exec:/nonexistent/tmux-wrapper -x",
        ])));
        let [vm, nope] = &checks[..] else {
            panic!("{checks:?}")
        };
        assert_eq!(vm.status, Status::Ok, "{vm:?}");
        assert!(
            vm.message.contains(
                r#"tmux-mcp runs `sh -c 'exec tmux "$@"' sh -L work -u -C new-session -A -s tmux-mcp-control …`"#
            ),
            "{}",
            vm.message
        );
        assert!(vm.message.contains("does not run it"), "{}", vm.message);
        assert_eq!(vm.facts["kind"], "exec");
        assert_eq!(nope.status, Status::Fail);
        assert!(nope.message.contains("not on PATH"), "{}", nope.message);
        assert!(nope.hint.as_ref().unwrap().contains("by its path"));
        assert_eq!(nope.facts["host"], "nope");
        assert_eq!(nope.facts["target"], "/nonexistent/tmux-wrapper -x");
    }
}
