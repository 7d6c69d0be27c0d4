//! The rules a [`super::Redactor`] masks with: the built-in patterns
//! (unless turned off) followed by the extra patterns of the
//! configuration, each compiled to a [`Rule`].

use std::sync::{Arc, OnceLock};

use regex::Regex;

use super::builtins::{BUILTINS, builtin_regex};
use crate::config::ConfigError;

/// One rule: a name for the mask and its regexes.
#[derive(Debug, Clone)]
pub(super) struct Rule {
    pub(super) name: String,
    pub(super) re: Lazy,
    pub(super) open_end: Option<Lazy>,
}

/// A regex compiled the first time a text may match it. The built-in
/// patterns are many and most texts match none (the redactor's set says
/// which may), so a process that redacts little, such as one `tmux-mcp
/// call`, compiles little. Shared by the redactor's clones.
#[derive(Debug, Clone)]
pub(super) struct Lazy {
    pattern: Arc<str>,
    compiled: Arc<OnceLock<Option<Regex>>>,
}

impl Lazy {
    /// A built-in pattern, compiled when first used (every built-in
    /// compiles: `every_builtin_compiles`).
    fn new(pattern: &str) -> Self {
        Self {
            pattern: pattern.into(),
            compiled: Arc::default(),
        }
    }

    /// A pattern compiled already (the configuration's, checked at start).
    fn compiled(re: Regex) -> Self {
        Self {
            pattern: re.as_str().into(),
            compiled: Arc::new(OnceLock::from(Some(re))),
        }
    }

    pub(super) fn as_str(&self) -> &str {
        &self.pattern
    }

    /// The regex; `None` only for a pattern that does not compile, which
    /// the tests rule out for the built-ins (said once in the log).
    pub(super) fn get(&self) -> Option<&Regex> {
        self.compiled
            .get_or_init(|| match Regex::new(&self.pattern) {
                Ok(re) => Some(re),
                Err(e) => {
                    tracing::error!(pattern = %self.pattern, "a redaction pattern does not compile: {e}");
                    None
                }
            })
            .as_ref()
    }
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
                re: Lazy::new(&builtin_regex(b, i)),
                open_end: b.open_end.map(Lazy::new),
            });
        }
    }
    for pattern in extra {
        rules.push(Rule {
            name: "custom".to_owned(),
            re: Lazy::compiled(compile(pattern)?),
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
    fn every_builtin_compiles() {
        for rule in super::compile(true, &[]).unwrap() {
            assert!(rule.re.get().is_some(), "{}", rule.name);
            if let Some(open_end) = &rule.open_end {
                assert!(open_end.get().is_some(), "{} (open end)", rule.name);
            }
        }
    }

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
