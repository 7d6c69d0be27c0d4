//! The tool router: every tool is classified and described, and the
//! toolsets filter what is served.

use std::collections::BTreeSet;

use crate::config::Config;
use crate::config::toolsets::{TOOLS, ToolSelection, Toolset, toolset_of};
use crate::mcp::server::TmuxMcp;
use crate::terminal::guard::Caller;

#[test]
fn every_tool_is_classified_and_described() {
    let table: BTreeSet<&str> = TOOLS.iter().map(|(n, _)| *n).collect();
    let all: BTreeSet<String> = TmuxMcp::full_router()
        .list_all()
        .into_iter()
        .map(|t| t.name.into_owned())
        .collect();
    let all_refs: BTreeSet<&str> = all.iter().map(String::as_str).collect();
    assert_eq!(
        all_refs, table,
        "the router and the classification table differ"
    );
    for set in Toolset::ALL {
        for tool in TmuxMcp::toolset_router(set).list_all() {
            assert_eq!(
                toolset_of(&tool.name),
                Some(set),
                "{} is in the {set} router",
                tool.name
            );
            let desc = tool.description.as_deref().unwrap_or_default();
            assert!(
                !desc.is_empty() && desc.len() < 2048,
                "{}: {} chars",
                tool.name,
                desc.len()
            );
            assert!(
                tool.output_schema.is_some(),
                "{} has no output schema",
                tool.name
            );
            let ann = tool.annotations.as_ref().expect("annotations");
            assert_eq!(
                ann.read_only_hint,
                Some(set == Toolset::Inspect),
                "{}",
                tool.name
            );
        }
    }
}

#[test]
fn toolsets_filter_the_router() {
    let config = Config {
        tools: ToolSelection::resolve(&["inspect"], &["kill_pane"], &["search_output"]).unwrap(),
        ..Config::default()
    };
    let mcp = TmuxMcp::with_caller(config, Caller::default()).unwrap();
    let names = mcp.tool_names();
    assert!(names.contains(&"capture_screen".to_owned()));
    assert!(names.contains(&"kill_pane".to_owned()));
    assert!(!names.contains(&"search_output".to_owned()));
    assert!(!names.contains(&"run".to_owned()));
    let default = TmuxMcp::with_caller(Config::default(), Caller::default()).unwrap();
    let in_default = crate::config::toolsets::TOOLS
        .iter()
        .filter(|(_, set)| crate::config::toolsets::Toolset::DEFAULT.contains(set))
        .count();
    assert_eq!(default.tool_names().len(), in_default);
    assert!(!default.tool_names().iter().any(|n| n.starts_with("kill_")));
    use rmcp::ServerHandler as _;
    let info = default.get_info();
    let instructions = info.instructions.unwrap_or_default();
    assert!(instructions.len() < 2048, "{}", instructions.len());
    assert!(instructions.contains("tmux -L tmux-mcp attach -t NAME"));
}

/// Every `format` in the served schemas (input and output), at any depth.
fn formats(value: &serde_json::Value, out: &mut Vec<String>) {
    match value {
        serde_json::Value::Object(map) => {
            for (key, v) in map {
                if key == "format"
                    && let Some(f) = v.as_str()
                {
                    out.push(f.to_owned());
                }
                formats(v, out);
            }
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| formats(v, out)),
        _ => {}
    }
}

#[test]
fn schemas_are_standard_json_schema() {
    let mcp = TmuxMcp::with_caller(
        Config {
            tools: ToolSelection::resolve(&["inspect", "manage", "execute", "teardown"], &[], &[])
                .unwrap(),
            ..Config::default()
        },
        Caller::default(),
    )
    .unwrap();
    let tools = mcp.tool_router.list_all();
    assert_eq!(tools.len(), crate::config::toolsets::TOOLS.len());
    let mut unsigned = 0;
    for tool in tools {
        let mut found = Vec::new();
        let input = serde_json::Value::Object((*tool.input_schema).clone());
        formats(&input, &mut found);
        if let Some(output) = &tool.output_schema {
            formats(&serde_json::Value::Object((**output).clone()), &mut found);
        }
        assert!(found.is_empty(), "{}: formats {found:?}", tool.name);
        // Unsigned integers keep their meaning as a minimum.
        let properties = input.get("properties").and_then(|p| p.as_object());
        for property in properties.into_iter().flat_map(|p| p.values()) {
            let integer = property["type"] == "integer"
                || property["type"]
                    .as_array()
                    .is_some_and(|ts| ts.contains(&"integer".into()));
            if integer && property.get("minimum").is_some() {
                unsigned += 1;
            }
        }
    }
    // cursor (2), max_bytes (2), last_lines, context_lines, max_matches,
    // width and height (2 tools), size_percent.
    assert!(unsigned >= 12, "{unsigned}");
}

/// What the default tool list costs an agent, as `tools/list` sends it.
#[derive(Debug)]
struct ListSize {
    /// The whole `tools/list` result, as JSON.
    whole: usize,
    /// What a model reads: each tool's name, description and input schema.
    model_read: usize,
    descriptions: usize,
    input_schemas: usize,
    output_schemas: usize,
    /// The longest description: its tool and length in characters.
    longest: (String, usize),
}

fn default_list_size() -> ListSize {
    let server = TmuxMcp::with_caller(Config::default(), Caller::default()).unwrap();
    let tools = server.tool_router.list_all();
    let mut size = ListSize {
        whole: serde_json::to_string(&serde_json::json!({ "tools": tools }))
            .unwrap()
            .len(),
        model_read: 0,
        descriptions: 0,
        input_schemas: 0,
        output_schemas: 0,
        longest: (String::new(), 0),
    };
    for tool in &tools {
        let desc = tool.description.as_deref().unwrap_or_default();
        let input = serde_json::to_string(&*tool.input_schema).unwrap().len();
        size.descriptions += desc.len();
        size.input_schemas += input;
        size.output_schemas += tool
            .output_schema
            .as_ref()
            .map_or(0, |s| serde_json::to_string(&**s).unwrap().len());
        size.model_read += tool.name.len() + desc.len() + input;
        let chars = desc.chars().count();
        if chars > size.longest.1 {
            size.longest = (tool.name.to_string(), chars);
        }
    }
    size
}

#[test]
fn the_default_tool_list_fits_its_budget() {
    let size = default_list_size();
    eprintln!("{size:#?}");
    // The budgets of issue 21 (docs/benchmarks.md, "The tool list").
    assert!(size.model_read <= 28_000, "{size:#?}");
    assert!(size.whole <= 64_000, "{size:#?}");
    assert!(size.longest.1 <= 1024, "{size:#?}");
    // What a model reads is most of what is sent.
    assert!(
        size.descriptions + size.input_schemas > size.output_schemas,
        "{size:#?}"
    );
}
