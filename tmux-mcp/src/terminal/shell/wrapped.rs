//! The wrapped form of `run` in shells without integration: where the last
//! wrapped run in a pane ended and how its shell's prompt ends (a part of
//! the pane's record), so that the next run waits for the prompt only when
//! it has not come yet, and what the pane's last line says (at a prompt, or
//! a continuation prompt).

use std::time::Duration;

use tmux_control::{PaneChunk, PaneId, PaneOutput};

use crate::terminal::lock::lock;

use super::{Shells, last_line};

/// How a prompt line ends: its last visible character and the blanks
/// after it (`"$ "` of `"me@box:~$ "`), which stay the same when the
/// directory or the time in it changes.
fn prompt_ending(line: &str) -> Option<String> {
    let trimmed = line.trim_end();
    let last = trimmed.chars().last()?;
    Some(format!("{last}{}", &line[trimmed.len()..]))
}

/// The longest `run` waits, before typing its wrapped form, for the
/// prompt after the pane's last wrapped run to be drawn (a true timer: a
/// deadline, for a prompt whose end changed since it was learned).
const WRAPPED_PROMPT: Duration = Duration::from_millis(250);

impl Shells {
    /// How the prompt of `pane`'s shell ends, as learned from its wrapped
    /// runs.
    fn prompt_end(&self, pane: PaneId) -> Option<String> {
        let terminal = self.terminals.get(pane)?;
        let wrapped = lock(&terminal.wrapped);
        wrapped.as_ref()?.prompt_end.clone()
    }

    /// Whether `po`'s output from `from` on ends at a prompt of the pane's
    /// shell: its last line ends the way the prompts `run` saw there ended,
    /// or, with none seen yet, the way common prompts do (`$ `, `# `, `% `,
    /// `> `). Read from the pane's log, for a wrapped run whose shell reads
    /// the terminal again without its end marker (an interrupt).
    pub(crate) fn at_prompt(&self, po: &PaneOutput, from: u64) -> bool {
        const ENDS: [&str; 4] = ["$ ", "# ", "% ", "> "];
        let (_, bytes) = po.read_from(from, 1 << 16);
        let line = last_line(&bytes);
        let raw = match self.prompt_end(po.pane()) {
            Some(end) => line.ends_with(&end),
            None => ENDS.iter().any(|end| line.ends_with(end)),
        };
        // A shell that draws its prompt with cursor motion after the text
        // (fish: a right prompt, then back) ends its bytes otherwise: the
        // screen shows the prompt before the cursor.
        raw || po.emulated_screen().is_some_and(|screen| {
            screen.offset > from
                && screen
                    .lines
                    .get(screen.cursor_y as usize)
                    .map(|l| l.chars().take(screen.cursor_x as usize).collect::<String>())
                    .is_some_and(|before| ENDS.iter().any(|end| before.ends_with(end)))
        })
    }

    /// Whether the shell of `po`'s pane (one without integration) shows a
    /// continuation prompt: its last line, after a line end, ends with `> `
    /// where the prompt learned from earlier wrapped runs does not, or is
    /// `> ` alone (the shells' default `PS2`) when none was learned yet. It
    /// waits for the rest of a command line.
    pub(crate) fn wrapped_continues(&self, po: &PaneOutput) -> bool {
        let learned = self.prompt_end(po.pane());
        let from = po.end_offset().saturating_sub(4096);
        let (_, bytes) = po.read_from(from, 4096);
        if !bytes.contains(&b'\n') {
            return false;
        }
        let line = last_line(&bytes);
        match learned {
            Some(end) => !end.ends_with("> ") && line.ends_with("> "),
            None => line == "> ",
        }
    }

    /// Notes that a wrapped run in `pane` ended with the end mark just
    /// before `end`: its shell prints its prompt next.
    pub(crate) fn wrapped_ended(&self, pane: PaneId, end: u64) {
        let terminal = self.terminals.entry(pane);
        lock(&terminal.wrapped).get_or_insert_default().ended = Some(end);
    }

    /// Before `run` types its wrapped form into `po`'s pane: if the last
    /// wrapped run there ended and its prompt has not been seen, waits for
    /// it in the pane's output (the bytes after the end mark ending the way
    /// the shell's prompts end, or, with none learned yet, the first bytes
    /// after it), at most [`WRAPPED_PROMPT`]. Text typed before the prompt
    /// would be echoed by the terminal ahead of it and read by a line
    /// editor that has not started. Nothing waits when the prompt is in
    /// already, as it is once the reply went back to the client and a new
    /// call came.
    pub(crate) async fn wrapped_prompt(&self, po: &PaneOutput) {
        let (ended, prompt_end) = {
            let Some(terminal) = self.terminals.get(po.pane()) else {
                return;
            };
            let mut wrapped = lock(&terminal.wrapped);
            let Some(w) = wrapped.as_mut() else {
                return;
            };
            let Some(ended) = w.ended.take() else {
                return;
            };
            (ended, w.prompt_end.clone())
        };
        let mut seen = Vec::new();
        let drawn = |seen: &[u8]| {
            !seen.is_empty()
                && prompt_end
                    .as_deref()
                    .is_none_or(|end| last_line(seen).ends_with(end))
        };
        let mut stream = po.stream_from(ended);
        let follow = async {
            while let Some(chunk) = stream.next().await {
                match chunk {
                    PaneChunk::Output { data, .. } => {
                        seen.extend_from_slice(&data);
                        if drawn(&seen) {
                            return;
                        }
                    }
                    // Output was lost or the pane ended: nothing to wait for.
                    PaneChunk::Missed { .. } => return,
                    _ => {}
                }
            }
        };
        let _ = tokio::time::timeout(WRAPPED_PROMPT, follow).await;
        if let Some(end) = prompt_ending(&last_line(&seen))
            && let Some(terminal) = self.terminals.get(po.pane())
            && let Some(w) = lock(&terminal.wrapped).as_mut()
        {
            w.prompt_end = Some(end);
        }
    }
}
