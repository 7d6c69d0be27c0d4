//! Typed tmux commands: each one writes exactly one control-mode command
//! line and turns its reply into a typed result.
//!
//! Every argument is quoted for tmux's own command parser, so that tmux reads
//! it back byte for byte (see [`CommandLine`]), and escaped for tmux's format
//! expansion where the command expands formats (see [`escape_format`]). No
//! command ever writes more than one tmux command (one reply block), and
//! none writes a raw LF, CR or NUL.
//!
//! | area | commands |
//! |---|---|
//! | sessions | [`NewSession`], [`ListSessions`], [`KillSession`], [`RenameSession`], [`HasSession`] |
//! | windows | [`NewWindow`], [`ListWindows`], [`KillWindow`], [`RenameWindow`], [`SelectWindow`], [`ResizeWindow`] |
//! | panes | [`SplitWindow`], [`ListPanes`], [`KillPane`], [`SelectPane`], [`ResizePane`], [`RespawnPane`], [`CapturePane`] |
//! | input | [`SendKeys`] with [`Key`] |
//! | paste buffers | [`SetBuffer`], [`ShowBuffer`], [`PasteBuffer`], [`DeleteBuffer`], [`ListBuffers`] |
//! | options and environment | [`SetOption`], [`ShowOption`], [`SetEnvironment`], [`ShowEnvironment`] |
//! | client and misc | [`RefreshClient`], [`WaitFor`], [`DisplayMessage`], [`Raw`] |
//!
//! ```
//! use tmux_control::command::{CommandLine, NewSession, SendKeys, Key};
//! use tmux_control::PaneId;
//!
//! let new = NewSession::new().session_name("work").size(120, 40);
//! assert_eq!(
//!     CommandLine::of(&new)?.to_string(),
//!     "new-session -d -P -F '#{session_id} #{window_id} #{pane_id}' -s 'work' -x 120 -y 40"
//! );
//! let keys = SendKeys::keys(PaneId(0), [Key::ctrl('c')?, Key::ENTER]);
//! assert_eq!(CommandLine::of(&keys)?.to_string(), "send-keys -t %0 -- 'C-c' 'Enter'");
//! # Ok::<(), tmux_control::Error>(())
//! ```

/// The builder methods of [`Spawn`], with their documentation, for a
/// command type with a `spawn: Spawn` field. `$new` is an expression that
/// builds the type, for the examples.
macro_rules! spawn_methods {
    ($ty:ident, $new:literal) => {
        impl $ty {
            #[doc = concat!(
                "The new pane's working directory (`-c`, taken literally: `#` is not a format).\n\n",
                "```\nuse tmux_control::command::{CommandLine, ", stringify!($ty), "};\n",
                "let line = CommandLine::of(&", $new, ".start_directory(\"/tmp/#1\"))?;\n",
                "assert!(line.to_string().ends_with(\" -c '/tmp/##1'\"));\n",
                "# Ok::<(), tmux_control::Error>(())\n```"
            )]
            pub fn start_directory(mut self, dir: impl AsRef<[u8]>) -> Self {
                self.spawn.start_directory = Some(dir.as_ref().to_vec());
                self
            }

            #[doc = concat!(
                "Sets an environment variable for the new pane (`-e NAME=VALUE`, repeatable). ",
                "The name must be non-empty and contain no `=`; this is checked when the ",
                "command is encoded.\n\n",
                "```\nuse tmux_control::command::{CommandLine, ", stringify!($ty), "};\n",
                "let line = CommandLine::of(&", $new, ".env(\"A\", \"1\").env(\"B\", \"x y\"))?;\n",
                "assert!(line.to_string().ends_with(\" -e 'A=1' -e 'B=x y'\"));\n",
                "assert!(CommandLine::of(&", $new, ".env(\"A=B\", \"1\")).is_err());\n",
                "# Ok::<(), tmux_control::Error>(())\n```"
            )]
            pub fn env(mut self, name: impl Into<String>, value: impl AsRef<[u8]>) -> Self {
                self.spawn.env.push(name, value);
                self
            }

            #[doc = concat!(
                "The command to run instead of the default shell, as one string that tmux ",
                "hands to `sh -c` (`-- COMMAND`, always last on the line).\n\n",
                "```\nuse tmux_control::command::{CommandLine, ", stringify!($ty), "};\n",
                "let line = CommandLine::of(&", $new, ".command(\"top -d 1\"))?;\n",
                "assert!(line.to_string().ends_with(\" -- 'top -d 1'\"));\n",
                "# Ok::<(), tmux_control::Error>(())\n```"
            )]
            pub fn command(mut self, command: impl AsRef<[u8]>) -> Self {
                self.spawn.command = Some(command.as_ref().to_vec());
                self
            }
        }
    };
}

