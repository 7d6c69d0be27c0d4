//! The encoder: frames back into the bytes tmux would write.
//!
//! Used by tests, fuzzing and test doubles; for every frame it accepts,
//! decoding its output gives the same frame back.

use bytes::{BufMut, Bytes, BytesMut};

use super::decode::{DCS_END, DCS_START, Mode};
use super::escape::escape_output;
use super::frame::{Frame, Notification, RESERVED_NAMES, Reply, ReplyHeader};

/// Why a frame cannot be written so that it decodes to the same frame.
///
/// ```
/// use bytes::{Bytes, BytesMut};
/// use tmux_control::proto::{EncodeError, Encoder, Frame};
/// let mut out = BytesMut::new();
/// let err = Encoder::new().encode(&Frame::Stray(Bytes::from_static(b"%looks like a notification")), &mut out);
/// assert!(matches!(err, Err(EncodeError::Unrepresentable { .. })));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EncodeError {
    /// A field holds bytes the wire form cannot carry (a line feed, a space
    /// inside a word, a body line equal to its own end guard, …).
    #[error("{what} cannot be encoded: {why}")]
    Unrepresentable {
        /// The field.
        what: &'static str,
        /// The reason.
        why: &'static str,
    },
}

fn bad(what: &'static str, why: &'static str) -> EncodeError {
    EncodeError::Unrepresentable { what, why }
}

/// Writes frames as tmux writes them.
///
/// ```
/// use bytes::BytesMut;
/// use tmux_control::proto::{Decoder, Encoder, Frame, Notification};
/// use tmux_control::PaneId;
///
/// let frame = Frame::Notification(Notification::Output { pane: PaneId(3), data: "ls\r\n".into() });
/// let mut wire = BytesMut::new();
/// Encoder::new().encode(&frame, &mut wire).unwrap();
/// assert_eq!(&wire[..], b"%output %3 ls\\015\\012\n");
///
/// let mut dec = Decoder::new();
/// dec.push(&wire);
/// assert_eq!(dec.decode().unwrap(), frame);
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct Encoder {
    mode: Mode,
}

impl Encoder {
    /// An encoder for `tmux -C` output.
    pub fn new() -> Self {
        Self { mode: Mode::Plain }
    }

    /// An encoder for the given mode.
    pub fn with_mode(mode: Mode) -> Self {
        Self { mode }
    }

    /// Appends the wire form of `frame` to `out`. On error nothing is appended.
    pub fn encode(&self, frame: &Frame, out: &mut BytesMut) -> Result<(), EncodeError> {
        let start = out.len();
        let result = self.encode_inner(frame, out);
        if result.is_err() {
            out.truncate(start);
        }
        result
    }

    fn encode_inner(&self, frame: &Frame, out: &mut BytesMut) -> Result<(), EncodeError> {
        match frame {
            Frame::DcsStart => {
                self.dcs_only("DcsStart")?;
                out.extend_from_slice(DCS_START);
                Ok(())
            }
            Frame::DcsEnd => {
                self.dcs_only("DcsEnd")?;
                out.extend_from_slice(DCS_END);
                Ok(())
            }
            Frame::Stray(line) => {
                if line.first() == Some(&b'%') {
                    return Err(bad("stray line", "it starts with %"));
                }
                if self.mode == Mode::Dcs && line.starts_with(&DCS_END[..1]) {
                    return Err(bad(
                        "stray line",
                        "it starts with ESC, which can end the DCS",
                    ));
                }
                self.line(out, "stray line", line)
            }
            Frame::Reply(reply) => self.reply(reply, out),
            Frame::Notification(n) => self.notification(n, out),
        }
    }

    fn dcs_only(&self, what: &'static str) -> Result<(), EncodeError> {
        if self.mode == Mode::Dcs {
            Ok(())
        } else {
            Err(bad(what, "it exists only in -CC mode"))
        }
    }

    fn end_line(&self, out: &mut BytesMut) {
        if self.mode == Mode::Dcs {
            out.put_u8(b'\r');
        }
        out.put_u8(b'\n');
    }

    fn line(&self, out: &mut BytesMut, what: &'static str, line: &[u8]) -> Result<(), EncodeError> {
        no_lf(what, line)?;
        out.extend_from_slice(line);
        self.end_line(out);
        Ok(())
    }

    fn reply(&self, reply: &Reply, out: &mut BytesMut) -> Result<(), EncodeError> {
        let header = reply.header();
        let end_guard = format!("%{} {header}", if reply.error { "error" } else { "end" });
        out.extend_from_slice(format!("%begin {header}").as_bytes());
        self.end_line(out);
        for line in &reply.body {
            if line.starts_with(b"%e") && is_end_of(line, header) {
                return Err(bad("reply body line", "it equals the block's end guard"));
            }
            self.line(out, "reply body line", line)?;
        }
        out.extend_from_slice(end_guard.as_bytes());
        self.end_line(out);
        Ok(())
    }

