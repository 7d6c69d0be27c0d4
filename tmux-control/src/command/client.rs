//! The control client itself and small server commands: `refresh-client`,
//! `wait-for`, `display-message`.
//!
//! (Longer than 600 lines with its doc examples and unit tests; the code
//! is one small builder per command of this family, kept together so the
//! family reads as one page.)

use bytes::Bytes;

use crate::command::format::{armour, escape_format, join_lines, unarmour};
use crate::command::target::write_opt;
use crate::command::{Command, CommandLine, Target, ok_body, unit};
use crate::error::{Error, Result};
use crate::ids::{PaneId, WindowId};
use crate::proto::Reply;
use crate::version::Version;

/// A client flag for [`RefreshClient::flags`] (control-mode.md §10).
///
/// ```
/// use tmux_control::command::{ClientFlag, CommandLine, RefreshClient};
/// let cmd = RefreshClient::flags([ClientFlag::PauseAfter(5)], [ClientFlag::NoOutput]);
/// assert_eq!(CommandLine::of(&cmd)?.to_string(), "refresh-client -f 'pause-after=5,!no-output'");
/// # Ok::<(), tmux_control::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ClientFlag {
    /// `no-output`: no pane output at all.
    NoOutput,
    /// `pause-after=N`: pause a pane whose output is more than N seconds
    /// behind, and use `%extended-output`. When clearing, the number is
    /// ignored.
    PauseAfter(u32),
    /// `wait-exit`: after `%exit`, wait for an empty line before exiting.
    WaitExit,
    /// `ignore-size`: the client never affects window sizes.
    IgnoreSize,
    /// `active-pane`: the client has its own active pane.
    ActivePane,
    /// `read-only`: the client may not type into panes. It cannot be
    /// cleared again by the same client, and it does not restrict commands
    /// sent in control mode.
    ReadOnly,
}

impl ClientFlag {
    fn set(self) -> String {
        match self {
            ClientFlag::PauseAfter(n) => format!("pause-after={n}"),
            other => other.name().to_owned(),
        }
    }

    fn name(self) -> &'static str {
        match self {
            ClientFlag::NoOutput => "no-output",
            ClientFlag::PauseAfter(_) => "pause-after",
            ClientFlag::WaitExit => "wait-exit",
            ClientFlag::IgnoreSize => "ignore-size",
            ClientFlag::ActivePane => "active-pane",
            ClientFlag::ReadOnly => "read-only",
        }
    }
}

/// How [`RefreshClient::pane_output`] switches a pane's output for this
/// client (`refresh-client -A`, control-mode.md §7.3). A followed pane's
/// output itself is a [`PaneOutput`](crate::PaneOutput).
///
/// ```
/// use tmux_control::command::{CommandLine, OutputSwitch, RefreshClient};
/// use tmux_control::PaneId;
/// let cmd = RefreshClient::pane_output(PaneId(3), OutputSwitch::Continue);
/// assert_eq!(CommandLine::of(&cmd)?.to_string(), "refresh-client -A '%3:continue'");
/// # Ok::<(), tmux_control::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OutputSwitch {
    /// `on`: send output again, from the pane's current position.
    On,
    /// `off`: stop sending the pane's output.
    Off,
    /// `pause`: pause as if `pause-after` had fired (`%pause`).
    Pause,
    /// `continue`: resume a paused pane (`%continue`); what it wrote while
    /// paused is lost.
    Continue,
}

impl OutputSwitch {
    fn as_str(self) -> &'static str {
        match self {
            OutputSwitch::On => "on",
            OutputSwitch::Off => "off",
            OutputSwitch::Pause => "pause",
            OutputSwitch::Continue => "continue",
        }
    }
}

