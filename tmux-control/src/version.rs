//! Which tmux a connection talks to, and what follows from it.
//!
//! tmux changes behaviour between releases in ways that matter to a client
//! that wants every byte exact: how `show-buffer` writes a buffer, how names
//! are stored, which flags `paste-buffer` and `capture-pane` take. The
//! connection asks tmux for `#{version}` once, in the query it makes at
//! connect time anyway, and the typed commands choose their flags and their
//! decoding from the [`Version`] (never by trying one form and retrying with
//! another).

use std::cmp::Ordering;
use std::fmt;
use std::sync::Arc;

/// A tmux version, as `tmux -V` and `#{version}` print it, ordered by
/// release: `3.3a < 3.4 < 3.5a < 3.6a < 3.7c < next-3.8 < 3.8-rc < 3.8`.
///
/// * `X.Y` with an optional patch letter (`3.3a`) is a release.
/// * `X.Y-rcN` (or `-rc`) is a release candidate, before `X.Y`.
/// * `next-X.Y` is the development head on the way to `X.Y`: after every
///   release before `X.Y` and before its candidates.
/// * Anything else still parses: the first `X.Y` in it is used (a
///   distribution's `3.4-2ubuntu1` is 3.4), and a string with no version
///   number in it at all (`master`, a bare commit) orders after every
///   numbered version, since only a build newer than any release says so.
///
/// Two versions are equal when they order equal; [`Display`](fmt::Display)
/// shows the text tmux gave.
///
/// ```
/// use tmux_control::Version;
/// let v = |s: &str| Version::parse(s);
/// assert!(v("3.3a") < v("3.4"));
/// assert!(v("3.4") < v("3.5a"));
/// assert!(v("3.7c") < v("next-3.8"));
/// assert!(v("next-3.8") < v("3.8-rc1"));
/// assert!(v("3.8-rc1") < v("3.8-rc2"));
/// assert!(v("3.8-rc2") < v("3.8"));
/// assert!(v("3.10") > v("3.9"));
/// assert!(v("master") > v("next-3.8"));
/// assert_eq!(v("tmux 3.3a"), v("3.3a"));
/// assert_eq!(v("next-3.8").to_string(), "next-3.8");
/// assert_eq!((v("3.7c").major(), v("3.7c").minor()), (3, 7));
/// ```
#[derive(Clone)]
pub struct Version {
    major: u32,
    minor: u32,
    /// The patch letter (`b'a'` for 3.3a), 0 for none.
    letter: u8,
    stage: Stage,
    /// What tmux printed; `None` for the constants.
    text: Option<Arc<str>>,
}

/// Where a version stands on the way to its `X.Y` release.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Stage {
    /// `next-X.Y`: the development head before `X.Y`.
    Next,
    /// `X.Y-rcN` (`rc` alone is 0).
    Candidate(u32),
    /// `X.Y` or `X.Ya`.
    Release,
}

impl Version {
    /// tmux 3.3a, the oldest version the library supports and tests (Debian
    /// 12's). [`CommandLine::new`](crate::command::CommandLine::new) writes
    /// lines for it unless told otherwise.
    pub const OLDEST_SUPPORTED: Version = Version::release(3, 3, b'a');

    const fn release(major: u32, minor: u32, letter: u8) -> Version {
        Version {
            major,
            minor,
            letter,
            stage: Stage::Release,
            text: None,
        }
    }

