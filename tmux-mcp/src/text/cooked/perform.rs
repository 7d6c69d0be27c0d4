//! The `vte::Perform` impl of the [`Screen`]: printed characters, control
//! bytes (line feed, carriage return, backspace, tab), and the CSI, ESC and
//! OSC sequences dispatched to the screen's editing methods.

use vte::{Params, Perform};

use super::MAX_LINE_CELLS;
use super::row::{Cell, Row};
use super::screen::Screen;

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
