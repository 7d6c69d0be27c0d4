//! tmux-mcp: placeholder until the MCP server lands.

fn main() {}