/// What a format subscription ([`RefreshClient::subscribe`], `-B`)
/// watches. The notifications it produces reach the connection's
/// [`Subscription`](crate::Subscription)s as
/// [`Notification::SubscriptionChanged`](crate::proto::Notification::SubscriptionChanged).
///
/// ```
/// use tmux_control::command::{CommandLine, RefreshClient, SubscriptionScope};
/// let cmd = RefreshClient::subscribe("cmd", SubscriptionScope::AllPanes, "#{pane_current_command}")?;
/// assert_eq!(CommandLine::of(&cmd)?.to_string(), "refresh-client -B 'cmd:%*:#{pane_current_command}'");
/// # Ok::<(), tmux_control::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SubscriptionScope {
    /// The attached session (empty WHAT).
    Session,
    /// One pane (`%N`).
    Pane(PaneId),
    /// Every pane of the attached session (`%*`).
    AllPanes,
    /// One window (`@N`).
    Window(WindowId),
    /// Every window of the attached session (`@*`).
    AllWindows,
}

impl SubscriptionScope {
    fn what(self) -> String {
        match self {
            SubscriptionScope::Session => String::new(),
            SubscriptionScope::Pane(p) => p.to_string(),
            SubscriptionScope::AllPanes => "%*".into(),
            SubscriptionScope::Window(w) => w.to_string(),
            SubscriptionScope::AllWindows => "@*".into(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Refresh {
    Size(String),
    Flags(String),
    PaneOutput(Vec<(PaneId, OutputSwitch)>),
    Subscribe(Vec<u8>),
    Unsubscribe(String),
}

/// `refresh-client`: settings of this control client. One constructor per
/// kind of change, since tmux handles `-A` first and then ignores `-B` and
/// `-C` in the same command (control-mode.md §7.3).
///
/// A `refresh-client -A` reply may carry `%pause %N` / `%continue %N` lines
/// in its body on tmux 3.3a–3.7c; the connection re-emits those as
/// notifications, this command's output is `()`.
///
/// ```
/// use tmux_control::command::{CommandLine, RefreshClient};
/// use tmux_control::WindowId;
/// assert_eq!(CommandLine::of(&RefreshClient::size(120, 40))?.to_string(), "refresh-client -C 120x40");
/// let cmd = RefreshClient::window_size(WindowId(2), 80, 24);
/// assert_eq!(CommandLine::of(&cmd)?.to_string(), "refresh-client -C @2:80x24");
/// # Ok::<(), tmux_control::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefreshClient {
    refresh: Refresh,
}

impl RefreshClient {
    /// Sets the client's size (`-C WxH`); the windows of the attached
    /// session are resized according to `window-size`.
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, RefreshClient};
    /// assert_eq!(CommandLine::of(&RefreshClient::size(80, 24))?.to_string(), "refresh-client -C 80x24");
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn size(width: u32, height: u32) -> Self {
        Self {
            refresh: Refresh::Size(format!("{width}x{height}")),
        }
    }

    /// Sets the client's size for one window only (`-C @W:WxH`).
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, RefreshClient};
    /// use tmux_control::WindowId;
    /// let line = CommandLine::of(&RefreshClient::window_size(WindowId(0), 100, 30))?;
    /// assert_eq!(line.to_string(), "refresh-client -C @0:100x30");
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn window_size(window: WindowId, width: u32, height: u32) -> Self {
        Self {
            refresh: Refresh::Size(format!("{window}:{width}x{height}")),
        }
    }

    /// Clears a size set with [`window_size`](RefreshClient::window_size)
    /// (`-C @W:`).
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, RefreshClient};
    /// use tmux_control::WindowId;
    /// let line = CommandLine::of(&RefreshClient::clear_window_size(WindowId(0)))?;
    /// assert_eq!(line.to_string(), "refresh-client -C @0:");
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn clear_window_size(window: WindowId) -> Self {
        Self {
            refresh: Refresh::Size(format!("{window}:")),
        }
    }

