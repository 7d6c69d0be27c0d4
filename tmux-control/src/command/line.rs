//! Building one command line that tmux's parser reads back exactly.

use std::fmt;

use crate::command::Command;
use crate::error::{Error, Result};
use crate::version::Version;

/// One tmux command line under construction, without its line terminator.
///
/// [`word`](CommandLine::word) appends a bare word (a command name, a flag, a
/// number or an id, checked to need no quoting); [`arg`](CommandLine::arg)
/// appends any bytes, quoted so that tmux's command parser yields exactly
/// those bytes; [`end_of_flags`](CommandLine::end_of_flags) appends `--`.
///
/// ```
/// use tmux_control::command::CommandLine;
/// let mut line = CommandLine::new();
/// line.word("set-buffer")?.word("-b")?.arg("buf")?.end_of_flags().arg("a;b #c $HOME")?;
/// assert_eq!(line.to_string(), "set-buffer -b 'buf' -- 'a;b #c $HOME'");
/// # Ok::<(), tmux_control::Error>(())
/// ```
///
/// # How arguments are quoted
///
/// tmux reads every control-mode line with the parser it uses for
/// configuration files (`cmd-parse.y`). [`arg`](CommandLine::arg) writes:
///
/// * runs of printable ASCII and of complete, valid UTF-8 sequences inside
///   single quotes, where tmux treats every byte literally (no `\`, `$`, `~`,
///   `#`, `;`, `{`/`}` or `%` processing);
/// * a `'` as `\'` outside the quotes (`it's` becomes `'it'\''s'`);
/// * control bytes (0x01–0x1f, 0x7f) and bytes that are not part of valid
///   UTF-8 (0x80–0xff on their own) as three-digit octal escapes inside
///   double quotes (`"\012"`), so that the line never carries a raw LF, CR or
///   other control byte;
/// * the empty string as `''`.
///
/// Adjacent quoted pieces join into one argument. A NUL byte cannot be sent
/// at all (tmux's arguments are C strings, and a raw NUL ends the line), so
/// [`arg`](CommandLine::arg) rejects it with [`Error::InvalidArgument`].
///
/// Verified against tmux 3.3a with `set-buffer` followed by `save-buffer` and
/// `show-buffer` (see `tests/quoting_real_tmux.rs`): `;` (also trailing),
/// `#`, `#{pane_id}`, `$HOME`, `${X}`, `~` and `~root` at the start, `{ }`,
/// both quotes, backslashes, a literal `\n`, every byte 0x01–0xff alone and
/// between letters, emoji, the empty string and 100 KB arguments all come back
/// byte for byte. Findings that shaped the rules above:
///
/// * tmux 3.3a reads the line through a signed `char`, so a raw 0xff byte is
///   taken for end of input and cuts the line short (`too many arguments`);
///   it must be written as `"\377"`. The other bytes 0x80–0xfe survive raw,
///   but are escaped as well when they are not valid UTF-8, to be safe.
/// * A bare word that starts with `%` must be `%` followed by digits: tmux
///   reads `%3:on` as a (failed) `%if`-style directive and answers
///   `parse error: syntax error`. [`word`](CommandLine::word) enforces this;
///   quoted (`'%3:on'`) it is fine.
/// * tmux's flag parser treats any argument starting with `-` as flags until
///   it sees `--` or a non-flag argument, for every command (the parser is
///   shared). A positional argument that may start with `-` must therefore
///   follow [`end_of_flags`](CommandLine::end_of_flags): `set-buffer -- '-x'`
///   works, `set-buffer '-x'` fails with `unknown flag -x`. The value of a
///   flag that takes one (`-n -x`) is taken as is, dash or not. The typed
///   commands write `--` before every positional argument that could start
///   with `-`.
/// * Quoting only protects the argument from the *command parser*. Several
///   commands expand `#{…}` formats in some arguments afterwards (session and
///   window names, `-c` directories, pane titles, `display-message`); the
///   typed commands escape those with [`escape_format`](crate::command::escape_format).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandLine {
    buf: Vec<u8>,
    version: Version,
}

impl Default for CommandLine {
    fn default() -> Self {
        Self::new()
    }
}

impl CommandLine {
    /// An empty line for [`Version::OLDEST_SUPPORTED`] (tmux 3.3a). The
    /// connection uses [`for_version`](CommandLine::for_version) with the
    /// version of the tmux it talks to.
    ///
    /// ```
    /// use tmux_control::command::CommandLine;
    /// assert!(CommandLine::new().as_bytes().is_empty());
    /// ```
    pub fn new() -> Self {
        Self::for_version(Version::OLDEST_SUPPORTED)
    }