    /// Reads a version string such as `3.3a`, `next-3.8`, `3.8-rc2` or the
    /// whole of `tmux -V`'s output (`tmux 3.4`). Never fails: see the type's
    /// documentation for strings that are not in one of these forms.
    ///
    /// ```
    /// use tmux_control::Version;
    /// let v = Version::parse("3.4-2ubuntu1");
    /// assert_eq!(v, Version::parse("3.4"));
    /// assert_eq!(v.to_string(), "3.4-2ubuntu1");
    /// ```
    pub fn parse(text: &str) -> Version {
        let trimmed = text.trim();
        let trimmed = trimmed.strip_prefix("tmux ").unwrap_or(trimmed).trim();
        let text = Some(Arc::from(trimmed));
        let bytes = trimmed.as_bytes();
        // The first `digits.digits` in the string.
        let mut at = 0;
        while at < bytes.len() {
            if bytes[at].is_ascii_digit() && (at == 0 || !bytes[at - 1].is_ascii_digit()) {
                let (major, after_major) = digits(bytes, at);
                if bytes.get(after_major) == Some(&b'.')
                    && bytes.get(after_major + 1).is_some_and(u8::is_ascii_digit)
                {
                    let (minor, mut end) = digits(bytes, after_major + 1);
                    let mut letter = 0;
                    if let Some(&l) = bytes.get(end)
                        && l.is_ascii_lowercase()
                        && !bytes.get(end + 1).is_some_and(u8::is_ascii_alphanumeric)
                    {
                        letter = l;
                        end += 1;
                    }
                    let before = &trimmed[..at];
                    let after = &trimmed[end..];
                    let stage = if before.ends_with("next-") {
                        Stage::Next
                    } else if let Some(rc) = after.strip_prefix("-rc") {
                        let (n, _) = digits(rc.as_bytes(), 0);
                        Stage::Candidate(n)
                    } else {
                        Stage::Release
                    };
                    return Version {
                        major,
                        minor,
                        letter,
                        stage,
                        text,
                    };
                }
                at = after_major;
            } else {
                at += 1;
            }
        }
        Version {
            major: u32::MAX,
            minor: u32::MAX,
            letter: 0,
            stage: Stage::Release,
            text,
        }
    }

    /// The major number (3 for 3.7c); `u32::MAX` for a version string with
    /// no number in it.
    pub fn major(&self) -> u32 {
        self.major
    }

    /// The minor number (7 for 3.7c); `u32::MAX` for a version string with
    /// no number in it.
    pub fn minor(&self) -> u32 {
        self.minor
    }

    /// `true` from the first build of `major.minor` on: its development
    /// head (`next-X.Y`), its candidates and the release itself. What a
    /// release changed is in its development head too.
    ///
    /// ```
    /// use tmux_control::Version;
    /// assert!(Version::parse("next-3.8").at_least(3, 8));
    /// assert!(Version::parse("3.7c").at_least(3, 7));
    /// assert!(!Version::parse("3.6a").at_least(3, 7));
    /// ```
    pub fn at_least(&self, major: u32, minor: u32) -> bool {
        (self.major, self.minor) >= (major, minor)
    }

    fn key(&self) -> (u32, u32, Stage, u8) {
        (self.major, self.minor, self.stage, self.letter)
    }

    // What the typed commands need to know. Each names the tmux change
    // behind it; docs/compatibility.md lists them all with the tests.

    /// `show-buffer` writes the buffer's bytes raw to a control client
    /// (measured: 3.4 and later); 3.3a wrote them vis-escaped.
    pub(crate) fn show_buffer_is_raw(&self) -> bool {
        self.at_least(3, 4)
    }

    /// Reply lines of commands that print text (`display-message -p`, the
    /// `list-*` formats, `show-options`) reach a control client vis-escaped
    /// with backslashes left alone: control characters as `\ooo` or `\t`,
    /// bytes that are not UTF-8 as `\ooo` (3.4 and 3.5; 3.3a and 3.6 on
    /// write them raw).
    pub(crate) fn escapes_replies(&self) -> bool {
        self.at_least(3, 4) && !self.at_least(3, 6)
    }

    /// tmux's own vis escaping of names puts `\` before a `$` that is
    /// followed by a letter, `_` or `{` (3.3a and 3.4).
    pub(crate) fn vis_escapes_dollar(&self) -> bool {
        !self.at_least(3, 5)
    }

    /// tmux stores every window, session and buffer name through its own
    /// `clean_name` (vis-escaped, control characters and invalid UTF-8
    /// refused), the `-n` name of `new-window` and `new-session` included
    /// (3.7, d339ab51e). Before, `-n` names were stored raw and buffer
    /// names were not escaped at all.
    pub(crate) fn cleans_names(&self) -> bool {
        self.at_least(3, 7)
    }

    /// `paste-buffer` passes the text through vis(3) unless `-S` is given
    /// (3.7); earlier versions refuse `-S`.
    pub(crate) fn paste_needs_raw_flag(&self) -> bool {
        self.at_least(3, 7)
    }

    /// `capture-pane -N` pads lines with empty cells to the pane's width
    /// unless `-T` is given (3.4); 3.3a refuses `-T`.
    pub(crate) fn capture_has_trim_flag(&self) -> bool {
        self.at_least(3, 4)
    }

