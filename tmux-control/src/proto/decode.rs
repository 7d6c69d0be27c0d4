//! The incremental decoder: bytes in, frames out.

use bytes::{Bytes, BytesMut};

use super::frame::{Frame, Notification, Reply, ReplyHeader};
use super::parse::{self, Guard};

/// The DCS introducer tmux writes first in `-CC` mode.
pub(crate) const DCS_START: &[u8] = b"\x1bP1000p";
/// The string terminator tmux writes after `%exit` in `-CC` mode.
pub(crate) const DCS_END: &[u8] = b"\x1b\\";

/// How the control-mode stream is wrapped.
///
/// ```
/// use tmux_control::proto::{Decoder, Frame, Mode};
/// let mut dec = Decoder::with_mode(Mode::Dcs);
/// dec.push(b"\x1bP1000p%exit\r\n\x1b\\");
/// assert_eq!(dec.decode().unwrap(), Frame::DcsStart);
/// assert!(matches!(dec.decode().unwrap(), Frame::Notification(_)));
/// assert_eq!(dec.decode().unwrap(), Frame::DcsEnd);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Mode {
    /// `tmux -C`: plain lines ending in LF. A CR before the LF belongs to the line.
    #[default]
    Plain,
    /// `tmux -CC`: the stream is wrapped in `ESC P 1000 p` … `ESC \` and every
    /// line ends in CR LF (one CR is removed per line).
    Dcs,
}

/// Size caps that keep a decoder's memory bounded whatever it is fed.
///
/// ```
/// use tmux_control::proto::{Decoder, Limits};
/// let dec = Decoder::new().with_limits(Limits::default().max_line(1 << 20).max_block(8 << 20));
/// assert_eq!(dec.limits().max_line, 1 << 20);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// The longest line (without terminator) the decoder buffers. Longer
    /// lines are discarded up to their LF and reported as errors.
    /// Default: 16 MiB (tmux writes at most about 11 KB per `%output` line, but
    /// one reply line can be as long as a paste buffer).
    pub max_line: usize,
    /// The most body bytes one reply block may hold. A larger block's body is
    /// discarded and the block is reported as an error that still carries its
    /// header. Default: 64 MiB.
    pub max_block: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_line: 16 << 20,
            max_block: 64 << 20,
        }
    }
}

impl Limits {
    /// Sets [`Limits::max_line`] (at least 64 bytes).
    pub fn max_line(mut self, bytes: usize) -> Self {
        self.max_line = bytes.max(64);
        self
    }

    /// Sets [`Limits::max_block`] (at least 64 bytes).
    pub fn max_block(mut self, bytes: usize) -> Self {
        self.max_block = bytes.max(64);
        self
    }
}

/// What went wrong with one frame. The decoder has already moved past it
/// and the next call to [`Decoder::decode`] continues with the next line.
///
/// ```
/// use tmux_control::proto::{DecodeError, Decoder, FrameError};
/// let mut dec = Decoder::new();
/// dec.push(b"%window-add nonsense\n%sessions-changed\n");
/// assert!(matches!(dec.decode(), Err(DecodeError::Failed(FrameError::Malformed { .. }))));
/// assert!(dec.decode().is_ok());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FrameError {
    /// A line outside a reply block was longer than [`Limits::max_line`]; it
    /// is discarded up to its LF.
    #[error("a line of more than {limit} bytes was discarded")]
    LineTooLong {
        /// The cap in force.
        limit: usize,
    },
    /// A reply block's body exceeded [`Limits::max_block`] (or one of its
    /// lines exceeded [`Limits::max_line`]). The body was discarded; the
    /// header and outcome are kept so the reply can still be matched.
    #[error("reply block {header} was discarded: {size} body bytes exceed the limit of {limit}")]
    BlockTooLarge {
        /// The block's guard numbers.
        header: ReplyHeader,
        /// `true` if the block ended with `%error`.
        error: bool,
        /// Body bytes seen (line terminators not counted).
        size: u64,
        /// The cap that was exceeded.
        limit: usize,
    },
    /// A `%` line with a known name whose arguments do not parse.
    #[error("malformed control-mode line ({reason}): {}", String::from_utf8_lossy(&line[..line.len().min(120)]))]
    Malformed {
        /// The whole line, without terminator.
        line: Bytes,
        /// What was expected.
        reason: &'static str,
    },
    /// [`Decoder::finish`]: the stream ended inside a reply block.
    #[error(
        "the stream ended inside reply block {header} after {} body lines{}",
        body.len(),
        if partial.is_empty() { String::new() } else { format!(" and {} bytes of an unterminated line", partial.len()) }
    )]
    UnterminatedBlock {
        /// The open block's guard numbers.
        header: ReplyHeader,
        /// The body lines received so far.
        body: Vec<Bytes>,
        /// The bytes after the last line terminator, if the stream also
        /// ended in the middle of a line (empty otherwise): nothing the
        /// stream carried is dropped.
        partial: Bytes,
    },
    /// [`Decoder::finish`]: the stream ended in the middle of a line.
    #[error("the stream ended with {} bytes of an unterminated line", bytes.len())]
    PartialLine {
        /// The bytes after the last line terminator.
        bytes: Bytes,
    },
}

