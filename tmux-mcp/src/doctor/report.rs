//! The report: [`Check`], its [`Status`], and [`Report`] with its text and JSON renderings.

use serde_json::{Map, Value, json};

/// The outcome of one check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Status {
    /// Nothing to fix.
    Ok,
    /// Works, but something is worth knowing or fixing.
    Warn,
    /// Does not work; tmux-mcp will fail here.
    Fail,
    /// Not checked (nothing configured, or deliberately not looked at).
    Skipped,
}

impl Status {
    fn label(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::Warn => "warn",
            Self::Fail => "FAIL",
            Self::Skipped => "skipped",
        }
    }
}

/// One finding of the doctor.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Check {
    /// A short stable name (`tmux`, `socket_dir`, `server`, ...).
    pub name: &'static str,
    /// The outcome.
    pub status: Status,
    /// What was found, in a sentence.
    pub message: String,
    /// How to fix it, when there is something to fix.
    pub hint: Option<String>,
    /// Facts found on the way (paths, modes, versions), for `--json`.
    pub facts: Map<String, Value>,
}

impl Check {
    pub(super) fn new(name: &'static str, status: Status, message: impl Into<String>) -> Self {
        Self {
            name,
            status,
            message: message.into(),
            hint: None,
            facts: Map::new(),
        }
    }

    pub(super) fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    pub(super) fn fact(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.facts.insert(key.to_owned(), value.into());
        self
    }

    fn to_json(&self) -> Value {
        let mut object = Map::new();
        object.insert("name".into(), self.name.into());
        object.insert("status".into(), json!(self.status));
        object.insert("message".into(), self.message.clone().into());
        object.insert(
            "hint".into(),
            self.hint.clone().map_or(Value::Null, Value::String),
        );
        for (key, value) in &self.facts {
            object.entry(key.clone()).or_insert_with(|| value.clone());
        }
        Value::Object(object)
    }
}

/// Everything the doctor found.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Report {
    /// The checks, in the order they ran.
    pub checks: Vec<Check>,
}

impl Report {
    /// `true` when no check failed.
    pub fn ok(&self) -> bool {
        !self.checks.iter().any(|c| c.status == Status::Fail)
    }

    /// The report as one JSON object:
    /// `{"version", "ok", "checks": [{"name", "status", "message", "hint", ...facts}]}`.
    pub fn to_json(&self) -> Value {
        json!({
            "version": env!("CARGO_PKG_VERSION"),
            "ok": self.ok(),
            "checks": self.checks.iter().map(Check::to_json).collect::<Vec<_>>(),
        })
    }

    /// The report as a table a person reads.
    pub fn to_table(&self) -> String {
        let width = self.checks.iter().map(|c| c.name.len()).max().unwrap_or(0);
        let mut out = format!("tmux-mcp {} doctor\n\n", env!("CARGO_PKG_VERSION"));
        for check in &self.checks {
            out.push_str(&format!(
                "{:<7}  {:<width$}  {}\n",
                check.status.label(),
                check.name,
                check.message
            ));
            if let Some(hint) = &check.hint {
                out.push_str(&format!("{:<7}  {:<width$}  fix: {hint}\n", "", ""));
            }
        }
        let failed = self
            .checks
            .iter()
            .filter(|c| c.status == Status::Fail)
            .count();
        out.push('\n');
        if failed == 0 {
            out.push_str("Nothing failed.\n");
        } else {
            out.push_str(&format!(
                "{failed} check{} failed.\n",
                if failed == 1 { "" } else { "s" }
            ));
        }
        out
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn json_has_every_field() {
        let report = Report {
            checks: vec![Check::new("x", Status::Fail, "m").fact("k", 1)],
        };
        let v = report.to_json();
        assert_eq!(v["ok"], false);
        assert_eq!(v["checks"][0]["k"], 1);
        assert_eq!(v["checks"][0]["hint"], Value::Null);
        assert!(report.to_table().contains("1 check failed"));
    }
}
