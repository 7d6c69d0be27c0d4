//! Shell integration: hooks that make bash, zsh and fish mark their
//! prompts and commands in their output, and [`ShellTracker`], which reads
//! those marks back as a command's start, end, exit status and pipeline
//! statuses.
//!
//! The hooks print, with a per-terminal nonce in every OSC 133 mark:
//!
//! | when | what |
//! |---|---|
//! | a prompt is about to be drawn | `OSC 133;D;STATUS;nonce=N;pipestatus=S1,S2` for the command line just finished (not before the first prompt), `OSC 7;file://HOST/DIR`, then `OSC 133;A;nonce=N` |
//! | the prompt is drawn (end of `PS1`) | `OSC 133;B;nonce=N` |
//! | a command line starts running | `OSC 133;C;nonce=N` |
//!
//! Output between `C` and `D` is the command's own output. A mark with
//! another nonce (a program printing OSC 133 of its own, or a file that
//! holds marks) is not this terminal's and is ignored. The hook files are
//! written by [`ShellIntegration::install`]; nothing outside the given
//! directory is changed, and a shell started without them is untouched.
//!
//! The marks themselves are read by [`MarkScanner`] (also used by wrapped
//! commands, which print the same marks without a shell's hooks), and
//! [`quote`] and [`join`] quote words for a shell command line.
//!
//! Split by concern: [`ShellKind`] and the nonce here, [`ShellIntegration`]
//! and how shells load the hooks in `hooks`, the three hook scripts (kept
//! in one place, as the text they write) in `scripts`, [`ShellTracker`] in
//! `tracker`, and the quoter in `quote`.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher as _, Hasher as _};
use std::sync::atomic::{AtomicU64, Ordering};

mod hooks;
mod scripts;
mod tracker;

pub use super::marks::{Mark, MarkScanner, Marks, ShellMark};
pub use crate::quote::{join, quote};
pub use hooks::{Launch, ShellIntegration};
pub use tracker::{FinishedCommand, ShellEvent, ShellPhase, ShellTracker};

/// The shells that [`ShellIntegration`] has hooks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ShellKind {
    /// GNU bash 4.4 or later (the hooks use `PS0`).
    Bash,
    /// zsh.
    Zsh,
    /// fish 3 or later.
    Fish,
}

impl ShellKind {
    /// The shell a program name or path is, if it is one with hooks: `bash`,
    /// `/usr/bin/zsh`, `-fish` (a login shell) and the like.
    ///
    /// ```
    /// use tmux_control::shell::ShellKind;
    /// assert_eq!(ShellKind::of("/bin/bash"), Some(ShellKind::Bash));
    /// assert_eq!(ShellKind::of("-zsh"), Some(ShellKind::Zsh));
    /// assert_eq!(ShellKind::of("dash"), None);
    /// ```
    pub fn of(program: &str) -> Option<Self> {
        let name = program.rsplit('/').next().unwrap_or(program);
        match name.trim_start_matches('-') {
            "bash" => Some(Self::Bash),
            "zsh" => Some(Self::Zsh),
            "fish" => Some(Self::Fish),
            _ => None,
        }
    }

    /// The shell's name (`bash`, `zsh`, `fish`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Bash => "bash",
            Self::Zsh => "zsh",
            Self::Fish => "fish",
        }
    }
}

/// The environment variable that hands a launched shell its nonce; the
/// hooks read it and unset it, so the shell's children do not inherit it.
pub const NONCE_VARIABLE: &str = "TMUX_CONTROL_SHELL_NONCE";

/// A fresh nonce: 16 hex digits, different in every call and process.
///
/// ```
/// let a = tmux_control::shell::shell_nonce();
/// assert_eq!(a.len(), 16);
/// assert_ne!(a, tmux_control::shell::shell_nonce());
/// ```
pub fn shell_nonce() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    // RandomState is seeded from the operating system's randomness once per
    // process; the counter makes every call different.
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    hasher.write_u32(std::process::id());
    format!("{:016x}", hasher.finish())
}
