//! A followed pane's screen emulated from its output (feature `emulator`):
//! [`PaneOutput::emulated_screen`](super::PaneOutput::emulated_screen) reads it with no tmux round trip.
//!
//! Each followed pane's log holds an [`Emulator`] (an `alacritty_terminal`
//! grid with a short history, for resizes) and the output offset it has been fed to. It
//! starts from tmux's own screen, once, when the pane is followed
//! (`capture-pane -e` and the cursor, modes and scroll region in one
//! pipelined round trip) and is then fed the pane's bytes in order:
//! lazily, when the screen is read, and eagerly on the connection's task
//! once more than [`EAGER_BYTES`] are waiting, so the bounded log never
//! evicts bytes the emulator has not seen. `%layout-change` resizes it at
//! the point of the output where tmux resized the pane.
//!
//! It stops being in sync when output it has not seen is gone (evicted
//! from the log, or discarded by tmux's flow control), or when a seed could
//! not be taken at a quiet moment; [`PaneOutput::emulated_screen`](super::PaneOutput::emulated_screen) then
//! answers `None` until [`PaneOutput::resync_screen`](super::PaneOutput::resync_screen) seeds it again, and
//! callers use [`PaneOutput::screen`](super::PaneOutput::screen) (tmux's answer) meanwhile.

use alacritty_terminal::event::VoidListener;
use alacritty_terminal::grid::Dimensions;
use alacritty_terminal::index::{Column, Line};
use alacritty_terminal::term::cell::Flags;
use alacritty_terminal::term::{Config, Term, TermMode};
use alacritty_terminal::vte::ansi::Processor;

/// Once this many bytes wait for the emulator, the connection's task feeds
/// them at once instead of leaving it to the next read: well under the
/// smallest log, so nothing is evicted unseen, and small enough that one
/// feed holds the connection's task for about a millisecond.
pub(super) const EAGER_BYTES: u64 = 64 * 1024;

/// Lines the emulator keeps above the screen: none. alacritty grows its
/// history a thousand rows at a time whatever the limit (24 bytes a cell:
/// 4.8 MB for a 200-column pane, held for as long as the pane is
/// followed), and the screen needs none of it: when a resize could bring
/// lines back down from tmux's history (the pane grows taller or wider),
/// the emulator is seeded again from tmux instead ([`Emulator::resize`]).
const HISTORY_LINES: usize = 0;

/// How many times [`PaneOutput::resync_screen`](super::PaneOutput::resync_screen) asks tmux for a seed when
/// the pane writes (or is resized) while it asks.
pub(super) const SEED_TRIES: usize = 3;

/// What the seed asks tmux besides the capture, in this order.
pub(super) const SEED_FORMAT: &str = "#{cursor_x} #{cursor_y} #{pane_width} #{pane_height} #{alternate_on} \
#{scroll_region_upper} #{scroll_region_lower} #{insert_flag} #{wrap_flag} #{origin_flag} \
#{alternate_saved_x} #{alternate_saved_y}";

/// A pane's visible screen as the emulator holds it: see
/// [`PaneOutput::emulated_screen`](super::PaneOutput::emulated_screen).
///
/// ```
/// use tmux_control::EmulatedScreen;
/// fn first_line(screen: &EmulatedScreen) -> &str {
///     screen.lines.first().map_or("", |l| l.as_str())
/// }
/// # let _ = first_line;
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct EmulatedScreen {
    /// The rows of the screen, top to bottom, as `capture-pane -p` writes
    /// them: plain text, a wide character once, combining characters after
    /// their base, trailing spaces removed. Always `height` rows.
    pub lines: Vec<String>,
    /// The cursor's column (0-based).
    pub cursor_x: u32,
    /// The cursor's row (0-based).
    pub cursor_y: u32,
    /// Columns.
    pub width: u32,
    /// Rows.
    pub height: u32,
    /// On the alternate screen (a full-screen program).
    pub alternate_screen: bool,
    /// The output offset the screen reflects: every byte before it, none
    /// after.
    pub offset: u64,
}

/// The size of an emulated screen, for `alacritty_terminal`.
#[derive(Debug, Clone, Copy)]
struct Size {
    cols: usize,
    rows: usize,
}

impl Size {
    fn new(cols: u32, rows: u32) -> Self {
        let n = |v: u32| usize::try_from(v.max(1)).unwrap_or(1);
        Self {
            cols: n(cols),
            rows: n(rows),
        }
    }
}

impl Dimensions for Size {
    fn total_lines(&self) -> usize {
        self.rows
    }

    fn screen_lines(&self) -> usize {
        self.rows
    }

    fn columns(&self) -> usize {
        self.cols
    }
}

