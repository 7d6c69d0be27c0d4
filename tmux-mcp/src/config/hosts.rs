//! Remote hosts: `--host` specs (ssh, `docker:`, `podman:`, `kubectl:`, `exec:`) and their parsing.

use super::ConfigError;
use tmux_control::shell;

/// The name tools use for the machine tmux-mcp runs on (the `host`
/// argument left out means the same).
pub const LOCAL_HOST: &str = "local";

/// The longest host name accepted.
pub const MAX_HOST_NAME: usize = 32;

/// A remote host: a tmux server reached through another program (ssh, a
/// container engine, kubectl or a command of the operator's).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HostSpec {
    /// The name tools use for it (`host` argument).
    pub name: String,
    /// How it is reached.
    pub kind: HostKind,
}

/// How a remote host's tmux server is reached: the part of `NAME=TARGET`
/// after the `=`.
///
/// Every kind but ssh hands its words on as separate arguments, so tmux-mcp
/// runs them with `--host-tmux` (or, for `exec:`, the command itself) and
/// `-L SOCKET -u -C …` appended; ssh joins its remote command into one
/// string for the remote shell, so it is quoted for it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum HostKind {
    /// `SSH_TARGET` or `ssh:SSH_TARGET`: `ssh -T OPTIONS DESTINATION 'tmux …'`.
    Ssh {
        /// The ssh options, in order (may be empty).
        options: Vec<String>,
        /// The ssh destination (`[user@]host`, an `ssh://` address, or an
        /// alias of the user's ssh configuration).
        destination: String,
    },
    /// `docker:CONTAINER` or `podman:CONTAINER`:
    /// `docker exec -i CONTAINER tmux …` (the control client runs in the
    /// container).
    Container {
        /// The container engine.
        engine: Engine,
        /// The container's name or id.
        container: String,
    },
    /// `kubectl:[NAMESPACE/]POD[:CONTAINER]`:
    /// `kubectl exec -i [-n NAMESPACE] POD [-c CONTAINER] -- tmux …`, in
    /// kubectl's current context.
    Kubectl {
        /// The namespace, when given (else kubectl's default).
        namespace: Option<String>,
        /// The pod.
        pod: String,
        /// The container of the pod, when given (else the pod's default).
        container: Option<String>,
    },
    /// `exec:COMMAND ARGS…`: a command that stands for `tmux` on the other
    /// side. tmux-mcp appends `-L SOCKET -u -C …` to it, so it must hand
    /// its arguments on unchanged (`sh -c 'exec tmux "$@"' sh` does).
    Exec {
        /// The command's words, split as a shell would; the program first.
        argv: Vec<String>,
    },
}

/// A container engine whose `exec -i` reaches a container's tmux.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Engine {
    /// `docker`.
    Docker,
    /// `podman`.
    Podman,
}

impl Engine {
    /// The engine's program (looked up on `PATH`), also the kind's prefix.
    pub fn program(self) -> &'static str {
        match self {
            Self::Docker => "docker",
            Self::Podman => "podman",
        }
    }
}

impl HostSpec {
    /// Reads one `NAME=TARGET`: `NAME=SSH_TARGET` (or `NAME=ssh:SSH_TARGET`),
    /// `NAME=docker:CONTAINER`, `NAME=podman:CONTAINER`,
    /// `NAME=kubectl:[NAMESPACE/]POD[:CONTAINER]` or `NAME=exec:COMMAND ARGS…`.
    pub fn parse(spec: &str) -> Result<Self, ConfigError> {
        let bad = |reason: String| ConfigError::BadHost {
            spec: spec.trim().to_owned(),
            reason,
        };
        let (name, target) = spec
            .split_once('=')
            .ok_or_else(|| bad("it has no '=' (write NAME=TARGET)".into()))?;
        let name = name.trim();
        check_host_name(name).map_err(bad)?;
        if let Some(c) = target.chars().find(|c| c.is_control() && *c != '\t') {
            return Err(bad(format!(
                "the target contains the control character {c:?}"
            )));
        }
        Ok(Self {
            name: name.to_owned(),
            kind: HostKind::parse(target.trim()).map_err(bad)?,
        })
    }