mod buffer;
mod capture;
mod client;
mod clients;
pub(crate) mod format;
mod keys;
mod layout;
mod line;
mod options;
mod pane;
mod raw;
mod session;
mod spawn;
mod target;
mod window;

pub use buffer::{BufferInfo, DeleteBuffer, ListBuffers, PasteBuffer, SetBuffer, ShowBuffer};
pub use capture::CapturePane;
pub use client::{
    ClientFlag, DisplayMessage, OutputSwitch, RefreshClient, SubscriptionScope, WaitFor,
};
pub use clients::{ClientInfo, DetachClient, KillServer, ListClients};
pub use format::{escape_format, unvis};
pub use keys::{Key, NamedKey, SendKeys};
pub use layout::SelectLayout;
pub use line::CommandLine;
pub use options::{
    EnvValue, OptionScope, OptionValue, SetEnvironment, SetOption, ShowEnvironment, ShowOption,
};
pub use pane::{
    Direction, KillPane, ListPanes, PaneInfo, ResizePane, RespawnPane, SelectPane, SplitWindow,
};
pub use raw::Raw;
pub use session::{HasSession, KillSession, ListSessions, NewSession, RenameSession, SessionInfo};
pub use spawn::NewPane;
pub(crate) use spawn::NewPaneKind;
pub use target::Target;
pub use window::{
    KillWindow, ListWindows, NewWindow, RenameWindow, ResizeWindow, SelectWindow, WindowInfo,
};

use crate::error::{Error, Result};
use crate::ids::{PaneId, SessionId, WindowId};
use crate::proto::Reply;
use crate::version::Version;

/// One tmux command: how to write it and how to read its reply.
///
/// The connection writes [`Command::encode`]'s line, waits for the matching
/// reply block and hands it to [`Command::parse`] in the caller's task. Both
/// know which tmux the connection talks to ([`CommandLine::version`] and
/// `parse`'s `version`), so that a command can choose its flags and its
/// decoding for that version.
///
/// ```
/// use tmux_control::command::{Command, CommandLine};
/// use tmux_control::proto::Reply;
/// use tmux_control::Version;
///
/// /// `display-message -p TEXT`, returning the expanded text.
/// struct Echo(String);
///
/// impl Command for Echo {
///     type Output = String;
///     const NAME: &'static str = "display-message";
///     fn encode(&self, line: &mut CommandLine) -> tmux_control::Result<()> {
///         line.word(Self::NAME)?.word("-p")?.arg(&self.0)?;
///         Ok(())
///     }
///     fn parse(self, reply: Reply, _version: &Version) -> tmux_control::Result<String> {
///         let body = tmux_control::command::ok_body(Self::NAME, reply)?;
///         Ok(body.iter().map(|l| String::from_utf8_lossy(l)).collect::<Vec<_>>().join("\n"))
///     }
/// }
///
/// let mut line = CommandLine::new();
/// Echo("it's".into()).encode(&mut line).unwrap();
/// assert_eq!(line.as_bytes(), b"display-message -p 'it'\\''s'");
/// assert_eq!(Echo(String::new()).name(), "display-message");
/// ```
pub trait Command {
    /// What a successful reply becomes.
    type Output;

    /// The tmux command's full name (`capture-pane`), written once: `encode`
    /// writes it as the line's first word and `parse` names it in errors.
    ///
    /// ```
    /// use tmux_control::command::{CapturePane, Command, Raw};
    /// assert_eq!(CapturePane::NAME, "capture-pane");
    /// assert_eq!(Raw::NAME, "raw"); // Raw's name is chosen at run time
    /// ```
    const NAME: &'static str;

    /// This command's name, as it appears in [`Error::Command`] and
    /// [`Error::UnexpectedReply`]. It is [`Command::NAME`] for every typed
    /// command; only a command whose name is chosen at run time overrides
    /// it ([`Raw`] gives the full name of the tmux command it runs).
    ///
    /// ```
    /// use tmux_control::command::{Command, KillPane, Raw};
    /// assert_eq!(KillPane::new("%1").name(), "kill-pane");
    /// assert_eq!(Raw::new("lsc").name(), "list-clients");
    /// ```
    fn name(&self) -> &'static str {
        Self::NAME
    }

    /// Writes exactly one tmux command (no line terminator) into `line`.
    fn encode(&self, line: &mut CommandLine) -> Result<()>;

    /// Turns the reply block into the output. Called for `%end` and `%error`
    /// blocks alike; most commands use [`ok_body`] to turn `%error` into
    /// [`Error::Command`]. `version` is the tmux that wrote the reply (the
    /// one [`CommandLine::version`] named when the line was encoded).
    fn parse(self, reply: Reply, version: &Version) -> Result<Self::Output>;
}

