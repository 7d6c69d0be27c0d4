//! The escape hatch: any tmux command, every argument quoted.

use bytes::Bytes;

use crate::command::{Command, CommandLine, ok_body};
use crate::error::{Error, Result};
use crate::proto::Reply;
use crate::version::Version;

/// Every tmux command (3.3a to 3.7c) with its alias, in tmux's table order,
/// to resolve names the way tmux does: an exact alias, else an exact name,
/// else a unique prefix of a name.
const COMMANDS: &[(&str, Option<&str>)] = &[
    ("attach-session", Some("attach")),
    ("bind-key", Some("bind")),
    ("break-pane", Some("breakp")),
    ("capture-pane", Some("capturep")),
    ("choose-buffer", None),
    ("choose-client", None),
    ("choose-tree", None),
    ("clear-history", Some("clearhist")),
    ("clear-prompt-history", Some("clearphist")),
    ("clock-mode", None),
    ("command-prompt", None),
    ("confirm-before", Some("confirm")),
    ("copy-mode", None),
    ("customize-mode", None),
    ("delete-buffer", Some("deleteb")),
    ("detach-client", Some("detach")),
    ("display-menu", Some("menu")),
    ("display-message", Some("display")),
    ("display-panes", Some("displayp")),
    ("display-popup", Some("popup")),
    ("find-window", Some("findw")),
    ("has-session", Some("has")),
    ("if-shell", Some("if")),
    ("join-pane", Some("joinp")),
    ("kill-pane", Some("killp")),
    ("kill-server", None),
    ("kill-session", None),
    ("kill-window", Some("killw")),
    ("last-pane", Some("lastp")),
    ("last-window", Some("last")),
    ("link-window", Some("linkw")),
    ("list-buffers", Some("lsb")),
    ("list-clients", Some("lsc")),
    ("list-commands", Some("lscm")),
    ("list-keys", Some("lsk")),
    ("list-panes", Some("lsp")),
    ("list-sessions", Some("ls")),
    ("list-windows", Some("lsw")),
    ("load-buffer", Some("loadb")),
    ("lock-client", Some("lockc")),
    ("lock-server", Some("lock")),
    ("lock-session", Some("locks")),
    ("move-pane", Some("movep")),
    ("move-window", Some("movew")),
    ("new-pane", Some("newp")),
    ("new-session", Some("new")),
    ("new-window", Some("neww")),
    ("next-layout", Some("nextl")),
    ("next-window", Some("next")),
    ("paste-buffer", Some("pasteb")),
    ("pipe-pane", Some("pipep")),
    ("previous-layout", Some("prevl")),
    ("previous-window", Some("prev")),
    ("refresh-client", Some("refresh")),
    ("rename-session", Some("rename")),
    ("rename-window", Some("renamew")),
    ("resize-pane", Some("resizep")),
    ("resize-window", Some("resizew")),
    ("respawn-pane", Some("respawnp")),
    ("respawn-window", Some("respawnw")),
    ("rotate-window", Some("rotatew")),
    ("run-shell", Some("run")),
    ("save-buffer", Some("saveb")),
    ("select-layout", Some("selectl")),
    ("select-pane", Some("selectp")),
    ("select-window", Some("selectw")),
    ("send-keys", Some("send")),
    ("send-prefix", None),
    ("server-access", None),
    ("set-buffer", Some("setb")),
    ("set-environment", Some("setenv")),
    ("set-hook", None),
    ("set-option", Some("set")),
    ("set-window-option", Some("setw")),
    ("show-buffer", Some("showb")),
    ("show-environment", Some("showenv")),
    ("show-hooks", None),
    ("show-messages", Some("showmsgs")),
    ("show-options", Some("show")),
    ("show-prompt-history", Some("showphist")),
    ("show-window-options", Some("showw")),
    ("source-file", Some("source")),
    ("split-window", Some("splitw")),
    ("start-server", Some("start")),
    ("suspend-client", Some("suspendc")),
    ("swap-pane", Some("swapp")),
    ("swap-window", Some("swapw")),
    ("switch-client", Some("switchc")),
    ("unbind-key", Some("unbind")),
    ("unlink-window", Some("unlinkw")),
    ("wait-for", Some("wait")),
];

/// The commands tmux could run for `name`: one for an alias, an exact name
/// or a unique prefix; several for an ambiguous prefix; none if unknown.
fn resolve(name: &str) -> Vec<&'static str> {
    if let Some((full, _)) = COMMANDS.iter().find(|(_, alias)| *alias == Some(name)) {
        return vec![full];
    }
    if let Some((full, _)) = COMMANDS.iter().find(|(full, _)| *full == name) {
        return vec![full];
    }
    COMMANDS
        .iter()
        .filter(|(full, _)| full.starts_with(name))
        .map(|(full, _)| *full)
        .collect()
}

