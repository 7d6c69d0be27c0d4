//! The octal escaping of `%output` data.
//!
//! tmux writes a byte below 0x20 or a backslash as `\` and exactly three octal
//! digits; every other byte (0x7f and 0x80–0xff included) goes out raw.

use bytes::{BufMut, Bytes, BytesMut};

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
    // Every escape shrinks four bytes to one, so the input length bounds the output.
    let mut out = BytesMut::with_capacity(escaped.len());
    out.extend_from_slice(&escaped[..first]);
    let mut i = first;
    while i < escaped.len() {
        // escaped[i] is a backslash here.
        let digits = escaped.get(i + 1..i + 4).ok_or(EscapeError { offset: i })?;
        let value = octal3(digits).ok_or(EscapeError { offset: i })?;
        out.put_u8(value);
        i += 4;
        match memchr::memchr(b'\\', &escaped[i..]) {
            Some(n) => {
                out.extend_from_slice(&escaped[i..i + n]);
                i += n;
            }
            None => {
                out.extend_from_slice(&escaped[i..]);
                break;
            }
        }
    }
    Ok(out.freeze())
}

#[inline]
fn octal3(d: &[u8]) -> Option<u8> {
    let [a, b, c] = *d else { return None };
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

    #[test]
    fn rejects_bad_escapes() {
        for bad in [&b"\\"[..], b"\\0", b"\\01", b"\\400", b"\\08x", b"x\\abc"] {
            assert!(unescape_output(bad).is_err(), "{bad:?}");
        }
        assert_eq!(unescape_output(b"ok\\01").unwrap_err().offset, 2);
    }
}
