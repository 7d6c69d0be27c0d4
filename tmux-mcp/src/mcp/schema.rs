//! Tool schemas in standard JSON Schema, and call arguments read the way the
//! schemas say, in one place for every tool.
//!
//! - [`standardise`] rewrites the schemas `schemars` derives: it drops the
//!   numeric `format`s (`uint64`, `uint32`, `uint8`, `int32`, `double`…),
//!   which are not JSON Schema formats (MCP Inspector warns about each), and
//!   keeps what they meant as `minimum` and `maximum`.
//! - [`prepare`] runs on a call's arguments before they are deserialised:
//!   a string where the schema wants a number, an integer, a boolean, an
//!   array or an object is read as JSON (MCP Inspector's CLI sends every
//!   `--tool-arg` as a string); an integer argument gets a whole number
//!   within its `minimum` and `maximum` or an error that names the argument
//!   and the range.

use serde_json::{Map, Number, Value};

/// How deep [`prepare`] follows nested schemas and values.
const MAX_DEPTH: usize = 32;

/// The `format`s `schemars` puts on numbers, with the range each stands
/// for: `(minimum, maximum)`, `None` where it adds no bound worth stating
/// (64-bit and larger integers, floating point).
fn numeric_format(format: &str) -> Option<(Option<i128>, Option<i128>)> {
    Some(match format {
        "int8" => (Some(i8::MIN.into()), Some(i8::MAX.into())),
        "int16" => (Some(i16::MIN.into()), Some(i16::MAX.into())),
        "int32" => (Some(i32::MIN.into()), Some(i32::MAX.into())),
        "uint8" => (Some(0), Some(u8::MAX.into())),
        "uint16" => (Some(0), Some(u16::MAX.into())),
        "uint32" => (Some(0), Some(u32::MAX.into())),
        "uint" | "uint64" | "uint128" => (Some(0), None),
        "int" | "int64" | "int128" | "float" | "double" => (None, None),
        _ => return None,
    })
}

/// Keys whose values are data (instances), not schemas: never rewritten.
const DATA_KEYS: &[&str] = &["default", "const", "enum", "examples"];

/// Removes the numeric `format`s from `schema` (at any depth), adding the
/// `minimum` and `maximum` they stood for where the schema has none.
pub(crate) fn standardise(schema: &mut Map<String, Value>) {
    if let Some(Value::String(format)) = schema.get("format")
        && let Some((min, max)) = numeric_format(format)
    {
        schema.remove("format");
        for (key, bound) in [("minimum", min), ("maximum", max)] {
            if let Some(bound) = bound.and_then(number) {
                schema.entry(key).or_insert(Value::Number(bound));
            }
        }
    }
    for (key, value) in schema.iter_mut() {
        if !DATA_KEYS.contains(&key.as_str()) {
            standardise_value(value);
        }
    }
}

/// Which schema of a tool [`compact`] works on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    /// The input schema: what the model reads to make a call.
    Input,
    /// The output schema as `tools/list` sends it: what a client checks
    /// structured content against.
    Output,
}

/// Says the same in fewer bytes, so that the tool list an agent pays for in
/// its context stays small (see `docs/benchmarks.md`, "The tool list"):
///
/// - no `$schema` (MCP's default dialect is draft 2020-12, the one used)
///   and no `title` at the root;
/// - a string enum written as `oneOf` of documented `const`s becomes an
///   `enum` (the description of the property names the values);
/// - in an input schema, an optional argument's `type: [T, "null"]` becomes
///   `T` and its `default: null` goes (leaving an argument out is how it is
///   not given; a `null` is still accepted);
/// - an output schema keeps its structure (types, `null` where structured
///   content carries it, required members, enums) but not its prose or
///   numeric bounds: a client checks results against it, and the model
///   reads the results themselves. The documented schema is
///   `tmux-mcp call TOOL --help`'s.
pub(crate) fn compact(schema: &mut Map<String, Value>, side: Side) {
    schema.remove("$schema");
    schema.remove("title");
    compact_schema(schema, side, 0);
}

