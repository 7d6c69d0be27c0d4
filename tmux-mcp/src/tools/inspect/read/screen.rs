//! The arguments and result of `capture_screen`, with the summary its
//! reply's text carries, and the line numbers a pane has.

use std::fmt::Write as _;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::reply::Summary;

/// Arguments of `capture_screen`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CaptureScreenArgs {
    /// The pane: `%3` or an exact name (a window or session means its active pane).
    pub target: String,
    /// First line: 0 is the top of the screen, negative is scrollback (out of range counts as the first or last line).
    pub start: Option<i64>,
    /// Last line (default the screen's bottom; not before start).
    pub end: Option<i64>,
    /// All of the scrollback and the screen (overrides start/end).
    #[serde(default)]
    pub whole_history: bool,
    /// Keep colours and attributes as ANSI escape sequences.
    #[serde(default)]
    pub escapes: bool,
    /// Most bytes of text (default and maximum: the server's --max-output-bytes, 40000; at least 256).
    pub max_bytes: Option<usize>,
}

/// Result of `capture_screen`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct CaptureScreenResult {
    /// The pane captured.
    pub pane: String,
    /// The captured lines joined with newlines (secrets masked).
    pub text: String,
    /// Line number of the first line in `text`.
    pub first_line: i32,
    /// Line number of the last line in `text`.
    pub last_line: i32,
    /// Lines left out at the start because of the size limit.
    pub omitted_lines: u32,
    /// Columns.
    pub width: u32,
    /// Rows.
    pub height: u32,
    /// Cursor column.
    pub cursor_x: u32,
    /// Cursor row.
    pub cursor_y: u32,
    /// Lines of scrollback above the screen (absent when the screen came from the emulator: ask with start/end to read history).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history_lines: Option<u32>,
    /// In copy mode (or another tmux mode).
    pub in_mode: bool,
    /// On the alternate screen (a full-screen program).
    pub alternate_screen: bool,
    /// The pane's program has exited.
    pub dead: bool,
    /// Output cursor at capture time: wait_for_output from here sees only newer output.
    pub cursor: u64,
    /// Where the screen came from: "emulator" (tmux-mcp's own terminal emulator, fed with the pane's output; no tmux round trip) or "tmux" (capture-pane: history ranges, escapes, copy mode, or the emulator out of sync).
    pub source: ScreenSource,
}

/// Where `capture_screen` read the screen from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ScreenSource {
    /// The pane's emulated screen, kept from its output.
    Emulator,
    /// tmux's `capture-pane`.
    Tmux,
}

impl Summary for CaptureScreenResult {
    fn summary(&self) -> String {
        let mut s = format!(
            "Pane {} ({}x{}, cursor at column {} row {}{}{}{}), lines {}..{}, cursor={}",
            self.pane,
            self.width,
            self.height,
            self.cursor_x,
            self.cursor_y,
            if self.alternate_screen {
                ", full-screen program"
            } else {
                ""
            },
            if self.in_mode { ", in copy mode" } else { "" },
            if self.dead { ", program exited" } else { "" },
            self.first_line,
            self.last_line,
            self.cursor
        );
        if self.omitted_lines > 0 {
            let _ = write!(
                s,
                "\n[{} earlier lines left out (size limit); ask with start={} end={}]",
                self.omitted_lines,
                self.first_line - i32::try_from(self.omitted_lines).unwrap_or(i32::MAX),
                self.first_line - 1
            );
        }
        s.push_str(":\n");
        s.push_str(&self.text);
        s
    }
}

/// The line numbers a pane has: `-top` (the oldest scrollback line) to
/// `bottom` (the last screen line).
#[derive(Debug, Clone, Copy)]
pub(super) struct LineRange {
    pub(super) top: i32,
    pub(super) bottom: i32,
}

impl LineRange {
    pub(super) fn of(row: &tmux_control::command::PaneInfo) -> Self {
        let top = -i32::try_from(row.history_size).unwrap_or(i32::MAX);
        let bottom = i32::try_from(row.height)
            .unwrap_or(i32::MAX)
            .saturating_sub(1);
        Self {
            top,
            bottom: bottom.max(top),
        }
    }

    /// `line` moved into the pane's lines.
    pub(super) fn clamp(self, line: i64) -> i32 {
        let clamped = line.clamp(i64::from(self.top), i64::from(self.bottom));
        i32::try_from(clamped).unwrap_or(self.bottom)
    }
}