    fn notification(&self, n: &Notification, out: &mut BytesMut) -> Result<(), EncodeError> {
        use Notification as N;
        out.put_u8(b'%');
        out.extend_from_slice(n.name());
        match n {
            N::Output { pane, data } => {
                out.extend_from_slice(format!(" {pane} ").as_bytes());
                escape_output(data, out);
            }
            N::ExtendedOutput {
                pane,
                age_ms,
                extra,
                data,
            } => {
                out.extend_from_slice(format!(" {pane} {age_ms}").as_bytes());
                for e in extra {
                    arg_word(out, "extended-output argument", e)?;
                    if &e[..] == b":" {
                        return Err(bad("extended-output argument", "it is a lone ':'"));
                    }
                }
                out.extend_from_slice(b" : ");
                escape_output(data, out);
            }
            N::Pause { pane } | N::Continue { pane } | N::PaneModeChanged { pane } => {
                out.extend_from_slice(format!(" {pane}").as_bytes());
            }
            N::WindowAdd { window }
            | N::UnlinkedWindowAdd { window }
            | N::WindowClose { window }
            | N::UnlinkedWindowClose { window } => {
                out.extend_from_slice(format!(" {window}").as_bytes());
            }
            N::WindowRenamed { window, name } | N::UnlinkedWindowRenamed { window, name } => {
                out.extend_from_slice(format!(" {window} ").as_bytes());
                rest(out, "window name", name)?;
            }
            N::WindowPaneChanged { window, pane } => {
                out.extend_from_slice(format!(" {window} {pane}").as_bytes());
            }
            N::LayoutChange {
                window,
                layout,
                visible_layout,
                flags,
            } => {
                out.extend_from_slice(format!(" {window}").as_bytes());
                arg_word(out, "layout", layout)?;
                match (visible_layout, flags) {
                    (None, Some(_)) => {
                        return Err(bad(
                            "layout flags",
                            "flags need a visible layout before them",
                        ));
                    }
                    (None, None) => {}
                    (Some(v), f) => {
                        arg_word(out, "visible layout", v)?;
                        if let Some(f) = f {
                            out.put_u8(b' ');
                            rest(out, "layout flags", f)?;
                        }
                    }
                }
            }
            N::SessionChanged { session, name } | N::SessionRenamed { session, name } => {
                out.extend_from_slice(format!(" {session} ").as_bytes());
                rest(out, "session name", name)?;
            }
            N::ClientSessionChanged {
                client,
                session,
                name,
            } => {
                nonempty_word(out, "client name", client)?;
                out.extend_from_slice(format!(" {session} ").as_bytes());
                rest(out, "session name", name)?;
            }
            N::ClientDetached { client } => nonempty_word(out, "client name", client)?,
            N::SessionsChanged => {}
            N::SessionWindowChanged { session, window } => {
                out.extend_from_slice(format!(" {session} {window}").as_bytes());
            }
            N::SubscriptionChanged {
                name,
                session,
                window,
                window_index,
                pane,
                extra,
                value,
            } => {
                nonempty_word(out, "subscription name", name)?;
                if &name[..] == b":" {
                    return Err(bad("subscription name", "it is a lone ':'"));
                }
                let dash = |v: Option<String>| v.unwrap_or_else(|| "-".to_owned());
                out.extend_from_slice(
                    format!(
                        " {} {} {} {}",
                        dash(session.map(|s| s.to_string())),
                        dash(window.map(|w| w.to_string())),
                        dash(window_index.map(|i| i.to_string())),
                        dash(pane.map(|p| p.to_string())),
                    )
                    .as_bytes(),
                );
                for e in extra {
                    nonempty_word(out, "subscription argument", e)?;
                    if &e[..] == b":" {
                        return Err(bad("subscription argument", "it is a lone ':'"));
                    }
                }
                out.extend_from_slice(b" : ");
                rest(out, "subscription value", value)?;
            }
            N::Exit { reason } => {
                if let Some(reason) = reason {
                    out.put_u8(b' ');
                    rest(out, "exit reason", reason)?;
                }
            }
            N::ConfigError { text: s }
            | N::Message { text: s }
            | N::PasteBufferChanged { name: s }
            | N::PasteBufferDeleted { name: s } => {
                if !s.is_empty() {
                    out.put_u8(b' ');
                    rest(out, "notification text", s)?;
                }
            }
            N::Other { name, args } => {
                if name.contains(&b' ') || RESERVED_NAMES.contains(&&name[..]) {
                    return Err(bad(
                        "notification name",
                        "it contains a space or is the name of a typed notification",
                    ));
                }
                no_lf("notification name", name)?;
                if !args.is_empty() {
                    out.put_u8(b' ');
                    rest(out, "notification arguments", args)?;
                }
            }
        }
        // A CR at the very end of a -CC line would be eaten by the decoder.
        if self.mode == Mode::Dcs && out.last() == Some(&b'\r') {
            return Err(bad(
                "notification",
                "it ends with CR, which -CC framing removes",
            ));
        }
        self.end_line(out);
        Ok(())
    }
}

fn is_end_of(line: &[u8], header: ReplyHeader) -> bool {
    matches!(
        super::parse::guard(line),
        Some((super::parse::Guard::End | super::parse::Guard::Error, h)) if h == header
    )
}

fn no_lf(what: &'static str, s: &[u8]) -> Result<(), EncodeError> {
    if memchr::memchr(b'\n', s).is_some() {
        Err(bad(what, "it contains a line feed"))
    } else {
        Ok(())
    }
}

/// ` WORD` where WORD may be empty but has no space.
fn arg_word(out: &mut BytesMut, what: &'static str, s: &Bytes) -> Result<(), EncodeError> {
    if s.contains(&b' ') {
        return Err(bad(what, "it contains a space"));
    }
    no_lf(what, s)?;
    out.put_u8(b' ');
    out.extend_from_slice(s);
    Ok(())
}

/// ` WORD` where WORD is non-empty and has no space.
fn nonempty_word(out: &mut BytesMut, what: &'static str, s: &Bytes) -> Result<(), EncodeError> {
    if s.is_empty() {
        return Err(bad(what, "it is empty"));
    }
    arg_word(out, what, s)
}

/// The rest of the line: anything but a line feed.
fn rest(out: &mut BytesMut, what: &'static str, s: &[u8]) -> Result<(), EncodeError> {
    no_lf(what, s)?;
    out.extend_from_slice(s);
    Ok(())
}
