//! A pane's screen after an exact number of its output bytes, as escape
//! sequences a terminal in the page can write: what a view starts from
//! (and starts again from after a loss), followed by every byte from that
//! offset on.
//!
//! tmux's own screen (`capture-pane -e`, with colours and attributes, some
//! scrollback, and on the alternate screen the normal screen it hides),
//! read when the pane wrote nothing and was not resized while tmux
//! answered: tmux writes every pane output it read before a command ahead
//! of that command's reply, so the capture is then the screen after
//! exactly the log's end offset. A pane that writes without pause gives no
//! such moment; then the emulated screen (plain text, exact at its offset)
//! is used.

use tmux_control::PaneOutput;
use tmux_control::command::{CapturePane, DisplayMessage};

/// How many lines of scrollback a snapshot carries.
const HISTORY: i32 = 2000;

/// How many times tmux is asked before the emulated screen is used.
const TRIES: usize = 3;

/// What tmux is asked besides the captures.
const STATE: &str = "#{cursor_x} #{cursor_y} #{pane_width} #{pane_height} #{alternate_on} #{cursor_flag} #{keypad_cursor_flag}";

/// A screen at an offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Snapshot {
    /// The output offset the screen reflects: every byte before it, none
    /// after.
    pub(super) offset: u64,
    pub(super) cols: u32,
    pub(super) rows: u32,
    /// Escape sequences and text that draw it on a reset terminal of
    /// `cols` × `rows`.
    pub(super) data: String,
}

/// The screen of `po` now (see the module docs).
pub(super) async fn snapshot(po: &PaneOutput) -> Snapshot {
    let pane = po.pane();
    let tmux = po.tmux();
    let moment = || (po.end_offset(), po.state().layout_generation);
    for _ in 0..TRIES {
        let before = moment();
        let (lines, saved, state) = tokio::join!(
            tmux.run(CapturePane::new(pane).escapes().start(-HISTORY)),
            tmux.run(CapturePane::new(pane).escapes().saved_screen()),
            tmux.run(DisplayMessage::format(STATE).target(pane)),
        );
        if moment() != before {
            continue;
        }
        let (Ok(lines), Ok(state)) = (lines, state) else {
            break;
        };
        let Some(state) = State::parse(&String::from_utf8_lossy(&state)) else {
            break;
        };
        // Without an alternate screen, tmux answers the saved-screen
        // capture with an error.
        let saved = saved.ok().filter(|_| state.alternate);
        return Snapshot {
            offset: before.0,
            cols: state.cols,
            rows: state.rows,
            data: draw(&lines, saved.as_deref(), &state),
        };
    }
    emulated(po)
}

/// The emulated screen, drawn as plain text (a pane that never pauses).
fn emulated(po: &PaneOutput) -> Snapshot {
    match po.emulated_screen() {
        Some(screen) => {
            let lines: Vec<bytes::Bytes> = screen
                .lines
                .iter()
                .map(|l| bytes::Bytes::from(l.clone()))
                .collect();
            let state = State {
                cursor: (screen.cursor_x, screen.cursor_y),
                cols: screen.width,
                rows: screen.height,
                alternate: screen.alternate_screen,
                cursor_visible: true,
                keypad_cursor: false,
            };
            Snapshot {
                offset: screen.offset,
                cols: screen.width,
                rows: screen.height,
                data: draw(&lines, None, &state),
            }
        }
        // No emulator in sync: from the current end, on a blank screen.
        None => {
            let (cols, rows) = po.emulated_size().unwrap_or((80, 24));
            Snapshot {
                offset: po.end_offset(),
                cols,
                rows,
                data: String::new(),
            }
        }
    }
}

/// What tmux said of the pane besides its lines.
#[derive(Debug, Clone, PartialEq, Eq)]
struct State {
    cursor: (u32, u32),
    cols: u32,
    rows: u32,
    alternate: bool,
    cursor_visible: bool,
    keypad_cursor: bool,
}

impl State {
    fn parse(line: &str) -> Option<Self> {
        let n: Vec<u32> = line
            .split(' ')
            .map(|w| w.trim().parse().ok())
            .collect::<Option<_>>()?;
        let [x, y, cols, rows, alternate, visible, keypad] = n[..] else {
            return None;
        };
        Some(Self {
            cursor: (x, y),
            cols,
            rows,
            alternate: alternate == 1,
            cursor_visible: visible == 1,
            keypad_cursor: keypad == 1,
        })
    }
}

/// Lines from a capture, joined so that a terminal draws them: each line
/// from the default attributes (a capture starts every line from them),
/// reset at its end.
fn lines_of(lines: &[bytes::Bytes]) -> String {
    let mut out = String::new();
    for (i, line) in lines.iter().enumerate() {
        if i > 0 {
            out.push_str("\x1b[0m\r\n");
        }
        out.push_str(&String::from_utf8_lossy(line));
    }
    out.push_str("\x1b[0m");
    out
}

/// The sequences that draw the screen: the normal screen's scrollback and
/// lines (or, on the alternate screen, the normal screen it hides, then
/// the alternate screen), the cursor and its modes.
fn draw(lines: &[bytes::Bytes], saved: Option<&[bytes::Bytes]>, state: &State) -> String {
    let mut out = String::new();
    if state.alternate {
        // tmux keeps the normal screen's scrollback above the alternate
        // screen's lines, and the normal screen's own lines aside.
        let visible = lines.len().saturating_sub(state.rows as usize);
        let mut normal: Vec<bytes::Bytes> = lines[..visible].to_vec();
        normal.extend(saved.unwrap_or_default().iter().cloned());
        if !normal.is_empty() {
            out.push_str(&lines_of(&normal));
        }
        out.push_str("\x1b[?1049h\x1b[H\x1b[2J");
        out.push_str(&lines_of(&lines[visible..]));
    } else {
        out.push_str(&lines_of(lines));
    }
    let (x, y) = state.cursor;
    out.push_str(&format!("\x1b[{};{}H", y + 1, x + 1));
    if !state.cursor_visible {
        out.push_str("\x1b[?25l");
    }
    if state.keypad_cursor {
        out.push_str("\x1b[?1h");
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_state_line_parses() {
        let s = State::parse("3 1 80 24 0 1 0").unwrap();
        assert_eq!(
            (s.cursor, s.cols, s.rows, s.alternate),
            ((3, 1), 80, 24, false)
        );
        assert!(State::parse("3 1 80").is_none());
        assert!(State::parse("a b c d e f g").is_none());
    }

    #[test]
    fn lines_are_joined_from_default_attributes() {
        let lines = [
            bytes::Bytes::from("\x1b[31mred"),
            bytes::Bytes::from("plain"),
        ];
        let state = State::parse("5 1 80 2 0 1 0").unwrap();
        assert_eq!(
            draw(&lines, None, &state),
            "\x1b[31mred\x1b[0m\r\nplain\x1b[0m\x1b[2;6H"
        );
        // On the alternate screen: the hidden normal screen first.
        let alt = State::parse("0 0 80 2 1 0 1").unwrap();
        let drawn = draw(&lines, Some(&[bytes::Bytes::from("$ vim")]), &alt);
        assert!(drawn.starts_with("$ vim\x1b[0m\x1b[?1049h"), "{drawn:?}");
        assert!(drawn.ends_with("\x1b[1;1H\x1b[?25l\x1b[?1h"), "{drawn:?}");
    }
}
