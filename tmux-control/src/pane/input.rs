//! Typing and pasting text into a pane exactly: [`Tmux::type_text`] and
//! [`Tmux::paste`].

use std::sync::atomic::{AtomicU64, Ordering};

use super::Tmux;
use crate::command::{DeleteBuffer, PasteBuffer, SendKeys, SetBuffer, Target};
use crate::error::Result;

/// The most text one `send-keys -l` or `set-buffer` carries, and the most
/// bytes one `send-keys -H` carries: comfortably inside what tmux accepts
/// on one command line.
const CHUNK: usize = 1000;

/// How [`Tmux::type_text`] delivered the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Typed {
    /// Printable text, typed as literal keys (`send-keys -l`).
    Literal,
    /// Text with newlines or control characters, sent as exact bytes
    /// (`send-keys -H`).
    Bytes,
    /// The text was empty: nothing was sent.
    Nothing,
}

impl Tmux {
    /// Types `text` into the pane `target` exactly as given, as if typed
    /// on its terminal: printable text as literal keys, text with newlines,
    /// tabs, ESC or other control characters as exact bytes, in pieces
    /// that tmux accepts. Nothing in it is read as a key name, a tmux
    /// command or a format.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use std::time::Duration;
    /// use tmux_control::command::NewWindow;
    /// use tmux_control::{IsolatedServer, Pattern, Tmux, Typed};
    /// let server = IsolatedServer::new()?;
    /// let tmux = Tmux::connect(server.server()).await?;
    /// let started = tmux.spawn(NewWindow::new().command("exec cat")).await?;
    /// let echoed = started.output.expect(Pattern::literal("#{pane_id} ; Enter"));
    /// assert_eq!(tmux.type_text(started.pane, "#{pane_id} ; Enter").await?, Typed::Literal);
    /// echoed.wait(Duration::from_secs(10)).await?;
    /// assert_eq!(tmux.type_text(started.pane, "line\n").await?, Typed::Bytes);
    /// # Ok(()) }
    /// ```
    pub async fn type_text(&self, target: impl Into<Target>, text: &str) -> Result<Typed> {
        let target = target.into();
        if text.is_empty() {
            return Ok(Typed::Nothing);
        }
        if text.chars().any(|c| c < ' ' || c == '\x7f') {
            for command in SendKeys::hex_chunks(&target, text.as_bytes(), CHUNK) {
                self.run(command).await?;
            }
            return Ok(Typed::Bytes);
        }
        for chunk in char_chunks(text, CHUNK) {
            self.run(SendKeys::literal(&target, chunk)).await?;
        }
        Ok(Typed::Literal)
    }

    /// Pastes `text` into the pane `target` through a paste buffer of its
    /// own (a unique name, deleted after the paste), as a terminal paste:
    /// each newline arrives as a carriage return. With `bracketed`, the
    /// paste is wrapped in bracketed-paste markers when the pane's program
    /// asked for them, so shells and editors take it as one paste instead
    /// of running it line by line. Every other byte arrives as given, on
    /// every tmux version.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use std::time::Duration;
    /// use tmux_control::command::NewWindow;
    /// use tmux_control::{IsolatedServer, Pattern, Tmux};
    /// let server = IsolatedServer::new()?;
    /// let tmux = Tmux::connect(server.server()).await?;
    /// let started = tmux.spawn(NewWindow::new().command("exec cat")).await?;
    /// let echoed = started.output.expect(Pattern::literal("two"));
    /// tmux.paste(started.pane, "one\ntwo", true).await?;
    /// echoed.wait(Duration::from_secs(10)).await?;
    /// # Ok(()) }
    /// ```
    pub async fn paste(
        &self,
        target: impl Into<Target>,
        text: &str,
        bracketed: bool,
    ) -> Result<()> {
        if text.is_empty() {
            return Ok(());
        }
        static PASTES: AtomicU64 = AtomicU64::new(0);
        let name = format!(
            "tmux-control-paste-{}-{}",
            std::process::id(),
            PASTES.fetch_add(1, Ordering::Relaxed)
        );
        let pasted = async {
            for (i, chunk) in char_chunks(text, CHUNK).into_iter().enumerate() {
                let mut set = SetBuffer::new(chunk).buffer(&name);
                if i > 0 {
                    set = set.append();
                }
                self.run(set).await?;
            }
            let mut paste = PasteBuffer::new(target).buffer(&name).delete();
            if bracketed {
                paste = paste.bracketed();
            }
            self.run(paste).await
        };
        let result = pasted.await;
        if result.is_err() {
            // Leave no half-filled buffer behind (it may not exist: the
            // first chunk failed, or tmux refused the paste after deleting).
            let _ = self.run(DeleteBuffer::new(&name)).await;
        }
        result
    }
}

/// Splits `text` into pieces of at most `max` bytes (at least 4, the
/// longest character), on character boundaries.
fn char_chunks(text: &str, max: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let mut end = rest.len().min(max.max(4));
        while !rest.is_char_boundary(end) {
            end -= 1;
        }
        out.push(&rest[..end]);
        rest = &rest[end..];
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn chunks_keep_characters_whole() {
        let text = "aé🚀b".repeat(300);
        let chunks = char_chunks(&text, 7);
        assert!(chunks.iter().all(|c| c.len() <= 7));
        assert_eq!(chunks.concat(), text);
        assert!(char_chunks("", 5).is_empty());
    }
}
