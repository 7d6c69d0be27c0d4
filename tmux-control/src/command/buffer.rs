//! Paste buffers: `set-buffer`, `show-buffer`, `paste-buffer`,
//! `delete-buffer`, `list-buffers`.

use bytes::Bytes;

use crate::command::format::{RowSpec, buffer_lookup_name, join_lines, lossy, unvis, vis_name};
use crate::command::{Command, CommandLine, Target, ok_body, unit};
use crate::error::{Error, Result};
use crate::proto::Reply;
use crate::version::Version;

/// `set-buffer [-a] [-b NAME] -- DATA`: stores bytes in a paste buffer.
///
/// Any bytes but NUL survive exactly, newlines and control bytes included
/// (verified against tmux 3.3a), which makes a buffer plus [`PasteBuffer`]
/// the way to deliver a large block of text to a pane in one go. tmux
/// silently ignores empty data, so encoding refuses it (except with
/// [`append`](SetBuffer::append), where it is a harmless no-op).
///
/// ```
/// use tmux_control::command::{CommandLine, SetBuffer};
/// let cmd = SetBuffer::new("line 1\nline 2\n").buffer("clip");
/// assert_eq!(
///     CommandLine::of(&cmd)?.to_string(),
///     r#"set-buffer -b 'clip' -- 'line 1'"\012"'line 2'"\012""#
/// );
/// # Ok::<(), tmux_control::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetBuffer {
    name: Option<Vec<u8>>,
    append: bool,
    data: Vec<u8>,
}

impl SetBuffer {
    /// Stores `data` in a new automatically named buffer, unless
    /// [`buffer`](SetBuffer::buffer) is given.
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, SetBuffer};
    /// assert_eq!(CommandLine::of(&SetBuffer::new("-x"))?.to_string(), "set-buffer -- '-x'");
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn new(data: impl AsRef<[u8]>) -> Self {
        Self {
            name: None,
            append: false,
            data: data.as_ref().to_vec(),
        }
    }

    /// The buffer's name (`-b`); it is created or replaced.
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, SetBuffer};
    /// let line = CommandLine::of(&SetBuffer::new("x").buffer("b 1"))?;
    /// assert_eq!(line.to_string(), "set-buffer -b 'b 1' -- 'x'");
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn buffer(mut self, name: impl AsRef<[u8]>) -> Self {
        self.name = Some(name.as_ref().to_vec());
        self
    }

    /// Append to the buffer instead of replacing it (`-a`).
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, SetBuffer};
    /// let line = CommandLine::of(&SetBuffer::new("x").buffer("b").append())?;
    /// assert_eq!(line.to_string(), "set-buffer -a -b 'b' -- 'x'");
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn append(mut self) -> Self {
        self.append = true;
        self
    }
}

impl Command for SetBuffer {
    type Output = ();

    const NAME: &'static str = "set-buffer";

    fn encode(&self, line: &mut CommandLine) -> Result<()> {
        if self.data.is_empty() && !self.append {
            return Err(Error::InvalidArgument(
                "tmux ignores set-buffer with empty data (the buffer is neither created nor \
                 emptied); use DeleteBuffer to remove a buffer"
                    .into(),
            ));
        }
        if let Some(name) = &self.name
            && self.append
            && line.version().cleans_names()
            && vis_name(name, false) != *name
        {
            // tmux 3.7 looks the buffer up by the name as given but stores
            // it escaped (`\` doubled), so it would never find the buffer to
            // append to and would make a second one instead.
            return Err(Error::InvalidArgument(format!(
                "tmux 3.7 and later cannot append to a buffer whose name has a backslash \
                 or a control character: {:?}",
                String::from_utf8_lossy(name)
            )));
        }
        line.word(Self::NAME)?.flag_if("-a", self.append)?;
        if let Some(name) = &self.name {
            line.flag_arg("-b", name)?;
        }
        line.end_of_flags().arg(&self.data)?;
        Ok(())
    }

    fn parse(self, reply: Reply, _version: &Version) -> Result<()> {
        unit(Self::NAME, reply)
    }
}

