//! The rules a [`super::Redactor`] masks with: the built-in patterns
//! (unless turned off) followed by the extra patterns of the
//! configuration, each compiled to a [`Rule`].

use regex::Regex;

use super::builtins::{BUILTINS, builtin_regex};
use crate::config::ConfigError;

/// One rule: a name for the mask and its regexes.
#[derive(Debug, Clone)]
pub(super) struct Rule {
    pub(super) name: String,
    pub(super) re: Regex,
    pub(super) open_end: Option<Regex>,
}

/// The rules of the built-in patterns (unless `defaults` is false)
/// followed by one `custom` rule for each pattern of `extra`; a pattern
/// that does not compile is a [`ConfigError::BadRedaction`].
pub(super) fn compile(defaults: bool, extra: &[String]) -> Result<Vec<Rule>, ConfigError> {
    let compile = |pattern: &str| {
        Regex::new(pattern).map_err(|e| ConfigError::BadRedaction {
            pattern: pattern.to_owned(),
            reason: e.to_string(),
        })
    };
    let mut rules = Vec::new();
    if defaults {
        for (i, b) in BUILTINS.iter().enumerate() {
            rules.push(Rule {
                name: b.name.to_owned(),
                re: compile(&builtin_regex(b, i))?,
                open_end: b.open_end.map(compile).transpose()?,
            });
        }
    }
    for pattern in extra {
        rules.push(Rule {
            name: "custom".to_owned(),
            re: compile(pattern)?,
            open_end: None,
        });
    }
    Ok(rules)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use crate::text::redact::Redactor;

    #[test]
    fn custom_patterns_and_no_defaults() {
        let red = Redactor::new(
            false,
            &["internal-[0-9]+".into(), "id=(?P<secret>\\d+)".into()],
        )
        .unwrap();
        assert_eq!(red.redact("x internal-42 y"), "x [REDACTED:custom] y");
        assert_eq!(red.redact("id=7"), "id=[REDACTED:custom]");
        assert_eq!(red.redact("AKIAIOSFODNN7EXAMPLE"), "AKIAIOSFODNN7EXAMPLE");
        assert!(Redactor::new(true, &["(".into()]).is_err());
    }
}
