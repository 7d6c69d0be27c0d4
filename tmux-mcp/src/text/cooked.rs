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

use std::collections::VecDeque;

use unicode_width::UnicodeWidthChar as _;
use vte::{Params, Parser, Perform};

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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cell {
    Blank,
    Char(char),
    /// The left half of a double-width character.
    Wide(char),
    /// The right half of a double-width character.
    Cont,
    /// A tab written where the line had no text yet: shown as a tab, as
    /// tmux's captures show it since 3.6 (a table keeps its columns).
    Tab,
    /// A cell a [`Cell::Tab`] moved over.
    TabPad,
}

#[derive(Debug, Clone, Default)]
struct Row {
    cells: Vec<Cell>,
    /// Zero-width characters (combining marks, variation selectors) after
    /// the cell at each index.
    marks: Vec<(usize, char)>,
    at: u64,
}

impl Row {
    fn new(at: u64) -> Self {
        Self {
            cells: Vec::new(),
            marks: Vec::new(),
            at,
        }
    }

    fn text(&self) -> String {
        let mut s = String::with_capacity(self.cells.len());
        let mut marks = self.marks.iter().peekable();
        for (i, cell) in self.cells.iter().enumerate() {
            match cell {
                Cell::Blank => s.push(' '),
                Cell::Char(c) | Cell::Wide(c) => s.push(*c),
                Cell::Tab => s.push('\t'),
                Cell::Cont | Cell::TabPad => {}
            }
            while let Some((_, m)) = marks.next_if(|(at, _)| *at == i) {
                s.push(*m);
            }
        }
        s.truncate(s.trim_end().len());
        s
    }

    fn is_blank(&self) -> bool {
        self.cells.iter().all(|c| *c == Cell::Blank)
    }

    /// Rows of the screen this line takes at `width`.
    fn height(&self, width: usize) -> usize {
        self.cells.len().div_ceil(width).max(1)
    }

    fn set(&mut self, col: usize, cell: Cell) {
        if col >= MAX_LINE_CELLS {
            return;
        }
        if self.cells.len() <= col {
            self.cells.resize(col + 1, Cell::Blank);
        }
        // Writing over a tab's cells breaks the tab into blanks.
        if matches!(self.cells[col], Cell::Tab | Cell::TabPad) {
            let mut from = col;
            while from > 0 && self.cells[from] == Cell::TabPad {
                from -= 1;
            }
            let mut to = col + 1;
            while self.cells.get(to) == Some(&Cell::TabPad) {
                to += 1;
            }
            for cell in &mut self.cells[from..to] {
                *cell = Cell::Blank;
            }
        }
        // Overwriting half of a wide character blanks the other half (not
        // when writing the right half of a new one).
        if cell != Cell::Cont {
            match self.cells[col] {
                Cell::Wide(_) => {
                    if let Some(next) = self.cells.get_mut(col + 1)
                        && *next == Cell::Cont
                    {
                        *next = Cell::Blank;
                    }
                }
                Cell::Cont if col > 0 => {
                    if let Cell::Wide(_) = self.cells[col - 1] {
                        self.cells[col - 1] = Cell::Blank;
                    }
                }
                _ => {}
            }
        }
        self.cells[col] = cell;
        self.marks.retain(|(at, _)| *at != col);
    }

    fn blank(&mut self, from: usize, to: usize) {
        let to = to.min(self.cells.len());
        for col in from..to {
            self.cells[col] = Cell::Blank;
        }
        self.marks.retain(|(at, _)| *at < from || *at >= to);
    }

    fn truncate(&mut self, len: usize) {
        self.cells.truncate(len);
        self.marks.retain(|(at, _)| *at < len);
    }
}

/// Where the cursor was saved (DECSC, `CSI s`): the absolute row and column.
#[derive(Debug, Clone, Copy)]
struct Saved {
    row: u64,
    col: usize,
}

/// The screen model (the `vte` performer).
#[derive(Debug)]
struct Screen {
    width: usize,
    height: usize,
    /// Lines that can still change; `rows[0]` is absolute row `top`.
    rows: VecDeque<Row>,
    top: u64,
    /// The cursor: index in `rows` and column in that logical line.
    cur: usize,
    col: usize,
    /// The last character filled the last column: the next one wraps.
    wrap_pending: bool,
    saved: Option<Saved>,
    /// Inside a full-screen program: where it started.
    alt: Option<u64>,
    /// Offset of the piece being parsed, and just after it.
    offset: u64,
    piece_end: u64,
    /// Lines made final by the last feed.
    done: Vec<Cooked>,
}

