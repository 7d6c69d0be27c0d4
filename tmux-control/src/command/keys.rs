//! `send-keys`: literal text, named keys and raw bytes.
//!
//! (Longer than 600 lines with its doc examples and unit tests; the code
//! is one small builder per command of this family, kept together so the
//! family reads as one page.)

use std::fmt;
use std::str::FromStr;

use crate::command::{Command, CommandLine, Target, unit};
use crate::error::{Error, Result};
use crate::proto::Reply;
use crate::version::Version;

/// A named key that tmux understands in `send-keys`.
///
/// These are the names every tmux from 3.0 on accepts; [`NamedKey::as_str`]
/// is the spelling sent (tmux's oldest alias where there are several, so
/// `PPage` for Page Up). Combine with modifiers through [`Key`].
///
/// ```
/// use tmux_control::command::{Key, NamedKey};
/// assert_eq!(NamedKey::PageUp.as_str(), "PPage");
/// assert_eq!(Key::from(NamedKey::F5).to_string(), "F5");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum NamedKey {
    /// `Enter` (sends CR).
    Enter,
    /// `Escape`.
    Escape,
    /// `Tab`.
    Tab,
    /// `BTab`: Shift-Tab.
    BackTab,
    /// `Space`.
    Space,
    /// `BSpace`: Backspace.
    Backspace,
    /// `Up`.
    Up,
    /// `Down`.
    Down,
    /// `Left`.
    Left,
    /// `Right`.
    Right,
    /// `Home`.
    Home,
    /// `End`.
    End,
    /// `PPage` (also accepted as `PageUp`, `PgUp`).
    PageUp,
    /// `NPage` (also accepted as `PageDown`, `PgDn`).
    PageDown,
    /// `IC` (also accepted as `Insert`).
    Insert,
    /// `DC` (also accepted as `Delete`).
    Delete,
    /// `F1`.
    F1,
    /// `F2`.
    F2,
    /// `F3`.
    F3,
    /// `F4`.
    F4,
    /// `F5`.
    F5,
    /// `F6`.
    F6,
    /// `F7`.
    F7,
    /// `F8`.
    F8,
    /// `F9`.
    F9,
    /// `F10`.
    F10,
    /// `F11`.
    F11,
    /// `F12`.
    F12,
}

/// Every named key with the spellings [`Key::from_str`] accepts; the first
/// spelling is the one sent.
const NAMES: &[(NamedKey, &[&str])] = &[
    (NamedKey::Enter, &["Enter"]),
    (NamedKey::Escape, &["Escape"]),
    (NamedKey::Tab, &["Tab"]),
    (NamedKey::BackTab, &["BTab"]),
    (NamedKey::Space, &["Space"]),
    (NamedKey::Backspace, &["BSpace"]),
    (NamedKey::Up, &["Up"]),
    (NamedKey::Down, &["Down"]),
    (NamedKey::Left, &["Left"]),
    (NamedKey::Right, &["Right"]),
    (NamedKey::Home, &["Home"]),
    (NamedKey::End, &["End"]),
    (NamedKey::PageUp, &["PPage", "PageUp", "PgUp"]),
    (NamedKey::PageDown, &["NPage", "PageDown", "PgDn"]),
    (NamedKey::Insert, &["IC", "Insert"]),
    (NamedKey::Delete, &["DC", "Delete"]),
    (NamedKey::F1, &["F1"]),
    (NamedKey::F2, &["F2"]),
    (NamedKey::F3, &["F3"]),
    (NamedKey::F4, &["F4"]),
    (NamedKey::F5, &["F5"]),
    (NamedKey::F6, &["F6"]),
    (NamedKey::F7, &["F7"]),
    (NamedKey::F8, &["F8"]),
    (NamedKey::F9, &["F9"]),
    (NamedKey::F10, &["F10"]),
    (NamedKey::F11, &["F11"]),
    (NamedKey::F12, &["F12"]),
];

