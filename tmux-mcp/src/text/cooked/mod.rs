//! Cooking a pane's output into the lines a human saw: the model behind the
//! durable log (`journal/` in this crate).
//!
//! The bytes are parsed with `vte` (the parser Alacritty uses) and played
//! onto a small screen model: the lines still on the screen form a tail the
//! cursor can move in (carriage return, backspace, tabs, cursor motion up,
//! down, left, right and absolute, erase in line and display, insert and
//! delete characters and lines, save and restore), so a progress bar keeps
//! its last state, a readline edit shows the edited line once and a redrawn
//! multi-line paste shows once. Unlike a grid emulator, a line is one
//! logical line however wide: wrapped rows are joined, and the pane's width
//! only says how far "cursor up" moves inside a long line.
//!
//! A line becomes final, with a stable number, when it can no longer
//! change: when it scrolls off the top of the screen, when the screen is
//! cleared, when a full-screen program starts, or when the shell marks a
//! prompt or a command's start or end (OSC 133). A full-screen program (the
//! alternate screen: vim, less, top) is one entry, not the thousands of
//! lines it drew.

mod perform;
mod row;
mod screen;

use std::collections::VecDeque;

use vte::Parser;

use row::Row;
use screen::Screen;

/// What a cooked line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum LineKind {
    /// Text the pane showed.
    Text,
    /// A full-screen program's whole session (alternate screen), one entry.
    Screen,
    /// Output that was not recorded, and why (the text says).
    Gap,
}

impl LineKind {
    /// The name in the log file and in replies.
    pub fn name(self) -> &'static str {
        match self {
            LineKind::Text => "text",
            LineKind::Screen => "screen",
            LineKind::Gap => "gap",
        }
    }

    /// The kind of a name written by [`LineKind::name`].
    pub fn from_name(name: &str) -> Self {
        match name {
            "screen" => LineKind::Screen,
            "gap" => LineKind::Gap,
            _ => LineKind::Text,
        }
    }
}

/// One cooked line and where its bytes began in the pane's output.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Cooked {
    /// Offset in the pane's output of the byte that started the line.
    pub at: u64,
    /// The text, without trailing blanks.
    pub text: String,
    /// What it is.
    pub kind: LineKind,
}

/// Terminal width used until the pane's is known.
const DEFAULT_WIDTH: usize = 80;
/// Terminal height used until the pane's is known.
const DEFAULT_HEIGHT: usize = 24;
/// The widest line kept: longer lines are cut there (a line of megabytes
/// with no newline would otherwise grow without bound).
const MAX_LINE_CELLS: usize = 64 * 1024;

/// Cooks `raw`, a pane's output from offset 0, whole: every line in order,
/// those that became final and those still on the screen, a full-screen
/// program that is still running as one entry, and a blank last line where
/// the cursor waits after a final line feed (so that the texts joined with
/// LF end with LF exactly when the output leaves the cursor on a new line).
/// `size` is the pane's width and height (80×24 when not known).
///
/// This is the line model of the whole server: the durable log feeds a
/// [`Cooker`] as output comes, and every reply that shows output as text
/// (`run`, `read_output`, the waits, regions) cooks its bytes here, so the
/// same bytes read the same way everywhere.
///
/// ```
/// use tmux_control_mcp::text::cooked::cook_all;
///
/// let lines = cook_all(b"get 10%\rget 100%\r\n$ echo helo\x08\x08llo\r\n", None);
/// let texts: Vec<_> = lines.iter().map(|l| l.text.as_str()).collect();
/// assert_eq!(texts, ["get 100%", "$ echo hello", ""]);
/// assert_eq!(lines[1].at, 18);
/// ```
pub fn cook_all(raw: &[u8], size: Option<(u16, u16)>) -> Vec<Cooked> {
    let mut cooker = Cooker::new(0);
    if let Some((width, height)) = size {
        cooker.resize(width, height);
    }
    let mut lines = cooker.feed(0, raw);
    let screen = &cooker.screen;
    let rows = screen.rows.iter().map(|row| Cooked {
        at: row.at,
        text: row.text(),
        kind: LineKind::Text,
    });
    match screen.alt {
        None => lines.extend(rows),
        Some(at) => {
            // Its rows are the normal screen's, under the program's: the
            // cursor's blank row is not output.
            let keep =
                screen.rows.len() - usize::from(screen.rows.back().is_some_and(Row::is_blank));
            lines.extend(rows.take(keep));
            let bytes = (raw.len() as u64).saturating_sub(at);
            lines.push(Cooked {
                at,
                text: format!(
                    "[full-screen program: {bytes} bytes of output so far, not kept as lines]"
                ),
                kind: LineKind::Screen,
            });
        }
    }
    lines
}

