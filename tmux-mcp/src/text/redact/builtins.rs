//! The built-in patterns: the shapes of secret [`super::Redactor`] masks
//! by default, in order of precedence, and the pieces the last four
//! `password` rules are assembled from ([`builtin_regex`]).

/// What a secret's value may look like after `name=` or `name:`: a quoted
/// string (also one the text ends inside of) or a run of characters up to
/// white space, a quote, a comma or a semicolon. Never past the end of the
/// line, so a `Password:` prompt does not mask the next line.
const VALUE: &str = r#"(?P<secret>"(?:[^"\\\n]|\\.)*(?:"|\z)|'[^'\n]*(?:'|\z)|[^\s"',;]+)"#;

/// The separator between a name and its value, on one line: optional
/// closing quote of a key, blanks, `=` or `:`, blanks.
const SEP: &str = r#"["']?[ \t]*[:=][ \t]*"#;

/// A built-in pattern: its name (shown in the mask), its regex and, for
/// secrets with a recognisable start, a pattern for a secret cut off at
/// the end of a text that may continue (the rest not printed yet).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Builtin {
    /// Shown in the mask, `[REDACTED:name]`.
    pub name: &'static str,
    /// The regex. When it has a group named `secret`, only that group is
    /// masked, so that `password=` stays readable and only the value goes.
    pub pattern: &'static str,
    /// Anchored at the end (`\z`): the start of such a secret, to mask at
    /// the end of a text whose end is not final.
    pub open_end: Option<&'static str>,
}

/// The names of variables and keys whose value is a secret: a word, or the
/// last words of a name joined by `_`, `-` or `.` (`DB_PASSWORD`,
/// `AWS_SECRET_ACCESS_KEY`, `client-secret`, `dbPassword`). Bare `token`
/// is matched only with a prefix (`GITHUB_TOKEN`, `x-auth-token`) or as a
/// quoted key or `token=` (see the `token` rules), so that "unexpected
/// token: }" in a compiler message is left alone.
/// `api key` may also be two words (`API key: ...`).
const NAMES: &str = r"(?:pass(?:word|wd|phrase)|secret(?:[_.-]?access)?(?:[_.-]?key)?|client[_.-]?secret|(?:api|access|auth|refresh|session|private|secret)[_.-]?(?:key|token)|api[ \t]key|credentials?)";

/// A value that follows a command-line option after a blank: like
/// [`VALUE`], but an unquoted value does not start with `-` (the next
/// option, as in `--password --verbose`).
const OPTION_VALUE: &str =
    r#"(?P<secret>"(?:[^"\\\n]|\\.)*(?:"|\z)|'[^'\n]*(?:'|\z)|[^\s"',;-][^\s"',;]*)"#;