    /// Sets and clears client flags (`-f 'a,!b'`). Encoding fails if both
    /// lists are empty.
    ///
    /// ```
    /// use tmux_control::command::{ClientFlag, CommandLine, RefreshClient};
    /// let cmd = RefreshClient::flags([ClientFlag::NoOutput], []);
    /// assert_eq!(CommandLine::of(&cmd)?.to_string(), "refresh-client -f 'no-output'");
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn flags(
        set: impl IntoIterator<Item = ClientFlag>,
        clear: impl IntoIterator<Item = ClientFlag>,
    ) -> Self {
        let list: Vec<String> = set
            .into_iter()
            .map(ClientFlag::set)
            .chain(clear.into_iter().map(|f| format!("!{}", f.name())))
            .collect();
        Self {
            refresh: Refresh::Flags(list.join(",")),
        }
    }

    /// Switches one pane's output for this client (`-A '%P:STATE'`).
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, OutputSwitch, RefreshClient};
    /// use tmux_control::PaneId;
    /// let line = CommandLine::of(&RefreshClient::pane_output(PaneId(1), OutputSwitch::Off))?;
    /// assert_eq!(line.to_string(), "refresh-client -A '%1:off'");
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn pane_output(pane: PaneId, state: OutputSwitch) -> Self {
        Self::pane_outputs([(pane, state)])
    }

    /// Switches several panes' output at once (`-A` repeated). Encoding
    /// fails if the list is empty.
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, OutputSwitch, RefreshClient};
    /// use tmux_control::PaneId;
    /// let cmd = RefreshClient::pane_outputs([(PaneId(1), OutputSwitch::On), (PaneId(2), OutputSwitch::Pause)]);
    /// assert_eq!(CommandLine::of(&cmd)?.to_string(), "refresh-client -A '%1:on' -A '%2:pause'");
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn pane_outputs(panes: impl IntoIterator<Item = (PaneId, OutputSwitch)>) -> Self {
        Self {
            refresh: Refresh::PaneOutput(panes.into_iter().collect()),
        }
    }

    /// Subscribes to a format (`-B 'NAME:WHAT:FORMAT'`): tmux evaluates it
    /// about once a second and sends `%subscription-changed` when the value
    /// changes. Re-subscribing with the same name replaces the subscription.
    ///
    /// `name` must be non-empty and contain no `:`, whitespace or control
    /// characters. Use formats whose values cannot contain a newline: tmux
    /// sends the value unescaped, and a newline breaks the notification
    /// line (control-mode.md §8).
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, RefreshClient, SubscriptionScope};
    /// use tmux_control::PaneId;
    /// let cmd = RefreshClient::subscribe("dead", SubscriptionScope::Pane(PaneId(4)), "#{pane_dead}")?;
    /// assert_eq!(CommandLine::of(&cmd)?.to_string(), "refresh-client -B 'dead:%4:#{pane_dead}'");
    /// assert!(RefreshClient::subscribe("a:b", SubscriptionScope::Session, "x").is_err());
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn subscribe(
        name: &str,
        what: SubscriptionScope,
        format: impl AsRef<[u8]>,
    ) -> Result<Self> {
        check_subscription_name(name)?;
        let mut spec = format!("{name}:{}:", what.what()).into_bytes();
        spec.extend_from_slice(format.as_ref());
        Ok(Self {
            refresh: Refresh::Subscribe(spec),
        })
    }

    /// Removes the subscription `name` (`-B NAME`).
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, RefreshClient};
    /// assert_eq!(CommandLine::of(&RefreshClient::unsubscribe("dead")?)?.to_string(), "refresh-client -B 'dead'");
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn unsubscribe(name: &str) -> Result<Self> {
        check_subscription_name(name)?;
        Ok(Self {
            refresh: Refresh::Unsubscribe(name.to_owned()),
        })
    }
}

fn check_subscription_name(name: &str) -> Result<()> {
    if name.is_empty()
        || name
            .chars()
            .any(|c| c == ':' || c.is_whitespace() || c.is_control())
    {
        return Err(Error::InvalidArgument(format!(
            "{name:?} is not a subscription name (non-empty, no `:`, whitespace or control characters)"
        )));
    }
    Ok(())
}