    /// An empty line for a command that tmux `version` will read.
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, PasteBuffer};
    /// use tmux_control::Version;
    /// let mut line = CommandLine::for_version(Version::parse("3.7c"));
    /// assert_eq!(line.version().to_string(), "3.7c");
    /// ```
    pub fn for_version(version: Version) -> Self {
        Self {
            buf: Vec::new(),
            version,
        }
    }

    /// The tmux version this line is for.
    ///
    /// ```
    /// use tmux_control::command::CommandLine;
    /// use tmux_control::Version;
    /// assert_eq!(CommandLine::new().version(), &Version::OLDEST_SUPPORTED);
    /// ```
    pub fn version(&self) -> &Version {
        &self.version
    }

    /// Encodes `command` into a new line for tmux `version`.
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, PasteBuffer};
    /// use tmux_control::{PaneId, Version};
    /// let paste = PasteBuffer::new(PaneId(1));
    /// assert_eq!(CommandLine::of(&paste)?.to_string(), "paste-buffer -t %1");
    /// assert_eq!(
    ///     CommandLine::of_version(&paste, Version::parse("3.7c"))?.to_string(),
    ///     "paste-buffer -t %1 -S"
    /// );
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn of_version<C: Command + ?Sized>(command: &C, version: Version) -> Result<Self> {
        let mut line = Self::for_version(version);
        command.encode(&mut line)?;
        Ok(line)
    }

    /// Encodes `command` into a new line for [`Version::OLDEST_SUPPORTED`].
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, KillPane};
    /// use tmux_control::PaneId;
    /// let line = CommandLine::of(&KillPane::new(PaneId(3)))?;
    /// assert_eq!(line.to_string(), "kill-pane -t %3");
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn of<C: Command + ?Sized>(command: &C) -> Result<Self> {
        let mut line = Self::new();
        command.encode(&mut line)?;
        Ok(line)
    }

    /// The line so far.
    ///
    /// ```
    /// use tmux_control::command::CommandLine;
    /// let mut line = CommandLine::new();
    /// line.word("list-sessions")?;
    /// assert_eq!(line.as_bytes(), b"list-sessions");
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf
    }

    /// Consumes the builder, returning the line.
    ///
    /// ```
    /// use tmux_control::command::CommandLine;
    /// let mut line = CommandLine::new();
    /// line.word("list-sessions")?;
    /// assert_eq!(line.into_bytes(), b"list-sessions".to_vec());
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn into_bytes(self) -> Vec<u8> {
        self.buf
    }

    /// Appends a bare word: ASCII letters, digits and `-_=:.,/%@!+^`, plus
    /// `$` followed only by digits (a session id). A word starting with `%`
    /// must be `%` followed by digits (a pane id). Anything else must go
    /// through [`arg`](CommandLine::arg).
    ///
    /// ```
    /// use tmux_control::command::CommandLine;
    /// let mut line = CommandLine::new();
    /// line.word("kill-pane")?.word("-t")?.word("%3")?;
    /// assert_eq!(line.to_string(), "kill-pane -t %3");
    /// assert!(line.word("%3:on").is_err());
    /// assert!(line.word("$HOME").is_err());
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn word(&mut self, word: &str) -> Result<&mut Self> {
        if !is_bare_word(word) {
            return Err(Error::InvalidArgument(format!(
                "{word:?} is not a bare tmux word; pass it with CommandLine::arg"
            )));
        }
        self.sep();
        self.buf.extend_from_slice(word.as_bytes());
        Ok(self)
    }

    /// Appends an argument, quoted so that tmux reads back exactly `value`
    /// (see the type's documentation for the rules).
    ///
    /// Fails for a NUL byte, which no tmux argument can hold.
    ///
    /// ```
    /// use tmux_control::command::CommandLine;
    /// let mut line = CommandLine::new();
    /// line.arg("it's")?.arg("a\nb")?.arg(b"\xff")?.arg("")?;
    /// assert_eq!(line.to_string(), r#"'it'\''s' 'a'"\012"'b' "\377" ''"#);
    /// assert!(line.arg("nul\0byte").is_err());
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn arg(&mut self, value: impl AsRef<[u8]>) -> Result<&mut Self> {
        let value = value.as_ref();
        if value.contains(&0) {
            return Err(Error::InvalidArgument(
                "a tmux argument cannot contain a NUL byte".into(),
            ));
        }
        self.sep();
        quote_into(value, &mut self.buf);
        Ok(self)
    }

    /// Appends `--`: every later argument is positional, even one that
    /// starts with `-`. Every tmux command accepts it.
    ///
    /// ```
    /// use tmux_control::command::CommandLine;
    /// let mut line = CommandLine::new();
    /// line.word("set-buffer")?.end_of_flags().arg("-x")?;
    /// assert_eq!(line.to_string(), "set-buffer -- '-x'");
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn end_of_flags(&mut self) -> &mut Self {
        self.sep();
        self.buf.extend_from_slice(b"--");
        self
    }

    /// Appends a flag followed by a number.
    pub(crate) fn number(&mut self, flag: &str, n: impl fmt::Display) -> Result<&mut Self> {
        self.word(flag)?.word(&n.to_string())
    }

    /// Appends a flag followed by a quoted value.
    pub(crate) fn flag_arg(&mut self, flag: &str, value: impl AsRef<[u8]>) -> Result<&mut Self> {
        self.word(flag)?.arg(value)
    }

    /// Appends a flag followed by a value that tmux expands as a format,
    /// escaped so that it is taken literally.
    pub(crate) fn flag_literal(
        &mut self,
        flag: &str,
        value: impl AsRef<[u8]>,
    ) -> Result<&mut Self> {
        self.word(flag)?
            .arg(crate::command::format::escape_format(value.as_ref()))
    }

    /// Appends `flag` when `on`.
    pub(crate) fn flag_if(&mut self, flag: &str, on: bool) -> Result<&mut Self> {
        if on {
            self.word(flag)?;
        }
        Ok(self)
    }

    fn sep(&mut self) {
        if !self.buf.is_empty() {
            self.buf.push(b' ');
        }
    }
}

