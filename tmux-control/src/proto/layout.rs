//! Reading the panes, and their sizes, out of a tmux layout string.

use crate::ids::PaneId;

/// One pane of a layout string, with its size: see [`layout_pane_sizes`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct LayoutPane {
    /// The pane.
    pub pane: PaneId,
    /// Its width in columns.
    pub width: u32,
    /// Its height in rows.
    pub height: u32,
}

/// The panes of a layout string as sent in `%layout-change` (or by
/// `#{window_layout}`), in layout order. Returns `None` for a string that is
/// not a layout. Accepts negative offsets and the `<…>` floating panes of
/// newer tmux.
///
/// ```
/// use tmux_control::proto::layout_panes;
/// use tmux_control::PaneId;
/// let panes = layout_panes(b"b25d,80x24,0,0{40x24,0,0,1,39x24,41,0[39x12,41,0,2,39x11,41,13,3]}").unwrap();
/// assert_eq!(panes, vec![PaneId(1), PaneId(2), PaneId(3)]);
/// assert_eq!(layout_panes(b"cafe,80x24,0,0,7").unwrap(), vec![PaneId(7)]);
/// assert!(layout_panes(b"garbage").is_none());
/// ```
pub fn layout_panes(layout: &[u8]) -> Option<Vec<PaneId>> {
    Some(
        layout_pane_sizes(layout)?
            .into_iter()
            .map(|p| p.pane)
            .collect(),
    )
}

/// The panes of a layout string with their sizes (`WxH` of each leaf), in
/// layout order; `None` for a string that is not a layout. In
/// `%layout-change` the visible layout gives the sizes panes have while one
/// is zoomed.
///
/// ```
/// use tmux_control::proto::layout_pane_sizes;
/// use tmux_control::PaneId;
/// let panes = layout_pane_sizes(b"b25d,80x24,0,0{40x24,0,0,1,39x24,41,0,2}").unwrap();
/// assert_eq!((panes[1].pane, panes[1].width, panes[1].height), (PaneId(2), 39, 24));
/// assert!(layout_pane_sizes(b"garbage").is_none());
/// ```
pub fn layout_pane_sizes(layout: &[u8]) -> Option<Vec<LayoutPane>> {
    let (csum, rest) = layout.split_at_checked(5)?;
    if csum[4] != b',' || !csum[..4].iter().all(u8::is_ascii_hexdigit) {
        return None;
    }
    let mut p = Parser {
        s: rest,
        i: 0,
        out: Vec::new(),
    };
    p.cell(0)?;
    if p.peek() == Some(b'<') {
        p.i += 1;
        loop {
            p.cell(0)?;
            match p.next()? {
                b',' => continue,
                b'>' => break,
                _ => return None,
            }
        }
    }
    (p.i == p.s.len()).then_some(p.out)
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
    out: Vec<LayoutPane>,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let b = self.peek()?;
        self.i += 1;
        Some(b)
    }

    fn expect(&mut self, b: u8) -> Option<()> {
        (self.next()? == b).then_some(())
    }

    fn number(&mut self, signed: bool) -> Option<u32> {
        if signed && self.peek() == Some(b'-') {
            self.i += 1;
        }
        let start = self.i;
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.i += 1;
        }
        crate::ids::parse_u32(&self.s[start..self.i])
    }

    fn cell(&mut self, depth: usize) -> Option<()> {
        if depth > 64 {
            return None;
        }
        let width = self.number(false)?;
        self.expect(b'x')?;
        let height = self.number(false)?;
        self.expect(b',')?;
        self.number(true)?;
        self.expect(b',')?;
        self.number(true)?;
        match self.next()? {
            b',' => {
                let id = self.number(false)?;
                self.out.push(LayoutPane {
                    pane: PaneId(id),
                    width,
                    height,
                });
                Some(())
            }
            open @ (b'{' | b'[') => {
                let close = if open == b'{' { b'}' } else { b']' };
                loop {
                    self.cell(depth + 1)?;
                    match self.next()? {
                        b',' => continue,
                        b if b == close => return Some(()),
                        _ => return None,
                    }
                }
            }
            _ => None,
        }
    }
}
