//! The typed frames of the control-mode protocol.

use std::fmt;

use bytes::Bytes;

use crate::ids::{PaneId, SessionId, WindowId};

/// One unit of what tmux writes to a control client.
///
/// ```
/// use tmux_control::proto::{Decoder, Frame, Notification};
/// let mut dec = Decoder::new();
/// dec.push(b"%sessions-changed\n");
/// assert_eq!(dec.decode().unwrap(), Frame::Notification(Notification::SessionsChanged));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Frame {
    /// A complete reply block: `%begin` … `%end` or `%error`.
    Reply(Reply),
    /// A notification: a `%` line outside a reply block.
    Notification(Notification),
    /// A line that does not start with `%`, outside a reply block.
    ///
    /// tmux writes such lines for `run-shell` output (3.5+), `source-file`
    /// errors (before 3.6) and the continuation of a subscription value that
    /// contains a newline. In `-CC` mode, terminal output that comes before the
    /// DCS introducer is reported this way too. The line terminator is not
    /// included.
    Stray(Bytes),
    /// `-CC` only: the DCS introducer `ESC P 1000 p` that opens the session.
    DcsStart,
    /// `-CC` only: the string terminator `ESC \` written after `%exit`.
    DcsEnd,
}

/// The three numbers that open and close a reply block.
///
/// ```
/// use tmux_control::proto::ReplyHeader;
/// let h = ReplyHeader { time: 1795960716, number: 260, flags: 1 };
/// assert_eq!(h.to_string(), "1795960716 260 1");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ReplyHeader {
    /// Seconds since the epoch when the command started to run.
    pub time: i64,
    /// tmux's server-wide command counter. Not consecutive for one client.
    pub number: u32,
    /// `1` when the command came from this client's input, `0` for the
    /// command-line command and hooks.
    pub flags: u32,
}

impl fmt::Display for ReplyHeader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} {}", self.time, self.number, self.flags)
    }
}

/// A reply block: the output of one command.
///
/// ```
/// use tmux_control::proto::{Decoder, Frame};
/// let mut dec = Decoder::new();
/// dec.push(b"%begin 1 260 1\n%0\nsecond\n%end 1 260 1\n");
/// let Frame::Reply(reply) = dec.decode().unwrap() else { panic!() };
/// assert!(!reply.error);
/// assert_eq!(reply.body, vec![&b"%0"[..], &b"second"[..]]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// See [`ReplyHeader::time`].
    pub time: i64,
    /// See [`ReplyHeader::number`].
    pub number: u32,
    /// See [`ReplyHeader::flags`].
    pub flags: u32,
    /// `true` when the block ended with `%error` (the command failed).
    pub error: bool,
    /// The lines between the guard lines, without terminators, as raw bytes.
    pub body: Vec<Bytes>,
}

impl Reply {
    /// The three numbers of the guard lines.
    pub fn header(&self) -> ReplyHeader {
        ReplyHeader {
            time: self.time,
            number: self.number,
            flags: self.flags,
        }
    }
}

