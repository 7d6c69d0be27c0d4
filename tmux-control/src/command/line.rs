//! Building one command line that tmux's parser reads back exactly.

use crate::error::{Error, Result};

/// One tmux command line under construction, without its line terminator.
///
/// [`word`](CommandLine::word) appends a bare word (a command name or a flag,
/// checked to need no quoting); [`arg`](CommandLine::arg) appends any bytes,
/// quoted so that tmux's command parser yields exactly those bytes.
///
/// ```
/// use tmux_control::command::CommandLine;
/// let mut line = CommandLine::new();
/// line.word("set-buffer").unwrap().word("-b").unwrap().arg("buf").unwrap().arg("a;b #c $HOME").unwrap();
/// assert_eq!(line.as_bytes(), b"set-buffer -b 'buf' 'a;b #c $HOME'");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommandLine {
    buf: Vec<u8>,
}

impl CommandLine {
    /// An empty line.
    pub fn new() -> Self {
        Self::default()
    }

    /// The line so far.
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf
    }

    /// Consumes the builder, returning the line.
    pub fn into_bytes(self) -> Vec<u8> {
        self.buf
    }

    /// Appends a bare word: ASCII letters, digits and `-_=:.,/%@$!+^`
    /// (a command name, a flag, a target id).
    pub fn word(&mut self, word: &str) -> Result<&mut Self> {
        let safe = !word.is_empty()
            && word.bytes().all(|b| {
                b.is_ascii_alphanumeric() || b"-_=:.,/%@!+^".contains(&b) || (b == b'$' && word.len() > 1 && word[1..].bytes().all(|d| d.is_ascii_digit()))
            });
        if !safe {
            return Err(Error::InvalidArgument(format!(
                "{word:?} is not a bare tmux word; pass it with CommandLine::arg"
            )));
        }
        self.sep();
        self.buf.extend_from_slice(word.as_bytes());
        Ok(self)
    }

    /// Appends an argument, quoted so that tmux reads back exactly `value`.
    ///
    /// Fails for a NUL byte, which no tmux argument can hold.
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

    fn sep(&mut self) {
        if !self.buf.is_empty() {
            self.buf.push(b' ');
        }
    }
}

/// Quotes `value` for tmux's command parser: runs of ordinary bytes go in
/// single quotes (where nothing is special but `'`), and bytes that cannot
/// travel raw on a command line (control bytes) go in double quotes as octal
/// escapes. Adjacent quoted pieces join into one argument.
fn quote_into(value: &[u8], out: &mut Vec<u8>) {
    if value.is_empty() {
        out.extend_from_slice(b"''");
        return;
    }
    let mut in_single = false;
    for &b in value {
        match b {
            b'\'' => {
                if in_single {
                    out.push(b'\'');
                    in_single = false;
                }
                out.extend_from_slice(b"\\'");
            }
            0x01..=0x1f | 0x7f => {
                if in_single {
                    out.push(b'\'');
                    in_single = false;
                }
                out.extend_from_slice(format!("\"\\{b:03o}\"").as_bytes());
            }
            _ => {
                if !in_single {
                    out.push(b'\'');
                    in_single = true;
                }
                out.push(b);
            }
        }
    }
    if in_single {
        out.push(b'\'');
    }
}