/// The built-in patterns, in order of precedence (when two masks overlap,
/// the earlier pattern names the merged mask).
pub(crate) const BUILTINS: &[Builtin] = &[
    Builtin {
        name: "private-key",
        pattern: r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?s:.*?)(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\z)",
        open_end: None,
    },
    Builtin {
        // The body of a key block whose BEGIN line is out of view (scrolled
        // off a screen, before a read's window): base64 lines up to END.
        name: "private-key",
        pattern: r"(?m)(?:^[A-Za-z0-9+/=]+[ \t]*\n)+-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----",
        open_end: None,
    },
    Builtin {
        // The nonce in shell integration marks and the wrapped form's
        // markers (`nonce=` and 16 hex digits), wherever pane text shows it
        // (a raw read, a read that starts inside a mark, a match): with it a
        // program could fake the end of a run.
        name: "shell-nonce",
        pattern: r"\bnonce=(?P<secret>[0-9a-f]{16})\b",
        open_end: Some(r"\bnonce=(?P<secret>[0-9a-f]{1,15})\z"),
    },
    Builtin {
        name: "aws-access-key",
        pattern: r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b",
        open_end: Some(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]*\z"),
    },
    Builtin {
        // No `\b` at the end: a token directly followed by `_` is masked.
        name: "github-token",
        pattern: r"\bgh[pousr]_[A-Za-z0-9]{30,}",
        open_end: Some(r"\bgh[pousr]_[A-Za-z0-9]*\z"),
    },
    Builtin {
        name: "github-token",
        pattern: r"\bgithub_pat_[A-Za-z0-9_]{20,}\b",
        open_end: Some(r"\bgithub_pat_[A-Za-z0-9_]*\z"),
    },
    Builtin {
        name: "api-key",
        pattern: r"\bsk-[A-Za-z0-9_-]{20,}",
        open_end: Some(r"\bsk-[A-Za-z0-9_-]*\z"),
    },
    Builtin {
        // Stripe secret and restricted keys (not the publishable `pk_`).
        name: "api-key",
        pattern: r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{10,}",
        open_end: Some(r"\b[rs]k_(?:live|test)_[A-Za-z0-9]*\z"),
    },
    Builtin {
        name: "gitlab-token",
        pattern: r"\bglpat-[A-Za-z0-9_-]{20,}",
        open_end: Some(r"\bglpat-[A-Za-z0-9_-]*\z"),
    },
    Builtin {
        name: "google-api-key",
        pattern: r"\bAIza[0-9A-Za-z_-]{35}",
        open_end: Some(r"\bAIza[0-9A-Za-z_-]{0,34}\z"),
    },
    Builtin {
        name: "slack-token",
        pattern: r"\bxox[abposr]-[A-Za-z0-9-]{10,}",
        open_end: Some(r"\bxox[abposr]-[A-Za-z0-9-]*\z"),
    },
    Builtin {
        name: "jwt",
        pattern: r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
        open_end: Some(r"\beyJ[A-Za-z0-9_.-]*\z"),
    },
    Builtin {
        name: "bearer",
        pattern: r"(?i)\b(?:authorization[ \t]*:[ \t]*)?bearer[ \t]+(?P<secret>[A-Za-z0-9._~+/=-]{8,})",
        open_end: Some(r"(?i)\bbearer[ \t]+(?P<secret>[A-Za-z0-9._~+/=-]+)\z"),
    },
    Builtin {
        // HTTP basic credentials (base64 of user:password), also as a
        // quoted header in JSON or YAML.
        name: "basic-auth",
        pattern: r#"(?i)\bauthorization["']?[ \t]*[:=][ \t]*["']?basic[ \t]+(?P<secret>[A-Za-z0-9+/]+=*)"#,
        open_end: Some(
            r#"(?i)\bauthorization["']?[ \t]*[:=][ \t]*["']?basic[ \t]+(?P<secret>[A-Za-z0-9+/]+=*)\z"#,
        ),
    },
    Builtin {
        // The password of a URL's user info: scheme://user:PASSWORD@host.
        name: "password",
        pattern: r"(?i)\b[a-z][a-z0-9+.-]*://[^\s:/?#@]*:(?P<secret>[^\s/?#@]+)@",
        open_end: None,
    },
    Builtin {
        // A .netrc entry: `machine HOST login NAME password VALUE` (or
        // `default login ...`), on one line or one token a line.
        name: "password",
        pattern: r#"(?im)(?:\b(?:machine[ \t]+\S+|default)(?:[ \t]+|[ \t]*\n[ \t]*)|^[ \t]*)login[ \t]+[^\s;,]+(?:[ \t]+|[ \t]*\n[ \t]*)password[ \t]+(?P<secret>[^\s"']\S*)"#,
        open_end: None,
    },
    Builtin {
        // MySQL's password glued to its option: `mysql -uroot -pVALUE`
        // (only on a mysql or mariadb command line; `-p` alone prompts).
        name: "password",
        pattern: r#"\b(?:mysql[a-z]*|mariadb[a-z-]*)\b[^\n]*?[ \t]-p(?P<secret>[^\s"';|&]+)"#,
        open_end: None,
    },
    Builtin {
        // A docker config's credentials: "auth": "base64", "identitytoken": "...".
        name: "password",
        pattern: r#"(?i)"(?:auth|identitytoken|registrytoken)"[ \t]*:[ \t]*"(?P<secret>[^"\n]+)""#,
        open_end: None,
    },
    Builtin {
        name: "password",
        // `--password VALUE` (with `=`, the NAMES rule below masks it).
        pattern: "",
        open_end: None,
    },
    Builtin {
        name: "password",
        // NAMES with any prefix words: DB_PASSWORD, MY_SECRET, dbPassword.
        pattern: "",
        open_end: None,
    },
    Builtin {
        name: "password",
        // A token with a prefix: GITHUB_TOKEN=, x-auth-token:, csrftoken=.
        pattern: "",
        open_end: None,
    },
    Builtin {
        name: "password",
        // Bare token as a quoted key ("token": "...") or token=...
        pattern: "",
        open_end: None,
    },
];