/// The flags among `args` as tmux's argument parser sees them, given the
/// command's flag template (`"Ac:d"`: `c` takes a value).
fn flags(args: &[Vec<u8>], template: &[u8]) -> Vec<u8> {
    let mut found = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        if arg.len() < 2 || arg[0] != b'-' {
            break;
        }
        i += 1;
        if arg.as_slice() == b"--" {
            break;
        }
        for (k, &flag) in arg[1..].iter().enumerate() {
            found.push(flag);
            let takes_value = template
                .iter()
                .position(|&t| t == flag)
                .is_some_and(|p| template.get(p + 1) == Some(&b':'));
            if takes_value {
                if k + 2 == arg.len() {
                    // The value is the next argument.
                    i += 1;
                }
                break;
            }
        }
    }
    found
}

/// Why `command` (a full tmux command name) may not go through [`Raw`].
fn refusal(command: &str, args: &[Vec<u8>]) -> Option<&'static str> {
    match command {
        "if-shell" => Some(
            "it runs further commands, each with its own reply block, possibly after \
             waiting for a shell command",
        ),
        "source-file" => Some(
            "it runs the file's commands, each with its own reply block, and reports some \
             errors outside any block",
        ),
        "confirm-before" | "command-prompt" => Some(
            "it waits for input on a terminal client and then runs commands with extra reply blocks",
        ),
        "display-menu" | "display-popup" => {
            Some("it needs a terminal client and runs commands later, outside this request")
        }
        "display-panes" => {
            Some("it waits for a key press on a terminal client and then runs a command")
        }
        "run-shell" => Some(
            "it blocks the client's command queue until the shell command ends, and its \
             output arrives outside any reply block",
        ),
        "wait-for" if !flags(args, b"LSU").iter().any(|f| b"LSU".contains(f)) => Some(
            "a plain wait-for blocks the client's whole command queue until another client \
             signals the channel; use WaitFor::wait on a dedicated connection if you mean it",
        ),
        "attach-session" | "switch-client" => {
            Some("it would change the session this control connection is attached to")
        }
        "new-session" => {
            let f = flags(args, b"Ac:dDe:EF:f:n:Ps:t:x:Xy:");
            if f.contains(&b'A') {
                Some("new-session -A may attach this control connection to an existing session")
            } else if !f.contains(&b'd') {
                Some(
                    "new-session without -d would switch this control connection to the new \
                     session; use NewSession, which always passes -d",
                )
            } else {
                None
            }
        }
        _ => None,
    }
}

/// Any tmux command, for what the typed commands do not cover: a command
/// name and a list of arguments, each quoted so that tmux reads it exactly.
/// The output is the reply's body lines, raw.
///
/// The name must be a bare word (`list-clients`, an alias like `lsc`, or a
/// prefix tmux accepts). Commands that would break the connection's
/// one-request-one-reply rule are refused with [`Error::InvalidArgument`]
/// when encoding: `if-shell`, `source-file`, `confirm-before`,
/// `command-prompt`, `display-menu`, `display-popup`, `display-panes` and
/// `run-shell` (extra reply blocks, output outside blocks, or a blocked
/// queue), `wait-for` without `-S`/`-L`/`-U` (blocks the queue), and
/// `attach-session`, `switch-client` and `new-session` without `-d` or with
/// `-A` (they would move the connection to another session). Aliases and
/// unique prefixes of these names are refused as well.
///
/// Arguments are not escaped for format expansion: pass formats as you want
/// tmux to see them.
///
/// ```
/// use tmux_control::command::{CommandLine, Raw};
/// let cmd = Raw::new("list-clients").arg("-F").arg("#{client_name} #{client_flags}");
/// assert_eq!(CommandLine::of(&cmd)?.to_string(), "list-clients '-F' '#{client_name} #{client_flags}'");
///
/// let err = CommandLine::of(&Raw::new("if").args(["-F", "1", "kill-server"])).unwrap_err();
/// assert!(err.to_string().contains("reply block"));
/// assert!(CommandLine::of(&Raw::new("wait-for").arg("chan")).is_err());
/// assert!(CommandLine::of(&Raw::new("wait-for").args(["-S", "chan"])).is_ok());
/// # Ok::<(), tmux_control::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Raw {
    command: String,
    args: Vec<Vec<u8>>,
}

impl Raw {
    /// The command `name`, without arguments yet.
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, Raw};
    /// assert_eq!(CommandLine::of(&Raw::new("list-commands"))?.to_string(), "list-commands");
    /// assert!(CommandLine::of(&Raw::new("bad name")).is_err());
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            command: name.into(),
            args: Vec::new(),
        }
    }

    /// Appends one argument.
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, Raw};
    /// let cmd = Raw::new("select-layout").arg("-t").arg("@1").arg("tiled");
    /// assert_eq!(CommandLine::of(&cmd)?.to_string(), "select-layout '-t' '@1' 'tiled'");
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn arg(mut self, arg: impl AsRef<[u8]>) -> Self {
        self.args.push(arg.as_ref().to_vec());
        self
    }

    /// Appends several arguments.
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, Raw};
    /// let cmd = Raw::new("pipe-pane").args(["-t", "%1", "cat >> /tmp/log"]);
    /// assert_eq!(CommandLine::of(&cmd)?.to_string(), "pipe-pane '-t' '%1' 'cat >> /tmp/log'");
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn args<A: AsRef<[u8]>>(mut self, args: impl IntoIterator<Item = A>) -> Self {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_vec()));
        self
    }
}

