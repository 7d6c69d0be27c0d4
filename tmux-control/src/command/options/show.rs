//! `show-options -v`: [`ShowOption`], which reads one option's value, and
//! [`OptionValue`], the value it returns.

use bytes::Bytes;

use crate::command::format::{join_lines, unvis_reply};
use crate::command::options::{OptionScope, check_option_name, write_scope};
use crate::command::{Command, CommandLine, Target, command_error};
use crate::error::Result;
use crate::proto::Reply;
use crate::version::Version;

/// An option's value as [`ShowOption`] returns it: the raw text, with
/// helpers for the usual types.
///
/// ```
/// use tmux_control::command::OptionValue;
/// assert_eq!(OptionValue::from("on").as_bool(), Some(true));
/// assert_eq!(OptionValue::from("2000").as_number(), Some(2000));
/// assert_eq!(OptionValue::from("vi").as_str(), Some("vi"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OptionValue(Bytes);

impl OptionValue {
    /// The value's bytes (lines of a multi-line value joined with LF).
    ///
    /// ```
    /// use tmux_control::command::OptionValue;
    /// assert_eq!(OptionValue::from("x").as_bytes(), b"x");
    /// ```
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The value as text, if it is UTF-8.
    ///
    /// ```
    /// use tmux_control::command::OptionValue;
    /// assert_eq!(OptionValue::from(&b"\xff"[..]).as_str(), None);
    /// ```
    pub fn as_str(&self) -> Option<&str> {
        std::str::from_utf8(&self.0).ok()
    }

    /// A flag option: `on`/`off` (also `yes`/`no`, `1`/`0`).
    ///
    /// ```
    /// use tmux_control::command::OptionValue;
    /// assert_eq!(OptionValue::from("off").as_bool(), Some(false));
    /// assert_eq!(OptionValue::from("maybe").as_bool(), None);
    /// ```
    pub fn as_bool(&self) -> Option<bool> {
        match &self.0[..] {
            b"on" | b"yes" | b"1" => Some(true),
            b"off" | b"no" | b"0" => Some(false),
            _ => None,
        }
    }

    /// A number option.
    ///
    /// ```
    /// use tmux_control::command::OptionValue;
    /// assert_eq!(OptionValue::from("-5").as_number(), Some(-5));
    /// assert_eq!(OptionValue::from("5x").as_number(), None);
    /// ```
    pub fn as_number(&self) -> Option<i64> {
        self.as_str().and_then(|s| s.parse().ok())
    }

    /// The value as bytes.
    ///
    /// ```
    /// use tmux_control::command::OptionValue;
    /// assert_eq!(&OptionValue::from("x").into_bytes()[..], b"x");
    /// ```
    pub fn into_bytes(self) -> Bytes {
        self.0
    }
}

impl From<&str> for OptionValue {
    fn from(s: &str) -> Self {
        OptionValue(Bytes::copy_from_slice(s.as_bytes()))
    }
}

impl From<&[u8]> for OptionValue {
    fn from(s: &[u8]) -> Self {
        OptionValue(Bytes::copy_from_slice(s))
    }
}

impl From<Bytes> for OptionValue {
    fn from(b: Bytes) -> Self {
        OptionValue(b)
    }
}

/// `show-options -v`: one option's value, or `None` when it is not set at
/// that level.
///
/// A built-in option that is not set locally (a window option left to its
/// global value) and a user option (`@name`) that was never set give
/// `None`; [`inherited`](ShowOption::inherited) asks for the value in effect
/// instead (`-A`). An unknown built-in option name is an error.
///
/// ```
/// use tmux_control::command::{Command, CommandLine, OptionScope, ShowOption};
/// use tmux_control::proto::Reply;
/// let cmd = ShowOption::new(OptionScope::Session, "@note").global();
/// assert_eq!(CommandLine::of(&cmd)?.to_string(), "show-options -v -g -- '@note'");
/// let unset = Reply { time: 0, number: 1, flags: 1, error: true, body: vec!["invalid option: @note".into()] };
/// assert_eq!(cmd.parse(unset, &tmux_control::Version::OLDEST_SUPPORTED)?, None);
/// # Ok::<(), tmux_control::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShowOption {
    scope: OptionScope,
    name: String,
    global: bool,
    inherited: bool,
    target: Option<Target>,
}