impl NamedKey {
    /// The name sent to tmux.
    ///
    /// ```
    /// use tmux_control::command::NamedKey;
    /// assert_eq!(NamedKey::Backspace.as_str(), "BSpace");
    /// ```
    pub fn as_str(self) -> &'static str {
        NAMES
            .iter()
            .find(|(k, _)| *k == self)
            .and_then(|(_, names)| names.first())
            .copied()
            .unwrap_or("")
    }

    /// Every named key, in a fixed order.
    ///
    /// ```
    /// use tmux_control::command::NamedKey;
    /// assert!(NamedKey::all().any(|k| k == NamedKey::F12));
    /// ```
    pub fn all() -> impl Iterator<Item = NamedKey> {
        NAMES.iter().map(|(k, _)| *k)
    }

    fn lookup(name: &str) -> Option<NamedKey> {
        NAMES
            .iter()
            .find(|(_, names)| names.iter().any(|n| n.eq_ignore_ascii_case(name)))
            .map(|(k, _)| *k)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Base {
    Named(NamedKey),
    Char(char),
}

/// One key for [`SendKeys::keys`], always one that tmux recognises as a key.
///
/// tmux's `send-keys` types an argument that is not a key name as literal
/// text (`send-keys Entr` types `Entr`), so a key is only ever built from a
/// [`NamedKey`] or a single printable character, with Ctrl (`C-`), Meta/Alt
/// (`M-`) and Shift (`S-`) modifiers. Ctrl with a character is limited to
/// the characters for which tmux 3.3a and later send a control byte:
/// letters, space, `@ 2 [ \ ] ^ 6 _ - / ?`. (tmux accepts other names
/// such as `C-1` or `C-!` but sends nothing for them, so the key would be
/// lost; send such bytes with [`SendKeys::hex`].)
///
/// ```
/// use tmux_control::command::{Key, NamedKey};
/// assert_eq!(Key::ctrl('c')?.to_string(), "C-c");
/// assert_eq!(Key::meta('x')?.to_string(), "M-x");
/// assert_eq!(Key::from(NamedKey::Up).with_shift().to_string(), "S-Up");
/// assert_eq!("c-m-A".parse::<Key>()?.to_string(), "C-M-a");
/// assert_eq!("pageup".parse::<Key>()?, Key::from(NamedKey::PageUp));
/// assert!("Entr".parse::<Key>().is_err());
/// assert!(Key::ctrl('"').is_err());
/// # Ok::<(), tmux_control::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Key {
    base: Base,
    ctrl: bool,
    meta: bool,
    shift: bool,
}

impl Key {
    /// `Enter`.
    pub const ENTER: Key = Key::named(NamedKey::Enter);
    /// `Escape`.
    pub const ESCAPE: Key = Key::named(NamedKey::Escape);
    /// `Tab`.
    pub const TAB: Key = Key::named(NamedKey::Tab);
    /// `BSpace`.
    pub const BACKSPACE: Key = Key::named(NamedKey::Backspace);
    /// `Space`.
    pub const SPACE: Key = Key::named(NamedKey::Space);
    /// `Up`.
    pub const UP: Key = Key::named(NamedKey::Up);
    /// `Down`.
    pub const DOWN: Key = Key::named(NamedKey::Down);
    /// `Left`.
    pub const LEFT: Key = Key::named(NamedKey::Left);
    /// `Right`.
    pub const RIGHT: Key = Key::named(NamedKey::Right);

    /// A named key without modifiers.
    ///
    /// ```
    /// use tmux_control::command::{Key, NamedKey};
    /// assert_eq!(Key::named(NamedKey::Escape), Key::ESCAPE);
    /// ```
    pub const fn named(key: NamedKey) -> Key {
        Key {
            base: Base::Named(key),
            ctrl: false,
            meta: false,
            shift: false,
        }
    }

