//! The MCP server handler: what `tmux-mcp` tells a client about itself and
//! how it answers requests.

use rmcp::{
    ErrorData as McpError, RoleServer, ServerHandler,
    model::{
        CallToolRequestParams, CallToolResponse, Implementation, ServerCapabilities, ServerConfig,
    },
    service::RequestContext,
};

/// The name the server reports in `serverInfo.name`.
pub(crate) const SERVER_NAME: &str = "tmux-mcp";

/// The instructions sent in the `initialize` result.
///
/// They describe this build as it is. Update them in the same change that
/// adds the first tool.
pub(crate) const INSTRUCTIONS: &str = "tmux-mcp gives AI agents terminals backed by tmux. \
This build has no tools yet: it answers the MCP handshake and lists zero tools, \
and it does not start or contact any tmux server.";

/// The `tmux-mcp` MCP server.
///
/// It advertises the tools capability and lists no tools; every tool call is
/// answered with the same "tool not found" error a tool router gives for an
/// unknown name. It holds no state and never touches tmux.
#[derive(Debug, Clone, Default)]
pub(crate) struct TmuxMcp;

impl ServerHandler for TmuxMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(SERVER_NAME, env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        tracing::debug!(tool = %request.name, "tools/call for a tool this build does not have");
        Err(McpError::invalid_params("tool not found", None))
    }
}
