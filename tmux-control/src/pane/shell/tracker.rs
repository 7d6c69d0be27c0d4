//! [`ShellTracker`], which reads the marks back as [`ShellEvent`]s.

use std::path::{Path, PathBuf};

use crate::pane::marks::{Mark, MarkScanner, ShellMark};

/// Where an integrated shell stands, as its marks tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ShellPhase {
    /// No mark yet: the shell has not drawn its first prompt (it may still
    /// be reading its start-up files), or it has no hooks.
    Starting,
    /// A prompt is being drawn (`A` seen, not yet `B`).
    Prompt,
    /// The prompt is drawn and the shell reads a command line (`B`).
    Ready,
    /// A command line runs (`C` seen, not yet `D`).
    Running,
}

/// A command line that finished, as its marks tell.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct FinishedCommand {
    /// Offset of the first byte of its output: just after the `C` mark, or
    /// when the shell ran nothing (an empty line, a syntax error), where
    /// the tracker started or the last prompt ended.
    pub output_start: u64,
    /// Offset just after its last byte (the start of the `D` mark).
    pub output_end: u64,
    /// Offset just after the `D` mark.
    pub end: u64,
    /// Whether a `C` mark was seen: the shell ran the line.
    pub ran: bool,
    /// The exit status (`$?`), when the shell gave one.
    pub status: Option<i32>,
    /// The status of each command of the pipeline (`PIPESTATUS`,
    /// `pipestatus`), when the shell gave them.
    pub pipestatus: Vec<i32>,
    /// Where the command line itself is in the output, as the shell echoed
    /// it: from the end of the prompt (`B`) to the start of the output
    /// (`C`), when both were marked.
    pub input: Option<(u64, u64)>,
    /// The working directory the shell last reported before the line ended
    /// (the one it ran in).
    pub directory: Option<PathBuf>,
}

/// What [`ShellTracker::feed`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ShellEvent {
    /// A prompt started (`A`), at this offset.
    Prompt(u64),
    /// The prompt is drawn (`B`); input is read from this offset.
    Ready(u64),
    /// A command line started (`C`); its output starts at this offset.
    Started(u64),
    /// A command line finished (`D`).
    Finished(FinishedCommand),
    /// The shell's working directory (OSC 7).
    Directory(PathBuf),
}

/// Follows one integrated shell through its marks, fed its output in
/// order: the [`ShellPhase`], each command's output range and statuses,
/// and the working directory. Pure: no I/O, so it can be fed from a
/// [`PaneStream`](crate::PaneStream), from a log read back, or in a test.
///
/// ```
/// use tmux_control::shell::{ShellEvent, ShellPhase, ShellTracker};
/// let mut shell = ShellTracker::new("ab", 0);
/// let out = b"\x1b]133;A;nonce=ab\x07$ \x1b]133;B;nonce=ab\x07false | true\r\n\
///             \x1b]133;C;nonce=ab\x07\x1b]133;D;0;nonce=ab;pipestatus=1,0\x07";
/// let events = shell.feed(0, out);
/// let Some(ShellEvent::Finished(done)) = events.last() else { panic!() };
/// assert_eq!((done.status, done.pipestatus.clone()), (Some(0), vec![1, 0]));
/// assert_eq!(done.output_start, done.output_end); // it printed nothing
/// assert_eq!(shell.phase(), ShellPhase::Prompt);
/// ```
#[derive(Debug, Clone)]
pub struct ShellTracker {
    nonce: String,
    marks: MarkScanner,
    phase: ShellPhase,
    /// Where the output of a line run without a `C` mark starts.
    line_start: u64,
    /// Just after the `C` mark of the running line.
    output_start: Option<u64>,
    /// Just after the `B` mark of the prompt the running line was typed
    /// at, and the start of its `C` mark: where its echoed text is.
    input: (Option<u64>, Option<u64>),
    /// Just after the `A` mark of the prompt drawn last.
    prompt: Option<u64>,
    directory: Option<PathBuf>,
    /// An OSC 7 report not yet confirmed by the prompt mark right after it:
    /// where it ended, and the directory.
    pending_directory: Option<(u64, PathBuf)>,
}

impl ShellTracker {
    /// A tracker for the marks with `nonce`, whose first byte fed will be
    /// at offset `from`.
    pub fn new(nonce: &str, from: u64) -> Self {
        Self {
            nonce: nonce.to_owned(),
            marks: MarkScanner::new(from),
            phase: ShellPhase::Starting,
            line_start: from,
            output_start: None,
            input: (None, None),
            prompt: None,
            directory: None,
            pending_directory: None,
        }
    }