    /// A single printable character (not a control character).
    ///
    /// ```
    /// use tmux_control::command::Key;
    /// assert_eq!(Key::char('é')?.to_string(), "é");
    /// assert_eq!(Key::char(' ')?.to_string(), "Space");
    /// assert!(Key::char('\n').is_err());
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn char(c: char) -> Result<Key> {
        if c.is_control() {
            return Err(Error::InvalidArgument(format!(
                "{c:?} is a control character, not a key; use a NamedKey, Key::ctrl or SendKeys::hex"
            )));
        }
        if c == ' ' {
            return Ok(Key::SPACE);
        }
        Ok(Key {
            base: Base::Char(c),
            ctrl: false,
            meta: false,
            shift: false,
        })
    }

    /// Ctrl and a character: `C-c`. Letters are sent in lower case
    /// (`C-A` is `C-a`).
    ///
    /// ```
    /// use tmux_control::command::Key;
    /// assert_eq!(Key::ctrl('D')?.to_string(), "C-d");
    /// assert!(Key::ctrl('$').is_err());
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn ctrl(c: char) -> Result<Key> {
        Key::char(c)?.with_ctrl()
    }

    /// Meta (Alt) and a character: `M-x`.
    ///
    /// ```
    /// use tmux_control::command::Key;
    /// assert_eq!(Key::meta('b')?.to_string(), "M-b");
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn meta(c: char) -> Result<Key> {
        Ok(Key::char(c)?.with_meta())
    }

    /// Adds Ctrl. Fails for a character for which tmux sends no control
    /// byte (see the type's documentation).
    ///
    /// ```
    /// use tmux_control::command::Key;
    /// assert_eq!(Key::ENTER.with_ctrl()?.to_string(), "C-Enter");
    /// assert_eq!(Key::SPACE.with_ctrl()?.to_string(), "C-Space");
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn with_ctrl(mut self) -> Result<Key> {
        if let Base::Char(c) = self.base {
            let c = c.to_ascii_lowercase();
            // The characters tmux 3.3a turns into a control byte; for the
            // others it reports success but sends nothing (checked in
            // tests/commands.rs against real tmux).
            let ok = c.is_ascii_lowercase() || "@2[\\]^6_-/?".contains(c);
            if !ok {
                return Err(Error::InvalidArgument(format!(
                    "tmux sends nothing for C-{c}; \
                     send the byte you mean with SendKeys::hex instead"
                )));
            }
            self.base = Base::Char(c);
        }
        self.ctrl = true;
        Ok(self)
    }

    /// Adds Meta (Alt).
    ///
    /// ```
    /// use tmux_control::command::Key;
    /// assert_eq!(Key::LEFT.with_meta().to_string(), "M-Left");
    /// ```
    pub fn with_meta(mut self) -> Key {
        self.meta = true;
        self
    }

    /// Adds Shift.
    ///
    /// ```
    /// use tmux_control::command::Key;
    /// assert_eq!(Key::TAB.with_shift().to_string(), "S-Tab");
    /// ```
    pub fn with_shift(mut self) -> Key {
        self.shift = true;
        self
    }
}

impl From<NamedKey> for Key {
    fn from(key: NamedKey) -> Self {
        Key::named(key)
    }
}

/// The key as tmux spells it: modifiers `C-`, `M-`, `S-` in that order,
/// then the key name or character.
///
/// ```
/// use tmux_control::command::Key;
/// assert_eq!(Key::ctrl('x')?.with_meta().to_string(), "C-M-x");
/// # Ok::<(), tmux_control::Error>(())
/// ```
impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.ctrl {
            f.write_str("C-")?;
        }
        if self.meta {
            f.write_str("M-")?;
        }
        if self.shift {
            f.write_str("S-")?;
        }
        match self.base {
            Base::Named(k) => f.write_str(k.as_str()),
            Base::Char(c) => write!(f, "{c}"),
        }
    }
}

