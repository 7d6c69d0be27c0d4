//! Masking secrets in pane text before it reaches the model.
//!
//! Applies to every piece of pane text a tool returns (screens, output,
//! matches, titles), never to what is typed into a pane.

use std::borrow::Cow;

use regex::{Captures, Regex};

use crate::config::ConfigError;

/// The built-in patterns: a name (shown in the mask) and a regex. When the
/// regex has a group named `secret`, only that group is masked, so that
/// `password=` stays readable and only the value disappears.
pub const DEFAULT_PATTERNS: &[(&str, &str)] = &[
    (
        "private-key",
        r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?s:.*?)(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\z)",
    ),
    (
        "aws-access-key",
        r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b",
    ),
    ("github-token", r"\bgh[pousr]_[A-Za-z0-9]{30,}\b"),
    ("github-token", r"\bgithub_pat_[A-Za-z0-9_]{20,}\b"),
    ("api-key", r"\bsk-[A-Za-z0-9_-]{20,}"),
    ("slack-token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
    (
        "jwt",
        r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
    ),
    (
        "bearer",
        r"(?i)\b(?:authorization\s*:\s*)?bearer\s+(?P<secret>[A-Za-z0-9._~+/=-]{8,})",
    ),
    (
        "password",
        r#"(?i)\b(?:password|passwd|passphrase|secret|api[_-]?key|access[_-]?token|auth[_-]?token|client[_-]?secret)["']?\s*[:=]\s*(?P<secret>"[^"\n]*"|'[^'\n]*'|[^\s"',;]+)"#,
    ),
];

/// Masks secrets in text.
#[derive(Debug, Clone)]
pub struct Redactor {
    rules: Vec<(String, Regex)>,
}

impl Redactor {
    /// The built-in patterns (unless `defaults` is false) followed by `extra`.
    pub fn new(defaults: bool, extra: &[String]) -> Result<Self, ConfigError> {
        let mut rules = Vec::new();
        if defaults {
            for (name, pattern) in DEFAULT_PATTERNS {
                let re = Regex::new(pattern).map_err(|e| ConfigError::BadRedaction {
                    pattern: (*pattern).to_owned(),
                    reason: e.to_string(),
                })?;
                rules.push(((*name).to_owned(), re));
            }
        }
        for pattern in extra {
            let re = Regex::new(pattern).map_err(|e| ConfigError::BadRedaction {
                pattern: pattern.clone(),
                reason: e.to_string(),
            })?;
            rules.push(("custom".to_owned(), re));
        }
        Ok(Self { rules })
    }

    /// A redactor that masks nothing.
    pub fn none() -> Self {
        Self { rules: Vec::new() }
    }

    /// `text` with every match masked as `[REDACTED:name]`.
    pub fn redact<'t>(&self, text: &'t str) -> Cow<'t, str> {
        let mut out = Cow::Borrowed(text);
        for (name, re) in &self.rules {
            if !re.is_match(&out) {
                continue;
            }
            let mask = format!("[REDACTED:{name}]");
            let replaced = re
                .replace_all(&out, |caps: &Captures<'_>| mask_match(caps, &mask))
                .into_owned();
            out = Cow::Owned(replaced);
        }
        out
    }

    /// Redacts screen lines as one text, so that a secret spanning lines
    /// (a private key block) is masked whole, while keeping the number of
    /// lines: each masked line break stays a line break, so line numbers
    /// still match the screen.
    pub fn redact_lines(&self, lines: &[String]) -> Vec<String> {
        let joined = lines.join("\n");
        let mut out = Cow::Borrowed(joined.as_str());
        for (name, re) in &self.rules {
            if !re.is_match(&out) {
                continue;
            }
            let mask = format!("[REDACTED:{name}]");
            let replaced = re
                .replace_all(&out, |caps: &Captures<'_>| {
                    let breaks = caps.get(0).map_or(0, |m| m.as_str().matches('\n').count());
                    let mut masked = mask_match(caps, &mask);
                    // Keep the masked block's line breaks, emptied.
                    let kept = masked.matches('\n').count();
                    masked.push_str(&"\n".repeat(breaks.saturating_sub(kept)));
                    masked
                })
                .into_owned();
            out = Cow::Owned(replaced);
        }
        out.split('\n').map(str::to_owned).collect()
    }

    /// Redacts an owned string in place.
    pub fn apply(&self, text: &mut String) {
        if let Cow::Owned(s) = self.redact(text) {
            *text = s;
        }
    }
}

fn mask_match(caps: &Captures<'_>, mask: &str) -> String {
    let Some(whole) = caps.get(0) else {
        return String::new();
    };
    match caps.name("secret") {
        Some(secret) => {
            let start = secret.start() - whole.start();
            let end = secret.end() - whole.start();
            let s = whole.as_str();
            format!("{}{mask}{}", &s[..start], &s[end..])
        }
        None => mask.to_owned(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn r(text: &str) -> String {
        Redactor::new(true, &[]).unwrap().redact(text).into_owned()
    }

    #[test]
    fn a_key_block_across_lines_is_masked_whole_and_lines_are_kept() {
        let lines: Vec<String> = [
            "$ cat key",
            "-----BEGIN OPENSSH PRIVATE KEY-----",
            "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ",
            "-----END OPENSSH PRIVATE KEY-----",
            "$ ",
        ]
        .map(String::from)
        .to_vec();
        let out = Redactor::new(true, &[]).unwrap().redact_lines(&lines);
        assert_eq!(out.len(), lines.len(), "{out:?}");
        assert!(!out.iter().any(|l| l.contains("b3BlbnNz")), "{out:?}");
        assert_eq!(out[0], "$ cat key");
        assert_eq!(out[4], "$ ");
    }

    #[test]
    fn masks_the_common_shapes() {
        assert_eq!(
            r("key AKIAIOSFODNN7EXAMPLE end"),
            "key [REDACTED:aws-access-key] end"
        );
        assert_eq!(
            r("ghp_0123456789abcdefghijklmnopqrstuvwxyz"),
            "[REDACTED:github-token]"
        );
        assert_eq!(
            r("github_pat_11ABCDEFG0123456789_abcdefghijklmnop"),
            "[REDACTED:github-token]"
        );
        assert_eq!(
            r("OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwx"),
            "OPENAI_API_KEY=[REDACTED:api-key]"
        );
        assert_eq!(r("xoxb-1234567890-abcdef"), "[REDACTED:slack-token]");
        assert_eq!(
            r("Authorization: Bearer abc.def-ghi_jkl"),
            "Authorization: Bearer [REDACTED:bearer]"
        );
        assert_eq!(r("password=hunter22 ok"), "password=[REDACTED:password] ok");
        assert_eq!(r("PASSWD: 'a b c'"), "PASSWD: [REDACTED:password]");
        assert_eq!(
            r("{\"api_key\": \"xyz\"}"),
            "{\"api_key\": [REDACTED:password]}"
        );
        assert_eq!(
            r("a\n-----BEGIN RSA PRIVATE KEY-----\nMIIE\nxx\n-----END RSA PRIVATE KEY-----\nb"),
            "a\n[REDACTED:private-key]\nb"
        );
        assert_eq!(
            r("-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn"),
            "[REDACTED:private-key]"
        );
        assert_eq!(
            r(
                "t=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
            ),
            "t=[REDACTED:jwt]"
        );
    }

    #[test]
    fn leaves_ordinary_text_alone() {
        for text in [
            "ls -l /tmp",
            "Password: ",
            "the secret of success",
            "total 12\ndrwxr-xr-x 2 root root 4096",
            "skip-worktree",
        ] {
            assert_eq!(r(text), text);
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
