//! A tool's arguments from the command line, read against the tool's input
//! schema: a JSON object, `--NAME VALUE` pairs, or both; and the help text
//! of a tool, made from its description and schemas.

use std::fmt::Write as _;

use rmcp::model::Tool;
use serde_json::{Map, Value};

/// Why the command line does not make a call (exit status 2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(super) struct Usage(pub(super) String);

/// What the words after the tool's name ask for.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Asked {
    /// The tool's help.
    Help,
    /// A call with these arguments.
    Call(Map<String, Value>),
}

/// Reads the words after the tool's name: at most one JSON object, then
/// (or instead) `--NAME VALUE` pairs, whose names are the tool's argument
/// names (`--max-bytes` stands for `max_bytes`). A value is a string for
/// an argument whose schema allows strings and JSON otherwise; a boolean
/// argument may stand alone (`--force`); an array argument may be given by
/// repeating its flag (`--keys C-c --keys Enter`) or as one JSON array. A
/// pair wins over the same name in the object.
pub(super) fn read(tool: &Tool, words: &[String]) -> Result<Asked, Usage> {
    let mut arguments = Map::new();
    let mut words = words.iter().peekable();
    if let Some(first) = words.peek()
        && !first.starts_with("--")
        && first.as_str() != "-h"
    {
        let text = words.next().map(String::as_str).unwrap_or_default();
        arguments = object(&tool.name, text)?;
    }
    let properties = tool
        .input_schema
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    while let Some(word) = words.next() {
        if word == "--help" || word == "-h" {
            return Ok(Asked::Help);
        }
        let Some(flag) = word.strip_prefix("--").filter(|f| !f.is_empty()) else {
            return Err(Usage(format!(
                "unexpected {word:?} after the arguments of {}: give the arguments as one JSON \
                 object and/or --NAME VALUE pairs",
                tool.name
            )));
        };
        let (flag, inline) = match flag.split_once('=') {
            Some((name, value)) => (name, Some(value.to_owned())),
            None => (flag, None),
        };
        let name = flag.replace('-', "_");
        // `host` is added to the schemas by servers that have hosts.
        let schema = match properties.get(&name) {
            Some(schema) => schema.clone(),
            None if name == "host" => serde_json::json!({"type": "string"}),
            None => {
                return Err(Usage(format!(
                    "{} has no argument {name:?}; its arguments: {}",
                    tool.name,
                    names(&properties)
                )));
            }
        };
        let types = types_of(&schema);
        let value = match inline {
            Some(value) => value,
            None => match words.peek() {
                Some(next) if !(types == ["boolean"] && next.starts_with("--")) => {
                    words.next().cloned().unwrap_or_default()
                }
                _ if types.contains(&"boolean") => "true".to_owned(),
                _ => {
                    return Err(Usage(format!("--{flag} of {} needs a value", tool.name)));
                }
            },
        };
        let value = value_for(&types, value);
        match (types.contains(&"array"), arguments.get_mut(&name), value) {
            (true, Some(Value::Array(items)), Value::Array(more)) => items.extend(more),
            (true, Some(Value::Array(items)), one) => items.push(one),
            (true, _, Value::Array(items)) => {
                arguments.insert(name, Value::Array(items));
            }
            (true, _, one) => {
                arguments.insert(name, Value::Array(vec![one]));
            }
            (false, _, value) => {
                arguments.insert(name, value);
            }
        }
    }
    Ok(Asked::Call(arguments))
}

/// The arguments of `tool` given as one JSON object.
pub(super) fn object(tool: &str, text: &str) -> Result<Map<String, Value>, Usage> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(object)) => Ok(object),
        Ok(other) => Err(Usage(format!(
            "the arguments of {tool} must be a JSON object, not {}",
            kind_of(&other)
        ))),
        Err(e) => Err(Usage(format!(
            "the arguments of {tool} are not valid JSON ({e}): {text}"
        ))),
    }
}

/// A flag's value as the argument's schema wants it: a string where
/// strings are allowed (unless it spells a JSON array for an array
/// argument), else the JSON it spells (the server reads a string that
/// spells nothing of the right type, and names the argument in its error).
fn value_for(types: &[&str], text: String) -> Value {
    let parsed = serde_json::from_str::<Value>(&text).ok();
    match parsed {
        Some(Value::Array(items)) if types.contains(&"array") => Value::Array(items),
        Some(value) if !types.contains(&"string") => value,
        _ => Value::String(text),
    }
}

