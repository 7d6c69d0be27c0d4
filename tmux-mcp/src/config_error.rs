//! [`ConfigError`]: why a configuration cannot be used. Its own module, below
//! both [`crate::config`] and [`crate::toolsets`], which return it.

/// Why the configuration cannot be used. Start-up stops with this message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// A toolset name that does not exist.
    #[error(
        "unknown toolset {name:?} in --toolsets / TMUX_MCP_TOOLSETS; the toolsets are: {known}"
    )]
    UnknownToolset {
        /// The name given.
        name: String,
        /// The valid names.
        known: String,
    },
    /// A tool name that does not exist.
    #[error("unknown tool {name:?} in {setting}; the tools are: {known}")]
    UnknownTool {
        /// The name given.
        name: String,
        /// Which setting it came from.
        setting: &'static str,
        /// The valid names.
        known: String,
    },
    /// A redaction pattern that is not a valid regular expression.
    #[error(
        "--redact / TMUX_MCP_REDACT pattern {pattern:?} is not a valid regular expression: {reason}"
    )]
    BadRedaction {
        /// The pattern given.
        pattern: String,
        /// Why the regex crate refused it.
        reason: String,
    },
    /// Two settings that cannot be combined.
    #[error("{0}")]
    Conflict(String),
    /// A value out of range.
    #[error("{0}")]
    OutOfRange(String),
}
