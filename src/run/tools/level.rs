//! The output level of a call (seed 003 priority chain).

use serde_json::{json, Map, Value};

use super::error::ToolError;
use crate::base::protocol::messages::OutputLevel;

/// The argument every tool takes besides its own: the output level the agent asks for.
pub const OUTPUT_LEVEL_ARG: &str = "output_level";

/// Context window usage above which every result is brief.
pub const BRIEF_ABOVE_USAGE: f64 = 0.8;

/// The output level of a call, seed 003's priority: 1) the level the agent asked for,
/// 2) the tool's default, 3) the global default; then 4) the dynamic adjustment: when
/// the context window is more than 80% full (`context_usage > 0.8`, strictly; exactly
/// 0.8 keeps the chosen level) the level is brief.
///
/// The adjustment applies over every choice, an explicit level included: a nearly full
/// window cannot take a full dump whoever asked for it, and a brief observation still
/// tells the agent what was found. A usage that is not a number (NaN) adjusts nothing.
pub fn effective_level(
    explicit: Option<OutputLevel>,
    tool_default: Option<OutputLevel>,
    global_default: OutputLevel,
    context_usage: f64,
) -> OutputLevel {
    if context_usage > BRIEF_ABOVE_USAGE {
        return OutputLevel::Brief;
    }
    explicit.or(tool_default).unwrap_or(global_default)
}

/// The level as written in metrics (`brief`, `standard`, `full`).
pub fn level_name(level: OutputLevel) -> &'static str {
    match level {
        OutputLevel::Brief => "brief",
        OutputLevel::Standard => "standard",
        OutputLevel::Full => "full",
    }
}

/// Takes `output_level` out of a call's arguments (no tool's own schema knows it): the
/// level asked for, `explicit` winning when the call already carries one; an error that
/// names the levels when the value is not one of them.
pub fn take_level_arg(
    args: &mut Map<String, Value>,
    explicit: Option<OutputLevel>,
) -> Result<Option<OutputLevel>, ToolError> {
    let asked = args.remove(OUTPUT_LEVEL_ARG);
    if explicit.is_some() {
        return Ok(explicit);
    }
    match asked {
        None | Some(Value::Null) => Ok(None),
        Some(v) => serde_json::from_value::<OutputLevel>(v.clone())
            .map(Some)
            .map_err(|_| {
                ToolError::arguments(format!(
                    "$.{OUTPUT_LEVEL_ARG}: {v} is not a level; use \"brief\", \"standard\" or \"full\""
                ))
            }),
    }
}

/// `schema` with the `output_level` argument added to its properties, as every tool is
/// advertised to the model.
pub fn with_level_arg(mut schema: Value) -> Value {
    if !schema.is_object() {
        return schema;
    }
    if !schema["properties"].is_object() {
        schema["properties"] = json!({});
    }
    if let Some(props) = schema["properties"].as_object_mut() {
        props.entry(OUTPUT_LEVEL_ARG).or_insert_with(|| {
            json!({
                "type": "string",
                "enum": ["brief", "standard", "full"],
                "description": "How much of the result to return: brief (key facts), standard (the default), full (everything; a large result is stored in a file and the observation says where)."
            })
        });
    }
    schema
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_level_argument_is_taken_out_checked_and_advertised() {
        let mut args = json!({"pattern": "*.md", "output_level": "full"})
            .as_object()
            .cloned()
            .expect("object");
        assert_eq!(
            take_level_arg(&mut args, None).expect("full"),
            Some(OutputLevel::Full)
        );
        assert_eq!(Value::Object(args), json!({"pattern": "*.md"}));
        let mut args = json!({"output_level": "brief"})
            .as_object()
            .cloned()
            .expect("object");
        assert_eq!(
            take_level_arg(&mut args, Some(OutputLevel::Standard)).expect("explicit"),
            Some(OutputLevel::Standard),
            "the call's own field wins"
        );
        assert!(args.is_empty());
        let mut args = json!({"output_level": "huge"})
            .as_object()
            .cloned()
            .expect("object");
        let e = take_level_arg(&mut args, None).expect_err("not a level");
        assert!(
            e.message.contains("\"huge\" is not a level"),
            "{}",
            e.message
        );
        let schema = with_level_arg(json!({"type": "object", "additionalProperties": false}));
        assert_eq!(schema["properties"]["output_level"]["enum"][2], "full");
    }
}
