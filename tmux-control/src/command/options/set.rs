//! `set-option`: [`SetOption`], which sets or unsets one option.

use crate::command::options::{OptionScope, check_option_name, write_scope};
use crate::command::{Command, CommandLine, Target, unit};
use crate::error::Result;
use crate::proto::Reply;
use crate::version::Version;

/// `set-option`: sets or unsets an option.
///
/// The value is sent as is (tmux does not expand formats in it).
///
/// ```
/// use tmux_control::command::{CommandLine, OptionScope, SetOption};
/// use tmux_control::PaneId;
/// let cmd = SetOption::new(OptionScope::Pane, "remain-on-exit", "on").target(PaneId(3));
/// assert_eq!(CommandLine::of(&cmd)?.to_string(), "set-option -p -t %3 -- 'remain-on-exit' 'on'");
/// let cmd = SetOption::new(OptionScope::Session, "@note", "a #b; c").global();
/// assert_eq!(CommandLine::of(&cmd)?.to_string(), "set-option -g -- '@note' 'a #b; c'");
/// # Ok::<(), tmux_control::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetOption {
    scope: OptionScope,
    name: String,
    value: Option<Vec<u8>>,
    global: bool,
    target: Option<Target>,
}

impl SetOption {
    /// Sets option `name` to `value`. The name is checked when encoding.
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, OptionScope, SetOption};
    /// let cmd = SetOption::new(OptionScope::Server, "escape-time", "0");
    /// assert_eq!(CommandLine::of(&cmd)?.to_string(), "set-option -s -- 'escape-time' '0'");
    /// assert!(CommandLine::of(&SetOption::new(OptionScope::Server, "#{x}", "0")).is_err());
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn new(scope: OptionScope, name: impl Into<String>, value: impl AsRef<[u8]>) -> Self {
        Self {
            scope,
            name: name.into(),
            value: Some(value.as_ref().to_vec()),
            global: false,
            target: None,
        }
    }

    /// Unsets option `name` (`-u`): a local value is removed so the global
    /// one applies again; a global one goes back to its default.
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, OptionScope, SetOption};
    /// let cmd = SetOption::unset(OptionScope::Window, "@tag").target("main:1");
    /// assert_eq!(CommandLine::of(&cmd)?.to_string(), "set-option -u -w -t 'main:1' -- '@tag'");
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn unset(scope: OptionScope, name: impl Into<String>) -> Self {
        Self {
            scope,
            name: name.into(),
            value: None,
            global: false,
            target: None,
        }
    }

    /// The global value (`-g`) rather than one session's, window's or pane's.
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, OptionScope, SetOption};
    /// let line = CommandLine::of(&SetOption::new(OptionScope::Session, "status", "off").global())?;
    /// assert_eq!(line.to_string(), "set-option -g -- 'status' 'off'");
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn global(mut self) -> Self {
        self.global = true;
        self
    }

    /// The session, window or pane whose option to set (`-t`).
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, OptionScope, SetOption};
    /// use tmux_control::SessionId;
    /// let line = CommandLine::of(&SetOption::new(OptionScope::Session, "status", "off").target(SessionId(1)))?;
    /// assert_eq!(line.to_string(), "set-option -t $1 -- 'status' 'off'");
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn target(mut self, target: impl Into<Target>) -> Self {
        self.target = Some(target.into());
        self
    }
}

impl Command for SetOption {
    type Output = ();

    const NAME: &'static str = "set-option";

    fn encode(&self, line: &mut CommandLine) -> Result<()> {
        check_option_name(&self.name)?;
        line.word(Self::NAME)?.flag_if("-u", self.value.is_none())?;
        write_scope(line, self.scope, self.global, self.target.as_ref())?;
        line.end_of_flags().arg(&self.name)?;
        if let Some(value) = &self.value {
            line.arg(value)?;
        }
        Ok(())
    }

    fn parse(self, reply: Reply, _version: &Version) -> Result<()> {
        unit(Self::NAME, reply)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::command::test_util::*;

    #[test]
    fn set_option_lines() {
        assert_eq!(
            line(&SetOption::new(OptionScope::Session, "@v", "-x\n").global()),
            r#"set-option -g -- '@v' '-x'"\012""#
        );
        assert_eq!(
            line(&SetOption::unset(OptionScope::Pane, "remain-on-exit").target("%1")),
            "set-option -u -p -t '%1' -- 'remain-on-exit'"
        );
        assert!(CommandLine::of(&SetOption::new(OptionScope::Session, "a;b", "")).is_err());
        assert_command_error(
            SetOption::new(OptionScope::Session, "x", "y")
                .parse(err("invalid option: x"), &Version::OLDEST_SUPPORTED),
            "set-option",
        );
    }
}
