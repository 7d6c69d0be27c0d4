//! The screen model the `vte` parser plays onto ([`Screen`]): the lines
//! that can still change, the cursor and its motions (line feed, up, down,
//! absolute), erasing in line and display, printing a character, saving and
//! restoring the cursor, and entering and leaving a full-screen program.

use std::collections::VecDeque;

use unicode_width::UnicodeWidthChar as _;

use super::row::{Cell, Row};
use super::{Cooked, LineKind};

/// Where the cursor was saved (DECSC, `CSI s`): the absolute row and column.
#[derive(Debug, Clone, Copy)]
pub(super) struct Saved {
    row: u64,
    col: usize,
}

/// The screen model (the `vte` performer).
#[derive(Debug)]
pub(super) struct Screen {
    pub(super) width: usize,
    pub(super) height: usize,
    /// Lines that can still change; `rows[0]` is absolute row `top`.
    pub(super) rows: VecDeque<Row>,
    pub(super) top: u64,
    /// The cursor: index in `rows` and column in that logical line.
    pub(super) cur: usize,
    pub(super) col: usize,
    /// The last character filled the last column: the next one wraps.
    pub(super) wrap_pending: bool,
    pub(super) saved: Option<Saved>,
    /// Inside a full-screen program: where it started.
    pub(super) alt: Option<u64>,
    /// Offset of the piece being parsed, and just after it.
    pub(super) offset: u64,
    pub(super) piece_end: u64,
    /// Lines made final by the last feed.
    pub(super) done: Vec<Cooked>,
}

impl Screen {
    pub(super) fn x(&self) -> usize {
        let x = self.col % self.width;
        if self.wrap_pending && x == 0 && self.col > 0 {
            self.width - 1
        } else {
            x
        }
    }

    /// The screen row (within its logical line) of the cursor.
    pub(super) fn phys(&self) -> usize {
        if self.wrap_pending && self.col > 0 && self.col.is_multiple_of(self.width) {
            self.col / self.width - 1
        } else {
            self.col / self.width
        }
    }

    pub(super) fn row(&mut self) -> &mut Row {
        if self.rows.is_empty() {
            self.rows.push_back(Row::new(self.offset));
            self.cur = 0;
        }
        let cur = self.cur.min(self.rows.len() - 1);
        &mut self.rows[cur]
    }

    pub(super) fn finalize_front(&mut self) {
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
    pub(super) fn commit(&mut self) {
        while self.cur > 0 {
            self.finalize_front();
        }
    }

    /// Makes lines final that scrolled off the top of the screen.
    pub(super) fn scroll_off(&mut self) {
        let width = self.width;
        let mut total: usize = self.rows.iter().map(|r| r.height(width)).sum();
        while self.cur > 0 && total > self.height {
            total -= self.rows[0].height(width);
            self.finalize_front();
        }
    }

    /// Moves to the start of the next screen row (a line feed at column 0).
    pub(super) fn line_feed(&mut self) {
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

    pub(super) fn up(&mut self, n: usize) {
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

    pub(super) fn down(&mut self, n: usize) {
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
    pub(super) fn goto(&mut self, r: usize, x: usize) {
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

    pub(super) fn set_x(&mut self, x: usize) {
        let phys = self.phys();
        self.wrap_pending = false;
        self.col = phys * self.width + x.min(self.width - 1);
    }

    pub(super) fn row_bounds(&self) -> (usize, usize) {
        let start = self.phys() * self.width;
        (start, start + self.width)
    }

    pub(super) fn erase_line(&mut self, mode: u16) {
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

    pub(super) fn erase_display(&mut self, mode: u16) {
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

    pub(super) fn print_char(&mut self, c: char) {
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

    pub(super) fn save(&mut self) {
        self.saved = Some(Saved {
            row: self.top + self.cur as u64,
            col: self.col,
        });
    }

    pub(super) fn restore(&mut self) {
        if let Some(saved) = self.saved {
            let index = saved.row.saturating_sub(self.top) as usize;
            self.cur = index.min(self.rows.len().saturating_sub(1));
            self.col = if saved.row < self.top { 0 } else { saved.col };
            self.wrap_pending = false;
        }
    }

    pub(super) fn enter_alt(&mut self) {
        if self.alt.is_none() {
            self.commit();
            self.save();
            self.alt = Some(self.offset);
        }
    }

    pub(super) fn leave_alt(&mut self) {
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