    /// The nonce it follows.
    pub fn nonce(&self) -> &str {
        &self.nonce
    }

    /// Where the shell stands.
    pub fn phase(&self) -> ShellPhase {
        self.phase
    }

    /// Where the output of the command line running now starts (just after
    /// its `C` mark), while one runs.
    pub fn command_start(&self) -> Option<u64> {
        self.output_start
    }

    /// Where the shell's input line starts (just after the `B` mark of the
    /// prompt drawn last), while it reads one (`Ready`): what the terminal
    /// shows after it was typed there and not yet run.
    pub fn input_start(&self) -> Option<u64> {
        match self.phase {
            ShellPhase::Ready => self.input.0,
            _ => None,
        }
    }

    /// Where the prompt drawn last starts (just after its `A` mark), while
    /// the shell draws it or reads a line at it (`Prompt`, `Ready`): from
    /// here to [`input_start`](Self::input_start) is the prompt itself.
    ///
    /// ```
    /// use tmux_control::shell::ShellTracker;
    /// let mut shell = ShellTracker::new("ab", 0);
    /// shell.feed(0, b"\x1b]133;A;nonce=ab\x07$ \x1b]133;B;nonce=ab\x07");
    /// assert_eq!(shell.prompt_start(), Some(17));
    /// assert_eq!(shell.input_start(), Some(36));
    /// ```
    pub fn prompt_start(&self) -> Option<u64> {
        match self.phase {
            ShellPhase::Prompt | ShellPhase::Ready => self.prompt,
            _ => None,
        }
    }

    /// The last working directory the shell reported: an OSC 7 counts only
    /// right before this shell's prompt mark, where the hooks print it, so
    /// a program that prints one of its own does not change it.
    pub fn directory(&self) -> Option<&Path> {
        self.directory.as_deref()
    }

    /// Where to feed from next to see everything not yet reported (the
    /// start of an unfinished mark, or the end of what was fed).
    pub fn resume_offset(&self) -> u64 {
        self.marks.resume_offset()
    }

    /// Takes up at `offset` after a gap in the output (bytes lost or no
    /// longer held): an unfinished mark is dropped, the phase kept.
    pub fn skip_to(&mut self, offset: u64) {
        self.marks = MarkScanner::new(offset);
    }

    /// Starts the next command line's output at `offset` if the shell runs
    /// it without a `C` mark (an empty line, a syntax error): the offset
    /// after the line was typed.
    pub fn typed(&mut self, offset: u64) {
        self.line_start = offset;
    }

    /// Feeds output that starts at `offset`, and returns what it tells.
    pub fn feed(&mut self, offset: u64, data: &[u8]) -> Vec<ShellEvent> {
        let marks = self.marks.feed(offset, data);
        let mut events = Vec::new();
        for m in marks {
            self.apply(m, &mut events);
        }
        events
    }