    /// The kind's name: `ssh`, `docker`, `podman`, `kubectl` or `exec`.
    pub fn kind_name(&self) -> &'static str {
        match &self.kind {
            HostKind::Ssh { .. } => "ssh",
            HostKind::Container { engine, .. } => engine.program(),
            HostKind::Kubectl { .. } => "kubectl",
            HostKind::Exec { .. } => "exec",
        }
    }

    /// The target as it reads after `KIND:`: the ssh words, the
    /// container, `[NAMESPACE/]POD[:CONTAINER]` or the command (words
    /// quoted for a shell).
    pub fn target(&self) -> String {
        match &self.kind {
            HostKind::Ssh {
                options,
                destination,
            } => {
                let mut words = options.clone();
                words.push(destination.clone());
                shell::join(&words)
            }
            HostKind::Container { container, .. } => container.clone(),
            HostKind::Kubectl {
                namespace,
                pod,
                container,
            } => {
                let mut s = namespace
                    .as_ref()
                    .map_or_else(String::new, |ns| format!("{ns}/"));
                s.push_str(pod);
                if let Some(c) = container {
                    s.push(':');
                    s.push_str(c);
                }
                s
            }
            HostKind::Exec { argv } => shell::join(argv),
        }
    }

    /// The ssh arguments of an ssh host: its options, then the
    /// destination; `None` for the other kinds.
    pub fn ssh_args(&self) -> Option<Vec<String>> {
        match &self.kind {
            HostKind::Ssh {
                options,
                destination,
            } => {
                let mut args = options.clone();
                args.push(destination.clone());
                Some(args)
            }
            _ => None,
        }
    }

    /// The words that stand for `tmux` on the host, for every kind but ssh:
    /// `docker exec -i CONTAINER HOST_TMUX`,
    /// `kubectl exec -i [-n NAMESPACE] POD [-c CONTAINER] -- HOST_TMUX`, or
    /// the `exec:` command itself (which names its own tmux). tmux-mcp
    /// appends the socket and `-u -C …` to them. `terminal` gives the form
    /// a human runs from a terminal (`exec -it`, for `attach`); the
    /// `exec:` command is the same either way.
    pub fn tmux_command(&self, host_tmux: &str, terminal: bool) -> Option<Vec<String>> {
        let interactive = if terminal { "-it" } else { "-i" };
        let words = |w: &[&str]| w.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        match &self.kind {
            HostKind::Ssh { .. } => None,
            HostKind::Container { engine, container } => Some(words(&[
                engine.program(),
                "exec",
                interactive,
                container,
                host_tmux,
            ])),
            HostKind::Kubectl {
                namespace,
                pod,
                container,
            } => {
                let mut argv = words(&["kubectl", "exec", interactive]);
                if let Some(ns) = namespace {
                    argv.extend(words(&["-n", ns]));
                }
                argv.push(pod.clone());
                if let Some(c) = container {
                    argv.extend(words(&["-c", c]));
                }
                argv.extend(words(&["--", host_tmux]));
                Some(argv)
            }
            HostKind::Exec { argv } => Some(argv.clone()),
        }
    }
}

impl HostKind {
    /// Reads the target of `NAME=TARGET` (already trimmed and free of
    /// control characters); the error is the reason, for
    /// [`ConfigError::BadHost`].
    fn parse(target: &str) -> Result<Self, String> {
        match target.split_once(':') {
            Some(("docker", rest)) => Self::container(Engine::Docker, rest),
            Some(("podman", rest)) => Self::container(Engine::Podman, rest),
            Some(("kubectl", rest)) => Self::kubectl(rest),
            Some(("exec", rest)) => Self::exec(rest),
            // `ssh://[user@]host[:port]` is an ssh destination of its own.
            Some(("ssh", rest)) if !rest.starts_with("//") => Self::ssh(rest),
            _ => Self::ssh(target),
        }
    }

