//! A followed pane's screen emulated from its output (feature `emulator`):
//! [`PaneOutput::emulated_screen`] reads it with no tmux round trip.
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
//! not be taken at a quiet moment; [`PaneOutput::emulated_screen`] then
//! answers `None` until [`PaneOutput::resync_screen`] seeds it again, and
//! callers use [`PaneOutput::screen`] (tmux's answer) meanwhile.

use std::sync::Arc;

use alacritty_terminal::event::VoidListener;
use alacritty_terminal::grid::Dimensions;
use alacritty_terminal::index::{Column, Line};
use alacritty_terminal::term::cell::Flags;
use alacritty_terminal::term::{Config, Term, TermMode};
use alacritty_terminal::vte::ansi::Processor;

use super::PaneOutput;
use super::log::PaneLog;
use crate::command::{CapturePane, DisplayMessage};
use crate::error::Result;

/// Once this many bytes wait for the emulator, the connection's task feeds
/// them at once instead of leaving it to the next read: well under the
/// smallest log, so nothing is evicted unseen, and small enough that one
/// feed holds the connection's task for about a millisecond.
const EAGER_BYTES: u64 = 64 * 1024;

/// Lines the emulator keeps above the screen: not read, but when tmux
/// makes a pane taller it pulls lines back down from its history, and the
/// emulator needs them to do the same. About 200 KB per 80-column pane.
const HISTORY_LINES: usize = 100;

/// How many times [`PaneOutput::resync_screen`] asks tmux for a seed when
/// the pane writes (or is resized) while it asks.
const SEED_TRIES: usize = 3;

/// What the seed asks tmux besides the capture, in this order.
const SEED_FORMAT: &str = "#{cursor_x} #{cursor_y} #{pane_width} #{pane_height} #{alternate_on} \
#{scroll_region_upper} #{scroll_region_lower} #{insert_flag} #{wrap_flag} #{origin_flag}";

/// A pane's visible screen as the emulator holds it: see
/// [`PaneOutput::emulated_screen`].
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
    pub(super) fn resize(&mut self, cols: u32, rows: u32) {
        if self.size() != (cols.max(1), rows.max(1)) {
            self.term.resize(Size::new(cols, rows));
        }
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
struct SeedState {
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
}

impl SeedState {
    fn parse(text: &[u8]) -> Option<Self> {
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
        })
    }
}

