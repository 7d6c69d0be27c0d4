//! What is known about a followed pane besides its output, kept fresh by
//! tmux's `refresh-client -B` subscriptions (pushed, about once a second)
//! and by layout and window notifications.

use crate::command::{RefreshClient, SubscriptionScope};
use crate::ids::WindowId;

/// What is known about a followed pane's state. Updated from tmux's
/// `refresh-client -B` subscriptions (evaluated by tmux about once a second)
/// and from layout and window notifications.
///
/// ```
/// use tmux_control::PaneState;
/// let s = PaneState::default();
/// assert!(!s.dead && s.exit_status.is_none());
/// ```
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PaneState {
    /// The pane's program has exited (the pane stays with `remain-on-exit`).
    pub dead: bool,
    /// The exit status of the dead pane's program, when tmux knows it.
    pub exit_status: Option<i32>,
    /// The pane no longer exists.
    pub gone: bool,
    /// The foreground command (`#{pane_current_command}`).
    pub current_command: Option<String>,
    /// The working directory (`#{pane_current_path}`).
    pub current_path: Option<String>,
    /// The title (`#{pane_title}`).
    pub title: Option<String>,
    /// The pane is in a mode such as copy mode.
    pub in_mode: bool,
    /// The alternate screen is active (a full-screen program is running).
    pub alternate_screen: bool,
    /// The window the pane was last seen in.
    pub window: Option<WindowId>,
    /// Bumped on every layout change that involves the pane (resize, zoom, move).
    pub layout_generation: u64,
}

/// How a pane's program ended.
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct PaneExit {
    /// The exit status, when tmux reported it. The pane must be kept with
    /// `remain-on-exit` for tmux to know it, and tmux 3.3a occasionally
    /// never reports it; the wait gives it a short grace period after death.
    pub status: Option<i32>,
    /// The pane itself is gone (it was not kept after its program exited).
    pub gone: bool,
}

/// The names tmux shows as a pane's current command while its program
/// starts: the forked server process before it execs, and the first word
/// of the line [`Tmux::spawn`](crate::Tmux::spawn) runs (`trap …`) until
/// the child has taken the terminal.
const START_UP_NAMES: &[&str] = &["tmux", "trap"];

/// Shells that take POSIX `sh` syntax, by command name.
const POSIX_SHELLS: &[&str] = &[
    "bash", "zsh", "sh", "dash", "ksh", "ksh93", "mksh", "pdksh", "ash", "busybox", "yash", "posh",
    "oksh", "loksh",
];

impl PaneState {
    /// Whether `command` (a command name or path as tmux shows it, `-bash`
    /// for a login shell) is a shell that takes POSIX `sh` syntax.
    ///
    /// ```
    /// use tmux_control::PaneState;
    /// assert!(PaneState::is_posix_shell("bash") && PaneState::is_posix_shell("-zsh"));
    /// assert!(PaneState::is_posix_shell("/bin/sh"));
    /// assert!(!PaneState::is_posix_shell("fish") && !PaneState::is_posix_shell("python3"));
    /// ```
    pub fn is_posix_shell(command: &str) -> bool {
        let base = command
            .rsplit('/')
            .next()
            .unwrap_or(command)
            .trim_start_matches('-');
        POSIX_SHELLS.contains(&base)
    }

    /// Whether `command`, a pane's current command as tmux names it
    /// (`#{pane_current_command}`), is one tmux shows only while a pane's
    /// program is starting, so that the real one is still to come.
    ///
    /// ```
    /// use tmux_control::PaneState;
    /// assert!(PaneState::is_start_up_name("tmux"));
    /// assert!(!PaneState::is_start_up_name("bash"));
    /// ```
    pub fn is_start_up_name(command: &str) -> bool {
        START_UP_NAMES.contains(&command)
    }
}

/// Names of the subscriptions that keep followed panes' state fresh, and
/// the format each one watches (one field each, so no separator is needed).
const STATE_SUBSCRIPTIONS: &[(&str, &str)] = &[
    (DEAD, "#{pane_dead} #{pane_dead_status}"),
    ("tmux-control-cmd", "#{pane_current_command}"),
    ("tmux-control-path", "#{pane_current_path}"),
    ("tmux-control-title", "#{pane_title}"),
    ("tmux-control-mode", "#{pane_in_mode} #{alternate_on}"),
];

/// The subscription that reports a pane's death and exit status.
pub(super) const DEAD: &str = "tmux-control-dead";

/// The prefix of every state subscription's name.
pub(super) const PREFIX: &[u8] = b"tmux-control-";

/// The `refresh-client -B` commands that set the state subscriptions up.
pub(super) fn subscriptions() -> crate::error::Result<Vec<RefreshClient>> {
    STATE_SUBSCRIPTIONS
        .iter()
        .map(|(name, format)| RefreshClient::subscribe(name, SubscriptionScope::AllPanes, format))
        .collect()
}

#[cfg(all(test, feature = "serde"))]
#[allow(clippy::unwrap_used)]
mod serde_tests {
    use super::*;

    #[test]
    fn pane_state_round_trips_through_json() {
        let state = PaneState {
            dead: true,
            exit_status: Some(3),
            current_command: Some("make".into()),
            window: Some(WindowId(2)),
            ..PaneState::default()
        };
        let json = serde_json::to_value(&state).unwrap();
        assert_eq!(json["window"], "@2");
        assert_eq!(json["exit_status"], 3);
        assert_eq!(serde_json::from_value::<PaneState>(json).unwrap(), state);
    }
}