impl Command for RefreshClient {
    type Output = ();

    const NAME: &'static str = "refresh-client";

    fn encode(&self, line: &mut CommandLine) -> Result<()> {
        line.word(Self::NAME)?;
        match &self.refresh {
            Refresh::Size(spec) => {
                line.word("-C")?.word(spec)?;
            }
            Refresh::Flags(list) => {
                if list.is_empty() {
                    return Err(Error::InvalidArgument(
                        "refresh-client -f needs at least one flag".into(),
                    ));
                }
                line.flag_arg("-f", list)?;
            }
            Refresh::PaneOutput(panes) => {
                if panes.is_empty() {
                    return Err(Error::InvalidArgument(
                        "refresh-client -A needs at least one pane".into(),
                    ));
                }
                for (pane, state) in panes {
                    line.flag_arg("-A", format!("{pane}:{}", state.as_str()))?;
                }
            }
            Refresh::Subscribe(spec) => {
                line.flag_arg("-B", spec)?;
            }
            Refresh::Unsubscribe(name) => {
                line.flag_arg("-B", name)?;
            }
        }
        Ok(())
    }

    fn parse(self, reply: Reply, _version: &Version) -> Result<()> {
        unit(Self::NAME, reply)
    }
}

/// `wait-for`: signal, lock or wait on a named channel.
///
/// **[`wait`](WaitFor::wait) blocks this connection's whole command queue**
/// until another client signals the channel: tmux answers `%end` at once,
/// then runs no further command from this client (every later request,
/// from any task, waits) until `wait-for -S CHANNEL` comes from elsewhere. If
/// nobody ever signals, the connection is stuck. Likewise
/// [`lock`](WaitFor::lock) blocks the queue while another client holds the
/// lock. [`signal`](WaitFor::signal) and [`unlock`](WaitFor::unlock) never
/// block.
///
/// ```
/// use tmux_control::command::{CommandLine, WaitFor};
/// assert_eq!(CommandLine::of(&WaitFor::signal("build-done"))?.to_string(), "wait-for -S -- 'build-done'");
/// # Ok::<(), tmux_control::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WaitFor {
    flag: Option<&'static str>,
    channel: Vec<u8>,
}

impl WaitFor {
    /// Wakes every client waiting on `channel` (`-S`). Never blocks.
    ///
    /// ```
    /// use tmux_control::command::{Command, WaitFor};
    /// assert_eq!(WaitFor::signal("x").name(), "wait-for");
    /// ```
    pub fn signal(channel: impl AsRef<[u8]>) -> Self {
        Self::with(Some("-S"), channel)
    }

    /// Takes the lock `channel` (`-L`); **blocks this connection's command
    /// queue** while another client holds it.
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, WaitFor};
    /// assert_eq!(CommandLine::of(&WaitFor::lock("l"))?.to_string(), "wait-for -L -- 'l'");
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn lock(channel: impl AsRef<[u8]>) -> Self {
        Self::with(Some("-L"), channel)
    }

    /// Releases the lock `channel` (`-U`).
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, WaitFor};
    /// assert_eq!(CommandLine::of(&WaitFor::unlock("l"))?.to_string(), "wait-for -U -- 'l'");
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn unlock(channel: impl AsRef<[u8]>) -> Self {
        Self::with(Some("-U"), channel)
    }

    /// Waits until `channel` is signalled. **Blocks this connection's whole
    /// command queue** until then (see the type's documentation); only use
    /// it on a connection dedicated to waiting.
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, WaitFor};
    /// assert_eq!(CommandLine::of(&WaitFor::wait("ch"))?.to_string(), "wait-for -- 'ch'");
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn wait(channel: impl AsRef<[u8]>) -> Self {
        Self::with(None, channel)
    }

    fn with(flag: Option<&'static str>, channel: impl AsRef<[u8]>) -> Self {
        Self {
            flag,
            channel: channel.as_ref().to_vec(),
        }
    }
}