    fn apply(&mut self, m: Mark, events: &mut Vec<ShellEvent>) {
        if let ShellMark::WorkingDirectory { path, .. } = m.mark {
            // Only the hooks' own report counts: the one right before this
            // shell's prompt mark (a program can print OSC 7 too).
            self.pending_directory = Some((m.end, path));
            return;
        }
        let pending = self.pending_directory.take();
        if m.mark.param("nonce") != Some(self.nonce.as_str()) {
            return;
        }
        let event = match m.mark {
            ShellMark::PromptStart { .. } => {
                if let Some((_, path)) = pending.filter(|(end, _)| *end == m.start) {
                    self.directory = Some(path.clone());
                    events.push(ShellEvent::Directory(path));
                }
                self.phase = ShellPhase::Prompt;
                self.prompt = Some(m.end);
                ShellEvent::Prompt(m.start)
            }
            ShellMark::InputStart { .. } => {
                self.phase = ShellPhase::Ready;
                self.line_start = m.end;
                self.input = (Some(m.end), None);
                ShellEvent::Ready(m.end)
            }
            // A line of several commands (a multi-line paste) can mark
            // each one's start; its output starts at the first.
            ShellMark::CommandStart { .. } if self.output_start.is_some() => return,
            ShellMark::CommandStart { .. } => {
                self.phase = ShellPhase::Running;
                self.output_start = Some(m.end);
                self.input.1 = Some(m.start);
                ShellEvent::Started(m.end)
            }
            ShellMark::CommandEnd { status, .. } => {
                let pipestatus = m
                    .mark
                    .param("pipestatus")
                    .map(|p| p.split(',').filter_map(|s| s.trim().parse().ok()).collect())
                    .unwrap_or_default();
                let ran = self.output_start.is_some();
                let output_start = self.output_start.take().unwrap_or(self.line_start);
                let input = match std::mem::take(&mut self.input) {
                    (Some(from), Some(to)) if from <= to => Some((from, to)),
                    _ => None,
                };
                self.phase = ShellPhase::Prompt;
                self.line_start = m.end;
                ShellEvent::Finished(FinishedCommand {
                    output_start: output_start.min(m.start),
                    output_end: m.start,
                    end: m.end,
                    ran,
                    status,
                    pipestatus,
                    input,
                    directory: self.directory.clone(),
                })
            }
            ShellMark::WorkingDirectory { .. } => return,
        };
        events.push(event);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn mark(kind: &str, nonce: &str) -> Vec<u8> {
        format!("\x1b]133;{kind};nonce={nonce}\x07").into_bytes()
    }

    #[test]
    fn phases_follow_the_marks_and_other_nonces_are_ignored() {
        let mut t = ShellTracker::new("n1", 0);
        assert_eq!(t.phase(), ShellPhase::Starting);
        let mut out = Vec::new();
        out.extend(mark("A", "n1"));
        out.extend(b"$ ");
        out.extend(mark("B", "n1"));
        let events = t.feed(0, &out);
        assert_eq!(events.len(), 2);
        assert_eq!(t.phase(), ShellPhase::Ready);
        let at = out.len() as u64;
        // A program printing marks of its own (no nonce, another nonce).
        let fake = b"\x1b]133;C\x07\x1b]133;D;0;nonce=n2\x07";
        assert!(t.feed(at, fake).is_empty());
        assert_eq!(t.phase(), ShellPhase::Ready);
        let at = at + fake.len() as u64;
        let mut run = mark("C", "n1");
        // A program's own OSC 7 (in a file it prints) is not the shell's.
        run.extend(b"hi\r\n\x1b]7;file://h/etc/fake-dir\x07");
        run.extend(b"\x1b]133;D;130;nonce=n1;pipestatus=0,130\x07");
        // The hooks': right before the prompt mark.
        run.extend(b"\x1b]7;file://h/tmp/a%20b\x07");
        run.extend(mark("A", "n1"));
        let events = t.feed(at, &run);
        let done = events
            .iter()
            .find_map(|e| match e {
                ShellEvent::Finished(f) => Some(f.clone()),
                _ => None,
            })
            .unwrap();
        let text = &run[(done.output_start - at) as usize..(done.output_end - at) as usize];
        assert!(text.starts_with(b"hi\r\n"));
        assert_eq!(done.directory, None, "the program's OSC 7 was taken");
        assert_eq!(done.status, Some(130));
        assert_eq!(done.pipestatus, vec![0, 130]);
        assert!(done.ran);
        assert_eq!(t.directory(), Some(Path::new("/tmp/a b")));
        assert_eq!(t.phase(), ShellPhase::Prompt);
    }

    #[test]
    fn a_line_of_several_commands_is_one_command() {
        let mut t = ShellTracker::new("n", 0);
        let mut out = mark("C", "n");
        out.extend(b"one\r\n");
        out.extend(mark("C", "n"));
        out.extend(b"two\r\n\x1b]133;D;0;nonce=n\x07");
        let events = t.feed(0, &out);
        assert_eq!(events.len(), 2, "{events:?}");
        let ShellEvent::Finished(f) = &events[1] else {
            panic!("{events:?}")
        };
        assert_eq!(f.output_start, mark("C", "n").len() as u64);
    }

    #[test]
    fn a_line_the_shell_does_not_run_ends_with_its_text() {
        let mut t = ShellTracker::new("n", 0);
        t.feed(0, &mark("B", "n"));
        t.typed(40);
        let mut out = b"syntax error\r\n".to_vec();
        out.extend(b"\x1b]133;D;2;nonce=n;pipestatus=2\x07");
        let events = t.feed(40, &out);
        let ShellEvent::Finished(f) = &events[0] else {
            panic!("{events:?}")
        };
        assert!(!f.ran);
        assert_eq!((f.output_start, f.output_end), (40, 54));
        assert_eq!(f.status, Some(2));
    }
}