/// Returns the body of a successful reply, or [`Error::Command`] with tmux's
/// message for an `%error` reply.
///
/// ```
/// use tmux_control::command::ok_body;
/// use tmux_control::proto::Reply;
/// let failed = Reply { time: 0, number: 1, flags: 1, error: true, body: vec!["no server".into()] };
/// assert!(ok_body("list-sessions", failed).is_err());
/// ```
pub fn ok_body(command: &str, reply: Reply) -> Result<Vec<bytes::Bytes>> {
    if reply.error {
        return Err(command_error(command, &reply));
    }
    Ok(reply.body)
}

fn command_error(command: &str, reply: &Reply) -> Error {
    let message = reply
        .body
        .iter()
        .map(|l| String::from_utf8_lossy(l).into_owned())
        .collect::<Vec<_>>()
        .join("\n");
    Error::Command {
        command: command.to_owned(),
        message,
    }
}

/// Checks for success and ignores the body.
fn unit(command: &str, reply: Reply) -> Result<()> {
    ok_body(command, reply).map(drop)
}

fn unexpected(command: &str, detail: impl Into<String>) -> Error {
    Error::UnexpectedReply {
        command: command.to_owned(),
        detail: detail.into(),
    }
}

/// The ids of what `new-session`, `new-window` or `split-window` created.
///
/// ```
/// use tmux_control::command::{Command, Created, NewWindow};
/// use tmux_control::proto::Reply;
/// use tmux_control::{PaneId, SessionId, WindowId};
///
/// let reply = Reply { time: 0, number: 1, flags: 1, error: false, body: vec!["$0 @3 %5".into()] };
/// let created = NewWindow::new().parse(reply, &tmux_control::Version::OLDEST_SUPPORTED)?;
/// assert_eq!(created, Created { session: SessionId(0), window: WindowId(3), pane: PaneId(5) });
/// # Ok::<(), tmux_control::Error>(())
/// ```
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Created {
    /// The session the new window or pane belongs to.
    pub session: SessionId,
    /// The new window, or the window the new pane is in.
    pub window: WindowId,
    /// The new pane (the first pane of a new window or session).
    pub pane: PaneId,
}

/// The `-F` format given with `-P` to commands that create something.
const CREATED_FORMAT: &str = "#{session_id} #{window_id} #{pane_id}";

impl Created {
    fn parse(command: &str, reply: Reply) -> Result<Self> {
        let body = ok_body(command, reply)?;
        let line = match body.as_slice() {
            [line] => line,
            _ => {
                return Err(unexpected(
                    command,
                    format!("expected one line of ids, got {} lines", body.len()),
                ));
            }
        };
        let mut parts = line.split(|&b| b == b' ');
        let ids = (
            parts.next().and_then(format::session_id),
            parts.next().and_then(WindowId::from_bytes),
            parts.next().and_then(PaneId::from_bytes),
            parts.next(),
        );
        match ids {
            (Some(session), Some(window), Some(pane), None) => Ok(Created {
                session,
                window,
                pane,
            }),
            _ => Err(unexpected(
                command,
                format!(
                    "expected `$S @W %P`, got {:?}",
                    String::from_utf8_lossy(line)
                ),
            )),
        }
    }
}

/// A size in cells or as a percentage of the available space (`-l 10`,
/// `-l 30%`, `-x 50%`).
///
/// ```
/// use tmux_control::command::{CommandLine, Size, SplitWindow};
/// use tmux_control::PaneId;
/// let split = SplitWindow::new().target(PaneId(0)).size(Size::Percent(30));
/// assert!(CommandLine::of(&split)?.to_string().contains(" -l 30%"));
/// # Ok::<(), tmux_control::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Size {
    /// A number of cells (columns or lines).
    Cells(u32),
    /// A percentage, 0 to 100.
    Percent(u8),
}

impl Size {
    fn word(self) -> Result<String> {
        match self {
            Size::Cells(n) => Ok(n.to_string()),
            Size::Percent(p) if p <= 100 => Ok(format!("{p}%")),
            Size::Percent(p) => Err(Error::InvalidArgument(format!(
                "a percentage must be at most 100, not {p}"
            ))),
        }
    }
}

/// Environment variables for a new process (`-e NAME=VALUE`, repeatable).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Env(Vec<(String, Vec<u8>)>);

impl Env {
    fn push(&mut self, name: impl Into<String>, value: impl AsRef<[u8]>) {
        self.0.push((name.into(), value.as_ref().to_vec()));
    }

