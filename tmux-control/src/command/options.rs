//! Options and environment: `set-option`, `show-options`,
//! `set-environment`, `show-environment`.
//!
//! (Longer than 600 lines with its doc examples and unit tests; the code
//! is one small builder per command of this family, kept together so the
//! family reads as one page.)

use bytes::Bytes;

use crate::command::format::{join_lines, unvis_reply};
use crate::command::target::write_opt;
use crate::command::{
    Command, CommandLine, Target, check_env_name, command_error, ok_body, unexpected, unit,
};
use crate::error::{Error, Result};
use crate::proto::Reply;
use crate::version::Version;

/// Which options table a [`SetOption`] or [`ShowOption`] addresses.
///
/// ```
/// use tmux_control::command::{CommandLine, OptionScope, SetOption};
/// let cmd = SetOption::new(OptionScope::Window, "mode-keys", "vi").global();
/// assert_eq!(CommandLine::of(&cmd)?.to_string(), "set-option -w -g -- 'mode-keys' 'vi'");
/// # Ok::<(), tmux_control::Error>(())
/// ```
///
/// More scopes may be added as tmux grows them; a `match` on an
/// `OptionScope` outside this crate needs a wildcard arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum OptionScope {
    /// Server options (`-s`).
    Server,
    /// Session options (no flag).
    Session,
    /// Window options (`-w`).
    Window,
    /// Pane options (`-p`).
    Pane,
}

impl OptionScope {
    fn flag(self) -> Option<&'static str> {
        match self {
            OptionScope::Server => Some("-s"),
            OptionScope::Session => None,
            OptionScope::Window => Some("-w"),
            OptionScope::Pane => Some("-p"),
        }
    }
}

/// Checks an option name: letters, digits, `-` and `_`, an optional leading
/// `@` (user options) and an optional array index `[N]`. tmux expands
/// formats in option names, so nothing else is let through.
fn check_option_name(name: &str) -> Result<()> {
    let (base, index) = match name.split_once('[') {
        Some((base, rest)) => (base, Some(rest)),
        None => (name, None),
    };
    let base_ok = {
        let b = base.strip_prefix('@').unwrap_or(base);
        !b.is_empty()
            && b.bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_')
    };
    let index_ok = index.is_none_or(|rest| {
        rest.strip_suffix(']')
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()))
    });
    if base_ok && index_ok {
        Ok(())
    } else {
        Err(Error::InvalidArgument(format!(
            "{name:?} is not an option name (letters, digits, `-`, `_`, optional leading `@`, optional `[N]`)"
        )))
    }
}

fn write_scope(
    line: &mut CommandLine,
    scope: OptionScope,
    global: bool,
    target: Option<&Target>,
) -> Result<()> {
    if let Some(flag) = scope.flag() {
        line.word(flag)?;
    }
    line.flag_if("-g", global)?;
    write_opt(target, line)
}

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
    fn option_names() {
        for ok in [
            "status",
            "@x",
            "@my-opt_2",
            "status-format[0]",
            "user-keys[12]",
        ] {
            check_option_name(ok).unwrap();
        }
        for bad in [
            "", "@", "a b", "#{x}", "a[", "a[]", "a[x]", "a]", "@é", "a[1]x",
        ] {
            assert!(check_option_name(bad).is_err(), "{bad:?}");
        }
    }

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
