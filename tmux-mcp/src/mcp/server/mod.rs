//! The MCP server handler: what `tmux-mcp` tells a client about itself, the
//! filtered tool router, and the audit record around every call.
//!
//! - here: [`TmuxMcp`], the state its clones share ([`Inner`]), the
//!   server's name and start-up errors;
//! - `state`: making the server, and its values for a host or a session;
//! - `router`: the tool list, filtered by the configured toolsets, with the
//!   `host` argument when remote hosts are configured;
//! - `handler`: the [`ServerHandler`](rmcp::ServerHandler) impl and the
//!   instructions;
//! - `call`: the wrapper around every tool call (arguments, host, actor,
//!   time bound, audit record);
//! - `task_call`: long calls made MCP tasks.

mod call;
#[cfg(test)]
pub(crate) use call::bad_arguments;
mod handler;
mod router;
mod state;
mod task_call;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use rmcp::ErrorData as McpError;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::CallToolResponse;

use crate::config::{Config, ConfigError};
use crate::mcp::audit::AuditLog;
use crate::mcp::subscriptions::{Resources, SessionGuard};
use crate::terminal::backend::Backend;
use crate::terminal::guard::Caller;
use crate::text::redact::Redactor;

/// How much longer than the longest wait a whole tool call may take.
const CALL_GRACE: std::time::Duration = std::time::Duration::from_secs(15);

/// How long a call from a client that declared the Tasks extension may run
/// before it is made a task (`TmuxMcp::call_as_task`).
const TASK_AFTER: std::time::Duration = std::time::Duration::from_secs(1);

/// A call from a client that declared the Tasks extension: its ordinary
/// result, or the task it became (see `TmuxMcp::call_as_task`).
pub(crate) type TaskCall =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<CallToolResponse, McpError>> + Send>>;

/// The name the server reports in `serverInfo.name`.
pub const SERVER_NAME: &str = "tmux-mcp";

/// Why the server cannot start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StartError {
    /// The configuration is invalid.
    #[error("configuration error: {0}")]
    Config(#[from] ConfigError),
    /// The audit log cannot be opened.
    #[error("cannot open the audit log {path}: {source}")]
    AuditLog {
        /// The path given.
        path: String,
        /// The operating system's error.
        source: std::io::Error,
    },
}

/// The `tmux-mcp` MCP server. Cheap to clone (state is shared).
///
/// It connects to tmux on the first tool call that needs it, never at
/// start-up, so `initialize` and `tools/list` never touch tmux.
///
/// A value acts on one tmux server (its `backend`): the local one,
/// or for a call with a `host` argument a clone acting on that host's.
#[derive(Clone)]
pub struct TmuxMcp {
    pub(crate) tool_router: ToolRouter<TmuxMcp>,
    pub(crate) inner: Arc<Inner>,
    /// The tmux server this value's tools act on.
    pub(crate) backend: Arc<Backend>,
    /// The MCP session this value serves (0 unless made by
    /// [`TmuxMcp::for_session`]): whose resource subscriptions are whose.
    pub(crate) session: u64,
    /// Ends the session's subscriptions when the last clone of this
    /// session's value is dropped (`None` for session 0, which lasts as
    /// long as the server).
    pub(crate) _session_end: Option<Arc<SessionGuard>>,
    /// The actor the session's `initialize` named in its `_meta`.
    pub(crate) session_actor: Arc<std::sync::OnceLock<String>>,
    /// The number of the last attention event this session was told of.
    pub(crate) seen: Arc<std::sync::atomic::AtomicU64>,
    /// Events after `seen` this session was told of already (by a
    /// filtered wait_for_attention), by number.
    pub(crate) told_ahead: Arc<std::sync::Mutex<std::collections::BTreeSet<u64>>>,
}

impl std::fmt::Debug for TmuxMcp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TmuxMcp")
            .field("tools", &self.tool_router.list_all().len())
            .field("server", &self.backend.describe())
            .field("hosts", &self.inner.hosts.keys().collect::<Vec<_>>())
            .finish()
    }
}

