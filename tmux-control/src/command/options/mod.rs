//! Options and environment: `set-option`, `show-options`,
//! `set-environment`, `show-environment`.
//!
//! This file holds [`OptionScope`] (which options table a command
//! addresses) and the option-name check and scope flags that `set-option`
//! and `show-options` share; [`set`] holds [`SetOption`], [`show`]
//! [`OptionValue`] and [`ShowOption`], and [`environment`]
//! [`SetEnvironment`], [`EnvValue`] and [`ShowEnvironment`].

mod environment;
mod set;
mod show;

pub use environment::{EnvValue, SetEnvironment, ShowEnvironment};
pub use set::SetOption;
pub use show::{OptionValue, ShowOption};

use crate::command::target::write_opt;
use crate::command::{CommandLine, Target};
use crate::error::{Error, Result};

/// Which options table a [`SetOption`] or [`ShowOption`] addresses.
///
/// ```
/// use tmux_control::command::{CommandLine, OptionScope, SetOption};
/// let cmd = SetOption::new(OptionScope::Window, "mode-keys", "vi").global();
/// assert_eq!(CommandLine::of(&cmd)?.to_string(), "set-option -w -g -- 'mode-keys' 'vi'");
/// # Ok::<(), tmux_control::Error>(())
/// ```
///
/// More scopes may be added as tmux grows them; a `match` on an
/// `OptionScope` outside this crate needs a wildcard arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum OptionScope {
    /// Server options (`-s`).
    Server,
    /// Session options (no flag).
    Session,
    /// Window options (`-w`).
    Window,
    /// Pane options (`-p`).
    Pane,
}

impl OptionScope {
    fn flag(self) -> Option<&'static str> {
        match self {
            OptionScope::Server => Some("-s"),
            OptionScope::Session => None,
            OptionScope::Window => Some("-w"),
            OptionScope::Pane => Some("-p"),
        }
    }
}

/// Checks an option name: letters, digits, `-` and `_`, an optional leading
/// `@` (user options) and an optional array index `[N]`. tmux expands
/// formats in option names, so nothing else is let through.
fn check_option_name(name: &str) -> Result<()> {
    let (base, index) = match name.split_once('[') {
        Some((base, rest)) => (base, Some(rest)),
        None => (name, None),
    };
    let base_ok = {
        let b = base.strip_prefix('@').unwrap_or(base);
        !b.is_empty()
            && b.bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_')
    };
    let index_ok = index.is_none_or(|rest| {
        rest.strip_suffix(']')
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()))
    });
    if base_ok && index_ok {
        Ok(())
    } else {
        Err(Error::InvalidArgument(format!(
            "{name:?} is not an option name (letters, digits, `-`, `_`, optional leading `@`, optional `[N]`)"
        )))
    }
}

fn write_scope(
    line: &mut CommandLine,
    scope: OptionScope,
    global: bool,
    target: Option<&Target>,
) -> Result<()> {
    if let Some(flag) = scope.flag() {
        line.word(flag)?;
    }
    line.flag_if("-g", global)?;
    write_opt(target, line)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn option_names() {
        for ok in [
            "status",
            "@x",
            "@my-opt_2",
            "status-format[0]",
            "user-keys[12]",
        ] {
            check_option_name(ok).unwrap();
        }
        for bad in [
            "", "@", "a b", "#{x}", "a[", "a[]", "a[x]", "a]", "@é", "a[1]x",
        ] {
            assert!(check_option_name(bad).is_err(), "{bad:?}");
        }
    }
}