/// The emulator of one pane and how far it has been fed.
pub(super) struct Emulator {
    term: Term<VoidListener>,
    parser: Processor,
    /// The output offset up to which bytes were fed.
    pub(super) fed: u64,
}

impl std::fmt::Debug for Emulator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Emulator")
            .field("fed", &self.fed)
            .field("columns", &self.term.columns())
            .field("rows", &self.term.screen_lines())
            .finish_non_exhaustive()
    }
}

impl Emulator {
    /// A blank screen of `cols` × `rows`, fed up to `offset`.
    pub(super) fn blank(cols: u32, rows: u32, offset: u64) -> Self {
        let config = Config {
            scrolling_history: HISTORY_LINES,
            ..Config::default()
        };
        Self {
            term: Term::new(config, &Size::new(cols, rows), VoidListener),
            parser: Processor::new(),
            fed: offset,
        }
    }

    /// Feeds output bytes, which follow those fed so far.
    pub(super) fn feed(&mut self, data: &[u8]) {
        self.parser.advance(&mut self.term, data);
        self.fed += data.len() as u64;
    }

    /// The size.
    pub(super) fn size(&self) -> (u32, u32) {
        let n = |v: usize| u32::try_from(v).unwrap_or(u32::MAX);
        (n(self.term.columns()), n(self.term.screen_lines()))
    }

    /// Resizes (tmux resized the pane); text is reflowed as tmux does.
    /// Returns whether the screen may now hold lines tmux brought back from
    /// its history, which the emulator does not keep: the pane grew taller
    /// or wider. Then it must be seeded again.
    pub(super) fn resize(&mut self, cols: u32, rows: u32) -> bool {
        let (was_cols, was_rows) = self.size();
        let (cols, rows) = (cols.max(1), rows.max(1));
        if (was_cols, was_rows) == (cols, rows) {
            return false;
        }
        self.term.resize(Size::new(cols, rows));
        cols > was_cols || rows > was_rows
    }

    /// The screen now; with `tabs`, a tab still whole on the screen is
    /// written as `\t`, as `capture-pane -p` does since tmux 3.6.
    pub(super) fn screen(&self, tabs: bool) -> EmulatedScreen {
        let grid = self.term.grid();
        let (width, height) = self.size();
        let mut lines = Vec::with_capacity(grid.screen_lines());
        for row in 0..grid.screen_lines() {
            let row = Line(i32::try_from(row).unwrap_or(i32::MAX));
            let mut text = String::with_capacity(grid.columns());
            let mut col = 0;
            while col < grid.columns() {
                let cell = &grid[row][Column(col)];
                col += 1;
                if tabs && cell.c == '\t' {
                    // The cells the tab skipped are blank up to the next
                    // stop (every 8 columns) unless something was written
                    // over them.
                    text.push('\t');
                    let stop = (col.div_ceil(8) * 8).min(grid.columns());
                    while col < stop && grid[row][Column(col)].c == ' ' {
                        col += 1;
                    }
                    continue;
                }
                if cell.flags.contains(Flags::WIDE_CHAR_SPACER) {
                    continue;
                }
                if cell.flags.contains(Flags::LEADING_WIDE_CHAR_SPACER) {
                    text.push(' ');
                    continue;
                }
                // alacritty_terminal keeps a tab in the first cell it
                // skipped (to copy it back as a tab); tmux has a space.
                text.push(if cell.c == '\t' { ' ' } else { cell.c });
                if let Some(marks) = cell.zerowidth() {
                    text.extend(marks);
                }
            }
            let kept = text.trim_end_matches(' ').len();
            text.truncate(kept);
            lines.push(text);
        }
        let point = grid.cursor.point;
        EmulatedScreen {
            lines,
            cursor_x: u32::try_from(point.column.0).unwrap_or(0),
            cursor_y: u32::try_from(point.line.0).unwrap_or(0),
            width,
            height,
            alternate_screen: self.term.mode().contains(TermMode::ALT_SCREEN),
            offset: self.fed,
        }
    }
}

/// What the seed's `display-message` said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct SeedState {
    cursor_x: u32,
    cursor_y: u32,
    width: u32,
    height: u32,
    alternate: bool,
    upper: u32,
    lower: u32,
    insert: bool,
    wrap: bool,
    origin: bool,
    /// The cursor of the normal screen, while on the alternate one.
    saved_x: u32,
    saved_y: u32,
}