impl Screen {
    fn x(&self) -> usize {
        let x = self.col % self.width;
        if self.wrap_pending && x == 0 && self.col > 0 {
            self.width - 1
        } else {
            x
        }
    }

    /// The screen row (within its logical line) of the cursor.
    fn phys(&self) -> usize {
        if self.wrap_pending && self.col > 0 && self.col.is_multiple_of(self.width) {
            self.col / self.width - 1
        } else {
            self.col / self.width
        }
    }

    fn row(&mut self) -> &mut Row {
        if self.rows.is_empty() {
            self.rows.push_back(Row::new(self.offset));
            self.cur = 0;
        }
        let cur = self.cur.min(self.rows.len() - 1);
        &mut self.rows[cur]
    }

    fn finalize_front(&mut self) {
        if let Some(row) = self.rows.pop_front() {
            self.done.push(Cooked {
                at: row.at,
                text: row.text(),
                kind: LineKind::Text,
            });
            self.top += 1;
            self.cur = self.cur.saturating_sub(1);
        }
    }

    /// Makes every line above the cursor's final.
    fn commit(&mut self) {
        while self.cur > 0 {
            self.finalize_front();
        }
    }

    /// Makes lines final that scrolled off the top of the screen.
    fn scroll_off(&mut self) {
        let width = self.width;
        let mut total: usize = self.rows.iter().map(|r| r.height(width)).sum();
        while self.cur > 0 && total > self.height {
            total -= self.rows[0].height(width);
            self.finalize_front();
        }
    }

    /// Moves to the start of the next screen row (a line feed at column 0).
    fn line_feed(&mut self) {
        let x = self.x();
        let phys = self.phys();
        let width = self.width;
        let height = self.row().height(width);
        self.wrap_pending = false;
        if phys + 1 < height {
            self.col = (phys + 1) * width + x;
            return;
        }
        if self.cur + 1 >= self.rows.len() {
            // A piece ends with its line feed: the new line starts after.
            self.rows.push_back(Row::new(self.piece_end));
        }
        self.cur += 1;
        self.col = x;
        self.scroll_off();
    }

    fn up(&mut self, n: usize) {
        let x = self.x();
        let width = self.width;
        self.wrap_pending = false;
        let mut phys = self.phys();
        let mut left = n;
        while left > 0 {
            if phys > 0 {
                let step = left.min(phys);
                phys -= step;
                left -= step;
            } else if self.cur > 0 {
                self.cur -= 1;
                phys = self.rows[self.cur].height(width) - 1;
                left -= 1;
            } else {
                break;
            }
        }
        self.col = phys * width + x;
    }

    fn down(&mut self, n: usize) {
        let x = self.x();
        let width = self.width;
        self.wrap_pending = false;
        let mut phys = self.phys();
        for _ in 0..n {
            let height = self.row().height(width);
            if phys + 1 < height {
                phys += 1;
            } else if self.cur + 1 < self.rows.len() {
                self.cur += 1;
                phys = 0;
            } else {
                // Below the last line: the terminal stops at the bottom of
                // the screen, which the tail's end stands for.
                break;
            }
        }
        self.col = phys * width + x;
    }

    /// Moves to screen row `r` (0 = top of the screen) and column `x`.
    fn goto(&mut self, r: usize, x: usize) {
        let width = self.width;
        let heights: Vec<usize> = self.rows.iter().map(|row| row.height(width)).collect();
        let total: usize = heights.iter().sum();
        // The screen shows the last `height` rows of the tail (or all of it).
        let mut skip = total.saturating_sub(self.height) + r.min(self.height - 1);
        self.wrap_pending = false;
        for (i, h) in heights.iter().enumerate() {
            if skip < *h {
                self.cur = i;
                self.col = skip * width + x.min(width - 1);
                return;
            }
            skip -= h;
        }
        // Below the last line: add blank lines down to it.
        for _ in 0..=skip.min(self.height) {
            self.rows.push_back(Row::new(self.offset));
        }
        self.cur = self.rows.len() - 1;
        self.col = x.min(width - 1);
        self.scroll_off();
    }