/// The regex of the `i`-th built-in (the last four `password` rules are
/// assembled from [`NAMES`], [`SEP`], [`VALUE`] and [`OPTION_VALUE`]).
pub(super) fn builtin_regex(b: &Builtin, i: usize) -> String {
    let first_assembled = BUILTINS.len() - 4;
    match i.checked_sub(first_assembled) {
        Some(0) => format!(r"(?i)(?:^|[ \t])--?(?:password|passwd|pass)[ \t]+{OPTION_VALUE}"),
        Some(1) => format!(r"(?i)\b(?:[a-z0-9]+[_.-]?)*?{NAMES}{SEP}{VALUE}"),
        Some(2) => format!(r"(?i)\b(?:[a-z0-9]+[_.-]?)+token{SEP}{VALUE}"),
        Some(3) => format!(r#"(?i)(?:["']token["'][ \t]*:|\btoken=)[ \t]*{VALUE}"#),
        _ => b.pattern.to_owned(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use crate::text::redact::Redactor;

    fn r(text: &str) -> String {
        Redactor::new(true, &[]).unwrap().redact(text).into_owned()
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
    fn prefixed_names_are_masked() {
        for (text, masked) in [
            ("DB_PASSWORD=hunter22", "DB_PASSWORD=[REDACTED:password]"),
            (
                "export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG",
                "export AWS_SECRET_ACCESS_KEY=[REDACTED:password]",
            ),
            ("MY_SECRET=s3cr3t", "MY_SECRET=[REDACTED:password]"),
            ("GITHUB_TOKEN=abc123def", "GITHUB_TOKEN=[REDACTED:password]"),
            ("NPM_TOKEN: 'npm_x y'", "NPM_TOKEN: [REDACTED:password]"),
            (
                "x-auth-token: 0a1b2c3d",
                "x-auth-token: [REDACTED:password]",
            ),
            ("dbPassword=pw1", "dbPassword=[REDACTED:password]"),
            (
                "db.password = pw2 ok",
                "db.password = [REDACTED:password] ok",
            ),
            ("client_secret=abc", "client_secret=[REDACTED:password]"),
            ("url?token=abcdef&x=1", "url?token=[REDACTED:password]"),
        ] {
            assert_eq!(r(text), masked, "{text}");
        }
        // A name with a known prefix keeps the more specific mask.
        assert_eq!(
            r("OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwx"),
            "OPENAI_API_KEY=[REDACTED:api-key]"
        );
    }

    #[test]
    fn no_over_masking() {
        for text in [
            // A prompt does not reach into the next line.
            "Password:\nhello world",
            "[sudo] password for root: ",
            "Enter passphrase for key '/root/.ssh/id_ed25519': ",
            // Words that contain a name, and names that are not secrets.
            "error: unexpected token: }",
            "SyntaxError: Unexpected token ':'",
            "max_tokens=100 tokenizer: bert",
            "author: Jane; secretary: Bob",
            "PWD=/home/user OLDPWD=/tmp",
            "passwordless: true",
            "password_hash_algorithm is set",
        ] {
            assert_eq!(r(text), text);
        }
    }

    #[test]
    fn json_with_secret_keys_across_lines() {
        let json = "{\n  \"user\": \"ann\",\n  \"password\": \"pa\\\"ss word\",\n  \"token\": \"t0k3n\",\n  \"client_secret\": \"cs\",\n  \"n\": 1\n}";
        assert_eq!(
            r(json),
            "{\n  \"user\": \"ann\",\n  \"password\": [REDACTED:password],\n  \"token\": [REDACTED:password],\n  \"client_secret\": [REDACTED:password],\n  \"n\": 1\n}"
        );
    }

    #[test]
    fn shell_nonces_are_masked_in_marks_and_in_the_echoed_wrapper() {
        let mark = "\x1b]133;D;0;nonce=0123456789abcdef;pipestatus=0\x07";
        assert_eq!(
            r(mark),
            "\x1b]133;D;0;nonce=[REDACTED:shell-nonce];pipestatus=0\x07"
        );
        // A read that starts inside a mark, and the wrapped form's echo.
        assert!(!r("]133;A;nonce=0123456789abcdef").contains("0123456789abcdef"));
        assert!(
            !r(" printf '\\033]133;C;nonce=fedcba9876543210\\007'").contains("fedcba9876543210")
        );
        // Not a nonce: other lengths.
        assert_eq!(r("nonce=abc"), "nonce=abc");
    }

    #[test]
    fn more_secret_shapes_are_masked() {
        for (text, masked) in [
            (
                "postgres://admin:Pg5ecret@db:5432/app",
                "postgres://admin:[REDACTED:password]@db:5432/app",
            ),
            (
                "DATABASE_URL=mysql://u:My5ecret@h/db",
                "DATABASE_URL=mysql://u:[REDACTED:password]@h/db",
            ),
            ("redis://:pw0rd@cache", "redis://:[REDACTED:password]@cache"),
            (
                "Authorization: Basic dXNlcjpwYXNzd29yZA==",
                "Authorization: Basic [REDACTED:basic-auth]",
            ),
            (
                "curl -H 'authorization: basic dXNlcjpw' x",
                "curl -H 'authorization: basic [REDACTED:basic-auth]' x",
            ),
            (
                "{\"Authorization\": \"Basic dXNlcjpw\"}",
                "{\"Authorization\": \"Basic [REDACTED:basic-auth]\"}",
            ),
            (
                "machine example.com login ann password NetrcPw",
                "machine example.com login ann password [REDACTED:password]",
            ),
            (
                "machine h\n  login ann\n  password NetrcPw\n",
                "machine h\n  login ann\n  password [REDACTED:password]\n",
            ),
            (
                "mysqldump --password FlagPw db",
                "mysqldump --password [REDACTED:password] db",
            ),
            (
                "psql --password=FlagPw",
                "psql --password=[REDACTED:password]",
            ),
            (
                "cmd --passwd 'a b' -v",
                "cmd --passwd [REDACTED:password] -v",
            ),
            (
                "mysql -uroot -pMysqlPw db",
                "mysql -uroot -p[REDACTED:password] db",
            ),
            (
                "mariadb-dump -h h -pX1 db",
                "mariadb-dump -h h -p[REDACTED:password] db",
            ),
            (
                "{\"auths\":{\"r.io\":{\"auth\":\"dXNlcjpwYXNz\"}}}",
                "{\"auths\":{\"r.io\":{\"auth\":\"[REDACTED:password]\"}}}",
            ),
            ("api key: ApiKeyValue", "api key: [REDACTED:password]"),
            ("Your API Key = k-123", "Your API Key = [REDACTED:password]"),
            ("sk_live_4eC39HqLyjWDarjtT1zdp7dc", "[REDACTED:api-key]"),
            ("rk_test_abcdefghij12", "[REDACTED:api-key]"),
            ("glpat-xXyYzZ0123456789abcd", "[REDACTED:gitlab-token]"),
            (
                "key=AIzaSyA1234567890abcdefghijklmnopqrstuv&x",
                "key=[REDACTED:google-api-key]&x",
            ),
            (
                "ghp_0123456789abcdefghijklmnopqrstuvwxyz_x",
                "[REDACTED:github-token]_x",
            ),
        ] {
            assert_eq!(r(text), masked, "{text}");
        }
        // Cut off at an open end (more output may follow).
        let red = Redactor::new(true, &[]).unwrap();
        for (text, masked) in [
            ("x sk_live_4eC", "x [REDACTED:api-key]"),
            ("x glpat-xX", "x [REDACTED:gitlab-token]"),
            ("x AIzaSyA12", "x [REDACTED:google-api-key]"),
            (
                "Authorization: Basic dXNl",
                "Authorization: Basic [REDACTED:basic-auth]",
            ),
        ] {
            assert_eq!(red.redact_open(text), masked, "{text}");
        }
    }

    #[test]
    fn near_misses_of_the_new_shapes_stay() {
        for text in [
            "password:",
            "Password: ",
            "Enter API key: ",
            "--password-file /run/secrets/pw",
            "cmd --password-file=/run/secrets/pw",
            "mysql -u root -p db",
            "mysql -P 3306 -h db",
            "mkdir -p /tmp/x && ssh -p 22 host",
            "cmd --password --verbose",
            "http://localhost:8080/path@x",
            "https://example.com/a:b@c",
            "git@github.com:org/repo.git",
            "ssh://git@host:22/repo",
            "Basic information about the system",
            "login incorrect; password expired",
            "Last login: Mon on tty1 password changed",
            "pk_live_abcdefghij1234567890",
            "sk_live_short",
            "glpat-short",
            "AIzaShort",
            "\"auth\": true",
            "ghp_short_x",
        ] {
            assert_eq!(r(text), text);
        }
    }
}
