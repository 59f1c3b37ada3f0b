//! Structured output: asking a server to hold an answer to its JSON Schema, in the
//! server's own dialect — OpenAI `json_schema` (strict), `json_object` with a `schema`
//! (llama.cpp, llama-cpp-python), vLLM's `guided_json`, Ollama's `format`, Anthropic's
//! forced tool. With `auto`, a profile tries its kind's dialects in turn: a server that
//! refuses a form (HTTP 400, 415 or 422, or a 500 that names it) gets the next one once,
//! and the one that worked is kept for the profile's life.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use serde_json::{json, Value};

use crate::base::config::providers::StructuredOutput;
use crate::data::provider::profile::ProviderKind;

/// The name of the tool an Anthropic answer is forced through, and of the OpenAI schema.
pub const ANSWER_TOOL: &str = "answer";

/// One way of asking for a schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// `response_format: {type: json_schema, json_schema: {name, strict, schema}}`.
    JsonSchema,
    /// `response_format: {type: json_object, schema}`.
    JsonObject,
    /// `guided_json: schema` (vLLM).
    GuidedJson,
    /// `format: schema` (Ollama).
    OllamaFormat,
    /// `tools: [{name: answer, input_schema}]`, `tool_choice: answer` (Anthropic).
    Tool,
}

impl Dialect {
    /// The dialect as the config names it.
    pub fn as_str(self) -> &'static str {
        match self {
            Dialect::JsonSchema => "json_schema",
            Dialect::JsonObject => "json_object",
            Dialect::GuidedJson => "guided_json",
            Dialect::OllamaFormat => "ollama_format",
            Dialect::Tool => "tool",
        }
    }

    /// Words a server's refusal of this dialect is likely to hold.
    fn named_by(self) -> &'static [&'static str] {
        match self {
            Dialect::JsonSchema | Dialect::JsonObject => {
                &["response_format", "json_schema", "json_object"]
            }
            Dialect::GuidedJson => &["guided_json", "guided"],
            Dialect::OllamaFormat => &["format"],
            Dialect::Tool => &["tool_choice", "tools", "input_schema"],
        }
    }

    /// Whether the server may still call other tools while held to the schema (a
    /// grammar that forces JSON leaves no room for a tool call).
    pub fn leaves_tools(self) -> bool {
        matches!(self, Dialect::JsonSchema | Dialect::Tool)
    }
}

/// The dialects a profile tries, in order.
pub fn chain(kind: ProviderKind, setting: StructuredOutput) -> Vec<Dialect> {
    match (setting, kind) {
        (StructuredOutput::Off, _) | (_, ProviderKind::Simulated) => Vec::new(),
        (StructuredOutput::Auto, ProviderKind::Anthropic) => vec![Dialect::Tool],
        (StructuredOutput::Auto, ProviderKind::Openai) => vec![
            Dialect::JsonSchema,
            Dialect::JsonObject,
            Dialect::GuidedJson,
        ],
        (StructuredOutput::JsonSchema, _) => vec![Dialect::JsonSchema],
        (StructuredOutput::JsonObject, _) => vec![Dialect::JsonObject],
        (StructuredOutput::GuidedJson, _) => vec![Dialect::GuidedJson],
        (StructuredOutput::OllamaFormat, _) => vec![Dialect::OllamaFormat],
        (StructuredOutput::Tool, _) => vec![Dialect::Tool],
    }
}

/// Adds `schema` to an OpenAI-compatible request body in dialect `d`.
pub fn apply_openai(body: &mut Value, d: Dialect, schema: &Value) {
    match d {
        Dialect::JsonSchema => {
            body["response_format"] = json!({
                "type": "json_schema",
                "json_schema": {"name": ANSWER_TOOL, "strict": true, "schema": strict_subset(schema)},
            });
        }
        Dialect::JsonObject => {
            body["response_format"] = json!({"type": "json_object", "schema": schema});
        }
        Dialect::GuidedJson => body["guided_json"] = schema.clone(),
        Dialect::OllamaFormat => body["format"] = schema.clone(),
        // Anthropic's form on an OpenAI-compatible server: its function-calling twin.
        Dialect::Tool => {
            let tool = json!({"type": "function", "function": {
                "name": ANSWER_TOOL,
                "description": "Give your answer: call this with it.",
                "parameters": schema,
            }});
            match body.get_mut("tools").and_then(Value::as_array_mut) {
                Some(tools) => tools.push(tool),
                None => body["tools"] = json!([tool]),
            }
            body["tool_choice"] = json!({"type": "function", "function": {"name": ANSWER_TOOL}});
        }
    }
}

/// Keywords a grammar server honours (llama.cpp, vLLM) that OpenAI's strict mode may
/// refuse: lengths of strings and ranges of numbers. The answer's own check still holds
/// them.
const NOT_STRICT: [&str; 4] = ["minLength", "maxLength", "minimum", "maximum"];

/// `schema` without the keywords of [`NOT_STRICT`], at every depth.
fn strict_subset(schema: &Value) -> Value {
    match schema {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, v)| !(NOT_STRICT.contains(&k.as_str()) && v.is_number()))
                .map(|(k, v)| (k.clone(), strict_subset(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(strict_subset).collect()),
        other => other.clone(),
    }
}

/// Adds `schema` to an Anthropic request body as the forced `answer` tool (or, when the
/// request offers other tools, as one tool more the model may answer with).
pub fn apply_anthropic(body: &mut Value, schema: &Value) {
    let tool = json!({
        "name": ANSWER_TOOL,
        "description": "Give your answer: call this with it.",
        "input_schema": schema,
    });
    let others = match body.get_mut("tools").and_then(Value::as_array_mut) {
        Some(tools) => {
            tools.push(tool);
            true
        }
        None => {
            body["tools"] = json!([tool]);
            false
        }
    };
    if !others {
        body["tool_choice"] = json!({"type": "tool", "name": ANSWER_TOOL});
    }
}