/// Keywords whose value is a map of names to schemas.
const SCHEMA_MAPS: &[&str] = &["properties", "$defs", "definitions", "patternProperties"];
/// Keywords whose value is a schema.
const SCHEMA_ONE: &[&str] = &["items", "additionalProperties", "not", "contains"];
/// Keywords whose value is a list of schemas.
const SCHEMA_LISTS: &[&str] = &["anyOf", "oneOf", "allOf", "prefixItems"];

fn compact_schema(schema: &mut Map<String, Value>, side: Side, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    if let Some(Value::Array(alternatives)) = schema.get("oneOf")
        && let Some(values) = string_consts(alternatives)
    {
        schema.remove("oneOf");
        schema.insert("type".to_owned(), Value::String("string".to_owned()));
        schema.insert("enum".to_owned(), Value::Array(values));
    }
    match side {
        Side::Input => {
            if schema.get("default") == Some(&Value::Null) {
                schema.remove("default");
            }
            if let Some(Value::Array(types)) = schema.get("type")
                && types.len() == 2
                && types.contains(&Value::String("null".to_owned()))
                && let Some(other) = types.iter().find(|t| t.as_str() != Some("null")).cloned()
            {
                schema.insert("type".to_owned(), other);
            }
        }
        Side::Output => {
            for keyword in ["description", "title", "minimum", "maximum", "default"] {
                schema.remove(keyword);
            }
        }
    }
    for (key, value) in schema.iter_mut() {
        let key = key.as_str();
        if SCHEMA_MAPS.contains(&key) {
            if let Value::Object(members) = value {
                for member in members.values_mut() {
                    compact_value(member, side, depth + 1);
                }
            }
        } else if SCHEMA_ONE.contains(&key) || SCHEMA_LISTS.contains(&key) {
            compact_value(value, side, depth + 1);
        }
    }
}

/// A schema, or a list of schemas.
fn compact_value(value: &mut Value, side: Side, depth: usize) {
    match value {
        Value::Object(map) => compact_schema(map, side, depth),
        Value::Array(items) => items
            .iter_mut()
            .for_each(|item| compact_value(item, side, depth)),
        _ => {}
    }
}

/// The values of a `oneOf` whose every alternative is one string `const`
/// (with at most a description and `type: string` beside it).
fn string_consts(alternatives: &[Value]) -> Option<Vec<Value>> {
    alternatives
        .iter()
        .map(|alternative| {
            let alternative = alternative.as_object()?;
            let value = alternative.get("const").filter(|c| c.is_string())?;
            let plain = alternative.iter().all(|(k, v)| match k.as_str() {
                "const" | "description" => true,
                "type" => v.as_str() == Some("string"),
                _ => false,
            });
            plain.then(|| value.clone())
        })
        .collect()
}

fn standardise_value(value: &mut Value) {
    match value {
        Value::Object(map) => standardise(map),
        Value::Array(items) => items.iter_mut().for_each(standardise_value),
        _ => {}
    }
}

/// Reads `arguments` the way `schema` (a tool's standardised input schema)
/// says, in place: coerces strings and checks integers (see the module
/// documentation). Returns why the arguments cannot be used, naming the
/// argument, for the tool error.
pub(crate) fn prepare(
    schema: &Map<String, Value>,
    arguments: &mut Map<String, Value>,
) -> Result<(), String> {
    let root = Root(schema);
    for (name, value) in arguments.iter_mut() {
        if let Some(property) = root.property(schema, name) {
            root.prepare(property, value, name, 0)?;
        }
    }
    Ok(())
}

/// The whole schema, for `$ref`s.
#[derive(Clone, Copy)]
struct Root<'a>(&'a Map<String, Value>);