/// The JSON types a property's schema allows (its `type`, or for an enum
/// of strings, `string`).
fn types_of(schema: &Value) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ if schema.get("enum").is_some() => vec!["string"],
        _ => Vec::new(),
    }
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn names(properties: &Map<String, Value>) -> String {
    if properties.is_empty() {
        return "none".to_owned();
    }
    properties
        .keys()
        .map(|k| format!("--{}", k.replace('_', "-")))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The help of `tmux-mcp call TOOL --help`: the tool's description, each
/// argument with its type and description, and each member of the result.
pub(super) fn help(tool: &Tool) -> String {
    let mut out = format!(
        "tmux-mcp call {name} [JSON] [--ARGUMENT VALUE]...\n\n{}\n",
        tool.description.as_deref().unwrap_or_default(),
        name = tool.name
    );
    let required: Vec<&str> = tool
        .input_schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let properties = tool
        .input_schema
        .get("properties")
        .and_then(Value::as_object);
    out.push_str("\nArguments:\n");
    match properties {
        Some(properties) if !properties.is_empty() => {
            for (name, schema) in properties {
                let mut line = format!("  --{} <{}>", name.replace('_', "-"), type_label(schema));
                if required.contains(&name.as_str()) {
                    line.push_str(" (required)");
                }
                if let Some(default) = schema.get("default") {
                    let _ = write!(line, " [default: {default}]");
                }
                out.push_str(&line);
                out.push('\n');
                if let Some(description) = schema.get("description").and_then(Value::as_str) {
                    let _ = writeln!(out, "      {description}");
                }
            }
        }
        _ => out.push_str("  none\n"),
    }
    if let Some(output) = &tool.output_schema
        && let Some(members) = output.get("properties").and_then(Value::as_object)
    {
        out.push_str("\nResult (printed as JSON with --json):\n");
        for (name, schema) in members {
            let _ = writeln!(out, "  {name} <{}>", type_label(schema));
            if let Some(description) = schema.get("description").and_then(Value::as_str) {
                let _ = writeln!(out, "      {description}");
            }
        }
    }
    out
}

/// A short name of what a schema allows: `string`, `integer|null`,
/// `one of: a, b`, `array of string`.
fn type_label(schema: &Value) -> String {
    if let Some(Value::Array(values)) = schema.get("enum") {
        let values: Vec<String> = values
            .iter()
            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
            .collect();
        return format!("one of: {}", values.join(", "));
    }
    let types = types_of(schema);
    if types.is_empty() {
        return if schema.get("$ref").is_some() || schema.get("anyOf").is_some() {
            "object".to_owned()
        } else {
            "any".to_owned()
        };
    }
    let mut label = types.join("|");
    if types.contains(&"array")
        && let Some(items) = schema.get("items")
    {
        let _ = write!(label, " of {}", type_label(items));
    }
    label
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool() -> Tool {
        let schema = json!({
            "type": "object",
            "properties": {
                "target": {"type": "string", "description": "The pane."},
                "command": {"type": "string"},
                "timeout_secs": {"type": "number", "minimum": 0},
                "force": {"type": "boolean", "default": false},
                "keys": {"type": "array", "items": {"type": "string"}},
                "mode": {"type": "string", "enum": ["auto", "wrapped"]},
            },
            "required": ["target"],
        });
        Tool::new(
            "run",
            "Runs a command.",
            std::sync::Arc::new(schema.as_object().unwrap().clone()),
        )
    }

    fn call(words: &[&str]) -> Result<Value, Usage> {
        let words: Vec<String> = words.iter().map(|w| (*w).to_owned()).collect();
        match read(&tool(), &words)? {
            Asked::Call(arguments) => Ok(Value::Object(arguments)),
            Asked::Help => Ok(json!("help")),
        }
    }

    #[test]
    fn json_and_flags_make_one_object() {
        assert_eq!(
            call(&[r#"{"target":"%1","command":"ls"}"#, "--timeout-secs", "2.5"]).unwrap(),
            json!({"target": "%1", "command": "ls", "timeout_secs": 2.5})
        );
        // A string argument keeps a value that spells a number; a boolean
        // stands alone; a repeated array flag collects its items.
        assert_eq!(
            call(&["--target=7", "--force", "--keys", "C-c", "--keys", "Enter"]).unwrap(),
            json!({"target": "7", "force": true, "keys": ["C-c", "Enter"]})
        );
        assert_eq!(
            call(&[
                "--keys",
                r#"["a","b"]"#,
                "--force",
                "false",
                "--mode",
                "wrapped"
            ])
            .unwrap(),
            json!({"keys": ["a", "b"], "force": false, "mode": "wrapped"})
        );
        // A value that does not spell JSON goes to the server as a string
        // (which names the argument in its error).
        assert_eq!(
            call(&["--timeout-secs", "soon"]).unwrap(),
            json!({"timeout_secs": "soon"})
        );
        assert_eq!(call(&["--target", "x", "--help"]).unwrap(), json!("help"));
    }

    #[test]
    fn bad_command_lines_name_what_is_wrong() {
        let err = |words: &[&str]| call(words).unwrap_err().0;
        assert!(err(&["--colour", "red"]).contains("no argument \"colour\""));
        assert!(err(&["--colour", "red"]).contains("--timeout-secs"));
        assert!(err(&["{not json"]).contains("not valid JSON"));
        assert!(err(&["[1]"]).contains("must be a JSON object, not an array"));
        assert!(err(&["--target"]).contains("--target of run needs a value"));
        assert!(err(&["--target", "a", "stray"]).contains("unexpected \"stray\""));
    }

    #[test]
    fn help_shows_the_arguments() {
        let text = help(&tool());
        assert!(text.starts_with("tmux-mcp call run"), "{text}");
        assert!(
            text.contains("  --target <string> (required)\n      The pane."),
            "{text}"
        );
        assert!(
            text.contains("--force <boolean> [default: false]"),
            "{text}"
        );
        assert!(text.contains("--keys <array of string>"), "{text}");
        assert!(text.contains("--mode <one of: auto, wrapped>"), "{text}");
    }
}