/// `show-buffer [-b NAME]`: a buffer's contents, exactly.
///
/// tmux 3.3a prints the buffer vis-escaped for a control client (control
/// characters as `\ooo` or `\n`-style escapes, backslash doubled, LF raw),
/// and the reply is decoded with [`unvis`](crate::command::unvis); tmux 3.4
/// and later print its bytes raw, and the reply is taken as it is. Either
/// way the lines are joined with LF.
///
/// ```
/// use tmux_control::command::{Command, CommandLine, ShowBuffer};
/// use tmux_control::proto::Reply;
/// let cmd = ShowBuffer::named("clip");
/// assert_eq!(CommandLine::of(&cmd)?.to_string(), "show-buffer -b 'clip'");
/// let reply = Reply { time: 0, number: 1, flags: 1, error: false,
///                     body: vec![r"a\tb \\ \033".into(), "".into()] };
/// assert_eq!(&cmd.parse(reply, &tmux_control::Version::OLDEST_SUPPORTED)?[..], b"a\tb \\ \x1b\n");
/// # Ok::<(), tmux_control::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShowBuffer {
    name: Option<Vec<u8>>,
}

impl ShowBuffer {
    /// The buffer called `name`.
    ///
    /// ```
    /// use tmux_control::command::{Command, ShowBuffer};
    /// assert_eq!(ShowBuffer::named("x").name(), "show-buffer");
    /// ```
    pub fn named(name: impl AsRef<[u8]>) -> Self {
        Self {
            name: Some(name.as_ref().to_vec()),
        }
    }

    /// The most recently added automatic buffer.
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, ShowBuffer};
    /// assert_eq!(CommandLine::of(&ShowBuffer::latest())?.to_string(), "show-buffer");
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn latest() -> Self {
        Self { name: None }
    }
}

impl Command for ShowBuffer {
    type Output = Bytes;

    const NAME: &'static str = "show-buffer";

    fn encode(&self, line: &mut CommandLine) -> Result<()> {
        line.word(Self::NAME)?;
        if let Some(name) = &self.name {
            let name = buffer_lookup_name(line.version(), name);
            line.flag_arg("-b", name)?;
        }
        Ok(())
    }

    fn parse(self, reply: Reply, version: &Version) -> Result<Bytes> {
        let body = join_lines(&ok_body(Self::NAME, reply)?);
        Ok(Bytes::from(if version.show_buffer_is_raw() {
            body
        } else {
            unvis(&body)
        }))
    }
}

/// `paste-buffer`: types a buffer's contents into a pane, byte for byte on
/// every tmux version (`-S` on 3.7 and later, which would otherwise make
/// control bytes visible as `^[`, `^A`, `M^?`).
///
/// By default tmux replaces every LF with CR on the way (what pressing Enter
/// sends); [`keep_newlines`](PasteBuffer::keep_newlines) and
/// [`separator`](PasteBuffer::separator) change that.
///
/// ```
/// use tmux_control::command::{CommandLine, PasteBuffer};
/// use tmux_control::PaneId;
/// let cmd = PasteBuffer::new(PaneId(2)).buffer("clip").bracketed().delete();
/// assert_eq!(CommandLine::of(&cmd)?.to_string(), "paste-buffer -t %2 -b 'clip' -p -d");
/// # Ok::<(), tmux_control::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PasteBuffer {
    target: Target,
    buffer: Option<Vec<u8>>,
    bracketed: bool,
    delete: bool,
    keep_newlines: bool,
    separator: Option<Vec<u8>>,
}

impl PasteBuffer {
    /// Pastes the most recent automatic buffer into the pane `target`.
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, PasteBuffer};
    /// assert_eq!(CommandLine::of(&PasteBuffer::new("p"))?.to_string(), "paste-buffer -t 'p'");
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn new(target: impl Into<Target>) -> Self {
        Self {
            target: target.into(),
            buffer: None,
            bracketed: false,
            delete: false,
            keep_newlines: false,
            separator: None,
        }
    }

    /// Which buffer (`-b`).
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, PasteBuffer};
    /// assert!(CommandLine::of(&PasteBuffer::new("p").buffer("b"))?.to_string().ends_with(" -b 'b'"));
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn buffer(mut self, name: impl AsRef<[u8]>) -> Self {
        self.buffer = Some(name.as_ref().to_vec());
        self
    }

    /// Wrap the text in bracketed-paste markers when the program asked for
    /// bracketed paste (`-p`), so shells and editors take it as one paste.
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, PasteBuffer};
    /// assert!(CommandLine::of(&PasteBuffer::new("p").bracketed())?.to_string().ends_with(" -p"));
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn bracketed(mut self) -> Self {
        self.bracketed = true;
        self
    }

    /// Delete the buffer after pasting (`-d`).
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, PasteBuffer};
    /// assert!(CommandLine::of(&PasteBuffer::new("p").delete())?.to_string().ends_with(" -d"));
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn delete(mut self) -> Self {
        self.delete = true;
        self
    }

    /// Paste LF as LF instead of replacing it with CR (`-r`).
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, PasteBuffer};
    /// assert!(CommandLine::of(&PasteBuffer::new("p").keep_newlines())?.to_string().ends_with(" -r"));
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn keep_newlines(mut self) -> Self {
        self.keep_newlines = true;
        self
    }

    /// Replace each LF with `separator` instead of CR (`-s`).
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, PasteBuffer};
    /// let line = CommandLine::of(&PasteBuffer::new("p").separator("\r\n"))?;
    /// assert!(line.to_string().ends_with(r#" -s "\015\012""#));
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn separator(mut self, separator: impl AsRef<[u8]>) -> Self {
        self.separator = Some(separator.as_ref().to_vec());
        self
    }
}