/// Cooks one pane's output, piece by piece: see the module docs.
///
/// ```
/// use tmux_control_mcp::text::cooked::Cooker;
///
/// let mut cooker = Cooker::new(0);
/// let mut lines = cooker.feed(0, b"get 10%\rget 100%\r\n$ echo helo\x08\x08llo\r\n");
/// lines.extend(cooker.finish());
/// let texts: Vec<_> = lines.iter().map(|l| l.text.as_str()).collect();
/// assert_eq!(texts, ["get 100%", "$ echo hello"]);
/// ```
pub struct Cooker {
    parser: Parser,
    screen: Screen,
}

impl std::fmt::Debug for Cooker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cooker")
            .field("screen", &self.screen)
            .finish_non_exhaustive()
    }
}

impl Default for Cooker {
    fn default() -> Self {
        Self::new(0)
    }
}

impl Cooker {
    /// A cooker for output starting at `offset`.
    pub fn new(offset: u64) -> Self {
        let mut rows = VecDeque::new();
        rows.push_back(Row::new(offset));
        Self {
            parser: Parser::new(),
            screen: Screen {
                width: DEFAULT_WIDTH,
                height: DEFAULT_HEIGHT,
                rows,
                top: 0,
                cur: 0,
                col: 0,
                wrap_pending: false,
                saved: None,
                alt: None,
                offset,
                piece_end: offset,
                done: Vec::new(),
            },
        }
    }

    /// Sets the pane's size (cursor motion across wrapped rows, and when a
    /// line has scrolled off the screen, depend on it).
    pub fn resize(&mut self, width: u16, height: u16) {
        self.screen.width = usize::from(width).max(2);
        self.screen.height = usize::from(height).max(1);
    }

    /// Feeds the bytes at `offset`, returning the lines that became final.
    pub fn feed(&mut self, offset: u64, bytes: &[u8]) -> Vec<Cooked> {
        let mut at = 0;
        while at < bytes.len() {
            // Piece by piece: up to and including a line feed, and up to an
            // escape, so that each line knows where its bytes began and a
            // full-screen program's entry knows its bytes exactly.
            let from = if bytes[at] == 0x1b { at + 1 } else { at };
            let end = match memchr::memchr2(b'\n', 0x1b, &bytes[from..]) {
                Some(p) if bytes[from + p] == b'\n' => from + p + 1,
                Some(p) => from + p,
                None => bytes.len(),
            };
            self.screen.offset = offset + at as u64;
            self.screen.piece_end = offset + end as u64;
            self.parser.advance(&mut self.screen, &bytes[at..end]);
            at = end;
        }
        self.screen.offset = offset + bytes.len() as u64;
        std::mem::take(&mut self.screen.done)
    }

    /// Makes every line final (when the output ends, or a gap follows),
    /// ending a full-screen program's entry too.
    pub fn finish(&mut self) -> Vec<Cooked> {
        self.screen.leave_alt();
        self.screen.cur = self.screen.rows.len();
        self.screen.commit();
        let mut done = std::mem::take(&mut self.screen.done);
        // A blank last line is the cursor's, not output.
        if done
            .last()
            .is_some_and(|l| l.text.is_empty() && l.kind == LineKind::Text)
        {
            done.pop();
        }
        let offset = self.screen.offset;
        self.screen.rows.push_back(Row::new(offset));
        self.screen.cur = 0;
        self.screen.col = 0;
        done
    }