    fn ssh(target: &str) -> Result<Self, String> {
        let mut words = shlex::split(target.trim())
            .ok_or_else(|| "the ssh target has an unclosed quote".to_owned())?;
        let destination = words
            .pop()
            .ok_or_else(|| "the ssh target is empty".to_owned())?;
        if destination.starts_with('-') {
            return Err(format!(
                "the ssh target must end with the destination, not the option {destination:?}"
            ));
        }
        Ok(Self::Ssh {
            options: words,
            destination,
        })
    }

    /// `docker:CONTAINER`: a container name or id as the engines accept it
    /// (a letter or digit, then letters, digits, `_`, `.` or `-`).
    fn container(engine: Engine, rest: &str) -> Result<Self, String> {
        let program = engine.program();
        let container = rest.trim();
        if container.is_empty() {
            return Err(format!(
                "the {program} container is empty (write NAME={program}:CONTAINER)"
            ));
        }
        let mut chars = container.chars();
        let shaped = chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
            && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
        if !shaped {
            return Err(format!(
                "the {program} container {container:?} must be a container name or id: a letter or digit, then letters, digits, '_', '.' or '-'"
            ));
        }
        Ok(Self::Container {
            engine,
            container: container.to_owned(),
        })
    }

    /// `kubectl:[NAMESPACE/]POD[:CONTAINER]`, each part a Kubernetes name:
    /// the namespace and the container DNS labels, the pod a DNS subdomain.
    fn kubectl(rest: &str) -> Result<Self, String> {
        const SHAPE: &str = "write NAME=kubectl:[NAMESPACE/]POD[:CONTAINER]";
        let rest = rest.trim();
        if rest.is_empty() {
            return Err(format!("the kubectl pod is empty ({SHAPE})"));
        }
        let (namespace, rest) = match rest.split_once('/') {
            Some((ns, pod)) => (Some(ns), pod),
            None => (None, rest),
        };
        let (pod, container) = match rest.split_once(':') {
            Some((pod, c)) => (pod, Some(c)),
            None => (rest, None),
        };
        if rest.contains('/') || container.is_some_and(|c| c.contains(':')) {
            return Err(format!(
                "the kubectl target {:?} has more than one '/' or ':' ({SHAPE})",
                rest
            ));
        }
        // A DNS label (RFC 1123): lowercase letters, digits and '-', a
        // letter or digit at both ends; a subdomain also takes '.'.
        let dns = |s: &str, max: usize, dots: bool| {
            let edge =
                |c: Option<char>| c.is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
            !s.is_empty()
                && s.len() <= max
                && edge(s.chars().next())
                && edge(s.chars().last())
                && s.chars().all(|c| {
                    c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || (dots && c == '.')
                })
        };
        let label = "lowercase letters, digits and '-', starting and ending with a letter or digit";
        if let Some(ns) = namespace
            && !dns(ns, 63, false)
        {
            return Err(format!(
                "the kubectl namespace {ns:?} must be 1 to 63 {label} ({SHAPE})"
            ));
        }
        if !dns(pod, 253, true) {
            return Err(format!(
                "the kubectl pod {pod:?} must be 1 to 253 {label}, or '.' ({SHAPE})"
            ));
        }
        if let Some(c) = container
            && !dns(c, 63, false)
        {
            return Err(format!(
                "the kubectl container {c:?} must be 1 to 63 {label} ({SHAPE})"
            ));
        }
        Ok(Self::Kubectl {
            namespace: namespace.map(str::to_owned),
            pod: pod.to_owned(),
            container: container.map(str::to_owned),
        })
    }

    /// `exec:COMMAND ARGS…`, split into words as a shell would.
    fn exec(rest: &str) -> Result<Self, String> {
        const SHAPE: &str = "write NAME=exec:COMMAND ARGS…, a command that stands for tmux, like exec:sudo -u agent tmux";
        let argv = shlex::split(rest.trim())
            .ok_or_else(|| "the exec: command has an unclosed quote".to_owned())?;
        match argv.first() {
            None => Err(format!("the exec: command is empty ({SHAPE})")),
            Some(program) if program.is_empty() => {
                Err(format!("the exec: command's program is empty ({SHAPE})"))
            }
            Some(_) => Ok(Self::Exec { argv }),
        }
    }
}

