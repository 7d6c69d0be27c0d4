//! Toolsets: which tools exist, which set each belongs to, and which are
//! enabled.
//!
//! The classification is one explicit table ([`TOOLS`]). A tool that is
//! registered with the router but missing from the table is never enabled
//! (fail closed), and a unit test checks that the table and the router agree.

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

use crate::config::error::ConfigError;

/// A group of tools, by what they can do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Toolset {
    /// Read tmux state and pane output; never sends input or changes anything.
    Inspect,
    /// Change structure and presentation (names, sizes, selection, layout,
    /// attached clients); never starts a process or sends input.
    Manage,
    /// Start processes, send input, set options and environment.
    Execute,
    /// Kill panes, windows, sessions and the server.
    Teardown,
}

impl Toolset {
    /// Every toolset, in documentation order.
    pub const ALL: [Toolset; 4] = [
        Toolset::Inspect,
        Toolset::Manage,
        Toolset::Execute,
        Toolset::Teardown,
    ];

    /// The toolsets enabled when nothing is configured.
    pub const DEFAULT: [Toolset; 3] = [Toolset::Inspect, Toolset::Manage, Toolset::Execute];

    /// The name used in configuration.
    pub fn name(self) -> &'static str {
        match self {
            Toolset::Inspect => "inspect",
            Toolset::Manage => "manage",
            Toolset::Execute => "execute",
            Toolset::Teardown => "teardown",
        }
    }
}

impl fmt::Display for Toolset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Toolset {
    type Err = ConfigError;

    fn from_str(s: &str) -> Result<Self, ConfigError> {
        Toolset::ALL
            .into_iter()
            .find(|t| t.name() == s)
            .ok_or_else(|| ConfigError::UnknownToolset {
                name: s.to_owned(),
                known: Toolset::ALL.map(Toolset::name).join(", "),
            })
    }
}

/// Every tool and its toolset. This table is the classification: a tool
/// that is not listed here is never served.
pub const TOOLS: &[(&str, Toolset)] = &[
    ("list_terminals", Toolset::Inspect),
    ("capture_screen", Toolset::Inspect),
    ("read_output", Toolset::Inspect),
    ("search_output", Toolset::Inspect),
    ("read_log", Toolset::Inspect),
    ("search_log", Toolset::Inspect),
    ("list_regions", Toolset::Inspect),
    ("read_region", Toolset::Inspect),
    ("search_regions", Toolset::Inspect),
    ("pane_info", Toolset::Inspect),
    ("wait_for_output", Toolset::Inspect),
    ("wait_for_idle", Toolset::Inspect),
    ("wait_for_state", Toolset::Inspect),
    ("wait_for_exit", Toolset::Inspect),
    ("wait_for_attention", Toolset::Inspect),
    ("rename", Toolset::Manage),
    ("resize", Toolset::Manage),
    ("select", Toolset::Manage),
    ("set_layout", Toolset::Manage),
    ("detach_clients", Toolset::Manage),
    ("create_terminal", Toolset::Execute),
    ("run", Toolset::Execute),
    ("send_text", Toolset::Execute),
    ("send_keys", Toolset::Execute),
    ("paste_text", Toolset::Execute),
    ("respawn", Toolset::Execute),
    ("set_option", Toolset::Execute),
    ("set_environment", Toolset::Execute),
    ("web_view", Toolset::Execute),
    ("request_human", Toolset::Execute),
    ("kill_pane", Toolset::Teardown),
    ("kill_window", Toolset::Teardown),
    ("kill_session", Toolset::Teardown),
    ("kill_server", Toolset::Teardown),
];

/// The toolset of `tool`, or `None` if it is not classified.
pub fn toolset_of(tool: &str) -> Option<Toolset> {
    TOOLS
        .iter()
        .find(|(name, _)| *name == tool)
        .map(|(_, t)| *t)
}

/// The tools the server serves: the enabled toolsets, plus tools enabled by
/// name, minus tools excluded by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolSelection {
    toolsets: BTreeSet<Toolset>,
    enabled: BTreeSet<&'static str>,
}

impl Default for ToolSelection {
    fn default() -> Self {
        Self::from_parts(&Toolset::DEFAULT, &[], &[])
    }
}