/// An emulator showing what tmux captured, fed up to `offset`.
fn seeded(lines: &[bytes::Bytes], state: SeedState, offset: u64) -> Emulator {
    let mut e = Emulator::blank(state.width, state.height, 0);
    let mut init = Vec::with_capacity(lines.iter().map(|l| l.len() + 8).sum::<usize>() + 64);
    if state.alternate {
        // The primary screen is not captured: it stays blank.
        init.extend_from_slice(b"\x1b[?1049h");
    }
    for (i, line) in lines.iter().take(state.height as usize).enumerate() {
        if i > 0 {
            init.extend_from_slice(b"\x1b[0m\r\n");
        }
        init.extend_from_slice(line);
    }
    init.extend_from_slice(b"\x1b[0m");
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

impl PaneLog {
    /// Feeds the emulator what it has not seen; drops it (out of sync) if
    /// some of that is no longer held.
    pub(super) fn catch_up(&self, slot: &mut Option<Emulator>) {
        let Some(e) = slot.as_mut() else {
            return;
        };
        loop {
            let chunk = {
                let g = self.lock();
                if e.fed < g.start {
                    None
                } else if e.fed >= g.end {
                    return;
                } else {
                    let len = usize::try_from((g.end - e.fed).min(EAGER_BYTES)).unwrap_or(0);
                    Some(g.copy_out(e.fed, len))
                }
            };
            match chunk {
                Some(data) => e.feed(&data),
                None => {
                    *slot = None;
                    return;
                }
            }
        }
    }

    /// After an append: feeds the emulator now if much is waiting.
    pub(super) fn feed_if_behind(&self, end: u64) {
        let mut slot = self.emulator();
        if slot
            .as_ref()
            .is_some_and(|e| end - e.fed.min(end) > EAGER_BYTES)
        {
            self.catch_up(&mut slot);
        }
    }

    /// tmux discarded output here: the emulator, fed up to this point, is
    /// out of sync from now on.
    pub(super) fn emulator_lost(&self) {
        let mut slot = self.emulator();
        self.catch_up(&mut slot);
        *slot = None;
    }

    /// tmux resized the pane: resizes the emulator after the output so far.
    pub(crate) fn resize_emulator(&self, cols: u32, rows: u32) {
        let mut slot = self.emulator();
        self.catch_up(&mut slot);
        if let Some(e) = slot.as_mut() {
            e.resize(cols, rows);
        }
    }

    /// The pane's program was started again at output offset `at`, which
    /// reset its screen: the emulator starts blank there.
    pub(super) fn reset_emulator_at(&self, at: u64) {
        let mut slot = self.emulator();
        if let Some(e) = slot.as_mut() {
            let (cols, rows) = e.size();
            *e = Emulator::blank(cols, rows, at);
        }
    }
}

impl PaneOutput {
    /// The pane's visible screen from the emulator fed with its output
    /// (feature `emulator`), with no tmux round trip; `None` while the
    /// emulator is not in sync with tmux (output it did not see was lost,
    /// or the pane wrote without pause while it was being seeded): then
    /// [`PaneOutput::resync_screen`] seeds it again, and
    /// [`PaneOutput::screen`] asks tmux.
    ///
    /// It can differ from tmux's own screen where the emulator reads a
    /// sequence differently; docs/architecture.md lists the known cases.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use std::time::Duration;
    /// use tmux_control::command::NewWindow;
    /// use tmux_control::{IsolatedServer, Pattern, Tmux};
    /// let server = IsolatedServer::new()?;
    /// let tmux = Tmux::connect(server.server()).await?;
    /// let started = tmux.spawn(NewWindow::new().command("printf 'one\\ntwo'; exec sleep 60")).await?;
    /// let out = &started.output;
    /// out.expect_from(Pattern::literal("two"), started.start).wait(Duration::from_secs(10)).await?;
    /// let screen = out.emulated_screen().expect("in sync");
    /// assert_eq!(&screen.lines[..2], ["one", "two"]);
    /// assert_eq!((screen.cursor_x, screen.cursor_y), (3, 1));
    /// # Ok(()) }
    /// ```
    pub fn emulated_screen(&self) -> Option<EmulatedScreen> {
        let mut slot = self.log.emulator();
        self.log.catch_up(&mut slot);
        // Written as tmux's captures write them: tabs kept since 3.6.
        let tabs = self.tmux.version().capture_keeps_tabs();
        slot.as_ref().map(|e| e.screen(tabs))
    }

    /// Seeds the emulator again from tmux's screen (`capture-pane -e` and
    /// the cursor, size, modes and scroll region, in one pipelined round
    /// trip), taken at a moment when the pane wrote nothing and was not
    /// resized while tmux answered; tries a few times. Returns whether the
    /// emulator is in sync. Following a pane seeds it once already.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use tmux_control::command::NewWindow;
    /// use tmux_control::{IsolatedServer, Tmux};
    /// let server = IsolatedServer::new()?;
    /// let tmux = Tmux::connect(server.server()).await?;
    /// let window = tmux.run(NewWindow::new().command("exec sleep 60")).await?;
    /// let out = tmux.follow(window.pane).await?;
    /// assert!(out.resync_screen().await?);
    /// assert!(out.emulated_screen().is_some());
    /// # Ok(()) }
    /// ```
    pub async fn resync_screen(&self) -> Result<bool> {
        seed(&self.log, &self.tmux).await
    }
}

/// Seeds `log`'s emulator from tmux; see [`PaneOutput::resync_screen`].
pub(super) async fn seed(log: &Arc<PaneLog>, tmux: &crate::connection::Tmux) -> Result<bool> {
    let pane = log.pane();
    let moment = || {
        let g = log.lock();
        (g.end, g.pauses, g.state.layout_generation)
    };
    for _ in 0..SEED_TRIES {
        let before = moment();
        let (lines, state) = tokio::join!(
            tmux.run(CapturePane::new(pane).escapes()),
            tmux.run(DisplayMessage::format(SEED_FORMAT).target(pane)),
        );
        let (lines, state) = (lines?, state?);
        if moment() != before {
            // The pane wrote, lost output or was resized while tmux
            // answered: the capture may not be the screen at `before.0`.
            continue;
        }
        let Some(state) = SeedState::parse(&state) else {
            return Ok(false);
        };
        // tmux writes every pane output it read before a command ahead of
        // that command's reply, so with nothing new since `before` the
        // capture is the screen after exactly `before.0` bytes.
        *log.emulator() = Some(seeded(&lines, state, before.0));
        return Ok(true);
    }
    *log.emulator() = None;
    Ok(false)
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
        let mut e = seeded(&lines, state, 100);
        let s = e.screen(false);
        assert_eq!(s.lines, ["top", "bold", "", "end"]);
        assert_eq!((s.cursor_x, s.cursor_y, s.offset), (2, 1, 100));
        // The region is rows 1..=2: a line feed at its bottom scrolls only it.
        e.feed(b"\x1b[3;1Hx\n");
        assert_eq!(e.screen(false).lines, ["top", "x", "", "end"]);
    }
}
