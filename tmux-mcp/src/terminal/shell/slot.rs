//! The shell's parts of a terminal's record: its integrated shell
//! ([`ShellSlot`]) and its wrapped runs ([`Wrapped`]), beneath the record;
//! the logic that keeps them is in [`super`] and `wrapped`.

use tmux_control::PaneOutput;
use tmux_control::shell::{FinishedCommand, ShellEvent, ShellKind, ShellPhase, ShellTracker};

/// One integrated shell.
#[derive(Debug, Clone)]
pub(crate) struct ShellSlot {
    /// Which shell.
    pub(crate) kind: ShellKind,
    /// Its marks, read up to [`ShellTracker::resume_offset`].
    pub(crate) tracker: ShellTracker,
    /// The last command line it finished.
    pub(crate) last: Option<FinishedCommand>,
    /// Found again after a restart of tmux-mcp (its first marks were not
    /// seen, so `Starting` means "at a prompt drawn before").
    pub(crate) recovered: bool,
}

impl ShellSlot {
    /// Where the shell stands; a recovered shell that printed no mark since
    /// is at the prompt it showed before.
    pub(crate) fn phase(&self) -> ShellPhase {
        match self.tracker.phase() {
            ShellPhase::Starting if self.recovered => ShellPhase::Ready,
            phase => phase,
        }
    }

    /// Feeds the pane's log from where the tracker stopped to its end, and
    /// returns the command lines that finished in it.
    pub(super) fn catch_up(&mut self, po: &PaneOutput) -> Vec<FinishedCommand> {
        let mut finished = Vec::new();
        loop {
            let from = self.tracker.resume_offset();
            let (at, bytes) = po.read_from(from, 1 << 20);
            if at > from {
                // The log no longer holds those bytes.
                self.tracker.skip_to(at);
            }
            if bytes.is_empty() {
                return finished;
            }
            for event in self.tracker.feed(at, &bytes) {
                if let ShellEvent::Finished(done) = event {
                    self.last = Some(done.clone());
                    finished.push(done);
                }
            }
        }
    }
}

/// A pane `run` typed its wrapped form into: where the last such run's end
/// mark was, while the prompt after it has not been seen, and how the
/// shell's prompt ends.
#[derive(Debug, Default)]
pub(crate) struct Wrapped {
    /// Just after the last wrapped run's end mark.
    pub(super) ended: Option<u64>,
    /// The last visible character of the prompt and the blanks after it
    /// (`"$ "`), learned from the prompts seen before.
    pub(super) prompt_end: Option<String>,
}