    fn set_x(&mut self, x: usize) {
        let phys = self.phys();
        self.wrap_pending = false;
        self.col = phys * self.width + x.min(self.width - 1);
    }

    fn row_bounds(&self) -> (usize, usize) {
        let start = self.phys() * self.width;
        (start, start + self.width)
    }

    fn erase_line(&mut self, mode: u16) {
        let (start, end) = self.row_bounds();
        let col = start + self.x();
        let last_phys = {
            let width = self.width;
            let phys = self.phys();
            phys + 1 >= self.row().height(width)
        };
        let row = self.row();
        match mode {
            0 if last_phys => row.truncate(col),
            0 => row.blank(col, end),
            1 => row.blank(start, col + 1),
            _ if last_phys => row.truncate(start),
            _ => row.blank(start, end),
        }
    }

    fn erase_display(&mut self, mode: u16) {
        match mode {
            0 => {
                self.erase_line(0);
                self.rows.truncate(self.cur + 1);
            }
            1 => {
                let cur = self.cur;
                for row in self.rows.iter_mut().take(cur) {
                    row.truncate(0);
                }
                self.erase_line(1);
            }
            _ => {
                // Cleared: what was on the screen stays in the log.
                let x = self.x();
                while self.rows.back().is_some_and(Row::is_blank) {
                    self.rows.pop_back();
                }
                self.cur = self.rows.len();
                self.commit();
                self.rows.clear();
                self.rows.push_back(Row::new(self.offset));
                self.cur = 0;
                self.col = x;
                self.wrap_pending = false;
            }
        }
    }

    fn print_char(&mut self, c: char) {
        let w = c.width().unwrap_or(0);
        if w == 0 {
            let col = self.col.saturating_sub(1);
            let row = self.row();
            let at = match row.cells.get(col) {
                Some(Cell::Cont) => col.saturating_sub(1),
                _ => col,
            };
            if !row.cells.is_empty() {
                row.marks.push((at, c));
            }
            return;
        }
        let width = self.width;
        if self.wrap_pending {
            self.wrap_pending = false;
        }
        if w == 2 && self.col % width == width - 1 {
            // A wide character does not fit in the last column: it wraps.
            let col = self.col;
            self.row().set(col, Cell::Blank);
            self.col += 1;
        }
        let col = self.col;
        if w == 2 {
            self.row().set(col, Cell::Wide(c));
            self.row().set(col + 1, Cell::Cont);
        } else {
            self.row().set(col, Cell::Char(c));
        }
        self.col += w;
        if self.col.is_multiple_of(width) {
            self.wrap_pending = true;
        }
    }

    fn save(&mut self) {
        self.saved = Some(Saved {
            row: self.top + self.cur as u64,
            col: self.col,
        });
    }

    fn restore(&mut self) {
        if let Some(saved) = self.saved {
            let index = saved.row.saturating_sub(self.top) as usize;
            self.cur = index.min(self.rows.len().saturating_sub(1));
            self.col = if saved.row < self.top { 0 } else { saved.col };
            self.wrap_pending = false;
        }
    }

    fn enter_alt(&mut self) {
        if self.alt.is_none() {
            self.commit();
            self.save();
            self.alt = Some(self.offset);
        }
    }

    fn leave_alt(&mut self) {
        if let Some(at) = self.alt.take() {
            // The piece being parsed starts at the escape that ends it.
            let bytes = self.offset.saturating_sub(at);
            self.done.push(Cooked {
                at,
                text: format!("[full-screen program: {bytes} bytes of output, not kept as lines]"),
                kind: LineKind::Screen,
            });
            self.restore();
        }
    }
}

fn param(params: &Params, i: usize, default: u16) -> u16 {
    match params.iter().nth(i).and_then(|p| p.first().copied()) {
        Some(0) | None => default,
        Some(v) => v,
    }
}

impl Perform for Screen {
    fn print(&mut self, c: char) {
        if self.alt.is_none() {
            self.print_char(c);
        }
    }