/// Whether an error answer (`status`, the server's `message`) refuses dialect `d`
/// rather than failing for a passing reason: a 400, 415, 422 or 500 whose message names
/// the form (a 400 for another reason — a prompt too long, a bad model — is not taken
/// for a refusal, which would downgrade every later call).
pub fn refuses(status: u16, message: &str, d: Dialect) -> bool {
    if !matches!(status, 400 | 415 | 422 | 500) {
        return false;
    }
    let m = message.to_ascii_lowercase();
    d.named_by()
        .iter()
        .chain(&["schema", "grammar", "strict"])
        .any(|w| m.contains(w))
}

/// Which dialect a profile speaks now: its chain, where it is in it, and what it said
/// about the ones it left.
pub struct Chooser {
    chain: Vec<Dialect>,
    at: AtomicUsize,
    notes: Mutex<Vec<String>>,
}

impl Chooser {
    /// A chooser over `chain`, at its first dialect.
    pub fn new(chain: Vec<Dialect>) -> Chooser {
        Chooser {
            chain,
            at: AtomicUsize::new(0),
            notes: Mutex::new(Vec::new()),
        }
    }

    /// The dialect to ask in now (`None`: none is left, or none was configured).
    pub fn current(&self) -> Option<Dialect> {
        self.chain.get(self.at.load(Ordering::Relaxed)).copied()
    }

    /// The server refused `d` (`why`): the next dialect is tried, once. Returns the next
    /// one (`None`: the prompt alone says the shape from now on).
    pub fn refused(&self, d: Dialect, why: &str) -> Option<Dialect> {
        let Some(i) = self.chain.iter().position(|c| *c == d) else {
            return self.current();
        };
        // Another call may have moved on already: only the first refusal moves.
        let _ = self
            .at
            .compare_exchange(i, i + 1, Ordering::Relaxed, Ordering::Relaxed);
        let next = self.current();
        let note = format!(
            "the server refused structured output as {} ({why}); {}",
            d.as_str(),
            match next {
                Some(n) => format!("trying {}", n.as_str()),
                None => "the prompt alone states the answer's shape now".into(),
            }
        );
        tracing::warn!("{note}");
        if let Ok(mut n) = self.notes.lock() {
            n.push(note);
        }
        next
    }

    /// What happened to the dialects so far, one line each.
    pub fn notes(&self) -> Vec<String> {
        self.notes.lock().map(|n| n.clone()).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_strict_form_leaves_lengths_and_ranges_out_and_the_grammar_forms_keep_them() {
        let schema = json!({"type": "object", "properties": {
            "c": {"type": "number", "minimum": 0, "maximum": 1},
            "s": {"type": "string", "minLength": 1},
            "l": {"type": "array", "items": {"type": "string", "maxLength": 9}, "minItems": 1},
            // A property that happens to be called `minimum` is a name, not a keyword.
            "minimum": {"type": "integer"},
        }});
        let mut strict = json!({});
        apply_openai(&mut strict, Dialect::JsonSchema, &schema);
        let sent = &strict["response_format"]["json_schema"]["schema"];
        let text = sent.to_string();
        for k in ["\"maximum\":1", "minLength", "maxLength", "\"minimum\":0"] {
            assert!(!text.contains(k), "{k} in {text}");
        }
        assert_eq!(sent["properties"]["l"]["minItems"], 1);
        assert_eq!(sent["properties"]["minimum"]["type"], "integer");
        let mut object = json!({});
        apply_openai(&mut object, Dialect::JsonObject, &schema);
        assert_eq!(object["response_format"]["schema"], schema);
    }

    #[test]
    fn auto_tries_each_openai_dialect_once_then_the_prompt_alone() {
        let c = Chooser::new(chain(ProviderKind::Openai, StructuredOutput::Auto));
        assert_eq!(c.current(), Some(Dialect::JsonSchema));
        assert_eq!(
            c.refused(Dialect::JsonSchema, "HTTP 500"),
            Some(Dialect::JsonObject)
        );
        // A second refusal of the same dialect (another call in flight) moves nothing.
        assert_eq!(
            c.refused(Dialect::JsonSchema, "HTTP 500"),
            Some(Dialect::JsonObject)
        );
        assert_eq!(
            c.refused(Dialect::JsonObject, "HTTP 400"),
            Some(Dialect::GuidedJson)
        );
        assert_eq!(c.refused(Dialect::GuidedJson, "HTTP 422"), None);
        assert_eq!(c.current(), None);
        assert_eq!(c.notes().len(), 4);
        assert!(chain(ProviderKind::Openai, StructuredOutput::Off).is_empty());
        assert_eq!(
            chain(ProviderKind::Anthropic, StructuredOutput::Auto),
            vec![Dialect::Tool]
        );
    }

    #[test]
    fn a_refusal_is_a_client_error_or_a_500_that_names_the_form() {
        let d = Dialect::JsonSchema;
        assert!(refuses(
            400,
            "Invalid schema for response_format 'answer'",
            d
        ));
        assert!(refuses(422, "extra fields not permitted: json_schema", d));
        assert!(!refuses(400, "bad request", d));
        assert!(!refuses(400, "the prompt is too long", d));
        assert!(refuses(
            500,
            "1 validation error: ('body', 'response_format', 'type') Input should be 'text' or 'json_object'",
            d
        ));
        assert!(!refuses(500, "out of memory", d));
        assert!(!refuses(503, "response_format overloaded", d));
        assert!(!refuses(429, "", d));
    }
}