impl Command for WaitFor {
    type Output = ();

    const NAME: &'static str = "wait-for";

    fn encode(&self, line: &mut CommandLine) -> Result<()> {
        line.word(Self::NAME)?;
        if let Some(flag) = self.flag {
            line.word(flag)?;
        }
        line.end_of_flags().arg(&self.channel)?;
        Ok(())
    }

    fn parse(self, reply: Reply, _version: &Version) -> Result<()> {
        unit(Self::NAME, reply)
    }
}

/// `display-message -p`: expands a tmux format and returns the text.
///
/// [`format`](DisplayMessage::format) passes a format as is (`#{…}` is
/// expanded, and `display-message` also runs it through `strftime`, so `%`
/// sequences are dates); [`literal`](DisplayMessage::literal) escapes text so
/// that it comes back unchanged. Lines of the result are joined with LF.
/// The result is exact on every tmux version: on 3.4 and 3.5, which escape
/// reply lines in a way that loses information, the format is wrapped so
/// that the reply can be decoded exactly.
///
/// ```
/// use tmux_control::command::{CommandLine, DisplayMessage};
/// use tmux_control::PaneId;
/// let cmd = DisplayMessage::format("#{pane_current_command}").target(PaneId(2));
/// assert_eq!(CommandLine::of(&cmd)?.to_string(), "display-message -p -t %2 -- '#{pane_current_command}'");
/// let cmd = DisplayMessage::literal("100% #1");
/// assert_eq!(CommandLine::of(&cmd)?.to_string(), "display-message -p -- '100%% ##1'");
/// # Ok::<(), tmux_control::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DisplayMessage {
    message: Vec<u8>,
    /// `message` is text to return unchanged, not a format.
    literal: bool,
    target: Option<Target>,
}

impl DisplayMessage {
    /// Expands the tmux format `format`.
    ///
    /// ```
    /// use tmux_control::command::{Command, DisplayMessage};
    /// assert_eq!(DisplayMessage::format("#{session_name}").name(), "display-message");
    /// ```
    pub fn format(format: impl AsRef<[u8]>) -> Self {
        Self {
            message: format.as_ref().to_vec(),
            literal: false,
            target: None,
        }
    }

    /// Returns `text` unchanged: `#` and `%` are escaped for format
    /// expansion and `strftime`.
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, DisplayMessage};
    /// let line = CommandLine::of(&DisplayMessage::literal("#[bold]"))?;
    /// assert_eq!(line.to_string(), "display-message -p -- '#{l:#[}bold]'");
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn literal(text: impl AsRef<[u8]>) -> Self {
        Self {
            message: text.as_ref().to_vec(),
            literal: true,
            target: None,
        }
    }

    /// The pane (or window, session) whose values the format sees (`-t`).
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, DisplayMessage};
    /// use tmux_control::PaneId;
    /// let line = CommandLine::of(&DisplayMessage::format("#{pane_pid}").target(PaneId(0)))?;
    /// assert_eq!(line.to_string(), "display-message -p -t %0 -- '#{pane_pid}'");
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn target(mut self, target: impl Into<Target>) -> Self {
        self.target = Some(target.into());
        self
    }
}

impl Command for DisplayMessage {
    type Output = Bytes;

    const NAME: &'static str = "display-message";

    fn encode(&self, line: &mut CommandLine) -> Result<()> {
        let message = if self.literal {
            // `strftime` turns `%%` into `%`. Inside the wrapper of
            // `armour` (3.4, 3.5) tmux expands the time twice, so each `%`
            // is written four times there.
            let copies = if line.version().escapes_replies() {
                4
            } else {
                2
            };
            let mut escaped = Vec::with_capacity(self.message.len() + 8);
            for &b in &self.message {
                let n = if b == b'%' { copies } else { 1 };
                escaped.extend(std::iter::repeat_n(b, n));
            }
            armour(line.version(), &escape_format(&escaped))
        } else {
            armour(line.version(), &self.message)
        };
        line.word(Self::NAME)?.word("-p")?;
        write_opt(self.target.as_ref(), line)?;
        line.end_of_flags().arg(message)?;
        Ok(())
    }