/// Shows the line with invalid UTF-8 replaced (for logs and tests).
///
/// ```
/// use tmux_control::command::CommandLine;
/// let mut line = CommandLine::new();
/// line.word("has-session")?.word("-t")?.arg("main")?;
/// assert_eq!(line.to_string(), "has-session -t 'main'");
/// # Ok::<(), tmux_control::Error>(())
/// ```
impl fmt::Display for CommandLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&String::from_utf8_lossy(&self.buf))
    }
}

fn is_bare_word(word: &str) -> bool {
    let bytes = word.as_bytes();
    let Some((&first, rest)) = bytes.split_first() else {
        return false;
    };
    let all_digits = |s: &[u8]| !s.is_empty() && s.iter().all(u8::is_ascii_digit);
    match first {
        // `$` would start a variable; `$` + digits is kept literally.
        b'$' => all_digits(rest),
        // At the start of a token, `%` starts a directive unless the word is
        // all `%` and digits.
        b'%' => all_digits(rest),
        _ => bytes
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || b"-_=:.,/%@!+^".contains(&b)),
    }
}

/// Quotes `value` for tmux's command parser (see [`CommandLine`]).
fn quote_into(value: &[u8], out: &mut Vec<u8>) {
    #[derive(PartialEq)]
    enum State {
        Bare,
        Single,
        Double,
    }
    if value.is_empty() {
        out.extend_from_slice(b"''");
        return;
    }
    let mut state = State::Bare;
    let switch = |out: &mut Vec<u8>, state: &mut State, to: State| {
        if *state == to {
            return;
        }
        match state {
            State::Single => out.push(b'\''),
            State::Double => out.push(b'"'),
            State::Bare => {}
        }
        match to {
            State::Single => out.push(b'\''),
            State::Double => out.push(b'"'),
            State::Bare => {}
        }
        *state = to;
    };
    for chunk in value.utf8_chunks() {
        for &b in chunk.valid().as_bytes() {
            match b {
                b'\'' => {
                    switch(out, &mut state, State::Bare);
                    out.extend_from_slice(b"\\'");
                }
                0x01..=0x1f | 0x7f => {
                    switch(out, &mut state, State::Double);
                    push_octal(out, b);
                }
                _ => {
                    switch(out, &mut state, State::Single);
                    out.push(b);
                }
            }
        }
        if !chunk.invalid().is_empty() {
            switch(out, &mut state, State::Double);
            for &b in chunk.invalid() {
                push_octal(out, b);
            }
        }
    }
    switch(out, &mut state, State::Bare);
}