impl Command for Raw {
    type Output = Vec<Bytes>;

    /// A placeholder: the command is chosen at run time, and
    /// [`Raw::name`](Command::name) says which one it is.
    const NAME: &'static str = "raw";

    /// The full tmux name of the command, or `"raw"` when this library does
    /// not know it (or the prefix is ambiguous).
    fn name(&self) -> &'static str {
        match resolve(&self.command).as_slice() {
            [one] => one,
            _ => Self::NAME,
        }
    }

    fn encode(&self, line: &mut CommandLine) -> Result<()> {
        let lowercase_word = !self.command.is_empty()
            && self
                .command
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b == b'-');
        if !lowercase_word {
            return Err(Error::InvalidArgument(format!(
                "{:?} is not a tmux command name (lower-case letters and `-`)",
                self.command
            )));
        }
        for full in resolve(&self.command) {
            if let Some(why) = refusal(full, &self.args) {
                return Err(Error::InvalidArgument(format!(
                    "`{}` ({full}) cannot be sent as a raw command: {why}",
                    self.command
                )));
            }
        }
        line.word(&self.command)?;
        for arg in &self.args {
            line.arg(arg)?;
        }
        Ok(())
    }

    fn parse(self, reply: Reply, _version: &Version) -> Result<Vec<Bytes>> {
        ok_body(self.name(), reply)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::command::test_util::*;

    fn refused(cmd: Raw) -> bool {
        matches!(CommandLine::of(&cmd), Err(Error::InvalidArgument(_)))
    }

    #[test]
    fn resolves_like_tmux() {
        assert_eq!(resolve("display"), vec!["display-message"]);
        assert_eq!(resolve("lsp"), vec!["list-panes"]);
        assert_eq!(resolve("kill-session"), vec!["kill-session"]);
        assert_eq!(resolve("source-f"), vec!["source-file"]);
        assert_eq!(
            resolve("display-m"),
            vec!["display-menu", "display-message"]
        );
        assert!(resolve("nope").is_empty());
    }

    #[test]
    fn refuses_block_changing_commands() {
        for name in [
            "if-shell",
            "if",
            "if-sh",
            "source-file",
            "source",
            "sour",
            "confirm-before",
            "confirm",
            "command-prompt",
            "command",
            "display-menu",
            "menu",
            "display-m",
            "display-popup",
            "popup",
            "display-panes",
            "displayp",
            "run-shell",
            "run",
            "run-s",
            "attach-session",
            "attach",
            "switch-client",
            "switchc",
            "wait-for",
            "wait",
            "new-session",
            "new",
        ] {
            assert!(refused(Raw::new(name)), "{name}");
        }
        assert!(refused(Raw::new("wait").args(["--", "-S"])));
        assert!(refused(Raw::new("new-session").args(["-s", "-d"])));
        assert!(refused(Raw::new("new-session").args(["-dA"])));
        assert!(refused(Raw::new("new").args(["-d", "-A"])));
        assert!(refused(Raw::new("Has-session")));
        assert!(refused(Raw::new("")));
        assert!(!refused(Raw::new("wait-for").args(["-L", "x"])));
        assert!(!refused(Raw::new("wait").args(["-U", "x"])));
        assert!(!refused(Raw::new("new-session").args(["-s", "x", "-d"])));
        assert!(!refused(Raw::new("new").args(["-ds", "x"])));
        assert!(!refused(Raw::new("new").args(["-Pd"])));
        assert!(!refused(Raw::new("display")));
        assert!(!refused(Raw::new("display-message").args(["-p", "x"])));
        assert!(!refused(Raw::new("some-future-command")));
    }

    #[test]
    fn raw_lines_and_output() {
        assert_eq!(
            line(&Raw::new("send-keys").args(["-t", "%0", "a;b", "", "\n"])),
            r#"send-keys '-t' '%0' 'a;b' '' "\012""#
        );
        assert!(CommandLine::of(&Raw::new("x").arg("a\0")).is_err());
        assert_eq!(Raw::new("lsc").name(), "list-clients");
        assert_eq!(Raw::new("future").name(), "raw");
        let out = Raw::new("list-clients")
            .parse(ok(&[b"a", b"%b"]), &Version::OLDEST_SUPPORTED)
            .unwrap();
        assert_eq!(out, vec![Bytes::from("a"), Bytes::from("%b")]);
        assert_command_error(
            Raw::new("bogus").parse(err("unknown command: bogus"), &Version::OLDEST_SUPPORTED),
            "raw",
        );
    }
}