    /// The grid keeps a tab a program wrote as one cell spanning to the
    /// next tab stop, and `capture-pane -p` writes it back as `\t` (3.6;
    /// earlier versions write the spaces).
    #[cfg(feature = "emulator")]
    pub(crate) fn capture_keeps_tabs(&self) -> bool {
        self.at_least(3, 6)
    }
}

/// [`Version::OLDEST_SUPPORTED`] as a static, for `&'static` uses.
pub(crate) static OLDEST: Version = Version::OLDEST_SUPPORTED;

/// The value of the ASCII digits at `bytes[at..]` (saturating) and where
/// they end.
fn digits(bytes: &[u8], at: usize) -> (u32, usize) {
    let mut n: u32 = 0;
    let mut end = at;
    while let Some(d) = bytes.get(end).filter(|b| b.is_ascii_digit()) {
        n = n.saturating_mul(10).saturating_add(u32::from(d - b'0'));
        end += 1;
    }
    (n, end)
}

impl PartialEq for Version {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl Eq for Version {}

impl std::hash::Hash for Version {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.key().hash(state);
    }
}

impl PartialOrd for Version {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Version {
    fn cmp(&self, other: &Self) -> Ordering {
        self.key().cmp(&other.key())
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(text) = &self.text {
            return f.write_str(text);
        }
        if self.stage == Stage::Next {
            f.write_str("next-")?;
        }
        write!(f, "{}.{}", self.major, self.minor)?;
        if self.letter != 0 {
            write!(f, "{}", char::from(self.letter))?;
        }
        if let Stage::Candidate(n) = self.stage {
            write!(f, "-rc{n}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Version({self})")
    }
}

impl std::str::FromStr for Version {
    type Err = std::convert::Infallible;

    /// Same as [`Version::parse`].
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(Version::parse(s))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_version_orders() {
        let order = [
            "2.9a", "3.0", "3.0a", "3.1-rc", "3.1", "3.2-rc2", "3.2", "3.2a", "3.3a", "3.4", "3.5",
            "3.5a", "3.6", "3.6a", "3.7", "3.7b", "3.7c", "next-3.8", "3.8-rc", "3.8-rc3", "3.8",
            "next-3.9", "3.10", "next-4.0", "4.0", "master",
        ];
        for pair in order.windows(2) {
            let (a, b) = (Version::parse(pair[0]), Version::parse(pair[1]));
            assert!(a < b, "{a} < {b}");
            assert_eq!(a.to_string(), pair[0]);
        }
    }

    #[test]
    fn odd_strings_still_parse() {
        assert_eq!(Version::parse("  tmux next-3.8\n").to_string(), "next-3.8");
        assert_eq!(Version::parse("tmux next-3.8"), Version::parse("next-3.8"));
        assert_eq!(Version::parse("3.4-2ubuntu1"), Version::parse("3.4"));
        assert_eq!(Version::parse("openbsd-7.6").major(), 7);
        assert_eq!(Version::parse("").major(), u32::MAX);
        assert_eq!(Version::parse("99999999999.1").major(), u32::MAX);
        assert_eq!(Version::parse("3.").major(), u32::MAX);
        assert_eq!(Version::parse("3.3ab"), Version::parse("3.3"));
        assert_eq!(Version::OLDEST_SUPPORTED, Version::parse("3.3a"));
        assert_eq!(Version::OLDEST_SUPPORTED.to_string(), "3.3a");
        assert_eq!(format!("{:?}", Version::parse("3.4")), "Version(3.4)");
    }

    #[test]
    fn features_follow_the_release_that_changed_them() {
        let v = Version::parse;
        assert!(!v("3.3a").capture_has_trim_flag());
        assert!(v("3.4").capture_has_trim_flag());
        #[cfg(feature = "emulator")]
        assert!(!v("3.5a").capture_keeps_tabs() && v("3.6a").capture_keeps_tabs());
        assert!(!v("3.3a").show_buffer_is_raw());
        assert!(v("3.4").show_buffer_is_raw());
        assert!(!v("3.3a").escapes_replies() && !v("3.6a").escapes_replies());
        assert!(v("3.4").escapes_replies() && v("3.5a").escapes_replies());
        assert!(v("3.4").vis_escapes_dollar() && !v("3.5a").vis_escapes_dollar());
        assert!(!v("3.6a").cleans_names() && !v("3.6a").paste_needs_raw_flag());
        assert!(v("3.7c").cleans_names() && v("3.7c").paste_needs_raw_flag());
        assert!(v("next-3.8").cleans_names() && v("master").cleans_names());
    }
}