    fn parse(self, reply: Reply, version: &Version) -> Result<Bytes> {
        let text = join_lines(&ok_body(Self::NAME, reply)?);
        Ok(Bytes::from(unarmour(version, &text)))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::command::test_util::*;

    #[test]
    fn refresh_client_lines() {
        assert_eq!(
            line(&RefreshClient::flags(
                [
                    ClientFlag::WaitExit,
                    ClientFlag::IgnoreSize,
                    ClientFlag::ActivePane,
                    ClientFlag::ReadOnly
                ],
                [ClientFlag::PauseAfter(3)]
            )),
            "refresh-client -f 'wait-exit,ignore-size,active-pane,read-only,!pause-after'"
        );
        assert!(matches!(
            CommandLine::of(&RefreshClient::flags([], [])),
            Err(Error::InvalidArgument(_))
        ));
        assert!(matches!(
            CommandLine::of(&RefreshClient::pane_outputs([])),
            Err(Error::InvalidArgument(_))
        ));
        assert_eq!(
            line(
                &RefreshClient::subscribe("s", SubscriptionScope::Session, "#{session_name}")
                    .unwrap()
            ),
            "refresh-client -B 's::#{session_name}'"
        );
        assert_eq!(
            line(
                &RefreshClient::subscribe("w", SubscriptionScope::Window(WindowId(1)), "a:b;c")
                    .unwrap()
            ),
            "refresh-client -B 'w:@1:a:b;c'"
        );
        assert_eq!(
            line(&RefreshClient::subscribe("w", SubscriptionScope::AllWindows, "x").unwrap()),
            "refresh-client -B 'w:@*:x'"
        );
        for bad in ["", "a b", "a:b", "a\tb", "x\n"] {
            assert!(
                RefreshClient::subscribe(bad, SubscriptionScope::Session, "x").is_err(),
                "{bad:?}"
            );
            assert!(RefreshClient::unsubscribe(bad).is_err());
        }
        // The body of a `-A` reply may hold `%continue` lines; still Ok(()).
        RefreshClient::pane_output(PaneId(0), OutputSwitch::Continue)
            .parse(ok(&[b"%continue %0"]), &Version::OLDEST_SUPPORTED)
            .unwrap();
        assert_command_error(
            RefreshClient::size(0, 0)
                .parse(err("size too small or too big"), &Version::OLDEST_SUPPORTED),
            "refresh-client",
        );
    }

    #[test]
    fn wait_for_lines() {
        assert_eq!(line(&WaitFor::signal("-x")), "wait-for -S -- '-x'");
        assert_eq!(line(&WaitFor::wait("a;b")), "wait-for -- 'a;b'");
        WaitFor::unlock("x")
            .parse(ok(&[]), &Version::OLDEST_SUPPORTED)
            .unwrap();
    }

    #[test]
    fn display_message() {
        assert_eq!(
            line(&DisplayMessage::literal("%H #{x} ##[ a\nb")),
            r#"display-message -p -- '%%H ##{x} ###{l:#[} a'"\012"'b'"#
        );
        assert_eq!(
            line(&DisplayMessage::format("-x")),
            "display-message -p -- '-x'"
        );
        let out = DisplayMessage::format("x")
            .parse(ok(&[b"line1", b"line2"]), &Version::OLDEST_SUPPORTED)
            .unwrap();
        assert_eq!(&out[..], b"line1\nline2");
        assert_command_error(
            DisplayMessage::format("x").parse(err("bad"), &Version::OLDEST_SUPPORTED),
            "display-message",
        );
    }
}
