//! The audit log: one JSON line per tool call, with the values of sensitive
//! arguments replaced by their length and a SHA-256 prefix.

use std::collections::BTreeSet;
use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use serde_json::{Map, Value, json};
use sha2::{Digest as _, Sha256};

use crate::text::rfc3339;

/// Argument names whose values never reach the log.
pub(crate) const SENSITIVE_KEYS: &[&str] =
    &["text", "keys", "command", "value", "env", "environment"];

/// Hex digits of the SHA-256 kept in a digest.
const DIGEST_HEX: usize = 12;

/// The most characters of an error message kept in a record.
const MESSAGE_MAX: usize = 500;

/// An append-only audit log file (mode 0600).
#[derive(Debug)]
pub(crate) struct AuditLog {
    file: Mutex<File>,
}

/// How a call ended, for the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// The tool did its job.
    Ok,
    /// The call failed (tool error, refused, unknown tool, bad arguments).
    Error(String),
}

impl AuditLog {
    /// Opens (creating if needed) `path` for appending, with mode 0600. An
    /// existing file is narrowed to 0600 too.
    pub(crate) fn open(path: &Path) -> std::io::Result<Self> {
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(path)?;
        let mode = file.metadata()?.permissions().mode();
        if mode & 0o077 != 0 {
            file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
        }
        Ok(Self {
            file: Mutex::new(file),
        })
    }

    /// Writes the record of one call made by `actor` (see
    /// [`crate::mcp::actors`]). `known` holds the argument names of the tool's
    /// input schema (`None` for a tool that does not exist).
    pub(crate) fn record(
        &self,
        actor: &str,
        tool: &str,
        arguments: Option<&Map<String, Value>>,
        known: Option<&BTreeSet<String>>,
        outcome: &Outcome,
        duration: Duration,
    ) {
        let line = record_line(
            SystemTime::now(),
            actor,
            tool,
            arguments,
            known,
            outcome,
            duration,
        );
        self.append(&line);
    }

    /// Appends one line (with its newline) in one write: with O_APPEND the
    /// line lands whole.
    fn append(&self, line: &str) {
        let mut file = self.file.lock().unwrap_or_else(|e| e.into_inner());
        if let Err(e) = file.write_all(line.as_bytes()) {
            tracing::error!("cannot write the audit log: {e}");
        }
    }
}

impl AuditLog {
    /// Writes the record of one batch of a person's input from the web
    /// view: who (their key's name), where, how long and its digest, never
    /// the text.
    pub(crate) fn record_person_input(
        &self,
        person: &str,
        host: &str,
        pane: &str,
        text: &[u8],
        error: Option<&str>,
    ) {
        let mut record = json!({
            "time": rfc3339(SystemTime::now()),
            "actor": person,
            "person": true,
            "tool": "web_input",
            "host": host,
            "pane": pane,
            "input": digest(text),
            "outcome": if error.is_some() { "error" } else { "ok" },
        });
        if let (Some(obj), Some(e)) = (record.as_object_mut(), error) {
            obj.insert(
                "message".into(),
                Value::String(e.chars().take(MESSAGE_MAX).collect()),
            );
        }
        self.append(&format!("{record}\n"));
    }

    /// Writes the log's lines to the disk (they are written to the file
    /// as they come, unbuffered; this makes them last through a crash of
    /// the machine too), as a shutdown ends.
    pub(crate) fn sync(&self) -> std::io::Result<()> {
        let file = self.file.lock().unwrap_or_else(|e| e.into_inner());
        file.sync_data()
    }
}

