//! The octal escaping of `%output` data.
//!
//! tmux writes a byte below 0x20 or a backslash as `\` and exactly three octal
//! digits; every other byte (0x7f and 0x80–0xff included) goes out raw.

use bytes::{Bytes, BytesMut};

/// Why `%output` data could not be unescaped.
///
/// ```
/// use tmux_control::proto::unescape_output;
/// let err = unescape_output(b"ab\\09").unwrap_err();
/// assert_eq!(err.offset, 2);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "backslash at byte {offset} of %output data is not followed by three octal digits (000-377)"
)]
#[non_exhaustive]
pub struct EscapeError {
    /// Offset of the offending backslash in the escaped data.
    pub offset: usize,
}

/// Undoes tmux's `%output` escaping.
///
/// Data without a backslash is returned as is, without copying when the
/// input is already a [`Bytes`] (see [`unescape_output_bytes`]).
///
/// ```
/// use tmux_control::proto::unescape_output;
/// assert_eq!(&unescape_output(b"\\033[1mhi\\134").unwrap()[..], b"\x1b[1mhi\\");
/// ```
pub fn unescape_output(escaped: &[u8]) -> Result<Bytes, EscapeError> {
    match memchr::memchr(b'\\', escaped) {
        None => Ok(Bytes::copy_from_slice(escaped)),
        Some(first) => unescape_slow(escaped, first),
    }
}

/// Like [`unescape_output`], but shares the input's memory when there is
/// nothing to unescape.
///
/// ```
/// use bytes::Bytes;
/// use tmux_control::proto::unescape_output_bytes;
/// let raw = Bytes::from_static(b"plain text");
/// assert_eq!(unescape_output_bytes(&raw).unwrap(), raw);
/// ```
pub fn unescape_output_bytes(escaped: &Bytes) -> Result<Bytes, EscapeError> {
    match memchr::memchr(b'\\', escaped) {
        None => Ok(escaped.clone()),
        Some(first) => unescape_slow(escaped, first),
    }
}

fn unescape_slow(escaped: &[u8], first: usize) -> Result<Bytes, EscapeError> {
    // Every escape shrinks four bytes to one, so the input length bounds the
    // output; the 8 spare bytes let a short literal run be copied as one
    // whole word (see below). A Vec rather than a BytesMut keeps each push
    // cheap, and `Bytes::from` takes it over without copying.
    let mut out = Vec::with_capacity(escaped.len() + 8);
    out.extend_from_slice(&escaped[..first]);
    let mut rest = &escaped[first..];
    while let Some(&byte) = rest.first() {
        if byte == b'\\' {
            let value = rest
                .first_chunk::<4>()
                .and_then(|&[_, a, b, c]| octal3(a, b, c))
                .ok_or(EscapeError {
                    offset: escaped.len() - rest.len(),
                })?;
            out.push(value);
            rest = &rest[4..];
            continue;
        }
        // A run of literal bytes up to the next backslash. In terminal output
        // most runs are short (a few characters between `\015\012` or
        // `\033` escapes): find those within one 8-byte word and copy the
        // whole word, keeping only the run; leave longer runs to memchr.
        let short = rest
            .first_chunk::<8>()
            .and_then(|word| Some((word, backslash_in(word)?)));
        let run = if let Some((word, run)) = short {
            let len = out.len();
            out.extend_from_slice(word);
            out.truncate(len + run);
            run
        } else {
            let run = memchr::memchr(b'\\', rest).unwrap_or(rest.len());
            out.extend_from_slice(&rest[..run]);
            run
        };
        rest = &rest[run..];
    }
    Ok(Bytes::from(out))
}

/// The index of the first backslash in `word`, if any (SWAR: the lowest
/// byte of `x` that is zero sets the lowest flag; borrows only disturb the
/// flags above it).
#[inline]
fn backslash_in(word: &[u8; 8]) -> Option<usize> {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    let x = u64::from_le_bytes(*word) ^ (ONES * u64::from(b'\\'));
    let found = x.wrapping_sub(ONES) & !x & HIGHS;
    (found != 0).then(|| (found.trailing_zeros() / 8) as usize)
}

#[inline]
fn octal3(a: u8, b: u8, c: u8) -> Option<u8> {
    if !(b'0'..=b'3').contains(&a) || !(b'0'..=b'7').contains(&b) || !(b'0'..=b'7').contains(&c) {
        return None;
    }
    Some(((a - b'0') << 6) | ((b - b'0') << 3) | (c - b'0'))
}

/// Escapes bytes the way tmux does for `%output`, appending to `out`.
///
/// ```
/// use bytes::BytesMut;
/// use tmux_control::proto::escape_output;
/// let mut out = BytesMut::new();
/// escape_output(b"a\r\n\\\xff", &mut out);
/// assert_eq!(&out[..], b"a\\015\\012\\134\xff");
/// ```
pub fn escape_output(data: &[u8], out: &mut BytesMut) {
    out.reserve(data.len());
    let mut start = 0;
    for (i, &b) in data.iter().enumerate() {
        if b < 0x20 || b == b'\\' {
            out.extend_from_slice(&data[start..i]);
            out.extend_from_slice(&[
                b'\\',
                b'0' + (b >> 6),
                b'0' + ((b >> 3) & 7),
                b'0' + (b & 7),
            ]);
            start = i + 1;
        }
    }
    out.extend_from_slice(&data[start..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_byte_round_trips() {
        let all: Vec<u8> = (0..=255u8).collect();
        let mut out = BytesMut::new();
        escape_output(&all, &mut out);
        assert_eq!(&unescape_output(&out).unwrap()[..], &all[..]);
    }

    /// The straightforward definition the fast path must agree with.
    fn unescape_reference(escaped: &[u8]) -> Option<Vec<u8>> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < escaped.len() {
            if escaped[i] == b'\\' {
                let d = escaped.get(i + 1..i + 4)?;
                if !(b'0'..=b'3').contains(&d[0])
                    || d[1..].iter().any(|c| !(b'0'..=b'7').contains(c))
                {
                    return None;
                }
                out.push(((d[0] - b'0') << 6) | ((d[1] - b'0') << 3) | (d[2] - b'0'));
                i += 4;
            } else {
                out.push(escaped[i]);
                i += 1;
            }
        }
        Some(out)
    }

    #[test]
    fn literal_runs_of_every_length() {
        // Runs of 0 to 40 literal bytes between, before and after escapes
        // cover the in-word path, the memchr path and the short tail.
        for run in 0..40 {
            let text: Vec<u8> = (0..run).map(|i| b'a' + (i % 26) as u8).collect();
            for input in [
                [&text[..], b"\\015\\012", &text[..], b"\\033"].concat(),
                [b"\\134", &text[..]].concat(),
                [b"x\\000", &text[..], b"\\377\\001", &text[..]].concat(),
            ] {
                let got = unescape_output(&input).map(|b| b.to_vec()).ok();
                assert_eq!(got, unescape_reference(&input), "{input:?}");
            }
        }
        let bad = [&b"abcdefghij"[..], b"\\08"].concat();
        assert_eq!(unescape_output(&bad).unwrap_err().offset, 10);
    }

    #[test]
    fn rejects_bad_escapes() {
        for bad in [&b"\\"[..], b"\\0", b"\\01", b"\\400", b"\\08x", b"x\\abc"] {
            assert!(unescape_output(bad).is_err(), "{bad:?}");
        }
        assert_eq!(unescape_output(b"ok\\01").unwrap_err().offset, 2);
    }
}
