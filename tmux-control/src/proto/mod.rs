//! The control-mode protocol, sans IO: bytes to frames and frames to bytes.
//!
//! tmux writes a stream of LF-terminated lines to a control client. This
//! module frames that stream into [`Frame`]s without ever decoding a line as
//! UTF-8 as a whole, and without depending on how the bytes were chunked:
//!
//! * a reply block, `%begin T N F` … `%end T N F` (or `%error`), becomes one
//!   [`Reply`]; every line in between is body, even one that starts with `%`;
//! * a `%` line outside a block becomes a typed [`Notification`]
//!   ([`Notification::Other`] for names this library does not know);
//! * any other line outside a block is a [`Frame::Stray`];
//! * `%output` and `%extended-output` data is unescaped into raw bytes.
//!
//! Both `tmux -C` ([`Mode::Plain`]) and `tmux -CC` ([`Mode::Dcs`], with its
//! DCS wrapper and CR LF line ends) are understood. Input that is malformed
//! or larger than the [`Limits`] fails only the frame it belongs to
//! ([`DecodeError::Failed`]); the decoder resynchronises on the next line and
//! its memory stays bounded.
//!
//! The [`Encoder`] writes frames back as tmux would, so that
//! decode(encode(frame)) == frame; it serves tests, fuzzing and test doubles.
//!
//! ```
//! use bytes::BytesMut;
//! use tmux_control::proto::{Decoder, Encoder, Frame, Notification};
//! use tmux_control::SessionId;
//!
//! let mut dec = Decoder::new();
//! dec.push(b"%begin 1795960716 260 0\n%end 1795960716 260 0\n%session-changed $0 main\n");
//! let Frame::Reply(initial) = dec.decode().unwrap() else { unreachable!() };
//! assert_eq!((initial.flags, initial.error), (0, false));
//! let changed = dec.decode().unwrap();
//! assert_eq!(
//!     changed,
//!     Frame::Notification(Notification::SessionChanged { session: SessionId(0), name: "main".into() })
//! );
//!
//! let mut wire = BytesMut::new();
//! Encoder::new().encode(&changed, &mut wire).unwrap();
//! assert_eq!(&wire[..], b"%session-changed $0 main\n");
//! ```

mod decode;
mod encode;
mod escape;
mod frame;
mod layout;
mod parse;

pub use decode::{DecodeError, Decoder, FrameError, Limits, Mode};
pub use encode::{EncodeError, Encoder};
pub use escape::{EscapeError, escape_output, unescape_output, unescape_output_bytes};
pub use frame::{Frame, Notification, Reply, ReplyHeader};
pub use layout::{LayoutPane, layout_pane_sizes, layout_panes};

/// Parses one notification line (without its terminator), as the decoder
/// would outside a reply block. For lines found inside reply bodies, such
/// as the `%pause` tmux writes into a `refresh-client -A` reply.
///
/// ```
/// use tmux_control::proto::{parse_notification_line, Notification};
/// use tmux_control::PaneId;
/// let n = parse_notification_line(b"%pause %4").unwrap();
/// assert_eq!(n, Notification::Pause { pane: PaneId(4) });
/// ```
pub fn parse_notification_line(line: &[u8]) -> Result<Notification, FrameError> {
    let line = bytes::Bytes::copy_from_slice(line);
    if line.first() != Some(&b'%') {
        return Err(FrameError::Malformed {
            line,
            reason: "a notification starts with %",
        });
    }
    parse::notification(&line).map_err(|reason| FrameError::Malformed { line, reason })
}