/// Parses tmux's key syntax: optional modifiers (`C-`, `M-`, `S-` in any
/// order and case, or a leading `^` for Ctrl), then a [`NamedKey`] name (any
/// case and alias) or one printable character.
///
/// ```
/// use tmux_control::command::{Key, NamedKey};
/// assert_eq!("^c".parse::<Key>()?, Key::ctrl('c')?);
/// assert_eq!("M-S-Right".parse::<Key>()?.to_string(), "M-S-Right");
/// assert_eq!("Delete".parse::<Key>()?, Key::from(NamedKey::Delete));
/// assert!("C-".parse::<Key>().is_err());
/// assert!("X-a".parse::<Key>().is_err());
/// # Ok::<(), tmux_control::Error>(())
/// ```
impl FromStr for Key {
    type Err = Error;

    fn from_str(s: &str) -> Result<Key> {
        let invalid =
            |why: &str| Error::InvalidArgument(format!("{s:?} is not a tmux key name: {why}"));
        let mut rest = s;
        let (mut ctrl, mut meta, mut shift) = (false, false, false);
        if let Some(after) = rest.strip_prefix('^').filter(|a| !a.is_empty()) {
            ctrl = true;
            rest = after;
        }
        loop {
            let mut chars = rest.chars();
            match (chars.next(), chars.next()) {
                (Some(m), Some('-')) => {
                    match m.to_ascii_uppercase() {
                        'C' => ctrl = true,
                        'M' => meta = true,
                        'S' => shift = true,
                        _ => return Err(invalid("unknown modifier")),
                    }
                    rest = &rest[m.len_utf8() + 1..];
                }
                _ => break,
            }
        }
        let mut chars = rest.chars();
        let mut key = match (chars.next(), chars.next()) {
            (None, _) => return Err(invalid("no key after the modifiers")),
            (Some(c), None) => Key::char(c)?,
            _ => Key::named(NamedKey::lookup(rest).ok_or_else(|| {
                invalid("not a known key name (Enter, Escape, Tab, BTab, Space, BSpace, Up, Down, Left, Right, Home, End, PPage, NPage, IC, DC, F1-F12)")
            })?),
        };
        if ctrl {
            key = key.with_ctrl()?;
        }
        if meta {
            key = key.with_meta();
        }
        if shift {
            key = key.with_shift();
        }
        Ok(key)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Payload {
    Literal(String),
    Keys(Vec<Key>),
    Hex(Vec<u8>),
}

/// `send-keys`: types into a pane.
///
/// Three forms, one tmux command each:
///
/// * [`literal`](SendKeys::literal): printable text, typed as is (`-l`).
///   Control characters (LF, CR, TAB, ESC…) are refused: with `-l` tmux
///   still turns them into key presses, which the pane may translate; send
///   them with [`hex`](SendKeys::hex) or as [`Key`]s.
/// * [`keys`](SendKeys::keys): key presses by name (`Enter`, `C-c`, `Up`).
/// * [`hex`](SendKeys::hex): exact bytes (`-H`), one hex argument per byte.
///   This is how text with newlines, control bytes or invalid UTF-8 is
///   delivered exactly. The line grows by three bytes per input byte;
///   [`hex_chunks`](SendKeys::hex_chunks) splits long input into several
///   commands when the caller asks for it.
///
/// If the pane is in a mode (copy mode, view mode: see
/// [`PaneInfo::in_mode`](crate::command::PaneInfo::in_mode)), tmux gives
/// every key, in all three forms, to the mode's key bindings instead of the
/// program.
///
/// ```
/// use tmux_control::command::{CommandLine, Key, SendKeys};
/// use tmux_control::PaneId;
/// let text = SendKeys::literal(PaneId(1), "ls -l; echo $HOME");
/// assert_eq!(CommandLine::of(&text)?.to_string(), "send-keys -t %1 -l -- 'ls -l; echo $HOME'");
/// let keys = SendKeys::keys(PaneId(1), [Key::ENTER]);
/// assert_eq!(CommandLine::of(&keys)?.to_string(), "send-keys -t %1 -- 'Enter'");
/// let bytes = SendKeys::hex(PaneId(1), b"a\n");
/// assert_eq!(CommandLine::of(&bytes)?.to_string(), "send-keys -t %1 -H -- 61 0a");
/// # Ok::<(), tmux_control::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SendKeys {
    target: Target,
    payload: Payload,
}

impl SendKeys {
    /// Types `text` literally (`-l`). Encoding fails if the text contains a
    /// control character (U+0000–U+001F, U+007F).
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, SendKeys};
    /// assert!(CommandLine::of(&SendKeys::literal("p", "echo ✓ #x")).is_ok());
    /// assert!(CommandLine::of(&SendKeys::literal("p", "echo\n")).is_err());
    /// ```
    pub fn literal(target: impl Into<Target>, text: impl Into<String>) -> Self {
        Self {
            target: target.into(),
            payload: Payload::Literal(text.into()),
        }
    }