impl ToolSelection {
    /// Resolves the configured names. Any unknown toolset or tool name is
    /// an error (a typo must not silently change the surface).
    pub fn resolve<S: AsRef<str>>(
        toolsets: &[S],
        tools: &[S],
        exclude: &[S],
    ) -> Result<Self, ConfigError> {
        let sets = toolsets
            .iter()
            .map(|s| s.as_ref().trim())
            .filter(|s| !s.is_empty())
            .map(str::parse)
            .collect::<Result<Vec<Toolset>, _>>()?;
        let tools = resolve_names(tools, "--tools / TMUX_MCP_TOOLS")?;
        let exclude = resolve_names(exclude, "--exclude-tools / TMUX_MCP_EXCLUDE_TOOLS")?;
        Ok(Self::from_parts(&sets, &tools, &exclude))
    }

    fn from_parts(toolsets: &[Toolset], tools: &[&'static str], exclude: &[&'static str]) -> Self {
        let toolsets: BTreeSet<Toolset> = toolsets.iter().copied().collect();
        let mut enabled: BTreeSet<&'static str> = TOOLS
            .iter()
            .filter(|(_, set)| toolsets.contains(set))
            .map(|(name, _)| *name)
            .collect();
        enabled.extend(tools.iter().copied());
        for name in exclude {
            enabled.remove(name);
        }
        Self { toolsets, enabled }
    }

    /// Whether `tool` is served. Unclassified tools never are.
    pub fn is_enabled(&self, tool: &str) -> bool {
        toolset_of(tool).is_some() && self.enabled.contains(tool)
    }

    /// The enabled toolsets (tools enabled one by one are not counted).
    pub fn toolsets(&self) -> impl Iterator<Item = Toolset> + '_ {
        self.toolsets.iter().copied()
    }

    /// The enabled tools, sorted.
    pub fn tools(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.enabled.iter().copied()
    }
}

fn resolve_names<S: AsRef<str>>(
    names: &[S],
    source: &'static str,
) -> Result<Vec<&'static str>, ConfigError> {
    names
        .iter()
        .map(|s| s.as_ref().trim())
        .filter(|s| !s.is_empty())
        .map(|name| {
            TOOLS
                .iter()
                .find(|(known, _)| *known == name)
                .map(|(known, _)| *known)
                .ok_or_else(|| ConfigError::UnknownTool {
                    name: name.to_owned(),
                    setting: source,
                    known: TOOLS.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", "),
                })
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn default_is_inspect_manage_execute() {
        let s = ToolSelection::default();
        assert!(s.is_enabled("capture_screen"));
        assert!(s.is_enabled("rename"));
        assert!(s.is_enabled("run"));
        assert!(!s.is_enabled("kill_server"));
        assert!(!s.is_enabled("no_such_tool"));
    }

    #[test]
    fn tools_and_exclusions() {
        let s = ToolSelection::resolve(&["inspect"], &["kill_pane"], &["read_output"]).unwrap();
        assert!(s.is_enabled("kill_pane"));
        assert!(!s.is_enabled("read_output"));
        assert!(!s.is_enabled("run"));
        // Exclusion wins over everything.
        let s = ToolSelection::resolve(&["teardown"], &["run"], &["run", "kill_server"]).unwrap();
        assert!(!s.is_enabled("run"));
        assert!(!s.is_enabled("kill_server"));
        assert!(s.is_enabled("kill_pane"));
        // Empty entries are ignored; an empty toolset list serves nothing.
        let s = ToolSelection::resolve::<&str>(&[""], &[], &[]).unwrap();
        assert_eq!(s.tools().count(), 0);
    }

    #[test]
    fn unknown_names_fail() {
        let e = ToolSelection::resolve(&["inspect", "exec"], &[], &[]).unwrap_err();
        assert!(e.to_string().contains("\"exec\""), "{e}");
        assert!(
            e.to_string().contains("inspect, manage, execute, teardown"),
            "{e}"
        );
        let e = ToolSelection::resolve(&["inspect"], &["kill-pane"], &[]).unwrap_err();
        assert!(e.to_string().contains("kill-pane"), "{e}");
        let e = ToolSelection::resolve(&["inspect"], &[], &["nope"]).unwrap_err();
        assert!(e.to_string().contains("--exclude-tools"), "{e}");
    }

    #[test]
    fn table_has_unique_names() {
        let names: BTreeSet<_> = TOOLS.iter().map(|(n, _)| *n).collect();
        assert_eq!(names.len(), TOOLS.len());
    }
}
