//! The server's state and how values of it are made: [`TmuxMcp::new`] and
//! [`TmuxMcp::with_caller`] build the shared [`Inner`] (the configuration,
//! the local and remote tmux servers, the audit log, the redactor, the
//! resources and the tasks), [`TmuxMcp::on_host`] and
//! [`TmuxMcp::remote_hosts`] make values acting on a host, and
//! [`TmuxMcp::for_session`] one for each MCP session.

use std::sync::Arc;

use crate::config::{Config, LOCAL_HOST};
use crate::mcp::audit::AuditLog;
use crate::mcp::subscriptions::Resources;
use crate::reply::ToolError;
use crate::terminal::backend::Backend;
use crate::terminal::guard::Caller;
use crate::text::redact::Redactor;

use super::handler::instructions;
use super::router::{add_host_argument, filtered_router};
use super::{CALL_GRACE, Inner, StartError, TmuxMcp};

impl TmuxMcp {
    /// A server with `config`; the self-kill guard reads `TMUX` and
    /// `TMUX_PANE` from this process's environment.
    pub fn new(config: Config) -> Result<Self, StartError> {
        Self::with_caller(config, Caller::from_env())
    }

    /// A server with `config` and an explicit idea of where the caller runs
    /// in tmux (for tests of the self-kill guard).
    pub fn with_caller(config: Config, caller: Caller) -> Result<Self, StartError> {
        let local = Arc::new(Backend::new(&config));
        Self::assemble(config, caller, local)
    }

    /// A server on the local tmux server of `local`, made beforehand from
    /// `config` (`tmux-mcp call` starts connecting it while the rest of the
    /// server is made).
    pub(crate) fn with_local(config: Config, local: Arc<Backend>) -> Result<Self, StartError> {
        Self::assemble(config, Caller::from_env(), local)
    }

    fn assemble(config: Config, caller: Caller, local: Arc<Backend>) -> Result<Self, StartError> {
        let redactor = Redactor::new(config.default_redactions, &config.extra_redactions)?;
        let audit = match &config.audit_log {
            Some(path) => Some(AuditLog::open(path).map_err(|source| StartError::AuditLog {
                path: path.display().to_string(),
                source,
            })?),
            None => None,
        };
        let mut tool_router = filtered_router(&config.tools);
        let mut full = TmuxMcp::full_router();
        if !config.hosts.is_empty() {
            let names: Vec<&str> = config.hosts.iter().map(|h| h.name.as_str()).collect();
            for router in [&mut tool_router, &mut full] {
                for route in router.map.values_mut() {
                    add_host_argument(Arc::make_mut(&mut route.attr.input_schema), &names);
                }
            }
        }
        let argument_names = full
            .list_all()
            .into_iter()
            .map(|tool| {
                let names = tool
                    .input_schema
                    .get("properties")
                    .and_then(|p| p.as_object())
                    .map(|p| p.keys().cloned().collect())
                    .unwrap_or_default();
                (tool.name.into_owned(), names)
            })
            .collect();
        // One attention log for every host.
        let log = local.attention().clone();
        let hosts = config
            .hosts
            .iter()
            .map(|h| {
                let remote = Backend::remote(&config, h).logging_to(log.clone());
                (h.name.clone(), Arc::new(remote))
            })
            .collect();
        let instructions = instructions(&config, &local.attach_prefix());
        let tasks = crate::mcp::tasks::Tasks::new(config.max_wait + CALL_GRACE);
        let server = Self {
            tool_router,
            backend: local.clone(),
            inner: Arc::new(Inner {
                config,
                local,
                hosts,
                audit,
                redactor,
                caller,
                resources: Resources::new(),
                argument_names,
                sessions: std::sync::atomic::AtomicU64::new(0),
                instructions,
                tasks,
                webhook_started: std::sync::atomic::AtomicBool::new(false),
                web: std::sync::OnceLock::new(),
            }),
            session: 0,
            _session_end: None,
            session_actor: Arc::default(),
            seen: Arc::default(),
            told_ahead: Arc::default(),
        };
        Ok(server)
    }

    /// This server acting on host `host` (`None` or `local`: the local
    /// tmux server), or the error that lists the configured hosts.
    pub(crate) fn on_host(&self, host: Option<&str>) -> Result<TmuxMcp, ToolError> {
        let backend = match host {
            None => self.inner.local.clone(),
            Some(name) if name == LOCAL_HOST => self.inner.local.clone(),
            Some(name) => self.inner.hosts.get(name).cloned().ok_or_else(|| {
                let known: Vec<&str> = std::iter::once(LOCAL_HOST)
                    .chain(self.inner.hosts.keys().map(String::as_str))
                    .collect();
                ToolError::new(
                    format!("Using host {name:?}"),
                    if self.inner.hosts.is_empty() {
                        "no remote hosts are configured".to_owned()
                    } else {
                        "there is no host of that name".to_owned()
                    },
                    format!(
                        "Use one of: {} (or leave host out for local); hosts are added with --host NAME=TARGET",
                        known.join(", ")
                    ),
                )
            })?,
        };
        Ok(Self {
            backend,
            ..self.clone()
        })
    }

    /// The same server acting on each remote host, in name order.
    pub(crate) fn remote_hosts(&self) -> Vec<TmuxMcp> {
        self.inner
            .hosts
            .values()
            .map(|backend| Self {
                backend: backend.clone(),
                ..self.clone()
            })
            .collect()
    }

    /// A value of this server for one more MCP session, sharing all of its
    /// state (terminals, runs, the audit log) but with resource
    /// subscriptions of its own. A server that serves several sessions at
    /// once (`serve --unix`, `serve --http`) serves each with its own
    /// value. The session's subscriptions end when the last clone of the
    /// value is dropped.
    pub fn for_session(&self) -> Self {
        let number = self
            .inner
            .sessions
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            + 1;
        Self {
            session: number,
            _session_end: Some(Arc::new(self.inner.resources.session_guard(number))),
            session_actor: Arc::default(),
            // A new session hears of what happens from now on.
            seen: Arc::new(std::sync::atomic::AtomicU64::new(
                self.inner.local.attention().last(),
            )),
            told_ahead: Arc::default(),
            ..self.clone()
        }
    }

    /// The state directory: the configured one, else
    /// `$XDG_RUNTIME_DIR/tmux-mcp` or `$TMPDIR/tmux-mcp-UID`.
    pub fn state_dir(&self) -> std::path::PathBuf {
        self.inner.local.state_dir()
    }

    /// Names of the tools this server serves, sorted.
    pub fn tool_names(&self) -> Vec<String> {
        self.tool_router
            .list_all()
            .into_iter()
            .map(|t| t.name.into_owned())
            .collect()
    }
}