    /// Presses `keys` in order. Encoding fails if there is none.
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, Key, SendKeys};
    /// let cmd = SendKeys::keys("p", [Key::ctrl('c')?, "Up".parse()?, Key::ENTER]);
    /// assert_eq!(CommandLine::of(&cmd)?.to_string(), "send-keys -t 'p' -- 'C-c' 'Up' 'Enter'");
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn keys(target: impl Into<Target>, keys: impl IntoIterator<Item = Key>) -> Self {
        Self {
            target: target.into(),
            payload: Payload::Keys(keys.into_iter().collect()),
        }
    }

    /// Sends `bytes` exactly (`-H`). Encoding fails if there is none.
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, SendKeys};
    /// let cmd = SendKeys::hex("p", [0x1b, b'[', b'A']);
    /// assert_eq!(CommandLine::of(&cmd)?.to_string(), "send-keys -t 'p' -H -- 1b 5b 41");
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn hex(target: impl Into<Target>, bytes: impl AsRef<[u8]>) -> Self {
        Self {
            target: target.into(),
            payload: Payload::Hex(bytes.as_ref().to_vec()),
        }
    }

    /// Splits `bytes` into `-H` commands of at most `max_bytes` bytes each
    /// (at least 1), to be sent in order. The pieces reach the pane in order
    /// as long as nothing else types into it in between.
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, SendKeys};
    /// let cmds = SendKeys::hex_chunks("p", b"abcde", 2);
    /// assert_eq!(cmds.len(), 3);
    /// assert_eq!(CommandLine::of(&cmds[2])?.to_string(), "send-keys -t 'p' -H -- 65");
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn hex_chunks(
        target: impl Into<Target>,
        bytes: impl AsRef<[u8]>,
        max_bytes: usize,
    ) -> Vec<SendKeys> {
        let target = target.into();
        bytes
            .as_ref()
            .chunks(max_bytes.max(1))
            .map(|chunk| SendKeys::hex(target.clone(), chunk))
            .collect()
    }
}

impl Command for SendKeys {
    type Output = ();

    const NAME: &'static str = "send-keys";