/// A notification line, typed by name.
///
/// Text fields are raw bytes exactly as tmux sent them: names are still in
/// tmux's escaped ("vis") form, and no field is assumed to be UTF-8.
///
/// ```
/// use tmux_control::proto::{Decoder, Frame, Notification};
/// use tmux_control::{PaneId, WindowId};
/// let mut dec = Decoder::new();
/// dec.push(b"%output %1 hi\\015\\012\n%window-pane-changed @2 %1\n");
/// assert_eq!(
///     dec.decode().unwrap(),
///     Frame::Notification(Notification::Output { pane: PaneId(1), data: "hi\r\n".into() })
/// );
/// assert_eq!(
///     dec.decode().unwrap(),
///     Frame::Notification(Notification::WindowPaneChanged { window: WindowId(2), pane: PaneId(1) })
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Notification {
    /// `%output %P DATA`: bytes a pane wrote, unescaped.
    Output {
        /// The pane.
        pane: PaneId,
        /// The bytes, exactly as the program wrote them to the pty.
        data: Bytes,
    },
    /// `%extended-output %P AGE [ARGS…] : DATA` (clients with `pause-after`).
    ExtendedOutput {
        /// The pane.
        pane: PaneId,
        /// How long the data waited inside tmux, in milliseconds.
        age_ms: u64,
        /// Arguments between the age and the `:` (none in current tmux).
        extra: Vec<Bytes>,
        /// The bytes, unescaped.
        data: Bytes,
    },
    /// `%pause %P`: tmux stopped sending output of the pane to this client.
    Pause {
        /// The pane.
        pane: PaneId,
    },
    /// `%continue %P`: output of the pane resumes.
    Continue {
        /// The pane.
        pane: PaneId,
    },
    /// `%window-add @W`: a window was linked into the attached session.
    WindowAdd {
        /// The window.
        window: WindowId,
    },
    /// `%unlinked-window-add @W`: a window was created outside the attached session.
    UnlinkedWindowAdd {
        /// The window.
        window: WindowId,
    },
    /// `%window-close @W`.
    WindowClose {
        /// The window.
        window: WindowId,
    },
    /// `%unlinked-window-close @W`. tmux 3.3a–3.7c also send this when a
    /// window of the attached session is killed.
    UnlinkedWindowClose {
        /// The window.
        window: WindowId,
    },
    /// `%window-renamed @W NAME`.
    WindowRenamed {
        /// The window.
        window: WindowId,
        /// The new name, escaped as tmux sends it.
        name: Bytes,
    },
    /// `%unlinked-window-renamed @W NAME`.
    UnlinkedWindowRenamed {
        /// The window.
        window: WindowId,
        /// The new name, escaped as tmux sends it.
        name: Bytes,
    },
    /// `%window-pane-changed @W %P`: the active pane of a window changed.
    WindowPaneChanged {
        /// The window.
        window: WindowId,
        /// Its new active pane.
        pane: PaneId,
    },
    /// `%layout-change @W LAYOUT VISIBLE FLAGS`.
    LayoutChange {
        /// The window.
        window: WindowId,
        /// The full layout string.
        layout: Bytes,
        /// The layout as shown (differs while a pane is zoomed); absent
        /// before tmux 2.2.
        visible_layout: Option<Bytes>,
        /// The window flags (`*`, `-`, `Z`, …); may be empty.
        flags: Option<Bytes>,
    },
    /// `%pane-mode-changed %P`: the pane entered or left a mode such as copy mode.
    PaneModeChanged {
        /// The pane.
        pane: PaneId,
    },
    /// `%session-changed $S NAME`: this client is now attached to the session.
    SessionChanged {
        /// The session.
        session: SessionId,
        /// Its name, escaped.
        name: Bytes,
    },
    /// `%session-renamed $S NAME`.
    SessionRenamed {
        /// The session.
        session: SessionId,
        /// Its new name, escaped.
        name: Bytes,
    },
    /// `%client-session-changed CLIENT $S NAME`: another client attached or switched.
    ClientSessionChanged {
        /// The client's name (a tty path, or `client-PID`).
        client: Bytes,
        /// The session.
        session: SessionId,
        /// Its name, escaped.
        name: Bytes,
    },
    /// `%client-detached CLIENT`: another client detached.
    ClientDetached {
        /// The client's name.
        client: Bytes,
    },
    /// `%sessions-changed`: a session was created or destroyed.
    SessionsChanged,
    /// `%session-window-changed $S @W`: the current window of a session changed.
    SessionWindowChanged {
        /// The session.
        session: SessionId,
        /// Its new current window.
        window: WindowId,
    },
    /// `%subscription-changed NAME $S @W IDX %P [ARGS…] : VALUE`.
    SubscriptionChanged {
        /// The subscription's name.
        name: Bytes,
        /// The session (`None` for `-`).
        session: Option<SessionId>,
        /// The window (`None` for `-`).
        window: Option<WindowId>,
        /// The window's index (`None` for `-`).
        window_index: Option<u32>,
        /// The pane (`None` for `-`).
        pane: Option<PaneId>,
        /// Arguments between the pane and the `:` (none in current tmux).
        extra: Vec<Bytes>,
        /// The format's value, unescaped by tmux (a newline in it ends the
        /// line; the rest arrives as [`Frame::Stray`] lines).
        value: Bytes,
    },
    /// `%exit [REASON]`: the last line tmux writes to this client.
    Exit {
        /// Why, when tmux says (`server exited unexpectedly`, `too far behind`, …).
        reason: Option<Bytes>,
    },
    /// `%config-error TEXT` (3.4+).
    ConfigError {
        /// The error, with file and line.
        text: Bytes,
    },
    /// `%message TEXT` (3.4+): `display-message` aimed at this client.
    Message {
        /// The message.
        text: Bytes,
    },
    /// `%paste-buffer-changed NAME` (3.4+).
    PasteBufferChanged {
        /// The buffer's name.
        name: Bytes,
    },
    /// `%paste-buffer-deleted NAME` (3.4+).
    PasteBufferDeleted {
        /// The buffer's name.
        name: Bytes,
    },
    /// A `%` line whose name this version of the library does not know.
    ///
    /// `name` is the text between `%` and the first space; `args` the rest
    /// of the line after that space (empty when there is none).
    Other {
        /// The notification's name, without `%`.
        name: Bytes,
        /// Everything after the first space.
        args: Bytes,
    },
}