impl ShowOption {
    /// Shows option `name` of `scope`. The name is checked when encoding.
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, OptionScope, ShowOption};
    /// let cmd = ShowOption::new(OptionScope::Window, "automatic-rename").target("main:0");
    /// assert_eq!(CommandLine::of(&cmd)?.to_string(), "show-options -v -w -t 'main:0' -- 'automatic-rename'");
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn new(scope: OptionScope, name: impl Into<String>) -> Self {
        Self {
            scope,
            name: name.into(),
            global: false,
            inherited: false,
            target: None,
        }
    }

    /// The global value (`-g`).
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, OptionScope, ShowOption};
    /// let line = CommandLine::of(&ShowOption::new(OptionScope::Server, "escape-time").global())?;
    /// assert_eq!(line.to_string(), "show-options -v -s -g -- 'escape-time'");
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn global(mut self) -> Self {
        self.global = true;
        self
    }

    /// The value in effect, inherited from the parent level if not set
    /// locally (`-A`).
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, OptionScope, ShowOption};
    /// let line = CommandLine::of(&ShowOption::new(OptionScope::Pane, "remain-on-exit").inherited())?;
    /// assert_eq!(line.to_string(), "show-options -v -A -p -- 'remain-on-exit'");
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn inherited(mut self) -> Self {
        self.inherited = true;
        self
    }

    /// The session, window or pane whose option to show (`-t`).
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, OptionScope, ShowOption};
    /// use tmux_control::PaneId;
    /// let line = CommandLine::of(&ShowOption::new(OptionScope::Pane, "@x").target(PaneId(1)))?;
    /// assert_eq!(line.to_string(), "show-options -v -p -t %1 -- '@x'");
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn target(mut self, target: impl Into<Target>) -> Self {
        self.target = Some(target.into());
        self
    }
}

impl Command for ShowOption {
    type Output = Option<OptionValue>;

    const NAME: &'static str = "show-options";

    fn encode(&self, line: &mut CommandLine) -> Result<()> {
        check_option_name(&self.name)?;
        line.word(Self::NAME)?
            .word("-v")?
            .flag_if("-A", self.inherited)?;
        write_scope(line, self.scope, self.global, self.target.as_ref())?;
        line.end_of_flags().arg(&self.name)?;
        Ok(())
    }

    fn parse(self, reply: Reply, version: &Version) -> Result<Option<OptionValue>> {
        if reply.error {
            // tmux's answer for a user option that is not set.
            let unset_user_option = self.name.starts_with('@')
                && matches!(reply.body.as_slice(), [l] if l.starts_with(b"invalid option: @"));
            if unset_user_option {
                return Ok(None);
            }
            return Err(command_error(Self::NAME, &reply));
        }
        let body = reply.body;
        if body.is_empty() {
            return Ok(None);
        }
        Ok(Some(OptionValue(Bytes::from(unvis_reply(
            version,
            &join_lines(&body),
        )))))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::command::test_util::*;

    #[test]
    fn show_option_parses() {
        let cmd = || ShowOption::new(OptionScope::Session, "@x");
        assert_eq!(
            cmd().parse(ok(&[]), &Version::OLDEST_SUPPORTED).unwrap(),
            None
        );
        assert_eq!(
            cmd().parse(ok(&[b""]), &Version::OLDEST_SUPPORTED).unwrap(),
            Some(OptionValue::from(""))
        );
        assert_eq!(
            cmd()
                .parse(ok(&[b"line1", b"line2"]), &Version::OLDEST_SUPPORTED)
                .unwrap(),
            Some(OptionValue::from("line1\nline2"))
        );
        assert_eq!(
            cmd()
                .parse(err("invalid option: @x"), &Version::OLDEST_SUPPORTED)
                .unwrap(),
            None
        );
        assert_command_error(
            cmd().parse(err("no such session: y"), &Version::OLDEST_SUPPORTED),
            "show-options",
        );
        let builtin = ShowOption::new(OptionScope::Session, "bogus");
        assert_command_error(
            builtin.parse(err("invalid option: bogus"), &Version::OLDEST_SUPPORTED),
            "show-options",
        );
    }
}
