//! Typed identifiers of tmux objects.
//!
//! tmux names every session, window and pane with a number that never
//! changes while the object lives and is never reused by the same server:
//! `$3` is a session, `@7` a window, `%12` a pane. These types keep the three
//! apart so that a pane id can never be passed where a window is expected.

use std::fmt;
use std::str::FromStr;

/// The error returned when text is not an id of the expected kind.
///
/// ```
/// use tmux_control::PaneId;
/// assert!("@3".parse::<PaneId>().is_err());
/// assert_eq!("%3".parse::<PaneId>().unwrap(), PaneId(3));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{input:?} is not a tmux {kind} id (expected {sigil} followed by decimal digits)")]
pub struct ParseIdError {
    input: String,
    kind: &'static str,
    sigil: char,
}

macro_rules! tmux_id {
    ($(#[$doc:meta])* $name:ident, $sigil:literal, $kind:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(pub u32);

        impl $name {
            /// The sigil tmux writes before the number.
            pub const SIGIL: char = $sigil;

            /// Parses the id from bytes as tmux writes it (sigil and decimal digits).
            ///
            /// Returns `None` for anything else, including numbers that do not fit a `u32`.
            pub fn from_bytes(bytes: &[u8]) -> Option<Self> {
                let digits = bytes.strip_prefix(&[Self::SIGIL as u8])?;
                parse_u32(digits).map($name)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}{}", $sigil, self.0)
            }
        }

        #[cfg(feature = "serde")]
        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }

        #[cfg(feature = "serde")]
        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
                text.parse().map_err(serde::de::Error::custom)
            }
        }

        impl FromStr for $name {
            type Err = ParseIdError;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Self::from_bytes(s.as_bytes()).ok_or_else(|| ParseIdError {
                    input: s.to_owned(),
                    kind: $kind,
                    sigil: $sigil,
                })
            }
        }
    };
}

tmux_id!(
    /// A session id, written `$N` by tmux.
    ///
    /// ```
    /// use tmux_control::SessionId;
    /// let id: SessionId = "$4".parse().unwrap();
    /// assert_eq!(id, SessionId(4));
    /// assert_eq!(id.to_string(), "$4");
    /// ```
    SessionId,
    '$',
    "session"
);

tmux_id!(
    /// A window id, written `@N` by tmux.
    ///
    /// ```
    /// use tmux_control::WindowId;
    /// assert_eq!(WindowId::from_bytes(b"@12"), Some(WindowId(12)));
    /// assert_eq!(WindowId(12).to_string(), "@12");
    /// ```
    WindowId,
    '@',
    "window"
);

tmux_id!(
    /// A pane id, written `%N` by tmux.
    ///
    /// ```
    /// use tmux_control::PaneId;
    /// assert_eq!("%0".parse::<PaneId>().unwrap(), PaneId(0));
    /// assert_eq!(PaneId(7).to_string(), "%7");
    /// ```
    PaneId,
    '%',
    "pane"
);

/// Parses a non-empty run of ASCII digits that fits a `u32`.
pub(crate) fn parse_u32(digits: &[u8]) -> Option<u32> {
    if digits.is_empty() || digits.len() > 10 {
        return None;
    }
    let mut n: u64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        n = n * 10 + u64::from(d - b'0');
    }
    u32::try_from(n).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_rejects() {
        assert_eq!(SessionId::from_bytes(b"$0"), Some(SessionId(0)));
        assert_eq!(PaneId::from_bytes(b"%4294967295"), Some(PaneId(u32::MAX)));
        assert_eq!(PaneId::from_bytes(b"%4294967296"), None);
        assert_eq!(PaneId::from_bytes(b"%"), None);
        assert_eq!(PaneId::from_bytes(b"%1a"), None);
        assert_eq!(PaneId::from_bytes(b"@1"), None);
        let err = "x".parse::<WindowId>().unwrap_err();
        assert!(err.to_string().contains("window"), "{err}");
    }
}

#[cfg(all(test, feature = "serde"))]
#[allow(clippy::unwrap_used)]
mod serde_tests {
    use super::*;

    #[test]
    fn ids_travel_as_tmux_writes_them() {
        assert_eq!(serde_json::to_string(&PaneId(3)).unwrap(), r#""%3""#);
        assert_eq!(
            serde_json::from_str::<WindowId>(r#""@12""#).unwrap(),
            WindowId(12)
        );
        assert_eq!(
            serde_json::from_str::<SessionId>(r#""$0""#).unwrap(),
            SessionId(0)
        );
        let e = serde_json::from_str::<PaneId>(r#""@1""#).unwrap_err();
        assert!(e.to_string().contains("pane"), "{e}");
    }
}