/// A host name: a letter, then up to 31 letters, digits, `-` or `_`; not
/// `local`.
pub(super) fn check_host_name(name: &str) -> Result<(), String> {
    let mut chars = name.chars();
    let shaped = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !shaped || name.len() > MAX_HOST_NAME {
        return Err(format!(
            "the host name {name:?} must be a letter followed by at most {} letters, digits, '-' or '_'",
            MAX_HOST_NAME - 1
        ));
    }
    if name.eq_ignore_ascii_case(LOCAL_HOST) {
        return Err(format!(
            "the host name {name:?} is reserved for the machine tmux-mcp runs on"
        ));
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::config::host_list::split_host_values;
    use crate::config::tests::parse;

    fn host_error(args: &[&str]) -> String {
        match parse(args) {
            Err(e @ ConfigError::BadHost { .. }) => e.to_string(),
            other => panic!("{args:?}: expected a BadHost error, got {other:?}"),
        }
    }

    #[test]
    fn hosts_are_parsed() {
        let c = parse(&[
            "--host",
            "box=me@box.example",
            "--host",
            "ci-2=-p 2222 -i '/keys/my key' -o Ciphers=a,b root@10.0.0.2",
        ])
        .unwrap();
        assert_eq!(c.hosts.len(), 2);
        assert_eq!(c.hosts[0].name, "box");
        assert_eq!(c.hosts[0].ssh_args().unwrap(), ["me@box.example"]);
        assert_eq!(c.hosts[0].kind_name(), "ssh");
        assert_eq!(c.hosts[1].name, "ci-2");
        assert_eq!(
            c.hosts[1].ssh_args().unwrap(),
            [
                "-p",
                "2222",
                "-i",
                "/keys/my key",
                "-o",
                "Ciphers=a,b",
                "root@10.0.0.2"
            ]
        );
        assert_eq!(c.host_tmux, "tmux");
        assert!(parse(&[]).unwrap().hosts.is_empty());
    }

    fn host(spec: &str) -> HostSpec {
        HostSpec::parse(spec).unwrap_or_else(|e| panic!("{spec}: {e}"))
    }

    #[test]
    fn ssh_hosts_may_say_so_and_keep_ssh_addresses() {
        let h = host("box=ssh:-p 2222 me@box");
        assert_eq!(h.kind_name(), "ssh");
        assert_eq!(h.ssh_args().unwrap(), ["-p", "2222", "me@box"]);
        assert_eq!(h, HostSpec::parse("box=-p 2222 me@box").unwrap());
        assert_eq!(h.tmux_command("tmux", false), None);
        // `ssh://` is an ssh destination, not the `ssh:` prefix.
        let h = host("box=ssh://me@box:2222");
        assert_eq!(h.ssh_args().unwrap(), ["ssh://me@box:2222"]);
        assert_eq!(h.target(), "ssh://me@box:2222");
        assert_eq!(
            host("box=-i '/k/my key' me@box").target(),
            "-i '/k/my key' me@box"
        );
    }

    #[test]
    fn container_hosts_run_the_engines_exec() {
        let h = host("web=docker:web-1");
        assert_eq!(
            h.kind,
            HostKind::Container {
                engine: Engine::Docker,
                container: "web-1".into()
            }
        );
        assert_eq!((h.kind_name(), h.target().as_str()), ("docker", "web-1"));
        assert_eq!(h.ssh_args(), None);
        assert_eq!(
            h.tmux_command("tmux", false).unwrap(),
            ["docker", "exec", "-i", "web-1", "tmux"]
        );
        assert_eq!(
            h.tmux_command("/opt/tmux", true).unwrap(),
            ["docker", "exec", "-it", "web-1", "/opt/tmux"]
        );
        let h = host(" pm = podman: 3f2a9c.b_x ");
        assert_eq!((h.name.as_str(), h.kind_name()), ("pm", "podman"));
        assert_eq!(
            h.tmux_command("tmux", false).unwrap(),
            ["podman", "exec", "-i", "3f2a9c.b_x", "tmux"]
        );
    }

    #[test]
    fn kubectl_hosts_name_namespace_pod_and_container() {
        let h = host("k=kubectl:web-0");
        assert_eq!(
            h.tmux_command("tmux", false).unwrap(),
            ["kubectl", "exec", "-i", "web-0", "--", "tmux"]
        );
        assert_eq!((h.kind_name(), h.target().as_str()), ("kubectl", "web-0"));
        let h = host("k=kubectl:prod/web-0.a:app");
        assert_eq!(
            h.kind,
            HostKind::Kubectl {
                namespace: Some("prod".into()),
                pod: "web-0.a".into(),
                container: Some("app".into())
            }
        );
        assert_eq!(h.target(), "prod/web-0.a:app");
        assert_eq!(
            h.tmux_command("tmux", false).unwrap(),
            [
                "kubectl", "exec", "-i", "-n", "prod", "web-0.a", "-c", "app", "--", "tmux"
            ]
        );
        assert_eq!(
            host("k=kubectl:web:sidecar")
                .tmux_command("tmux", true)
                .unwrap(),
            [
                "kubectl", "exec", "-it", "web", "-c", "sidecar", "--", "tmux"
            ]
        );
    }

    #[test]
    fn exec_hosts_are_split_as_a_shell_would() {
        let h = host(r#"vm=exec:sh -c 'exec tmux "$@"' sh"#);
        assert_eq!(
            h.kind,
            HostKind::Exec {
                argv: vec![
                    "sh".into(),
                    "-c".into(),
                    r#"exec tmux "$@""#.into(),
                    "sh".into()
                ]
            }
        );
        assert_eq!(h.kind_name(), "exec");
        // The command stands for tmux: `--host-tmux` does not apply.
        assert_eq!(
            h.tmux_command("/opt/tmux", true).unwrap(),
            ["sh", "-c", r#"exec tmux "$@""#, "sh"]
        );
        assert_eq!(h.target(), r#"sh -c 'exec tmux "$@"' sh"#);
        assert_eq!(
            host("j=exec:sudo -u agent tmux").tmux_command("x", false),
            Some(vec![
                "sudo".into(),
                "-u".into(),
                "agent".into(),
                "tmux".into()
            ])
        );
    }

    #[test]
    fn bad_host_kinds_are_refused_clearly() {
        for (spec, says) in [
            ("web=docker:", "the docker container is empty"),
            ("web=docker:  ", "the docker container is empty"),
            ("web=podman:", "the podman container is empty"),
            ("web=docker:-it", "must be a container name or id"),
            ("web=docker:a b", "must be a container name or id"),
            ("web=docker:a/b", "must be a container name or id"),
            ("k=kubectl:", "the kubectl pod is empty"),
            ("k=kubectl:prod/", "the kubectl pod \"\""),
            ("k=kubectl:/web", "the kubectl namespace \"\""),
            ("k=kubectl:web:", "the kubectl container \"\""),
            ("k=kubectl::app", "the kubectl pod \"\""),
            ("k=kubectl:a/b/c", "more than one '/' or ':'"),
            ("k=kubectl:a:b:c", "more than one '/' or ':'"),
            ("k=kubectl:Web", "the kubectl pod \"Web\" must be"),
            ("k=kubectl:web-", "the kubectl pod"),
            ("k=kubectl:Prod/web", "the kubectl namespace \"Prod\""),
            ("k=kubectl:a.b/web", "the kubectl namespace"),
            ("k=kubectl:web:a_b", "the kubectl container \"a_b\""),
            ("vm=exec:", "the exec: command is empty"),
            ("vm=exec:''", "the exec: command's program is empty"),
            (
                "vm=exec:sh -c 'exec tmux",
                "the exec: command has an unclosed quote",
            ),
            ("vm=exec:tmux\u{1b}[2J", "control character '\\u{1b}'"),
            ("web=docker:web\u{7}", "control character '\\u{7}'"),
            ("box=me@box\r", "control character '\\r'"),
            ("box=ssh:", "the ssh target is empty"),
            ("box=ssh:-i 'k me@x", "the ssh target has an unclosed quote"),
        ] {
            let e = HostSpec::parse(spec).unwrap_err().to_string();
            assert!(e.contains(says), "{spec:?}: {e}");
            assert!(
                e.contains("NAME=kubectl:[NAMESPACE/]POD[:CONTAINER]"),
                "{e}"
            );
        }
        let e = HostSpec::parse(&format!("k=kubectl:{}", "a".repeat(254))).unwrap_err();
        assert!(e.to_string().contains("1 to 253"), "{e}");
        let e = HostSpec::parse(&format!("k=kubectl:{}/w", "a".repeat(64))).unwrap_err();
        assert!(e.to_string().contains("1 to 63"), "{e}");
        // A prefix that is not a kind stays an ssh destination, as before.
        assert_eq!(host("box=lxc:box").ssh_args().unwrap(), ["lxc:box"]);
    }

    #[test]
    fn kinds_mix_in_the_variable_and_the_hosts_file() {
        let specs = split_host_values(&[
            "a=docker:web,b=kubectl:prod/web-0:app\nc=exec:sh -c 'exec tmux \"$@\"' sh".to_owned(),
        ]);
        let kinds: Vec<&str> = specs
            .iter()
            .map(|s| HostSpec::parse(s).unwrap().kind_name())
            .collect();
        assert_eq!(kinds, ["docker", "kubectl", "exec"]);
    }

    #[test]
    fn host_values_split_at_newlines_and_commas_before_a_name() {
        let specs = split_host_values(&["a=x,b=-o Ciphers=c,d y\nc=z".to_owned()]);
        assert_eq!(specs, ["a=x", "b=-o Ciphers=c,d y", "c=z"]);
    }

    #[test]
    fn bad_hosts_are_refused_clearly() {
        let e = host_error(&["--host", "box"]);
        assert!(e.contains("no '='"), "{e}");
        let e = host_error(&["--host", "local=me@x"]);
        assert!(e.contains("reserved"), "{e}");
        let e = host_error(&["--host", "LOCAL=me@x"]);
        assert!(e.contains("reserved"), "{e}");
        for bad in [
            "1box=x",
            "b.x=x",
            "=x",
            "a b=x",
            &format!("{}=x", "a".repeat(33)),
        ] {
            let e = host_error(&["--host", bad]);
            assert!(e.contains("must be a letter"), "{bad}: {e}");
        }
        let e = host_error(&["--host", "box=a@b", "--host", "box=c@d"]);
        assert!(e.contains("given twice"), "{e}");
        let e = host_error(&["--host", "box="]);
        assert!(e.contains("empty"), "{e}");
        let e = host_error(&["--host", "box=me@x -p"]);
        assert!(e.contains("end with the destination"), "{e}");
        let e = host_error(&["--host", "box=-i 'key me@x"]);
        assert!(e.contains("unclosed quote"), "{e}");
        assert!(e.contains("TMUX_MCP_HOSTS"), "{e}");
    }

    #[test]
    fn hosts_file_adds_hosts() {
        let dir = std::env::temp_dir().join(format!("tmux-mcp-hosts-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("hosts");
        std::fs::write(&file, "# my hosts\n\nbuild = -p 22 ci@build\n").unwrap();
        let f = file.to_str().unwrap();
        let c = parse(&["--hosts-file", f, "--host", "box=me@box"]).unwrap();
        let names: Vec<&str> = c.hosts.iter().map(|h| h.name.as_str()).collect();
        assert_eq!(names, ["box", "build"]);
        assert_eq!(c.hosts[1].ssh_args().unwrap(), ["-p", "22", "ci@build"]);
        // A name in both the flags and the file is a duplicate.
        let e = host_error(&["--hosts-file", f, "--host", "build=x"]);
        assert!(e.contains("given twice"), "{e}");
        let missing = dir.join("missing");
        let e = parse(&["--hosts-file", missing.to_str().unwrap()]).unwrap_err();
        assert!(matches!(e, ConfigError::HostsFile { .. }), "{e}");
        assert!(e.to_string().contains("missing"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
