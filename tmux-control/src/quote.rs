//! Quoting words for a shell command line: the one quoter of both crates,
//! beneath every layer (the server addressing, the pane layer and shell
//! integration use it; it is public as `tmux_control::shell::quote`).

use std::borrow::Cow;

/// Quotes `word` as one word for a POSIX shell and for fish: as it is when
/// it holds only characters no shell treats specially (letters, digits and
/// `-_./=:@%+,`), else in single quotes, with each `'` written `'\''`
/// (which every POSIX shell and fish read as one quote). An empty word is
/// `''`.
///
/// ```
/// use tmux_control::shell::quote;
///
/// assert_eq!(quote("work-1"), "work-1");
/// assert_eq!(quote("a b"), "'a b'");
/// assert_eq!(quote("it's;$x"), r"'it'\''s;$x'");
/// assert_eq!(quote(""), "''");
/// ```
pub fn quote(word: &str) -> Cow<'_, str> {
    let plain = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:@%+,".contains(&b));
    if plain {
        Cow::Borrowed(word)
    } else {
        Cow::Owned(format!("'{}'", word.replace('\'', r"'\''")))
    }
}

/// Words quoted as [`quote`] does and joined with spaces: a command line a
/// person can paste, or a shell can be given to run.
///
/// ```
/// use tmux_control::shell::join;
///
/// assert_eq!(join(["ssh", "-p", "2222", "my host"]), "ssh -p 2222 'my host'");
/// ```
pub fn join<I, S>(words: I) -> String
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    words
        .into_iter()
        .map(|w| quote(w.as_ref()).into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_words_read_back_as_themselves() {
        for word in [
            "", "a", "a b", "it's", "'", "''", "$HOME", "a\\b", "x\ny", "é",
        ] {
            let quoted = quote(word);
            // What a POSIX shell reads: single-quoted runs and `\'`.
            let mut read = String::new();
            let mut chars = quoted.chars().peekable();
            let mut inside = false;
            while let Some(c) = chars.next() {
                match (inside, c) {
                    (false, '\'') | (true, '\'') => inside = !inside,
                    (false, '\\') => read.extend(chars.next()),
                    (_, c) => read.push(c),
                }
            }
            assert_eq!(read, word, "{quoted}");
        }
    }
}