/// Why [`Decoder::decode`] returned no frame.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// More bytes are needed before the next frame is complete.
    #[error("more input is needed")]
    Incomplete,
    /// One frame was malformed or too large; the decoder has resynchronised.
    #[error(transparent)]
    Failed(#[from] FrameError),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DcsState {
    /// Looking for the DCS introducer.
    Outside,
    /// Inside the DCS: control-mode lines.
    Inside,
    /// `%exit` seen: `ESC \\` ends the DCS. Until it comes, lines are
    /// still control-mode lines (tmux may write a notification after
    /// `%exit`).
    AwaitSt,
}

#[derive(Debug)]
struct OpenBlock {
    header: ReplyHeader,
    body: Vec<Bytes>,
    size: u64,
    overflowed: bool,
}

/// An incremental, sans-IO decoder of a control-mode stream.
///
/// Feed bytes with [`push`](Decoder::push) in chunks of any size, then call
/// [`decode`](Decoder::decode) until it returns [`DecodeError::Incomplete`].
/// The frames do not depend on how the input was split. Memory stays within
/// [`Limits`] whatever the input.
///
/// ```
/// use tmux_control::proto::{DecodeError, Decoder, Frame, Notification};
/// use tmux_control::PaneId;
///
/// let mut dec = Decoder::new();
/// let mut frames = Vec::new();
/// for chunk in [&b"%begin 17 260 1\nhel"[..], b"lo\n%end 17 260 1\n%output %0 a\\01", b"5\n"] {
///     dec.push(chunk);
///     loop {
///         match dec.decode() {
///             Ok(frame) => frames.push(frame),
///             Err(DecodeError::Incomplete) => break,
///             Err(DecodeError::Failed(e)) => panic!("{e}"),
///         }
///     }
/// }
/// assert!(matches!(&frames[0], Frame::Reply(r) if r.body == vec![&b"hello"[..]]));
/// assert_eq!(
///     frames[1],
///     Frame::Notification(Notification::Output { pane: PaneId(0), data: "a\r".into() })
/// );
/// dec.finish().unwrap();
/// ```
#[derive(Debug)]
pub struct Decoder {
    buf: BytesMut,
    /// Bytes at the start of `buf` already known to hold no LF.
    scanned: usize,
    mode: Mode,
    dcs: DcsState,
    block: Option<OpenBlock>,
    /// Discarding the rest of an oversized line up to its LF.
    skipping: bool,
    /// `-CC` before the introducer: discarding the rest of an oversized line
    /// up to its LF or the introducer.
    outside_skipping: bool,
    limits: Limits,
}

impl Default for Decoder {
    fn default() -> Self {
        Self::new()
    }
}

impl Decoder {
    /// A decoder for `tmux -C` output with default [`Limits`].
    pub fn new() -> Self {
        Self::with_mode(Mode::Plain)
    }

    /// A decoder for the given [`Mode`].
    pub fn with_mode(mode: Mode) -> Self {
        Self {
            buf: BytesMut::new(),
            scanned: 0,
            mode,
            dcs: DcsState::Outside,
            block: None,
            skipping: false,
            outside_skipping: false,
            limits: Limits::default(),
        }
    }

    /// Replaces the size caps.
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The caps in force.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// The framing mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Bytes buffered but not yet returned as frames (the partial line, plus
    /// the body of an open reply block).
    pub fn buffered(&self) -> usize {
        let body = match &self.block {
            Some(b) if !b.overflowed => b.size as usize,
            _ => 0,
        };
        self.buf.len() + body
    }