impl Command for PasteBuffer {
    type Output = ();

    const NAME: &'static str = "paste-buffer";

    fn encode(&self, line: &mut CommandLine) -> Result<()> {
        line.word(Self::NAME)?;
        self.target.write(line)?;
        if let Some(name) = &self.buffer {
            let name = buffer_lookup_name(line.version(), name);
            line.flag_arg("-b", name)?;
        }
        line.flag_if("-p", self.bracketed)?
            .flag_if("-d", self.delete)?
            .flag_if("-r", self.keep_newlines)?;
        if let Some(sep) = &self.separator {
            line.flag_arg("-s", sep)?;
        }
        // Since 3.7 tmux passes the text through vis(3) (ESC as `^[`, 0xff as
        // `M^?`) unless `-S` is given; 3.3a to 3.6 refuse `-S` and paste raw.
        line.flag_if("-S", line.version().paste_needs_raw_flag())?;
        Ok(())
    }

    fn parse(self, reply: Reply, _version: &Version) -> Result<()> {
        unit(Self::NAME, reply)
    }
}

/// `delete-buffer -b NAME`.
///
/// ```
/// use tmux_control::command::{CommandLine, DeleteBuffer};
/// assert_eq!(CommandLine::of(&DeleteBuffer::new("clip"))?.to_string(), "delete-buffer -b 'clip'");
/// # Ok::<(), tmux_control::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeleteBuffer {
    name: Vec<u8>,
}

impl DeleteBuffer {
    /// Deletes the buffer called `name`.
    ///
    /// ```
    /// use tmux_control::command::{Command, DeleteBuffer};
    /// assert_eq!(DeleteBuffer::new("x").name(), "delete-buffer");
    /// ```
    pub fn new(name: impl AsRef<[u8]>) -> Self {
        Self {
            name: name.as_ref().to_vec(),
        }
    }
}

impl Command for DeleteBuffer {
    type Output = ();

    const NAME: &'static str = "delete-buffer";

    fn encode(&self, line: &mut CommandLine) -> Result<()> {
        let name = buffer_lookup_name(line.version(), &self.name);
        line.word(Self::NAME)?.flag_arg("-b", name)?;
        Ok(())
    }

    fn parse(self, reply: Reply, _version: &Version) -> Result<()> {
        unit(Self::NAME, reply)
    }
}

/// One row of [`ListBuffers`].
///
/// ```
/// use tmux_control::command::{Command, ListBuffers};
/// use tmux_control::proto::Reply;
/// let reply = Reply { time: 0, number: 1, flags: 1, error: false,
///                     body: vec!["5 1795965725 clip".into()] };
/// let buffers = ListBuffers::new().parse(reply, &tmux_control::Version::OLDEST_SUPPORTED)?;
/// assert_eq!(buffers[0].name, "clip");
/// assert_eq!(buffers[0].size, 5);
/// # Ok::<(), tmux_control::Error>(())
/// ```
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct BufferInfo {
    /// `#{buffer_name}` (tmux keeps buffer names unescaped; invalid UTF-8
    /// replaced).
    pub name: String,
    /// `#{buffer_size}`: its size in bytes.
    pub size: u64,
    /// `#{buffer_created}`: when it was created, seconds since the epoch.
    pub created: u64,
}

