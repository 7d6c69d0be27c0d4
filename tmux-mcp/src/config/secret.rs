//! The webhook's signing secret (`TMUX_MCP_WEBHOOK_SECRET`), read with the
//! rest of the configuration so that a bad one stops start-up.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;

/// The prefix of a secret in the Standard Webhooks form, before its base64.
const SECRET_PREFIX: &str = "whsec_";

/// The shortest secret taken as raw bytes (one without [`SECRET_PREFIX`]).
const MIN_RAW_SECRET: usize = 16;

/// Reads a webhook secret into its key bytes, or says why it is refused.
///
/// The standard form is `whsec_` followed by the base64 (standard alphabet,
/// padded) of the key bytes, as Standard Webhooks receivers and libraries
/// print it; it must decode to at least one byte. A secret without the
/// `whsec_` prefix is taken as raw bytes (its UTF-8), but only if it is at
/// least 16 bytes long, so that a short password-like string is refused
/// rather than used as a weak key. Surrounding whitespace (a trailing
/// newline from a file) is ignored.
pub(crate) fn webhook_secret(text: &str) -> Result<Vec<u8>, String> {
    let text = text.trim();
    if text.is_empty() {
        return Err("the secret is empty".into());
    }
    if let Some(encoded) = text.strip_prefix(SECRET_PREFIX) {
        let key = BASE64.decode(encoded).map_err(|err| {
            format!("the part after {SECRET_PREFIX:?} is not valid base64: {err}")
        })?;
        if key.is_empty() {
            return Err(format!("nothing after {SECRET_PREFIX:?}"));
        }
        return Ok(key);
    }
    if text.len() < MIN_RAW_SECRET {
        return Err(format!(
            "a secret without the {SECRET_PREFIX:?} prefix is used as raw bytes and must be at \
             least {MIN_RAW_SECRET} bytes long (this one is {}); or give {SECRET_PREFIX}<base64>",
            text.len()
        ));
    }
    Ok(text.as_bytes().to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_checked() {
        let key: Vec<u8> = (0..24).collect();
        let secret = format!("whsec_{}", BASE64.encode(&key));
        assert_eq!(webhook_secret(&secret).unwrap(), key);
        assert_eq!(webhook_secret(&format!("{secret}\n")).unwrap(), key);
        for (bad, why) in [
            ("whsec_!!", "not valid base64"),
            ("", "empty"),
            ("  ", "empty"),
            ("whsec_", "nothing after"),
            ("short", "at least 16 bytes"),
        ] {
            let err = webhook_secret(bad).unwrap_err();
            assert!(err.contains(why), "{bad:?}: {err}");
        }
        assert_eq!(
            webhook_secret("a raw secret of 16+ bytes").unwrap(),
            b"a raw secret of 16+ bytes"
        );
    }
}