    /// `true` while a reply block is open.
    pub fn in_block(&self) -> bool {
        self.block.is_some()
    }

    /// Appends input.
    pub fn push(&mut self, bytes: &[u8]) {
        if self.skipping {
            // Drop the rest of an oversized line without buffering it.
            match memchr::memchr(b'\n', bytes) {
                None => return,
                Some(lf) => {
                    self.skipping = false;
                    self.buf.extend_from_slice(&bytes[lf + 1..]);
                    return;
                }
            }
        }
        self.buf.extend_from_slice(bytes);
    }

    /// Returns the next complete frame.
    ///
    /// [`DecodeError::Incomplete`] means the buffered input holds no further
    /// frame: push more. [`DecodeError::Failed`] reports one bad frame; call
    /// again for the next.
    pub fn decode(&mut self) -> Result<Frame, DecodeError> {
        loop {
            match self.dcs {
                DcsState::Outside if self.mode == Mode::Dcs => {
                    if let Some(frame) = self.dcs_outside()? {
                        return Ok(frame);
                    }
                    continue;
                }
                // At the start of a line after `%exit`: the terminator, or
                // another control-mode line (handled below).
                DcsState::AwaitSt if self.block.is_none() => {
                    if self.buf.len() < DCS_END.len() && DCS_END.starts_with(&self.buf) {
                        return Err(DecodeError::Incomplete);
                    }
                    if self.buf.starts_with(DCS_END) {
                        self.dcs = DcsState::Outside;
                        self.scanned = 0;
                        let _ = self.buf.split_to(DCS_END.len());
                        return Ok(Frame::DcsEnd);
                    }
                }
                _ => {}
            }
            let line = self.next_line()?;
            if let Some(result) = self.process_line(line) {
                return result.map_err(DecodeError::Failed);
            }
        }
    }

    /// Call at end of input, after [`decode`](Decoder::decode) returned
    /// [`DecodeError::Incomplete`]: reports a reply block or a line that the
    /// stream left unfinished, and resets the decoder.
    pub fn finish(&mut self) -> Result<(), FrameError> {
        self.skipping = false;
        self.outside_skipping = false;
        self.scanned = 0;
        let rest = self.buf.split().freeze();
        if let Some(block) = self.block.take() {
            return Err(FrameError::UnterminatedBlock {
                header: block.header,
                body: block.body,
                partial: rest,
            });
        }
        if !rest.is_empty() {
            return Err(FrameError::PartialLine { bytes: rest });
        }
        Ok(())
    }

    /// Takes the next LF-terminated line off the buffer (terminator removed,
    /// one CR removed in `-CC` mode).
    fn next_line(&mut self) -> Result<Bytes, DecodeError> {
        loop {
            match memchr::memchr(b'\n', &self.buf[self.scanned..]) {
                Some(i) => {
                    let lf = self.scanned + i;
                    self.scanned = 0;
                    let mut line = self.buf.split_to(lf + 1);
                    line.truncate(lf);
                    if lf > self.limits.max_line {
                        self.oversized()?;
                        continue;
                    }
                    if self.mode == Mode::Dcs && line.last() == Some(&b'\r') {
                        line.truncate(lf - 1);
                    }
                    return Ok(line.freeze());
                }
                None => {
                    self.scanned = self.buf.len();
                    if self.buf.len() > self.limits.max_line {
                        self.buf.clear();
                        self.scanned = 0;
                        self.skipping = true;
                        self.oversized()?;
                    }
                    return Err(DecodeError::Incomplete);
                }
            }
        }
    }

    /// Accounts for a discarded oversized line.
    fn oversized(&mut self) -> Result<(), DecodeError> {
        let limit = self.limits.max_line;
        match &mut self.block {
            Some(block) => {
                block.overflowed = true;
                block.body = Vec::new();
                block.size = block.size.saturating_add(limit as u64);
                Ok(())
            }
            None => Err(FrameError::LineTooLong { limit }.into()),
        }
    }