const BUFFER_ROW: RowSpec = RowSpec {
    fixed: &["buffer_size", "buffer_created"],
    text: &["buffer_name"],
};

/// `list-buffers -F …`: every paste buffer, most recent first.
///
/// ```
/// use tmux_control::command::{CommandLine, ListBuffers};
/// assert_eq!(
///     CommandLine::of(&ListBuffers::new())?.to_string(),
///     r#"list-buffers -F '#{buffer_size} #{buffer_created} #{s/\\/\\\\/;s/ /\\s/;s/'"\012"'/\\n/:buffer_name}'"#
/// );
/// # Ok::<(), tmux_control::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ListBuffers {}

impl ListBuffers {
    /// Lists all buffers.
    ///
    /// ```
    /// use tmux_control::command::{Command, ListBuffers};
    /// assert_eq!(ListBuffers::new().name(), "list-buffers");
    /// ```
    pub fn new() -> Self {
        Self::default()
    }
}

impl Command for ListBuffers {
    type Output = Vec<BufferInfo>;

    const NAME: &'static str = "list-buffers";

    fn encode(&self, line: &mut CommandLine) -> Result<()> {
        let format = BUFFER_ROW.format();
        line.word(Self::NAME)?.flag_arg("-F", format)?;
        Ok(())
    }

    fn parse(self, reply: Reply, version: &Version) -> Result<Vec<BufferInfo>> {
        let body = join_lines(&ok_body(Self::NAME, reply)?);
        BUFFER_ROW
            .parse(Self::NAME, &body)?
            .iter()
            .map(|row| {
                Ok(BufferInfo {
                    size: row.u64(0, "buffer_size")?,
                    created: row.u64(1, "buffer_created")?,
                    // Stored escaped since 3.7, raw before.
                    name: lossy(&if version.cleans_names() {
                        unvis(row.text(0))
                    } else {
                        row.text(0).to_vec()
                    }),
                })
            })
            .collect()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::command::test_util::*;

    #[test]
    fn buffer_lines() {
        assert!(matches!(
            CommandLine::of(&SetBuffer::new("")),
            Err(Error::InvalidArgument(_))
        ));
        assert_eq!(line(&SetBuffer::new("").append()), "set-buffer -a -- ''");
        assert_eq!(
            line(&SetBuffer::new(b"\xff;").buffer("-b")),
            r#"set-buffer -b '-b' -- "\377"';'"#
        );
        assert!(CommandLine::of(&SetBuffer::new("a\0b")).is_err());
        assert_eq!(line(&ShowBuffer::named("a'b")), r"show-buffer -b 'a'\''b'");
        assert_eq!(
            line(&PasteBuffer::new("p").keep_newlines().separator(";")),
            "paste-buffer -t 'p' -r -s ';'"
        );
        assert_eq!(line(&DeleteBuffer::new("x")), "delete-buffer -b 'x'");
    }

    #[test]
    fn show_buffer_decodes() {
        let got = ShowBuffer::latest()
            .parse(
                ok(&[br"\$HOME \\n \377\a", b"", br"x\r"]),
                &Version::OLDEST_SUPPORTED,
            )
            .unwrap();
        assert_eq!(&got[..], b"$HOME \\n \xff\x07\n\nx\r");
        assert_eq!(
            &ShowBuffer::latest()
                .parse(ok(&[b""]), &Version::OLDEST_SUPPORTED)
                .unwrap()[..],
            b""
        );
        assert_command_error(
            ShowBuffer::named("x").parse(err("no buffer x"), &Version::OLDEST_SUPPORTED),
            "show-buffer",
        );
    }

    #[test]
    fn list_buffers_parses() {
        let rows = ListBuffers::new()
            .parse(
                ok(&[b"1 2 a\tb", br"10 20 x\ny\sz"]),
                &Version::OLDEST_SUPPORTED,
            )
            .unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].name, "a\tb");
        assert_eq!(rows[1].name, "x\ny z");
        assert_eq!((rows[1].size, rows[1].created), (10, 20));
        assert_unexpected(
            ListBuffers::new().parse(ok(&[b"1 2"]), &Version::OLDEST_SUPPORTED),
            "list-buffers",
        );
        assert_unexpected(
            ListBuffers::new().parse(ok(&[b"x 2 a"]), &Version::OLDEST_SUPPORTED),
            "list-buffers",
        );
    }
}
