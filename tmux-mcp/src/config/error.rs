//! [`ConfigError`]: why a configuration cannot be used. Its own module, below
//! both [`crate::config`] and [`crate::config::toolsets`], which return it.

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
    /// A remote host that cannot be used.
    #[error(
        "--host / TMUX_MCP_HOSTS / --hosts-file entry {spec:?}: {reason}; write NAME=SSH_TARGET (box=me@box.example, box=-p 2222 me@box.example), NAME=docker:CONTAINER, NAME=podman:CONTAINER, NAME=kubectl:[NAMESPACE/]POD[:CONTAINER] or NAME=exec:COMMAND ARGS…"
    )]
    BadHost {
        /// The entry given.
        spec: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A hosts file that cannot be read.
    #[error("cannot read the hosts file {path} (--hosts-file / TMUX_MCP_HOSTS_FILE): {reason}")]
    HostsFile {
        /// The path given.
        path: String,
        /// The operating system's error.
        reason: String,
    },
}
