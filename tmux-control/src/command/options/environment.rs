//! The environment: [`SetEnvironment`] (`set-environment`) and
//! [`ShowEnvironment`] (`show-environment`), with [`EnvValue`], a variable
//! as `show-environment` finds it.

use bytes::Bytes;

use crate::command::format::{join_lines, unvis_reply};
use crate::command::target::write_opt;
use crate::command::{
    Command, CommandLine, Target, check_env_name, command_error, ok_body, unexpected, unit,
};
use crate::error::Result;
use crate::proto::Reply;
use crate::version::Version;

/// `set-environment`: sets, unsets or marks for removal a variable of a
/// session's or the global environment (used for new processes).
///
/// ```
/// use tmux_control::command::{CommandLine, SetEnvironment};
/// use tmux_control::SessionId;
/// let cmd = SetEnvironment::set("EDITOR", "vim -u NONE").target(SessionId(0));
/// assert_eq!(CommandLine::of(&cmd)?.to_string(), "set-environment -t $0 -- 'EDITOR' 'vim -u NONE'");
/// # Ok::<(), tmux_control::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetEnvironment {
    name: String,
    action: EnvAction,
    global: bool,
    target: Option<Target>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum EnvAction {
    Set(Vec<u8>),
    Unset,
    Remove,
}

impl SetEnvironment {
    /// Sets `name` to `value` (sent as is). The name must be non-empty and
    /// contain no `=`; this is checked when encoding.
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, SetEnvironment};
    /// let line = CommandLine::of(&SetEnvironment::set("A", "1").global())?;
    /// assert_eq!(line.to_string(), "set-environment -g -- 'A' '1'");
    /// assert!(CommandLine::of(&SetEnvironment::set("A=B", "1")).is_err());
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn set(name: impl Into<String>, value: impl AsRef<[u8]>) -> Self {
        Self::with(name, EnvAction::Set(value.as_ref().to_vec()))
    }

    /// Removes `name` from the environment (`-u`).
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, SetEnvironment};
    /// let line = CommandLine::of(&SetEnvironment::unset("A").global())?;
    /// assert_eq!(line.to_string(), "set-environment -u -g -- 'A'");
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn unset(name: impl Into<String>) -> Self {
        Self::with(name, EnvAction::Unset)
    }

    /// Marks `name` to be removed from the environment of new processes,
    /// even if the global environment has it (`-r`).
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, SetEnvironment};
    /// let line = CommandLine::of(&SetEnvironment::remove("SSH_AUTH_SOCK"))?;
    /// assert_eq!(line.to_string(), "set-environment -r -- 'SSH_AUTH_SOCK'");
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn remove(name: impl Into<String>) -> Self {
        Self::with(name, EnvAction::Remove)
    }

    fn with(name: impl Into<String>, action: EnvAction) -> Self {
        Self {
            name: name.into(),
            action,
            global: false,
            target: None,
        }
    }

    /// The global environment (`-g`).
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, SetEnvironment};
    /// assert!(CommandLine::of(&SetEnvironment::unset("A").global())?.to_string().contains(" -g "));
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn global(mut self) -> Self {
        self.global = true;
        self
    }

    /// The session whose environment to change (`-t`).
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, SetEnvironment};
    /// assert!(CommandLine::of(&SetEnvironment::unset("A").target("=s"))?.to_string().contains(" -t '=s' "));
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn target(mut self, target: impl Into<Target>) -> Self {
        self.target = Some(target.into());
        self
    }
}

impl Command for SetEnvironment {
    type Output = ();

    const NAME: &'static str = "set-environment";

    fn encode(&self, line: &mut CommandLine) -> Result<()> {
        check_env_name(&self.name)?;
        line.word(Self::NAME)?;
        match self.action {
            EnvAction::Unset => {
                line.word("-u")?;
            }
            EnvAction::Remove => {
                line.word("-r")?;
            }
            EnvAction::Set(_) => {}
        }
        line.flag_if("-g", self.global)?;
        write_opt(self.target.as_ref(), line)?;
        line.end_of_flags().arg(&self.name)?;
        if let EnvAction::Set(value) = &self.action {
            line.arg(value)?;
        }
        Ok(())
    }

    fn parse(self, reply: Reply, _version: &Version) -> Result<()> {
        unit(Self::NAME, reply)
    }
}

/// A variable as [`ShowEnvironment`] finds it.
///
/// ```
/// use tmux_control::command::EnvValue;
/// let v = EnvValue::Set("1".into());
/// assert_eq!(v, EnvValue::Set(bytes::Bytes::from_static(b"1")));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum EnvValue {
    /// The variable has this value.
    Set(Bytes),
    /// The variable is marked for removal from new processes
    /// ([`SetEnvironment::remove`]).
    Removed,
}

