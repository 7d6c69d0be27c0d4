//! Typed tmux commands: each one writes exactly one control-mode command
//! line and turns its reply into a typed result.
//!
//! Every argument is quoted for tmux's own command parser, so that tmux reads
//! it back byte for byte (see [`CommandLine`]).

mod line;

pub use line::CommandLine;

use crate::error::{Error, Result};
use crate::proto::Reply;

/// One tmux command: how to write it and how to read its reply.
///
/// The connection writes [`Command::encode`]'s line, waits for the matching
/// reply block and hands it to [`Command::parse`] in the caller's task.
///
/// ```
/// use tmux_control::command::{Command, CommandLine};
/// use tmux_control::proto::Reply;
///
/// /// `display-message -p TEXT`, returning the expanded text.
/// struct Echo(String);
///
/// impl Command for Echo {
///     type Output = String;
///     fn name(&self) -> &'static str { "display-message" }
///     fn encode(&self, line: &mut CommandLine) -> tmux_control::Result<()> {
///         line.word("display-message")?.word("-p")?.arg(&self.0)?;
///         Ok(())
///     }
///     fn parse(self, reply: Reply) -> tmux_control::Result<String> {
///         let body = tmux_control::command::ok_body(self.name(), reply)?;
///         Ok(body.iter().map(|l| String::from_utf8_lossy(l)).collect::<Vec<_>>().join("\n"))
///     }
/// }
///
/// let mut line = CommandLine::new();
/// Echo("it's".into()).encode(&mut line).unwrap();
/// assert_eq!(line.as_bytes(), b"display-message -p 'it'\\''s'");
/// ```
pub trait Command {
    /// What a successful reply becomes.
    type Output;

    /// The tmux command's name, for error messages.
    fn name(&self) -> &'static str;

    /// Writes exactly one tmux command (no line terminator) into `line`.
    fn encode(&self, line: &mut CommandLine) -> Result<()>;

    /// Turns the reply block into the output. Called for `%end` and `%error`
    /// blocks alike; most commands use [`ok_body`] to turn `%error` into
    /// [`Error::Command`].
    fn parse(self, reply: Reply) -> Result<Self::Output>;
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
        let message = reply
            .body
            .iter()
            .map(|l| String::from_utf8_lossy(l).into_owned())
            .collect::<Vec<_>>()
            .join("\n");
        return Err(Error::Command {
            command: command.to_owned(),
            message,
        });
    }
    Ok(reply.body)
}