impl<'a> Root<'a> {
    /// Follows a local `$ref` (`#/$defs/Name`, `#/definitions/Name`).
    fn resolve(self, mut schema: &'a Map<String, Value>) -> &'a Map<String, Value> {
        for _ in 0..MAX_DEPTH {
            let Some(Value::String(reference)) = schema.get("$ref") else {
                break;
            };
            let Some(path) = reference.strip_prefix("#/") else {
                break;
            };
            let mut node = self.0;
            for part in path.split('/') {
                match node.get(part) {
                    Some(Value::Object(next)) => node = next,
                    _ => return schema,
                }
            }
            schema = node;
        }
        schema
    }

    /// The schema of the member `name` of an object described by `schema`.
    fn property(
        self,
        schema: &'a Map<String, Value>,
        name: &str,
    ) -> Option<&'a Map<String, Value>> {
        let schema = self.resolve(schema);
        if let Some(Value::Object(p)) = schema.get("properties").and_then(|p| p.get(name)) {
            return Some(self.resolve(p));
        }
        match schema.get("additionalProperties") {
            Some(Value::Object(p)) => Some(self.resolve(p)),
            _ => None,
        }
    }

    /// The JSON types `schema` allows: its `type`, or the types of the
    /// alternatives of an `anyOf` / `oneOf`. Empty when it does not say.
    fn types(self, schema: &'a Map<String, Value>, depth: usize, out: &mut Vec<&'a str>) {
        if depth > MAX_DEPTH {
            return;
        }
        let schema = self.resolve(schema);
        match schema.get("type") {
            Some(Value::String(t)) => out.push(t),
            Some(Value::Array(ts)) => out.extend(ts.iter().filter_map(Value::as_str)),
            _ => {}
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(alternatives)) = schema.get(key) {
                for alternative in alternatives.iter().filter_map(Value::as_object) {
                    self.types(alternative, depth + 1, out);
                }
            }
        }
    }

    fn prepare(
        self,
        schema: &'a Map<String, Value>,
        value: &mut Value,
        path: &str,
        depth: usize,
    ) -> Result<(), String> {
        if depth > MAX_DEPTH {
            return Ok(());
        }
        let mut types = Vec::new();
        self.types(schema, depth, &mut types);
        if types.is_empty() {
            return Ok(());
        }
        if let Value::String(text) = value
            && !types.contains(&"string")
        {
            *value = coerce(text, &types).ok_or_else(|| {
                format!(
                    "invalid type for {path}: expected {}, got the string {text:?}",
                    describe(&types)
                )
            })?;
        }
        match value {
            Value::Number(n) if types.contains(&"integer") && !types.contains(&"number") => {
                *value = Value::Number(whole_number(schema, n, path)?);
            }
            Value::Object(members) => {
                for (name, member) in members.iter_mut() {
                    if let Some(property) = self.property(schema, name) {
                        self.prepare(property, member, &format!("{path}.{name}"), depth + 1)?;
                    }
                }
            }
            Value::Array(items) => {
                if let Some(Value::Object(item)) = schema.get("items") {
                    let item = self.resolve(item);
                    for (i, element) in items.iter_mut().enumerate() {
                        self.prepare(item, element, &format!("{path}[{i}]"), depth + 1)?;
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }
}

/// A string read as the JSON value it spells, when that value has one of
/// `types`: `"1"` for a number, `"true"` for a boolean, `"[\"C-c\"]"` for an
/// array. `None` for a string that spells nothing of those types (`"soon"`,
/// `"NaN"`, `"1e999"`, `"yes"`), which the caller refuses by name.
fn coerce(text: &str, types: &[&str]) -> Option<Value> {
    let parsed: Value = serde_json::from_str(text).ok()?;
    let fits = match &parsed {
        Value::Bool(_) => types.contains(&"boolean"),
        Value::Number(_) => types.contains(&"number") || types.contains(&"integer"),
        Value::Array(_) => types.contains(&"array"),
        Value::Object(_) => types.contains(&"object"),
        Value::Null | Value::String(_) => false,
    };
    fits.then_some(parsed)
}

/// "a number", "an integer or null"…, for messages.
fn describe(types: &[&str]) -> String {
    let names: Vec<&str> = types
        .iter()
        .map(|t| match *t {
            "integer" => "a whole number",
            "number" => "a number",
            "boolean" => "true or false",
            "array" => "an array",
            "object" => "an object",
            "null" => "null",
            other => other,
        })
        .collect();
    names.join(" or ")
}

/// The bound `key` (`minimum` or `maximum`) of `schema` as a whole number.
fn bound(schema: &Map<String, Value>, key: &str) -> Option<i128> {
    let n = schema.get(key)?.as_number()?;
    if let Some(i) = n.as_i64() {
        return Some(i.into());
    }
    if let Some(u) = n.as_u64() {
        return Some(u.into());
    }
    let f = n.as_f64()?;
    // A fractional bound: the whole numbers inside it.
    let f = if key == "minimum" {
        f.ceil()
    } else {
        f.floor()
    };
    float_to_i128(f)
}

/// `f` as an `i128` when it is a whole number in range.
fn float_to_i128(f: f64) -> Option<i128> {
    // 2^127: every f64 below it in magnitude fits; `as` would saturate.
    const LIMIT: f64 = 1.7014118346046923e38;
    (f.is_finite() && f.fract() == 0.0 && f.abs() < LIMIT).then_some(f as i128)
}

fn number(n: i128) -> Option<Number> {
    if let Ok(i) = i64::try_from(n) {
        return Some(i.into());
    }
    u64::try_from(n).ok().map(Number::from)
}

/// The whole number an integer argument stands for: refused when it is
/// fractional or outside the schema's `minimum` / `maximum` (with a message
/// naming the argument and the range); saturated at the 64-bit range when
/// the schema states no bound on that side (a count or a cursor larger than
/// any the server has then means "all").
fn whole_number(schema: &Map<String, Value>, n: &Number, path: &str) -> Result<Number, String> {
    let min = bound(schema, "minimum");
    let max = bound(schema, "maximum");
    let range = match (min, max) {
        (Some(lo), Some(hi)) => format!(" from {lo} to {hi}"),
        (Some(lo), None) => format!(" of {lo} or more"),
        (None, Some(hi)) => format!(" of {hi} or less"),
        (None, None) => String::new(),
    };
    let refuse = || format!("{path} must be a whole number{range}, not {n}");
    let value = if let Some(i) = n.as_i64() {
        i128::from(i)
    } else if let Some(u) = n.as_u64() {
        i128::from(u)
    } else {
        let f = n.as_f64().ok_or_else(refuse)?;
        if f.fract() != 0.0 {
            return Err(refuse());
        }
        // A whole number beyond what an i128 holds (1e300): as far as the
        // sign says.
        float_to_i128(f).unwrap_or(if f < 0.0 { i128::MIN } else { i128::MAX })
    };
    let lo = min.unwrap_or(i64::MIN.into());
    let hi = max.unwrap_or(if lo >= 0 {
        u64::MAX.into()
    } else {
        i64::MAX.into()
    });
    let value = match (value < lo, value > hi) {
        (true, _) if min.is_some() => return Err(refuse()),
        (_, true) if max.is_some() => return Err(refuse()),
        (true, _) => lo,
        (_, true) => hi,
        _ => value,
    };
    number(value).ok_or_else(refuse)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            other => panic!("not an object: {other}"),
        }
    }

    /// A schema in the shape schemars derives, with one of each kind.
    fn schema() -> Map<String, Value> {
        let mut s = object(json!({
            "type": "object",
            "$defs": {"Kind": {"oneOf": [{"const": "a", "type": "string"}, {"const": "b", "type": "string"}]}},
            "properties": {
                "target": {"type": "string"},
                "maybe_text": {"type": ["string", "null"]},
                "timeout_secs": {"type": ["number", "null"], "format": "double", "minimum": 0},
                "max_bytes": {"type": ["integer", "null"], "format": "uint", "minimum": 0},
                "cursor": {"type": ["integer", "null"], "format": "uint64", "minimum": 0},
                "lines": {"type": ["integer", "null"], "format": "uint32", "minimum": 0},
                "start": {"type": ["integer", "null"], "format": "int64"},
                "row": {"type": "integer", "format": "int32"},
                "width": {"type": ["integer", "null"], "format": "uint32", "minimum": 2, "maximum": 10000},
                "percent": {"type": ["integer", "null"], "format": "uint8", "minimum": 0, "maximum": 255},
                "enter": {"type": "boolean", "default": false},
                "keys": {"type": "array", "items": {"type": "string"}},
                "sizes": {"type": "array", "items": {"type": "integer", "format": "uint16"}},
                "env": {"type": ["object", "null"], "additionalProperties": {"type": "string"}},
                "kind": {"$ref": "#/$defs/Kind", "default": "a"},
                "split": {"anyOf": [{"$ref": "#/$defs/Kind"}, {"type": "null"}]},
                "format": {"type": "string", "default": "int32"}
            }
        }));
        standardise(&mut s);
        s
    }

    fn prepared(args: Value) -> Result<Value, String> {
        let mut args = object(args);
        prepare(&schema(), &mut args)?;
        Ok(Value::Object(args))
    }

    #[test]
    fn numeric_formats_become_standard_bounds() {
        let s = Value::Object(schema());
        let text = s.to_string();
        for format in [
            "uint", "uint8", "uint16", "uint32", "uint64", "int32", "int64", "double",
        ] {
            assert!(
                !text.contains(&format!("\"format\":\"{format}\"")),
                "{format} left in {text}"
            );
        }
        let p = &s["properties"];
        assert_eq!(
            p["max_bytes"],
            json!({"type": ["integer", "null"], "minimum": 0})
        );
        assert_eq!(
            p["cursor"],
            json!({"type": ["integer", "null"], "minimum": 0})
        );
        assert_eq!(p["lines"]["maximum"], json!(4_294_967_295_u64));
        assert_eq!(
            p["row"],
            json!({"type": "integer", "minimum": -2_147_483_648_i64, "maximum": 2_147_483_647})
        );
        assert_eq!(p["start"], json!({"type": ["integer", "null"]}));
        assert_eq!(
            p["timeout_secs"],
            json!({"type": ["number", "null"], "minimum": 0})
        );
        // Bounds the schema states win over the format's.
        assert_eq!(
            (p["width"]["minimum"].clone(), p["width"]["maximum"].clone()),
            (json!(2), json!(10000))
        );
        assert_eq!(
            p["sizes"]["items"],
            json!({"type": "integer", "minimum": 0, "maximum": 65535})
        );
        // Data is never rewritten, nor a property that happens to be called "format".
        assert_eq!(p["format"], json!({"type": "string", "default": "int32"}));
    }

    #[test]
    fn strings_are_read_as_the_type_the_schema_says() {
        let out = prepared(json!({
            "timeout_secs": "1", "max_bytes": "300", "enter": "true", "start": "-5",
            "keys": "[\"C-c\", \"Enter\"]", "env": "{\"A\": \"1\"}", "sizes": ["80", 24],
            "target": "1", "maybe_text": "2", "kind": "b", "split": "a", "row": "1e2"
        }))
        .unwrap();
        assert_eq!(out["timeout_secs"], json!(1));
        assert_eq!(out["max_bytes"], json!(300));
        assert_eq!(out["enter"], json!(true));
        assert_eq!(out["start"], json!(-5));
        assert_eq!(out["keys"], json!(["C-c", "Enter"]));
        assert_eq!(out["env"], json!({"A": "1"}));
        assert_eq!(out["sizes"], json!([80, 24]));
        assert_eq!(out["row"], json!(100));
        // Where a string is allowed, it stays a string.
        for key in ["target", "maybe_text", "kind", "split"] {
            assert!(out[key].is_string(), "{key}: {out}");
        }
        assert_eq!(
            prepared(json!({"timeout_secs": "1e308"})).unwrap()["timeout_secs"],
            json!(1e308)
        );
        assert_eq!(
            prepared(json!({"enter": "false"})).unwrap()["enter"],
            json!(false)
        );
        assert_eq!(
            prepared(json!({"timeout_secs": " 2.5 "})).unwrap()["timeout_secs"],
            json!(2.5)
        );
    }

    #[test]
    fn strings_that_spell_nothing_of_the_type_are_refused_by_name() {
        for (args, message) in [
            (
                json!({"timeout_secs": "soon"}),
                r#"invalid type for timeout_secs: expected a number or null, got the string "soon""#,
            ),
            (json!({"timeout_secs": "NaN"}), "got the string \"NaN\""),
            (json!({"timeout_secs": "1e999"}), "got the string \"1e999\""),
            (json!({"timeout_secs": "true"}), "got the string \"true\""),
            (json!({"timeout_secs": "null"}), "got the string \"null\""),
            (
                json!({"enter": "yes"}),
                r#"invalid type for enter: expected true or false, got the string "yes""#,
            ),
            (json!({"enter": "1"}), "got the string \"1\""),
            (
                json!({"max_bytes": "ten"}),
                "expected a whole number or null",
            ),
            (
                json!({"keys": "C-c"}),
                r#"invalid type for keys: expected an array, got the string "C-c""#,
            ),
            (json!({"sizes": [1, "x"]}), "invalid type for sizes[1]"),
        ] {
            let err = prepared(args.clone()).unwrap_err();
            assert!(err.contains(message), "{args}: {err}");
        }
    }

    #[test]
    fn integers_are_whole_and_in_range_or_saturated() {
        // Above a stated maximum or below a stated minimum: refused, with the range.
        for (args, message) in [
            (
                json!({"max_bytes": -1}),
                "max_bytes must be a whole number of 0 or more, not -1",
            ),
            (
                json!({"max_bytes": "-1"}),
                "max_bytes must be a whole number of 0 or more, not -1",
            ),
            (
                json!({"cursor": -1e300}),
                "cursor must be a whole number of 0 or more, not -1e+300",
            ),
            (
                json!({"max_bytes": 1.5}),
                "max_bytes must be a whole number of 0 or more, not 1.5",
            ),
            (
                json!({"width": 1}),
                "width must be a whole number from 2 to 10000, not 1",
            ),
            (
                json!({"width": 10001}),
                "width must be a whole number from 2 to 10000, not 10001",
            ),
            (
                json!({"width": 1e20}),
                "width must be a whole number from 2 to 10000, not 1e+20",
            ),
            (
                json!({"percent": 256}),
                "percent must be a whole number from 0 to 255, not 256",
            ),
            (
                json!({"lines": 4_294_967_296_u64}),
                "lines must be a whole number from 0 to 4294967295, not 4294967296",
            ),
            (
                json!({"row": 2_147_483_648_u64}),
                "row must be a whole number from -2147483648 to 2147483647, not 2147483648",
            ),
            (
                json!({"start": 0.5}),
                "start must be a whole number, not 0.5",
            ),
            (
                json!({"sizes": [1, -2]}),
                "sizes[1] must be a whole number from 0 to 65535, not -2",
            ),
        ] {
            let err = prepared(args.clone()).unwrap_err();
            assert_eq!(err, message, "{args}");
        }
        // Beyond 64 bits where no bound is stated: saturated.
        let out = prepared(json!({
            "max_bytes": 1e20, "cursor": 1e308, "start": -1e300, "lines": 3.0, "width": 80.0
        }))
        .unwrap();
        assert_eq!(out["max_bytes"], json!(u64::MAX));
        assert_eq!(out["cursor"], json!(u64::MAX));
        assert_eq!(out["start"], json!(i64::MIN));
        assert_eq!(out["lines"], json!(3));
        assert_eq!(out["width"], json!(80));
        let out = prepared(json!({"start": 18_446_744_073_709_551_615_u64})).unwrap();
        assert_eq!(out["start"], json!(i64::MAX));
        // Every other value and every unknown argument is left to serde.
        let args = json!({"colour": "red", "timeout_secs": null, "max_bytes": null, "keys": ["x"]});
        assert_eq!(prepared(args.clone()).unwrap(), args);
    }
}