    /// Interprets one complete line. `None` means the line produced no frame
    /// yet (it opened a block or became body).
    fn process_line(&mut self, line: Bytes) -> Option<Result<Frame, FrameError>> {
        if let Some(block) = &mut self.block {
            if line.first() == Some(&b'%')
                && line.get(1) == Some(&b'e')
                && let Some((kind @ (Guard::End | Guard::Error), header)) = parse::guard(&line)
                && header == block.header
            {
                return self.close_block(kind == Guard::Error);
            }
            block.size = block.size.saturating_add(line.len() as u64);
            if !block.overflowed {
                if block.size > self.limits.max_block as u64 {
                    block.overflowed = true;
                    block.body = Vec::new();
                } else {
                    block.body.push(line);
                }
            }
            return None;
        }
        if line.first() != Some(&b'%') {
            return Some(Ok(Frame::Stray(line)));
        }
        if line.starts_with(b"%begin ")
            && let Some((Guard::Begin, header)) = parse::guard(&line)
        {
            self.block = Some(OpenBlock {
                header,
                body: Vec::new(),
                size: 0,
                overflowed: false,
            });
            return None;
        }
        Some(match parse::notification(&line) {
            Ok(n) => {
                if self.mode == Mode::Dcs && matches!(n, Notification::Exit { .. }) {
                    self.dcs = DcsState::AwaitSt;
                }
                Ok(Frame::Notification(n))
            }
            Err(reason) => Err(FrameError::Malformed { line, reason }),
        })
    }

    fn close_block(&mut self, error: bool) -> Option<Result<Frame, FrameError>> {
        let block = self.block.take()?;
        Some(if block.overflowed {
            Err(FrameError::BlockTooLarge {
                header: block.header,
                error,
                size: block.size,
                limit: self.limits.max_block,
            })
        } else {
            Ok(Frame::Reply(Reply {
                time: block.header.time,
                number: block.header.number,
                flags: block.header.flags,
                error,
                body: block.body,
            }))
        })
    }

    /// `-CC` mode before the DCS introducer: report terminal output as stray
    /// lines until the introducer arrives.
    fn dcs_outside(&mut self) -> Result<Option<Frame>, DecodeError> {
        // The first LF, and the introducer only if it comes before that LF:
        // searching the whole buffer for it on every line would make a
        // large buffer of lines quadratic.
        let first_lf = memchr::memchr(b'\n', &self.buf);
        let intro =
            memchr::memmem::find(&self.buf[..first_lf.unwrap_or(self.buf.len())], DCS_START);
        let lf = if intro.is_some() { None } else { first_lf };
        let too_long = FrameError::LineTooLong {
            limit: self.limits.max_line,
        };
        if self.outside_skipping {
            // The rest of an oversized line: drop it up to its end, which is
            // an LF or the introducer.
            match (lf, intro) {
                (Some(lf), _) => {
                    let _ = self.buf.split_to(lf + 1);
                }
                (None, Some(i)) => {
                    let _ = self.buf.split_to(i);
                }
                (None, None) => {
                    self.keep_partial_introducer();
                    return Err(DecodeError::Incomplete);
                }
            }
            self.outside_skipping = false;
            return Ok(None);
        }
        if let Some(lf) = lf {
            let mut line = self.buf.split_to(lf + 1);
            if lf > self.limits.max_line {
                return Err(too_long.into());
            }
            line.truncate(lf);
            if line.last() == Some(&b'\r') {
                line.truncate(lf - 1);
            }
            return Ok(Some(Frame::Stray(line.freeze())));
        }
        match intro {
            Some(0) => {
                let _ = self.buf.split_to(DCS_START.len());
                self.dcs = DcsState::Inside;
                Ok(Some(Frame::DcsStart))
            }
            Some(i) if i > self.limits.max_line => {
                let _ = self.buf.split_to(i);
                Err(too_long.into())
            }
            Some(i) => Ok(Some(Frame::Stray(self.buf.split_to(i).freeze()))),
            // Bytes that may begin the introducer are not part of the line.
            None if self.buf.len() - partial_introducer(&self.buf) > self.limits.max_line => {
                self.keep_partial_introducer();
                self.outside_skipping = true;
                Err(too_long.into())
            }
            None => Err(DecodeError::Incomplete),
        }
    }

    /// Drops all buffered bytes but those that may begin a DCS introducer.
    fn keep_partial_introducer(&mut self) {
        let keep = DCS_START.len() - 1;
        if self.buf.len() > keep {
            let cut = self.buf.len() - keep;
            let _ = self.buf.split_to(cut);
        }
    }
}

/// How many bytes at the end of `buf` could be the start of a DCS introducer.
fn partial_introducer(buf: &[u8]) -> usize {
    (1..DCS_START.len())
        .rev()
        .find(|&k| buf.ends_with(&DCS_START[..k]))
        .unwrap_or(0)
}