    /// Where each line still on the screen began, in order (cheaper than
    /// [`Cooker::tail`] when only positions are wanted).
    pub fn tail_offsets(&self) -> Vec<u64> {
        self.screen.rows.iter().map(|row| row.at).collect()
    }

    /// The lines still on the screen (they can change), without a blank
    /// last line; and whether a full-screen program is running.
    pub fn tail(&self) -> (Vec<Cooked>, bool) {
        let mut lines: Vec<Cooked> = self
            .screen
            .rows
            .iter()
            .map(|row| Cooked {
                at: row.at,
                text: row.text(),
                kind: LineKind::Text,
            })
            .collect();
        // A blank last line is where the cursor waits, not output.
        if self.screen.rows.back().is_some_and(Row::is_blank) {
            lines.pop();
        }
        (lines, self.screen.alt.is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cook_all(chunks: &[&[u8]]) -> Vec<String> {
        let mut cooker = Cooker::new(0);
        let mut lines = Vec::new();
        let mut at = 0u64;
        for chunk in chunks {
            lines.extend(cooker.feed(at, chunk));
            at += chunk.len() as u64;
        }
        lines.extend(cooker.finish());
        lines.into_iter().map(|l| l.text).collect()
    }

    #[test]
    fn a_progress_bar_keeps_its_last_state() {
        let lines = cook_all(&[
            b"$ fetch\r\n",
            b"[##      ] 25%\r",
            b"[####    ] 50%\r",
            b"[########] 100%\r\n",
            b"done\r\n",
        ]);
        assert_eq!(lines, ["$ fetch", "[########] 100%", "done"]);
    }

    #[test]
    fn a_shorter_overwrite_leaves_what_it_did_not_cover_unless_erased() {
        assert_eq!(cook_all(&[b"loading...\rok\r\n"]), ["okading..."]);
        assert_eq!(cook_all(&[b"loading...\rok\x1b[K\r\n"]), ["ok"]);
    }

    #[test]
    fn a_readline_edit_shows_the_edited_line_once() {
        // Typed "echo helo", moved left twice, inserted "l" (readline
        // redraws the rest), then Enter; bash printed the result.
        let lines = cook_all(&[
            b"$ echo helo",
            b"\x08\x08",
            b"\x1b[1@l",
            b"\x1b[C\x1b[C",
            b"\r\n",
            b"hello\r\n$ ",
        ]);
        assert_eq!(lines, ["$ echo hello", "hello", "$"]);
        // The same edit drawn by rewriting the tail and erasing.
        let lines = cook_all(&[b"$ echo helo", b"\x08\x08llo", b"\x1b[K\r\n"]);
        assert_eq!(lines, ["$ echo hello"]);
        // Backspace over a typo, the way a tty echoes it.
        assert_eq!(cook_all(&[b"$ lss\x08 \x08\r\n"]), ["$ ls"]);
    }

    #[test]
    fn a_redrawn_multi_line_paste_shows_once() {
        // Three pasted lines shown highlighted, then redrawn plain: the
        // cursor goes back up two rows and the lines are written again.
        let lines = cook_all(&[
            b"$ \x1b[7mecho one\r\n> echo two\r\n> echo three\x1b[27m",
            b"\x1b[2A\r$ echo one\x1b[K\r\n> echo two\x1b[K\r\n> echo three\x1b[K\r\n",
            b"one\r\ntwo\r\nthree\r\n",
        ]);
        assert_eq!(
            lines,
            [
                "$ echo one",
                "> echo two",
                "> echo three",
                "one",
                "two",
                "three"
            ]
        );
    }

    #[test]
    fn cursor_up_inside_a_wrapped_line_stays_in_it() {
        let mut cooker = Cooker::new(0);
        cooker.resize(10, 5);
        // 15 characters wrap onto two rows; readline goes up one row and
        // rewrites from the start.
        let mut lines = cooker.feed(0, b"$ 0123456789abc\x1b[A\r$ 0123456789ABC\r\nok\r\n");
        lines.extend(cooker.finish());
        let texts: Vec<_> = lines.into_iter().map(|l| l.text).collect();
        assert_eq!(
            texts,
            ["$ 0123456789abc".replace("abc", "ABC"), "ok".into()]
        );
    }

    #[test]
    fn a_full_screen_program_is_one_entry() {
        let mut cooker = Cooker::new(0);
        let mut lines = cooker.feed(0, b"$ vim notes\r\n");
        let mut vim = b"\x1b[?1049h\x1b[H\x1b[2J".to_vec();
        for i in 0..2000 {
            vim.extend_from_slice(format!("\x1b[{};1Hline {i}\x1b[K", i % 24 + 1).as_bytes());
        }
        vim.extend_from_slice(b"\x1b[?1049l");
        lines.extend(cooker.feed(13, &vim));
        lines.extend(cooker.feed(13 + vim.len() as u64, b"$ "));
        lines.extend(cooker.finish());
        let texts: Vec<_> = lines.iter().map(|l| (l.kind, l.text.as_str())).collect();
        assert_eq!(texts.len(), 3, "{texts:?}");
        assert_eq!(texts[0], (LineKind::Text, "$ vim notes"));
        assert_eq!(texts[1].0, LineKind::Screen);
        // From its first escape to the one that ends it.
        let inner = vim.len() - b"\x1b[?1049l".len();
        assert!(
            texts[1].1.contains(&format!("{inner} bytes")),
            "{}",
            texts[1].1
        );
        assert_eq!(texts[2], (LineKind::Text, "$"));
        assert_eq!(lines[1].at, 13);
    }

    #[test]
    fn lines_become_final_when_they_scroll_off_or_a_mark_says() {
        let mut cooker = Cooker::new(0);
        cooker.resize(80, 3);
        let done = cooker.feed(0, b"a\r\nb\r\nc\r\nd\r\n");
        let texts: Vec<_> = done.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(texts, ["a", "b"]);
        let (tail, alt) = cooker.tail();
        assert!(!alt);
        assert_eq!(
            tail.iter().map(|l| l.text.as_str()).collect::<Vec<_>>(),
            ["c", "d"]
        );
        // A shell mark makes the rest above the cursor final.
        let done = cooker.feed(12, b"\x1b]133;A\x07$ ");
        assert_eq!(
            done.iter().map(|l| l.text.as_str()).collect::<Vec<_>>(),
            ["c", "d"]
        );
        assert_eq!(done[0].at, 6);
    }

    #[test]
    fn clear_keeps_what_was_shown() {
        let lines = cook_all(&[b"one\r\ntwo\r\n$ clear\r\n", b"\x1b[H\x1b[2J\x1b[3J$ "]);
        assert_eq!(lines, ["one", "two", "$ clear", "$"]);
    }

    #[test]
    fn wide_characters_tabs_and_marks() {
        // A tab into empty cells stays a tab; text written over it breaks
        // it into blanks.
        assert_eq!(cook_all(&[b"a\tb\r\n"]), ["a\tb"]);
        assert_eq!(cook_all(&[b"abc\rX\tY\r\n"]), ["Xbc\tY"]);
        assert_eq!(cook_all(&[b"a\tb\rxxxx\r\n"]), ["xxxx    b"]);
        assert_eq!(cook_all(&["日本語\u{8}\u{8}x\r\n".as_bytes()]), ["日本x"]);
        assert_eq!(cook_all(&["e\u{301}!\r\n".as_bytes()]), ["e\u{301}!"]);
        assert_eq!(
            cook_all(&["\x1b[31mred\x1b[0m ok\r\n".as_bytes()]),
            ["red ok"]
        );
    }

    #[test]
    fn a_huge_line_is_bounded() {
        let big = vec![b'x'; MAX_LINE_CELLS * 2];
        let lines = cook_all(&[&big, b"\r\n"]);
        assert_eq!(lines[0].len(), MAX_LINE_CELLS);
    }
}