impl Notification {
    /// The name tmux uses for this notification, without the `%`.
    ///
    /// ```
    /// use tmux_control::proto::Notification;
    /// assert_eq!(Notification::SessionsChanged.name(), b"sessions-changed");
    /// ```
    pub fn name(&self) -> &[u8] {
        use Notification::*;
        match self {
            Output { .. } => b"output",
            ExtendedOutput { .. } => b"extended-output",
            Pause { .. } => b"pause",
            Continue { .. } => b"continue",
            WindowAdd { .. } => b"window-add",
            UnlinkedWindowAdd { .. } => b"unlinked-window-add",
            WindowClose { .. } => b"window-close",
            UnlinkedWindowClose { .. } => b"unlinked-window-close",
            WindowRenamed { .. } => b"window-renamed",
            UnlinkedWindowRenamed { .. } => b"unlinked-window-renamed",
            WindowPaneChanged { .. } => b"window-pane-changed",
            LayoutChange { .. } => b"layout-change",
            PaneModeChanged { .. } => b"pane-mode-changed",
            SessionChanged { .. } => b"session-changed",
            SessionRenamed { .. } => b"session-renamed",
            ClientSessionChanged { .. } => b"client-session-changed",
            ClientDetached { .. } => b"client-detached",
            SessionsChanged => b"sessions-changed",
            SessionWindowChanged { .. } => b"session-window-changed",
            SubscriptionChanged { .. } => b"subscription-changed",
            Exit { .. } => b"exit",
            ConfigError { .. } => b"config-error",
            Message { .. } => b"message",
            PasteBufferChanged { .. } => b"paste-buffer-changed",
            PasteBufferDeleted { .. } => b"paste-buffer-deleted",
            Other { name, .. } => name,
        }
    }
}

/// Names of `%` lines that have a typed form (or are guard lines) and so can
/// never be the name of a [`Notification::Other`].
pub(crate) const RESERVED_NAMES: &[&[u8]] = &[
    b"begin",
    b"end",
    b"error",
    b"output",
    b"extended-output",
    b"pause",
    b"continue",
    b"window-add",
    b"unlinked-window-add",
    b"window-close",
    b"unlinked-window-close",
    b"window-renamed",
    b"unlinked-window-renamed",
    b"window-pane-changed",
    b"layout-change",
    b"pane-mode-changed",
    b"session-changed",
    b"session-renamed",
    b"client-session-changed",
    b"client-detached",
    b"sessions-changed",
    b"session-window-changed",
    b"subscription-changed",
    b"exit",
    b"config-error",
    b"message",
    b"paste-buffer-changed",
    b"paste-buffer-deleted",
];
