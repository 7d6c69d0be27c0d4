//! `web_view` and `request_human`: a link a person opens to see the
//! terminals live in the browser (and take one over), and an agent's call
//! for a person. The view itself is `crate::transport::web`; these tools
//! only read where it is served ([`crate::mcp::server::WebLink`]).

use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::mcp::server::TmuxMcp;
use crate::reply::{Json, Summary, ToolError};
use crate::terminal::attention::{Detail, Kind};

const WEB_VIEW: &str = "A link to the live web view of the terminals (or of one, with target) for the person you work with: they see every byte as it arrives and can take a terminal over; hand it to them as it is (it carries its own key).";

const REQUEST_HUMAN: &str = "Ask for a person at a terminal (a decision, a password, a review): raises a human_requested attention event with your reason and returns the terminal's web view link to give them. Does not wait: wait_for_attention tells you when they take it over and hand it back.";

/// Arguments of `web_view`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WebViewArgs {
    /// One terminal (`%3` or an exact name); default: the whole view.
    pub target: Option<String>,
}

/// Arguments of `request_human`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RequestHumanArgs {
    /// The terminal the person is needed at: `%3` or an exact name.
    pub target: String,
    /// What you need them for, in a sentence.
    pub reason: String,
}

/// Result of `web_view` and `request_human`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct WebViewResult {
    /// The link (its key is in the part after `#`).
    pub url: String,
    /// The terminal, as the view names it (`HOST:%PANE`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub terminal: Option<String>,
    /// The attention event raised (request_human).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event: Option<u64>,
}

impl Summary for WebViewResult {
    fn summary(&self) -> String {
        match (&self.terminal, self.event) {
            (Some(t), Some(seq)) => format!(
                "Asked for a person at {t} (attention event {seq}). Give them this link: {}",
                self.url
            ),
            (Some(t), None) => format!("The web view of {t}: {}", self.url),
            _ => format!("The web view of every terminal: {}", self.url),
        }
    }
}

impl TmuxMcp {
    /// The web view's link, or the error that says how to turn it on.
    fn web_link(&self, what: &str) -> Result<crate::mcp::server::WebLink, ToolError> {
        self.inner.web.get().cloned().ok_or_else(|| {
            ToolError::new(
                what,
                "the web view is not served by this tmux-mcp",
                "Start tmux-mcp with --web 127.0.0.1:PORT (or serve --http ADDR, which serves it at /ui/)",
            )
        })
    }

    /// The view's id of the terminal `target` names.
    async fn view_id(&self, target: &str) -> Result<String, ToolError> {
        let conn = self.conn().await?;
        let r = conn.resolve(target).await?;
        Ok(format!("{}:{}", self.backend.host(), r.pane))
    }
}

#[tool_router(router = humans_router, vis = "pub(crate)")]
impl TmuxMcp {
    #[tool(description = WEB_VIEW, annotations(title = "Web view link", read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false))]
    pub(crate) async fn web_view(
        &self,
        Parameters(args): Parameters<WebViewArgs>,
    ) -> Result<Json<WebViewResult>, ToolError> {
        let link = self.web_link("Making a web view link")?;
        let terminal = match &args.target {
            Some(target) => Some(self.view_id(target).await?),
            None => None,
        };
        Ok(Json(WebViewResult {
            url: link.url(terminal.as_deref()),
            terminal,
            event: None,
        }))
    }

    #[tool(description = REQUEST_HUMAN, annotations(title = "Ask for a person", read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false))]
    pub(crate) async fn request_human(
        &self,
        Parameters(args): Parameters<RequestHumanArgs>,
    ) -> Result<Json<WebViewResult>, ToolError> {
        let what = "Asking for a person";
        let link = self.web_link(what)?;
        let conn = self.conn().await?;
        let r = conn.resolve(&args.target).await?;
        let terminal = format!("{}:{}", self.backend.host(), r.pane);
        let host: std::sync::Arc<str> = std::sync::Arc::from(self.backend.host());
        let event = self.attention_log().push(
            &host,
            Some(r.pane),
            Kind::HumanRequested,
            Detail {
                reason: Some(args.reason.chars().take(500).collect()),
                typed_by: Some(crate::mcp::actors::current().to_string()),
                evidence: "an agent called request_human".to_owned(),
                ..Detail::default()
            },
        );
        Ok(Json(WebViewResult {
            url: link.url(Some(&terminal)),
            terminal: Some(terminal),
            event: Some(event),
        }))
    }
}
