//! Masking secrets in pane text before it reaches the model.
//!
//! Applies to every piece of pane text a tool returns (screens, output,
//! matches, titles), never to what is typed into a pane.
//!
//! The public [`Redactor`] and its entry points for a text or a text in
//! parts are here; the built-in patterns are in `builtins`, the rules
//! they and the configuration's extra patterns compile to in `rules`,
//! finding and masking the spans to mask in `spans`, and redacting lines
//! as one text (all of them, a window, or marked) in `lines`.

use std::borrow::Cow;

use crate::config::ConfigError;

mod builtins;
mod lines;
mod rules;
mod spans;

use rules::Rule;

/// Masks secrets in text.
///
/// Every method finds the secrets in the whole text it is given at once,
/// then masks them: a secret that spans lines, fields or the chunks a
/// program wrote it in is masked whole, as long as the caller passes the
/// pieces together ([`Redactor::redact_parts`]).
#[derive(Debug, Clone)]
pub(crate) struct Redactor {
    rules: Vec<Rule>,
    /// Every rule's pattern in one set: one pass over a text says which
    /// rules can match at all (most texts match none), so only those are
    /// searched for their spans (and compiled). Made at the first text.
    any: std::sync::Arc<std::sync::OnceLock<Option<regex::RegexSet>>>,
}

impl Redactor {
    /// The built-in patterns (unless `defaults` is false) followed by `extra`.
    pub(crate) fn new(defaults: bool, extra: &[String]) -> Result<Self, ConfigError> {
        let rules = rules::compile(defaults, extra)?;
        Ok(Self {
            rules,
            any: std::sync::Arc::default(),
        })
    }

    /// The set of every rule's pattern; `None` for a set too large to
    /// build, and then every rule is searched, as it would be anyway.
    fn set(&self) -> Option<&regex::RegexSet> {
        self.any
            .get_or_init(|| regex::RegexSet::new(self.rules.iter().map(|r| r.re.as_str())).ok())
            .as_ref()
    }

    /// `text` with every secret masked as `[REDACTED:name]`.
    pub(crate) fn redact<'t>(&self, text: &'t str) -> Cow<'t, str> {
        let spans = self.spans(text, false);
        if spans.is_empty() {
            return Cow::Borrowed(text);
        }
        Cow::Owned(self.render(text, 0..text.len(), &spans, false))
    }

    /// Like [`Redactor::redact`], for a text whose end is not final (more
    /// output may follow): a secret cut off at the end is masked too.
    #[cfg(test)]
    pub(crate) fn redact_open(&self, text: &str) -> String {
        let spans = self.spans(text, true);
        self.render(text, 0..text.len(), &spans, false)
    }

    /// Redacts `parts` as one text (their concatenation) and returns each
    /// part masked: a secret that spans parts is masked in every part it
    /// touches. For the fields of one reply (the text before a match, the
    /// match, the text after it) and for context around a window (pass
    /// the context as its own parts and drop them). With `open_end`, the
    /// end of the last part is not final.
    pub(crate) fn redact_parts(&self, parts: &[&str], open_end: bool) -> Vec<String> {
        let joined = parts.concat();
        let spans = self.spans(&joined, open_end);
        let mut out = Vec::with_capacity(parts.len());
        let mut at = 0;
        for part in parts {
            out.push(self.render(&joined, at..at + part.len(), &spans, false));
            at += part.len();
        }
        out
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn parts_are_redacted_together() {
        let red = Redactor::new(true, &[]).unwrap();
        // A wait that matched inside a secret: every field it touches is masked.
        assert_eq!(
            red.redact_parts(&["x password=hun", "ter22", " y"], false),
            [
                "x password=[REDACTED:password]",
                "[REDACTED:password]",
                " y"
            ]
        );
        // A token printed in two writes, split between fields.
        let token = "ghp_0123456789abcdefghijklmnopqrstuvwxyz";
        let (a, b) = token.split_at(10);
        assert_eq!(
            red.redact_parts(&["token ", a, b, "\n$ "], false),
            [
                "token ",
                "[REDACTED:github-token]",
                "[REDACTED:github-token]",
                "\n$ "
            ]
        );
        // Context parts only help: dropping them leaves the middle masked.
        let out = red.redact_parts(
            &[
                "-----BEGIN RSA PRIVATE KEY-----\nMIIE",
                "xyz\nabc",
                "\n-----END RSA PRIVATE KEY-----",
            ],
            false,
        );
        assert_eq!(out[1], "[REDACTED:private-key]");
        assert_eq!(
            red.redact_parts(&["plain", "", "text"], false),
            ["plain", "", "text"]
        );
    }

    #[test]
    fn a_secret_cut_off_at_an_open_end_is_masked() {
        let red = Redactor::new(true, &[]).unwrap();
        for (text, masked) in [
            ("token ghp_01234", "token [REDACTED:github-token]"),
            ("key AKIAIOSF", "key [REDACTED:aws-access-key]"),
            (
                "Authorization: Bearer abc",
                "Authorization: Bearer [REDACTED:bearer]",
            ),
            ("\"password\": \"hunt", "\"password\": [REDACTED:password]"),
            ("x=sk-ab", "x=[REDACTED:api-key]"),
        ] {
            assert_eq!(red.redact_open(text), masked, "{text}");
        }
        // Only at the end, and only when the end is open.
        assert_eq!(red.redact("token ghp_01234"), "token ghp_01234");
        assert_eq!(red.redact_open("ghp_01 then more"), "ghp_01 then more");
        assert_eq!(
            red.redact_parts(&["a ghp_01", "23"], true)[1],
            "[REDACTED:github-token]"
        );
    }
}