    fn encode(&self, line: &mut CommandLine) -> Result<()> {
        match &self.payload {
            Payload::Literal(text) => {
                if let Some(c) = text.chars().find(|&c| c < ' ' || c == '\x7f') {
                    return Err(Error::InvalidArgument(format!(
                        "literal text contains the control character {c:?}; \
                         send it with SendKeys::hex or as a Key"
                    )));
                }
                line.word(Self::NAME)?;
                self.target.write(line)?;
                line.word("-l")?.end_of_flags().arg(text)?;
            }
            Payload::Keys(keys) => {
                if keys.is_empty() {
                    return Err(Error::InvalidArgument(
                        "send-keys needs at least one key".into(),
                    ));
                }
                line.word(Self::NAME)?;
                self.target.write(line)?;
                line.end_of_flags();
                for key in keys {
                    line.arg(key.to_string())?;
                }
            }
            Payload::Hex(bytes) => {
                if bytes.is_empty() {
                    return Err(Error::InvalidArgument(
                        "send-keys -H needs at least one byte".into(),
                    ));
                }
                line.word(Self::NAME)?;
                self.target.write(line)?;
                line.word("-H")?.end_of_flags();
                for b in bytes {
                    line.word(&format!("{b:02x}"))?;
                }
            }
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
    use crate::PaneId;
    use crate::command::test_util::*;

    #[test]
    fn key_names_round_trip() {
        for k in NamedKey::all() {
            let key = Key::from(k);
            assert_eq!(key.to_string().parse::<Key>().unwrap(), key);
            for m in [key.with_ctrl().unwrap(), key.with_meta(), key.with_shift()] {
                assert_eq!(m.to_string().parse::<Key>().unwrap(), m);
            }
        }
        for (text, want) in [
            ("C-c", "C-c"),
            ("c-C", "C-c"),
            ("^C", "C-c"),
            ("^", "^"),
            ("C-^", "C-^"),
            ("C--", "C--"),
            ("-", "-"),
            ("M-#", "M-#"),
            ("S-M-C-x", "C-M-S-x"),
            ("pgdn", "NPage"),
            ("insert", "IC"),
            ("C-Space", "C-Space"),
            ("C- ", "C-Space"),
            (" ", "Space"),
            ("C-?", "C-?"),
            ("C-@", "C-@"),
            ("C-/", "C-/"),
            ("é", "é"),
            ("M-é", "M-é"),
            (";", ";"),
            ("C-6", "C-6"),
            ("f12", "F12"),
        ] {
            assert_eq!(text.parse::<Key>().unwrap().to_string(), want, "{text}");
        }
    }

    #[test]
    fn bad_keys() {
        for bad in [
            "", "C-", "Entr", "X-a", "--", "F13", "C-\"", "C-$", "C-é", "C-~", "C-;", "C-1", "\n",
            "\u{7f}", "ab", "C-M-", "KP5",
        ] {
            assert!(bad.parse::<Key>().is_err(), "{bad:?}");
        }
        assert!(Key::char('\u{85}').is_err());
        assert!(Key::ctrl('{').is_err());
    }

    #[test]
    fn send_keys_lines() {
        assert_eq!(
            line(&SendKeys::literal(PaneId(0), "-x")),
            "send-keys -t %0 -l -- '-x'"
        );
        assert_eq!(
            line(&SendKeys::literal(PaneId(0), "")),
            "send-keys -t %0 -l -- ''"
        );
        assert_eq!(
            line(&SendKeys::literal(PaneId(0), "it's")),
            r"send-keys -t %0 -l -- 'it'\''s'"
        );
        assert_eq!(
            line(&SendKeys::keys(
                PaneId(0),
                [Key::char(';').unwrap(), Key::char('#').unwrap()]
            )),
            "send-keys -t %0 -- ';' '#'"
        );
        assert_eq!(
            line(&SendKeys::hex(PaneId(0), [0u8, 0xff])),
            "send-keys -t %0 -H -- 00 ff"
        );
        for bad in [
            SendKeys::literal(PaneId(0), "a\tb"),
            SendKeys::literal(PaneId(0), "\u{7f}"),
            SendKeys::keys(PaneId(0), []),
            SendKeys::hex(PaneId(0), b""),
        ] {
            assert!(matches!(
                CommandLine::of(&bad),
                Err(Error::InvalidArgument(_))
            ));
        }
        let chunks = SendKeys::hex_chunks(PaneId(0), [1u8; 7], 0);
        assert_eq!(chunks.len(), 7);
        assert!(SendKeys::hex_chunks(PaneId(0), b"", 4).is_empty());
        SendKeys::literal("p", "x")
            .parse(ok(&[]), &Version::OLDEST_SUPPORTED)
            .unwrap();
        assert_command_error(
            SendKeys::literal("p", "x")
                .parse(err("can't find pane: p"), &Version::OLDEST_SUPPORTED),
            "send-keys",
        );
    }
}