fn push_octal(out: &mut Vec<u8>, b: u8) {
    out.extend_from_slice(&[
        b'\\',
        b'0' + (b >> 6),
        b'0' + ((b >> 3) & 7),
        b'0' + (b & 7),
    ]);
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn q(value: &[u8]) -> String {
        let mut out = Vec::new();
        quote_into(value, &mut out);
        String::from_utf8(out).unwrap()
    }

    /// A model of tmux's lexer for one token, as far as our output uses it:
    /// single quotes, double quotes with octal escapes, and `\'`.
    fn unquote(quoted: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut i = 0;
        let mut single = false;
        let mut double = false;
        while i < quoted.len() {
            let b = quoted[i];
            if single {
                if b == b'\'' {
                    single = false;
                } else {
                    out.push(b);
                }
                i += 1;
            } else if b == b'\\' {
                let next = quoted[i + 1];
                if next.is_ascii_digit() {
                    let v = (quoted[i + 1] - b'0') * 64
                        + (quoted[i + 2] - b'0') * 8
                        + (quoted[i + 3] - b'0');
                    out.push(v);
                    i += 4;
                } else {
                    assert!(!double, "only octal escapes inside double quotes");
                    out.push(next);
                    i += 2;
                }
            } else if b == b'"' {
                double = !double;
                i += 1;
            } else if b == b'\'' && !double {
                single = true;
                i += 1;
            } else {
                panic!("unexpected bare byte {b:#x} in {quoted:?}");
            }
        }
        assert!(!single && !double);
        out
    }

    #[test]
    fn quotes_plain_and_special() {
        assert_eq!(q(b""), "''");
        assert_eq!(q(b"abc"), "'abc'");
        assert_eq!(q(b"a;b"), "'a;b'");
        assert_eq!(q(b"it's"), r"'it'\''s'");
        assert_eq!(q(b"'"), r"\'");
        assert_eq!(q(b"''"), r"\'\'");
        assert_eq!(q(b"a\nb"), r#"'a'"\012"'b'"#);
        assert_eq!(q(b"\x01\x02"), r#""\001\002""#);
        assert_eq!(q(b"\x7f"), r#""\177""#);
        assert_eq!(q(b"\xff"), r#""\377""#);
        assert_eq!(q(b"a\xe9b"), r#"'a'"\351"'b'"#);
        assert_eq!(q("é😀".as_bytes()), "'é😀'");
        assert_eq!(q(b"~root"), "'~root'");
        assert_eq!(q(b"$HOME"), "'$HOME'");
        assert_eq!(q(b"\\"), r"'\'");
    }

    #[test]
    fn every_byte_round_trips_through_the_model() {
        let mut all: Vec<u8> = (1..=255).collect();
        all.extend_from_slice("é'😀".as_bytes());
        for b in 1..=255u8 {
            for v in [vec![b], vec![b'a', b, b'z'], vec![b, b'\''], vec![b'\'', b]] {
                let mut out = Vec::new();
                quote_into(&v, &mut out);
                assert!(!out.iter().any(|&c| c < 0x20 || c == 0x7f || c == 0xff));
                assert_eq!(
                    unquote(&out),
                    v,
                    "{v:?} -> {}",
                    String::from_utf8_lossy(&out)
                );
            }
        }
        let mut out = Vec::new();
        quote_into(&all, &mut out);
        assert_eq!(unquote(&out), all);
    }

    #[test]
    fn words() {
        for ok in [
            "new-session",
            "-t",
            "%3",
            "$0",
            "@12",
            "main:1.2",
            "100x30",
            "50%",
            "=x",
            "!read-only",
        ] {
            assert!(is_bare_word(ok), "{ok}");
        }
        for bad in [
            "", "$", "$x", "%", "%3:on", "%*", "a b", "a;b", "#x", "~", "{", "'", "é", "a\n",
        ] {
            assert!(!is_bare_word(bad), "{bad:?}");
        }
    }

    #[test]
    fn arg_rejects_nul_and_end_of_flags() {
        let mut line = CommandLine::new();
        assert!(matches!(line.arg(b"a\0b"), Err(Error::InvalidArgument(_))));
        assert!(line.as_bytes().is_empty());
        line.word("x").unwrap().end_of_flags().arg("-y").unwrap();
        assert_eq!(line.as_bytes(), b"x -- '-y'");
    }
}
