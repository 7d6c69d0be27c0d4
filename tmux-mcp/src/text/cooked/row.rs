//! One logical line of the screen model: its cells ([`Cell`]: characters,
//! the halves of wide ones, tabs and blanks) and the zero-width marks after
//! them, and the edits on them (writing a cell, blanking, cutting).

use super::MAX_LINE_CELLS;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Cell {
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
pub(super) struct Row {
    pub(super) cells: Vec<Cell>,
    /// Zero-width characters (combining marks, variation selectors) after
    /// the cell at each index.
    pub(super) marks: Vec<(usize, char)>,
    pub(super) at: u64,
}

impl Row {
    pub(super) fn new(at: u64) -> Self {
        Self {
            cells: Vec::new(),
            marks: Vec::new(),
            at,
        }
    }

    pub(super) fn text(&self) -> String {
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

    pub(super) fn is_blank(&self) -> bool {
        self.cells.iter().all(|c| *c == Cell::Blank)
    }

    /// Rows of the screen this line takes at `width`.
    pub(super) fn height(&self, width: usize) -> usize {
        self.cells.len().div_ceil(width).max(1)
    }

    pub(super) fn set(&mut self, col: usize, cell: Cell) {
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

    pub(super) fn blank(&mut self, from: usize, to: usize) {
        let to = to.min(self.cells.len());
        for col in from..to {
            self.cells[col] = Cell::Blank;
        }
        self.marks.retain(|(at, _)| *at < from || *at >= to);
    }

    pub(super) fn truncate(&mut self, len: usize) {
        self.cells.truncate(len);
        self.marks.retain(|(at, _)| *at < len);
    }
}