/// `show-environment -- NAME`: one variable of a session's or the global
/// environment; `None` if it does not exist there.
///
/// ```
/// use tmux_control::command::{Command, CommandLine, EnvValue, ShowEnvironment};
/// use tmux_control::proto::Reply;
/// let cmd = ShowEnvironment::new("PATH").global();
/// assert_eq!(CommandLine::of(&cmd)?.to_string(), "show-environment -g -- 'PATH'");
/// let reply = Reply { time: 0, number: 1, flags: 1, error: false, body: vec!["PATH=/bin".into()] };
/// assert_eq!(cmd.parse(reply, &tmux_control::Version::OLDEST_SUPPORTED)?, Some(EnvValue::Set("/bin".into())));
/// # Ok::<(), tmux_control::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShowEnvironment {
    name: String,
    global: bool,
    target: Option<Target>,
}

impl ShowEnvironment {
    /// Shows variable `name`.
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, ShowEnvironment};
    /// assert_eq!(CommandLine::of(&ShowEnvironment::new("X"))?.to_string(), "show-environment -- 'X'");
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            global: false,
            target: None,
        }
    }

    /// The global environment (`-g`).
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, ShowEnvironment};
    /// assert_eq!(CommandLine::of(&ShowEnvironment::new("X").global())?.to_string(), "show-environment -g -- 'X'");
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn global(mut self) -> Self {
        self.global = true;
        self
    }

    /// The session whose environment to read (`-t`).
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, ShowEnvironment};
    /// use tmux_control::SessionId;
    /// let line = CommandLine::of(&ShowEnvironment::new("X").target(SessionId(2)))?;
    /// assert_eq!(line.to_string(), "show-environment -t $2 -- 'X'");
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn target(mut self, target: impl Into<Target>) -> Self {
        self.target = Some(target.into());
        self
    }
}

impl Command for ShowEnvironment {
    type Output = Option<EnvValue>;

    const NAME: &'static str = "show-environment";

    fn encode(&self, line: &mut CommandLine) -> Result<()> {
        check_env_name(&self.name)?;
        line.word(Self::NAME)?.flag_if("-g", self.global)?;
        write_opt(self.target.as_ref(), line)?;
        line.end_of_flags().arg(&self.name)?;
        Ok(())
    }

    fn parse(self, reply: Reply, version: &Version) -> Result<Option<EnvValue>> {
        if reply.error {
            if matches!(reply.body.as_slice(), [l] if l.starts_with(b"unknown variable")) {
                return Ok(None);
            }
            return Err(command_error(Self::NAME, &reply));
        }
        let text = unvis_reply(version, &join_lines(&ok_body(Self::NAME, reply)?));
        let name = self.name.as_bytes();
        if let Some(value) = text.strip_prefix(name).and_then(|r| r.strip_prefix(b"=")) {
            return Ok(Some(EnvValue::Set(Bytes::copy_from_slice(value))));
        }
        if text.strip_prefix(b"-") == Some(name) {
            return Ok(Some(EnvValue::Removed));
        }
        Err(unexpected(
            Self::NAME,
            format!(
                "expected `{}=VALUE` or `-{}`, got {:?}",
                self.name,
                self.name,
                String::from_utf8_lossy(&text)
            ),
        ))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::command::test_util::*;

    #[test]
    fn environment() {
        assert_eq!(
            line(&SetEnvironment::set("A", "").target("s")),
            "set-environment -t 's' -- 'A' ''"
        );
        assert!(CommandLine::of(&SetEnvironment::unset("")).is_err());
        assert!(CommandLine::of(&ShowEnvironment::new("A=")).is_err());
        let show = || ShowEnvironment::new("NL");
        assert_eq!(
            show()
                .parse(ok(&[b"NL=a", b"b"]), &Version::OLDEST_SUPPORTED)
                .unwrap(),
            Some(EnvValue::Set("a\nb".into()))
        );
        assert_eq!(
            show()
                .parse(ok(&[b"NL="]), &Version::OLDEST_SUPPORTED)
                .unwrap(),
            Some(EnvValue::Set("".into()))
        );
        assert_eq!(
            show()
                .parse(ok(&[b"-NL"]), &Version::OLDEST_SUPPORTED)
                .unwrap(),
            Some(EnvValue::Removed)
        );
        assert_eq!(
            show()
                .parse(err("unknown variable: NL"), &Version::OLDEST_SUPPORTED)
                .unwrap(),
            None
        );
        assert_unexpected(
            show().parse(ok(&[b"OTHER=1"]), &Version::OLDEST_SUPPORTED),
            "show-environment",
        );
        assert_unexpected(
            show().parse(ok(&[]), &Version::OLDEST_SUPPORTED),
            "show-environment",
        );
        assert_command_error(
            show().parse(err("no such session: x"), &Version::OLDEST_SUPPORTED),
            "show-environment",
        );
    }
}