    fn write(&self, line: &mut CommandLine) -> Result<()> {
        for (name, value) in &self.0 {
            check_env_name(name)?;
            let mut pair = Vec::with_capacity(name.len() + 1 + value.len());
            pair.extend_from_slice(name.as_bytes());
            pair.push(b'=');
            pair.extend_from_slice(value);
            line.flag_arg("-e", pair)?;
        }
        Ok(())
    }
}

fn check_env_name(name: &str) -> Result<()> {
    if name.is_empty() || name.contains('=') || name.contains('\0') {
        return Err(Error::InvalidArgument(format!(
            "{name:?} is not an environment variable name (empty, or contains `=` or NUL)"
        )));
    }
    Ok(())
}

/// What the commands that start a program in a new pane (new-session,
/// new-window, split-window, respawn-pane) have in common: the working
/// directory, the environment and the command.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Spawn {
    start_directory: Option<Vec<u8>>,
    env: Env,
    command: Option<Vec<u8>>,
}

impl Spawn {
    /// Writes `-c DIR`, the `-e NAME=VALUE` pairs and `-- COMMAND`, which
    /// must end the line.
    fn write(&self, line: &mut CommandLine) -> Result<()> {
        if let Some(dir) = &self.start_directory {
            line.flag_literal("-c", dir)?;
        }
        self.env.write(line)?;
        if let Some(command) = &self.command {
            line.end_of_flags().arg(command)?;
        }
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
pub(crate) mod test_util {
    use bytes::Bytes;

    use super::*;

    /// How a free-text field of a `-F` row shows in a line (see `RowSpec`).
    pub(crate) fn text_field(var: &str) -> String {
        format!(r#"#{{s/\\/\\\\/;s/ /\\s/;s/'"\012"'/\\n/:{var}}}"#)
    }

    /// The line a command encodes to, as text.
    pub(crate) fn line(cmd: &impl Command) -> String {
        CommandLine::of(cmd).unwrap().to_string()
    }

    pub(crate) fn ok(lines: &[&[u8]]) -> Reply {
        Reply {
            time: 1,
            number: 2,
            flags: 1,
            error: false,
            body: lines.iter().map(|l| Bytes::copy_from_slice(l)).collect(),
        }
    }

    pub(crate) fn err(message: &str) -> Reply {
        Reply {
            time: 1,
            number: 2,
            flags: 1,
            error: true,
            body: vec![Bytes::copy_from_slice(message.as_bytes())],
        }
    }

    /// Asserts an `UnexpectedReply` for `command`.
    pub(crate) fn assert_unexpected<T: std::fmt::Debug>(r: Result<T>, command: &str) {
        match r {
            Err(Error::UnexpectedReply { command: c, .. }) => assert_eq!(c, command),
            other => panic!("expected UnexpectedReply, got {other:?}"),
        }
    }

    /// Asserts a `Command` error for `command`.
    pub(crate) fn assert_command_error<T: std::fmt::Debug>(r: Result<T>, command: &str) {
        match r {
            Err(Error::Command { command: c, .. }) => assert_eq!(c, command),
            other => panic!("expected Command error, got {other:?}"),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::test_util::*;
    use super::*;

    #[test]
    fn created_parses_and_rejects() {
        let c = Created::parse("new-window", ok(&[b"$1 @2 %3"])).unwrap();
        assert_eq!(c.session, SessionId(1));
        assert_eq!(c.window, WindowId(2));
        assert_eq!(c.pane, PaneId(3));
        for bad in [
            &[][..],
            &[&b"$1 @2"[..]],
            &[b"$1 @2 %3 x"],
            &[b"@1 $2 %3"],
            &[b"$1 @2 %3", b""],
        ] {
            assert_unexpected(Created::parse("new-window", ok(bad)), "new-window");
        }
        assert_command_error(
            Created::parse("new-window", err("index in use")),
            "new-window",
        );
    }

    #[test]
    fn env_and_size() {
        let mut env = Env::default();
        env.push("A", "1 2");
        env.push("B", b"\n");
        let mut l = CommandLine::new();
        env.write(&mut l).unwrap();
        assert_eq!(l.to_string(), r#"-e 'A=1 2' -e 'B='"\012""#);
        for bad in ["", "A=B", "A\0"] {
            let mut env = Env::default();
            env.push(bad, "x");
            assert!(matches!(
                env.write(&mut CommandLine::new()),
                Err(Error::InvalidArgument(_))
            ));
        }
        assert_eq!(Size::Cells(5).word().unwrap(), "5");
        assert_eq!(Size::Percent(100).word().unwrap(), "100%");
        assert!(Size::Percent(101).word().is_err());
    }
}