impl SeedState {
    pub(super) fn parse(text: &[u8]) -> Option<Self> {
        let text = std::str::from_utf8(text).ok()?;
        let mut n = text.split(' ').map(|v| v.trim().parse::<u32>().ok());
        let mut next = || n.next().flatten();
        Some(Self {
            cursor_x: next()?,
            cursor_y: next()?,
            width: next()?,
            height: next()?,
            alternate: next()? == 1,
            upper: next()?,
            lower: next()?,
            insert: next()? == 1,
            wrap: next()? == 1,
            origin: next()? == 1,
            // Not on the alternate screen, tmux may leave these empty.
            saved_x: next().unwrap_or(0),
            saved_y: next().unwrap_or(0),
        })
    }
}

/// Writes captured `lines` from the top of the screen.
fn draw(init: &mut Vec<u8>, lines: &[bytes::Bytes], height: u32) {
    for (i, line) in lines.iter().take(height as usize).enumerate() {
        if i > 0 {
            init.extend_from_slice(b"\x1b[0m\r\n");
        }
        init.extend_from_slice(line);
    }
    init.extend_from_slice(b"\x1b[0m");
}

/// An emulator showing what tmux captured, fed up to `offset`: the
/// visible `lines` and, on the alternate screen, the normal screen it
/// hides (`saved`), so the pane is right again when the program ends.
pub(super) fn seeded(
    lines: &[bytes::Bytes],
    saved: &[bytes::Bytes],
    state: SeedState,
    offset: u64,
) -> Emulator {
    let mut e = Emulator::blank(state.width, state.height, 0);
    let mut init = Vec::with_capacity(
        lines
            .iter()
            .chain(saved)
            .map(|l| l.len() + 8)
            .sum::<usize>()
            + 96,
    );
    if state.alternate {
        draw(&mut init, saved, state.height);
        let x = state.saved_x.min(state.width.saturating_sub(1));
        init.extend_from_slice(format!("\x1b[{};{}H", state.saved_y + 1, x + 1).as_bytes());
        // Saves that cursor and switches to a clear alternate screen.
        init.extend_from_slice(b"\x1b[?1049h\x1b[H");
    }
    draw(&mut init, lines, state.height);
    if state.upper != 0 || state.lower + 1 != state.height {
        init.extend_from_slice(format!("\x1b[{};{}r", state.upper + 1, state.lower + 1).as_bytes());
    }
    let mut row = state.cursor_y;
    if state.origin {
        init.extend_from_slice(b"\x1b[?6h");
        row = row.saturating_sub(state.upper);
    }
    // tmux's cursor can sit just past the last column (a wrap pending);
    // the emulator's stops on it.
    let col = state.cursor_x.min(state.width.saturating_sub(1));
    init.extend_from_slice(format!("\x1b[{};{}H", row + 1, col + 1).as_bytes());
    if state.insert {
        init.extend_from_slice(b"\x1b[4h");
    }
    if !state.wrap {
        init.extend_from_slice(b"\x1b[?7l");
    }
    e.feed(&init);
    e.fed = offset;
    e
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn bytes_in_order_make_the_screen() {
        let mut e = Emulator::blank(10, 3, 0);
        let text = "ab\u{6f22}c\r\ne\u{301}x\x1b[31m red";
        e.feed(text.as_bytes());
        let s = e.screen(false);
        assert_eq!(s.lines, ["ab\u{6f22}c", "e\u{301}x red", ""]);
        assert_eq!(
            (s.cursor_x, s.cursor_y, s.offset),
            (6, 1, text.len() as u64)
        );
        e.feed(b"\r\n1\r\n2");
        assert_eq!(e.screen(false).lines, ["e\u{301}x red", "1", "2"]);
        e.feed(b"\r\na\tb\r\n1234567\tx");
        assert_eq!(e.screen(false).lines, ["2", "a       b", "1234567 x"]);
        assert_eq!(e.screen(true).lines, ["2", "a\tb", "1234567\tx"]);
    }

    #[test]
    fn a_seed_puts_back_the_screen_cursor_and_region() {
        let state = SeedState::parse(b"2 1 8 4 0 1 2 0 1 0").unwrap();
        let lines = [
            bytes::Bytes::from_static(b"top"),
            bytes::Bytes::from_static(b"\x1b[1mbold\x1b[0m"),
            bytes::Bytes::from_static(b""),
            bytes::Bytes::from_static(b"end"),
        ];
        let mut e = seeded(&lines, &[], state, 100);
        let s = e.screen(false);
        assert_eq!(s.lines, ["top", "bold", "", "end"]);
        assert_eq!((s.cursor_x, s.cursor_y, s.offset), (2, 1, 100));
        // The region is rows 1..=2: a line feed at its bottom scrolls only it.
        e.feed(b"\x1b[3;1Hx\n");
        assert_eq!(e.screen(false).lines, ["top", "x", "", "end"]);
    }
}