/// The JSON line (with its newline) for one call by `actor`: see
/// [`call_arguments`] for what is written of the arguments.
pub(crate) fn record_line(
    time: SystemTime,
    actor: &str,
    tool: &str,
    arguments: Option<&Map<String, Value>>,
    known: Option<&BTreeSet<String>>,
    outcome: &Outcome,
    duration: Duration,
) -> String {
    let empty = Map::new();
    let (arguments, unknown) = call_arguments(arguments.unwrap_or(&empty), known);
    let mut record = json!({
        "time": rfc3339(time),
        "actor": actor,
        "tool": tool,
        "arguments": arguments,
        "outcome": match outcome { Outcome::Ok => "ok", Outcome::Error(_) => "error" },
        "duration_ms": u64::try_from(duration.as_millis()).unwrap_or(u64::MAX),
    });
    if let Some(obj) = record.as_object_mut() {
        if let Outcome::Error(message) = outcome {
            let message: String = message.chars().take(MESSAGE_MAX).collect();
            obj.insert("message".into(), Value::String(message));
        }
        if !unknown.is_empty() {
            obj.insert(
                "unknown_arguments".into(),
                Value::Array(unknown.into_iter().map(Value::String).collect()),
            );
        }
    }
    let mut line = record.to_string();
    line.push('\n');
    line
}

/// What the log writes of a call's arguments, and the names among them that
/// the tool does not have (in order).
///
/// Every name is kept. The value of a name in [`SENSITIVE_KEYS`] is digested
/// ([`redact_arguments`]), and so is the value of a name the tool's schema
/// does not have (`known`; every name when the tool itself is unknown): a
/// misspelt `txt` or `comand` carries what `text` or `command` would, and
/// the log cannot tell which values of an unknown name are safe to keep.
/// A `null` stays `null`.
pub(crate) fn call_arguments(
    arguments: &Map<String, Value>,
    known: Option<&BTreeSet<String>>,
) -> (Value, Vec<String>) {
    let mut unknown = Vec::new();
    let logged = arguments
        .iter()
        .map(|(name, value)| {
            let is_known = known.is_some_and(|k| k.contains(name));
            if !is_known {
                unknown.push(name.clone());
            }
            let logged = match value {
                Value::Null => Value::Null,
                _ if is_known || SENSITIVE_KEYS.contains(&name.as_str()) => {
                    let one = Map::from_iter([(name.clone(), value.clone())]);
                    redact_arguments(&Value::Object(one))
                        .get(name)
                        .cloned()
                        .unwrap_or(Value::Null)
                }
                other => digest_value(other),
            };
            (name.clone(), logged)
        })
        .collect();
    (Value::Object(logged), unknown)
}

/// Replaces the values of [`SENSITIVE_KEYS`], at any depth, by digests. An
/// `env`/`environment` object keeps its variable names and digests each value.
pub(crate) fn redact_arguments(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    let v = if SENSITIVE_KEYS.contains(&k.as_str()) {
                        match v {
                            Value::Object(vars) if k == "env" || k == "environment" => {
                                Value::Object(
                                    vars.iter()
                                        .map(|(n, x)| (n.clone(), digest_value(x)))
                                        .collect(),
                                )
                            }
                            Value::Null => Value::Null,
                            other => digest_value(other),
                        }
                    } else {
                        redact_arguments(v)
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(redact_arguments).collect()),
        other => other.clone(),
    }
}

/// `{"len": N, "sha256": "<12 hex>"}` of a value: a string's UTF-8 bytes,
/// anything else's compact JSON.
pub(crate) fn digest_value(value: &Value) -> Value {
    let bytes = match value {
        Value::String(s) => s.as_bytes().to_vec(),
        other => other.to_string().into_bytes(),
    };
    digest(&bytes)
}