    fn execute(&mut self, byte: u8) {
        if self.alt.is_some() {
            return;
        }
        match byte {
            b'\n' | 0x0b | 0x0c => self.line_feed(),
            b'\r' => {
                self.col = self.phys() * self.width;
                self.wrap_pending = false;
            }
            0x08 => {
                let x = self.x();
                if self.wrap_pending {
                    self.wrap_pending = false;
                    self.col -= 1;
                } else if x > 0 {
                    self.col -= 1;
                }
            }
            b'\t' => {
                let x = self.x();
                let to = ((x / 8 + 1) * 8).min(self.width - 1);
                let (start, _) = self.row_bounds();
                let from = start + x;
                let len = self.row().cells.len();
                let first = from.max(len);
                for col in first..start + to {
                    let cell = if col == first {
                        Cell::Tab
                    } else {
                        Cell::TabPad
                    };
                    self.row().set(col, cell);
                }
                self.col = start + to;
                self.wrap_pending = false;
            }
            _ => {}
        }
    }

    fn csi_dispatch(&mut self, params: &Params, intermediates: &[u8], _ignore: bool, action: char) {
        if intermediates == b"?" && (action == 'h' || action == 'l') {
            let alt = params
                .iter()
                .any(|p| matches!(p.first(), Some(1049 | 1047 | 47)));
            if alt {
                if action == 'h' {
                    self.enter_alt();
                } else {
                    self.leave_alt();
                }
            }
            return;
        }
        if self.alt.is_some() || !intermediates.is_empty() {
            return;
        }
        let n = usize::from(param(params, 0, 1));
        match action {
            'A' => self.up(n),
            'B' | 'e' => self.down(n),
            'E' => {
                self.down(n);
                self.set_x(0);
            }
            'F' => {
                self.up(n);
                self.set_x(0);
            }
            'C' | 'a' => {
                let x = self.x();
                self.set_x(x + n);
            }
            'D' => {
                let x = self.x();
                self.set_x(x.saturating_sub(n));
            }
            'G' | '`' => self.set_x(n - 1),
            'H' | 'f' => {
                let col = usize::from(param(params, 1, 1));
                self.goto(n - 1, col - 1);
            }
            'd' => {
                let x = self.x();
                self.goto(n - 1, x);
            }
            'K' => self.erase_line(param(params, 0, 0)),
            'J' => self.erase_display(param(params, 0, 0)),
            'X' => {
                let col = self.row_bounds().0 + self.x();
                let end = self.row_bounds().1.min(col + n);
                self.row().blank(col, end);
            }
            'P' => {
                let col = self.row_bounds().0 + self.x();
                let row = self.row();
                if col < row.cells.len() {
                    let end = (col + n).min(row.cells.len());
                    row.cells.drain(col..end);
                    row.marks.retain(|(at, _)| *at < col);
                }
            }
            '@' => {
                let col = self.row_bounds().0 + self.x();
                let row = self.row();
                if col < row.cells.len() && row.cells.len() + n <= MAX_LINE_CELLS {
                    row.cells
                        .splice(col..col, std::iter::repeat_n(Cell::Blank, n));
                    row.marks.retain(|(at, _)| *at < col);
                }
            }
            'L' => {
                let at = self.offset;
                for _ in 0..n.min(self.height) {
                    self.rows.insert(self.cur, Row::new(at));
                }
                self.scroll_off();
            }
            'M' => {
                let end = (self.cur + n).min(self.rows.len());
                self.rows.drain(self.cur..end);
                if self.rows.is_empty() {
                    self.rows.push_back(Row::new(self.offset));
                }
                self.cur = self.cur.min(self.rows.len() - 1);
            }
            's' => self.save(),
            'u' => self.restore(),
            _ => {}
        }
    }

    fn esc_dispatch(&mut self, intermediates: &[u8], _ignore: bool, byte: u8) {
        if self.alt.is_some() || !intermediates.is_empty() {
            return;
        }
        match byte {
            b'7' => self.save(),
            b'8' => self.restore(),
            b'D' => self.line_feed(),
            b'E' => {
                self.line_feed();
                self.set_x(0);
            }
            b'M' => self.up(1),
            b'c' => self.erase_display(2),
            _ => {}
        }
    }

    fn osc_dispatch(&mut self, params: &[&[u8]], _bell_terminated: bool) {
        // A shell's prompt and command marks: what is above the cursor
        // cannot change any more.
        if params.first() == Some(&&b"133"[..]) && self.alt.is_none() {
            self.commit();
        }
    }
}

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