/// State shared by every clone of the server.
pub(crate) struct Inner {
    pub(crate) config: Config,
    /// The local tmux server (the resources follow only this one).
    pub(crate) local: Arc<Backend>,
    /// The remote hosts' tmux servers, by host name.
    pub(crate) hosts: BTreeMap<String, Arc<Backend>>,
    pub(crate) audit: Option<AuditLog>,
    pub(crate) redactor: Redactor,
    pub(crate) caller: Caller,
    /// The live resources and their subscribers (`crate::resources`).
    pub(crate) resources: Resources,
    /// Every tool's argument names (enabled or not), for the audit log.
    argument_names: HashMap<String, BTreeSet<String>>,
    /// Calls running as MCP tasks (`crate::mcp::tasks`).
    pub(crate) tasks: crate::mcp::tasks::Tasks,
    /// The last session number handed out by [`TmuxMcp::for_session`].
    sessions: std::sync::atomic::AtomicU64,
    instructions: String,
    /// The webhook task was started (by the first session, in the runtime).
    pub(crate) webhook_started: std::sync::atomic::AtomicBool,
    /// Where the web view is served, once it is (`transport::web`).
    pub(crate) web: std::sync::OnceLock<WebLink>,
}

/// Where the web view of this server is, for the links `web_view` and
/// `request_human` give.
#[derive(Clone)]
pub(crate) struct WebLink {
    /// The page's URL, like `http://127.0.0.1:8765/ui/`.
    pub(crate) page: String,
    /// The key of the server's own capability link (scope `input`).
    pub(crate) key: String,
}

impl std::fmt::Debug for WebLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The key never goes into a log.
        f.debug_struct("WebLink")
            .field("page", &self.page)
            .finish_non_exhaustive()
    }
}

impl WebLink {
    /// The capability link to the whole view, or to one terminal (`id`,
    /// like `local:%3`).
    pub(crate) fn url(&self, id: Option<&str>) -> String {
        let pane = id.map_or_else(String::new, |id| {
            format!("?pane={}", id.replace('%', "%25").replace(':', "%3A"))
        });
        format!("{}{pane}#key={}", self.page, self.key)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::call::take_host;
    use super::*;
    use crate::config::HostSpec;

    fn with_hosts(specs: &[&str]) -> TmuxMcp {
        let config = Config {
            hosts: specs.iter().map(|s| HostSpec::parse(s).unwrap()).collect(),
            ..Config::default()
        };
        TmuxMcp::with_caller(config, Caller::default()).unwrap()
    }

    #[test]
    fn host_names_choose_the_backend() {
        let server = with_hosts(&["box=me@box", "ci=-p 2222 ci@ci"]);
        assert_eq!(server.on_host(None).unwrap().backend.host(), "local");
        assert_eq!(
            server.on_host(Some("local")).unwrap().backend.host(),
            "local"
        );
        assert_eq!(server.on_host(Some("box")).unwrap().backend.host(), "box");
        assert!(server.on_host(Some("ci")).unwrap().backend.is_remote());
        let e = server.on_host(Some("nowhere")).unwrap_err().to_string();
        assert!(e.contains("local, box, ci"), "{e}");
        let none = with_hosts(&[]);
        let e = none.on_host(Some("box")).unwrap_err().to_string();
        assert!(e.contains("no remote hosts are configured"), "{e}");
    }

    #[test]
    fn the_host_argument_is_taken_out_and_advertised_only_with_hosts() {
        let mut args = serde_json::json!({"target": "%1", "host": "box"});
        let map = args.as_object_mut().unwrap();
        assert_eq!(take_host(Some(map)).unwrap().as_deref(), Some("box"));
        assert!(!map.contains_key("host"));
        let mut null = serde_json::json!({"host": null});
        assert_eq!(take_host(null.as_object_mut()).unwrap(), None);
        let mut bad = serde_json::json!({"host": 3});
        assert!(
            take_host(bad.as_object_mut())
                .unwrap_err()
                .contains("string")
        );
        assert_eq!(take_host(None).unwrap(), None);

        let has_host = |server: &TmuxMcp| {
            server.tool_router.list_all().iter().all(|t| {
                t.input_schema
                    .get("properties")
                    .and_then(|p| p.get("host"))
                    .is_some()
            })
        };
        let server = with_hosts(&["box=me@box"]);
        assert!(has_host(&server));
        assert!(server.inner.instructions.contains(
            "Remote hosts (over ssh, in containers or pods, or through a command): box."
        ));
        assert!(!with_hosts(&[]).tool_router.list_all().iter().any(|t| {
            t.input_schema
                .get("properties")
                .and_then(|p| p.get("host"))
                .is_some()
        }));
    }
}