/// `{"len": N, "sha256": "<12 hex>"}` of bytes.
pub(crate) fn digest(bytes: &[u8]) -> Value {
    let hash = Sha256::digest(bytes);
    let hex: String = hash
        .iter()
        .flat_map(|b| [b >> 4, b & 0xf])
        .take(DIGEST_HEX)
        .map(|n| char::from_digit(u32::from(n), 16).unwrap_or('0'))
        .collect();
    json!({ "len": bytes.len(), "sha256": hex })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use std::time::UNIX_EPOCH;

    #[test]
    fn digests_sensitive_values_at_any_depth() {
        let args = json!({
            "target": "%1",
            "text": "secret",
            "keys": ["C-c", "Enter"],
            "env": {"TOKEN": "abc"},
            "nested": {"command": "ls", "value": null, "n": 3},
            "timeout_secs": 5
        });
        let out = redact_arguments(&args);
        assert_eq!(out["target"], "%1");
        assert_eq!(out["timeout_secs"], 5);
        assert_eq!(out["text"]["len"], 6);
        // sha256("secret") = 2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b
        assert_eq!(out["text"]["sha256"], "2bb80d537b1d");
        assert_eq!(out["keys"]["len"], "[\"C-c\",\"Enter\"]".len());
        assert_eq!(out["env"]["TOKEN"]["len"], 3);
        assert_eq!(out["nested"]["command"]["len"], 2);
        assert_eq!(out["nested"]["value"], Value::Null);
        assert!(!out.to_string().contains("secret"));
        assert!(!out.to_string().contains("abc"));
    }

    #[test]
    fn unknown_argument_names_are_kept_and_their_values_digested() {
        let known: BTreeSet<String> = ["target", "text", "timeout_secs"].map(String::from).into();
        let args = json!({
            "target": "%1",
            "txt": "hunter2",
            "timeout_secs": 5,
            "extra": {"nested": "s3cret"},
            "nothing": null,
            "text": "typed"
        });
        let line = record_line(
            UNIX_EPOCH,
            "agent-a",
            "send_text",
            args.as_object(),
            Some(&known),
            &Outcome::Error("unknown field `txt`".into()),
            Duration::ZERO,
        );
        let record: Value = serde_json::from_str(&line).unwrap();
        let logged = &record["arguments"];
        assert_eq!(logged["target"], "%1");
        assert_eq!(logged["timeout_secs"], 5);
        // sha256("hunter2") = f52fbd32b2b3b86ff88ef6c490628285f482af15ddcb29541f94bcf526a3f6c7
        assert_eq!(logged["txt"], json!({"len": 7, "sha256": "f52fbd32b2b3"}));
        assert_eq!(logged["extra"]["len"], "{\"nested\":\"s3cret\"}".len());
        assert_eq!(logged["nothing"], Value::Null);
        assert_eq!(logged["text"]["len"], 5);
        assert_eq!(
            record["unknown_arguments"],
            json!(["extra", "nothing", "txt"])
        );
        for secret in ["hunter2", "s3cret", "typed"] {
            assert!(!line.contains(secret), "{line}");
        }
        // A tool that does not exist: every name is unknown, every value digested.
        let line = record_line(
            UNIX_EPOCH,
            "agent-a",
            "no_such_tool",
            json!({"target": "%1", "n": 3}).as_object(),
            None,
            &Outcome::Error("tool not found".into()),
            Duration::ZERO,
        );
        let record: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(record["arguments"]["target"]["len"], 2);
        assert_eq!(record["arguments"]["n"]["len"], 1);
        assert_eq!(record["unknown_arguments"], json!(["n", "target"]));
    }

    #[test]
    fn file_is_0600_and_lines_are_json() {
        let dir = std::env::temp_dir().join(format!("tmux-mcp-audit-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("audit.jsonl");
        std::fs::write(&path, "").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let log = AuditLog::open(&path).unwrap();
        let args = json!({"target": "%1", "text": "hunter2"});
        let known: BTreeSet<String> = ["target", "text", "enter", "force"]
            .map(String::from)
            .into();
        log.record(
            "agent-a",
            "send_text",
            args.as_object(),
            Some(&known),
            &Outcome::Ok,
            Duration::from_millis(3),
        );
        log.record(
            "agent-b",
            "kill_server",
            None,
            None,
            &Outcome::Error("tool not found".into()),
            Duration::ZERO,
        );
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains("hunter2"));
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["tool"], "send_text");
        assert_eq!(lines[0]["actor"], "agent-a");
        assert_eq!(lines[1]["actor"], "agent-b");
        assert_eq!(lines[0]["outcome"], "ok");
        assert_eq!(lines[0]["duration_ms"], 3);
        assert_eq!(lines[1]["outcome"], "error");
        assert_eq!(lines[1]["message"], "tool not found");
        assert!(lines[0].get("unknown_arguments").is_none());
        assert!(lines[0]["time"].as_str().unwrap().ends_with('Z'));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
