//! The `execute` toolset: create terminals, send input, respawn, set
//! options and environment (`run` is in [`crate::tools::run`]).
//!
//! One file per group of tools, each with its own router; `execute_router`
//! joins them.

pub(crate) mod create;
pub(crate) mod input;
pub(crate) mod options;
pub(crate) mod respawn;

use std::collections::BTreeMap;

use rmcp::handler::server::router::tool::ToolRouter;

use crate::mcp::server::TmuxMcp;
use crate::reply::ToolError;

impl TmuxMcp {
    /// The tools of this module: `create_terminal`, the input tools,
    /// `respawn`, `set_option` and `set_environment`.
    pub(crate) fn execute_router() -> ToolRouter<TmuxMcp> {
        Self::create_router()
            + Self::input_router()
            + Self::respawn_router()
            + Self::options_router()
    }
}

/// Refuses a `cwd` that is not an existing directory.
fn check_cwd(cwd: Option<&str>, what: &str) -> Result<(), ToolError> {
    if let Some(dir) = cwd
        && !std::path::Path::new(dir).is_dir()
    {
        return Err(ToolError::new(
            what,
            format!("cwd {dir:?} is not an existing directory"),
            "Give an absolute path of an existing directory, or omit cwd",
        ));
    }
    Ok(())
}

/// Refuses environment variable names tmux cannot set.
fn check_env(env: Option<&BTreeMap<String, String>>, what: &str) -> Result<(), ToolError> {
    for name in env.into_iter().flat_map(BTreeMap::keys) {
        if name.is_empty() || name.contains('=') || name.contains('\0') {
            return Err(ToolError::new(
                what,
                format!("{name:?} is not a variable name"),
                "Use names without '=' such as DEBUG or PATH",
            ));
        }
    }
    Ok(())
}
