//! The tool list: every tool the code defines ([`TmuxMcp::full_router`],
//! its schemas made standard and its tasks declared), the router a server
//! serves (the full one minus the tools that are not enabled or not
//! classified), and the `host` argument added to every tool's schema when
//! remote hosts are configured.

use std::sync::Arc;

use rmcp::handler::server::router::tool::ToolRouter;

use crate::config::LOCAL_HOST;
#[cfg(test)]
use crate::config::toolsets::Toolset;
use crate::config::toolsets::{ToolSelection, toolset_of};
use crate::mcp::schema;

use super::TmuxMcp;

impl TmuxMcp {
    /// Every tool the code defines, before any filtering, with its schemas
    /// in standard JSON Schema ([`schema::standardise`]) and as compact as
    /// `tools/list` sends them ([`schema::compact`]).
    pub(crate) fn full_router() -> ToolRouter<TmuxMcp> {
        // Made once a process (its schemas are generated and rewritten: a
        // few milliseconds a `tmux-mcp call` would pay again and again).
        static FULL: std::sync::OnceLock<ToolRouter<TmuxMcp>> = std::sync::OnceLock::new();
        FULL.get_or_init(|| Self::routes(true)).clone()
    }

    /// [`Self::full_router`] with every output schema documented, for
    /// `tmux-mcp call TOOL --help`.
    pub(crate) fn documented_router() -> ToolRouter<TmuxMcp> {
        Self::routes(false)
    }

    fn routes(compact_output: bool) -> ToolRouter<TmuxMcp> {
        let mut router = Self::inspect_router()
            + Self::wait_router()
            + Self::attention_router()
            + Self::manage_router()
            + Self::execute_router()
            + Self::run_router()
            + Self::humans_router()
            + Self::teardown_router();
        // Every result may carry the attention events not told yet; their
        // schema is told once, in wait_for_attention's output schema.
        let attention = serde_json::json!({
            "type": "object",
            "description": "Attention events not told to this session yet (each is told once): \
                {cursor, events, more}, as wait_for_attention returns them.",
        });
        for route in router.map.values_mut() {
            let input = Arc::make_mut(&mut route.attr.input_schema);
            schema::standardise(input);
            schema::compact(input, schema::Side::Input);
            if let Some(output) = route.attr.output_schema.as_mut() {
                let output = Arc::make_mut(output);
                if let Some(serde_json::Value::Object(properties)) = output.get_mut("properties") {
                    properties.insert("attention".to_owned(), attention.clone());
                }
                schema::standardise(output);
                if compact_output {
                    schema::compact(output, schema::Side::Output);
                }
            }
            crate::mcp::tasks::declare(&mut route.attr);
        }
        router
    }

    /// The routers of one toolset (to check the classification table).
    #[cfg(test)]
    pub(crate) fn toolset_router(set: Toolset) -> ToolRouter<TmuxMcp> {
        match set {
            Toolset::Inspect => {
                Self::inspect_router() + Self::wait_router() + Self::attention_router()
            }
            Toolset::Manage => Self::manage_router(),
            Toolset::Execute => Self::execute_router() + Self::run_router() + Self::humans_router(),
            Toolset::Teardown => Self::teardown_router(),
        }
    }
}

/// The full router minus every tool that is not enabled or not classified.
pub(super) fn filtered_router(selection: &ToolSelection) -> ToolRouter<TmuxMcp> {
    let mut router = TmuxMcp::full_router();
    let names: Vec<String> = router
        .list_all()
        .into_iter()
        .map(|t| t.name.into_owned())
        .collect();
    for name in names {
        if toolset_of(&name).is_none() {
            tracing::error!(tool = %name, "tool has no toolset; it is not served");
            router.remove_route(&name);
        } else if !selection.is_enabled(&name) {
            router.remove_route(&name);
        }
    }
    router
}

/// Adds the optional `host` argument to a tool's input schema.
pub(super) fn add_host_argument(
    schema: &mut serde_json::Map<String, serde_json::Value>,
    hosts: &[&str],
) {
    let properties = schema
        .entry("properties")
        .or_insert_with(|| serde_json::Value::Object(serde_json::Map::new()));
    if let Some(properties) = properties.as_object_mut() {
        properties.insert(
            "host".to_owned(),
            serde_json::json!({
                "type": "string",
                "description": format!(
                    "The machine whose tmux server to act on: {LOCAL_HOST} (the default, also when left out) or a configured remote host: {}. Ids (%3, @2, $1) and names are per host.",
                    hosts.join(", ")
                ),
            }),
        );
    }
}
