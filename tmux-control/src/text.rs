//! Turning raw terminal output into plain text for matching.

/// A streaming filter that removes terminal escape sequences (CSI, OSC, DCS,
/// SOS/PM/APC and two-byte ESC sequences) and carriage returns, bells and
/// other C0 controls except LF and TAB. State carries across calls, so a
/// sequence split between two chunks is still removed.
///
/// ```
/// use tmux_control::PlainText;
/// let mut p = PlainText::new();
/// let mut out = Vec::new();
/// p.feed(b"\x1b[1mbo", &mut out);
/// p.feed(b"ld\x1b[0m\r\n\x1b]0;title\x07done", &mut out);
/// assert_eq!(out, b"bold\ndone");
/// ```
#[derive(Debug, Clone, Default)]
pub struct PlainText {
    state: State,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum State {
    #[default]
    Ground,
    Esc,
    /// ESC followed by intermediate bytes (0x20–0x2f), waiting for the final byte.
    EscIntermediate,
    Csi,
    /// OSC, DCS, SOS, PM, APC: a string ended by BEL (OSC) or ST.
    Str,
    /// ESC seen inside a string: `\` ends it.
    StrEsc,
}

impl PlainText {
    /// A filter in its initial state.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends the plain text of `input` to `out`.
    pub fn feed(&mut self, input: &[u8], out: &mut Vec<u8>) {
        self.feed_mapped(input, out, |_, _| {});
    }

    /// Like [`PlainText::feed`], telling `copied` where each piece of
    /// plain text came from: `copied(at, from)` says that the bytes
    /// appended at `out[at..]` begin with `input[from]`, and run on one for
    /// one until the next call. Every plain byte is a copy of one input
    /// byte, so this maps each back to its place in the raw stream.
    pub(crate) fn feed_mapped(
        &mut self,
        input: &[u8],
        out: &mut Vec<u8>,
        mut copied: impl FnMut(usize, usize),
    ) {
        out.reserve(input.len());
        let mut i = 0;
        while i < input.len() {
            if self.state == State::Ground {
                // Fast path: copy the run of ordinary bytes.
                let run = input[i..]
                    .iter()
                    .position(|&b| b < 0x20 || b == 0x7f)
                    .unwrap_or(input.len() - i);
                if run > 0 {
                    copied(out.len(), i);
                }
                out.extend_from_slice(&input[i..i + run]);
                i += run;
                if i == input.len() {
                    break;
                }
            }
            let b = input[i];
            i += 1;
            self.state = match self.state {
                State::Ground => match b {
                    0x1b => State::Esc,
                    b'\n' | b'\t' => {
                        copied(out.len(), i - 1);
                        out.push(b);
                        State::Ground
                    }
                    _ => State::Ground,
                },
                State::Esc => match b {
                    b'[' => State::Csi,
                    b']' | b'P' | b'X' | b'^' | b'_' => State::Str,
                    0x20..=0x2f => State::EscIntermediate,
                    0x1b => State::Esc,
                    _ => State::Ground,
                },
                State::EscIntermediate => match b {
                    0x20..=0x2f => State::EscIntermediate,
                    _ => State::Ground,
                },
                State::Csi => match b {
                    0x40..=0x7e => State::Ground,
                    0x1b => State::Esc,
                    _ => State::Csi,
                },
                State::Str => match b {
                    0x07 => State::Ground,
                    0x1b => State::StrEsc,
                    _ => State::Str,
                },
                State::StrEsc => match b {
                    b'\\' => State::Ground,
                    0x1b => State::StrEsc,
                    _ => State::Str,
                },
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(chunks: &[&[u8]]) -> Vec<u8> {
        let mut p = PlainText::new();
        let mut out = Vec::new();
        for c in chunks {
            p.feed(c, &mut out);
        }
        out
    }

    #[test]
    fn strips_sequences_across_chunks() {
        assert_eq!(plain(&[b"a\x1b", b"[3", b"1mb\x1b(Bc"]), b"abc");
        assert_eq!(plain(&[b"x\x1b]133;A\x1b", b"\\y"]), b"xy");
        assert_eq!(plain(&[b"\x1bP1;2q#0\x1b\\z"]), b"z");
        assert_eq!(plain(&[b"caf\xc3", b"\xa9\r\n"]), "café\n".as_bytes());
        assert_eq!(plain(&[b"\x1b=k\x07\x08"]), b"k");
    }

    #[test]
    fn every_plain_byte_maps_back_to_its_input_byte() {
        let input = b"a\x1b[1mbc\r\n\x1b]0;t\x07d\te";
        let mut out = Vec::new();
        let mut pieces = Vec::new();
        PlainText::new().feed_mapped(input, &mut out, |at, from| pieces.push((at, from)));
        assert_eq!(out, b"abc\nd\te");
        // Walk the pieces: each plain byte equals the input byte it maps to.
        for (k, &(at, from)) in pieces.iter().enumerate() {
            let until = pieces.get(k + 1).map_or(out.len(), |p| p.0);
            for j in at..until {
                assert_eq!(out[j], input[from + j - at], "plain byte {j}");
            }
        }
        assert_eq!(pieces.first(), Some(&(0, 0)));
    }
}
