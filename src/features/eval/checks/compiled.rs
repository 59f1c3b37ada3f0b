//! What a check compiles — a regular expression, a JSON Schema, a JSONPath — compiled
//! once, when the spec is read: a bad one is an error of the spec at its place (serde
//! names the check), never found sample by sample, and scoring a sample compiles
//! nothing. Each is written back as the text (or schema) it was read from.

use std::fmt;
use std::sync::Arc;

use serde::de::{Deserializer, Error};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;

use crate::base::jsonpath::JsonPath;

/// Largest compiled regular expression (bytes): a pattern that would take more is
/// refused when the spec is read.
const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// A regular expression, compiled.
#[derive(Clone)]
pub struct Pattern {
    source: String,
    compiled: regex::Regex,
}

impl Pattern {
    /// Compiles `source` (Rust `regex` syntax, at most [`REGEX_SIZE_LIMIT`] compiled).
    pub fn new(source: &str) -> Result<Pattern, String> {
        regex::RegexBuilder::new(source)
            .size_limit(REGEX_SIZE_LIMIT)
            .build()
            .map(|compiled| Pattern {
                source: source.to_string(),
                compiled,
            })
            .map_err(|e| format!("the pattern does not compile: {e}"))
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// The compiled expression.
    pub fn regex(&self) -> &regex::Regex {
        &self.compiled
    }
}

/// A JSON Schema, compiled.
#[derive(Clone)]
pub struct Schema {
    source: Value,
    compiled: Arc<jsonschema::Validator>,
}

impl Schema {
    /// Compiles `source` (draft 2020-12 unless it says otherwise).
    pub fn new(source: Value) -> Result<Schema, String> {
        jsonschema::validator_for(&source)
            .map(|v| Schema {
                source,
                compiled: Arc::new(v),
            })
            .map_err(|e| format!("the schema does not compile: {e}"))
    }

    /// The schema as written.
    pub fn value(&self) -> &Value {
        &self.source
    }

    /// The compiled validator.
    pub fn validator(&self) -> &jsonschema::Validator {
        &self.compiled
    }
}

/// A JSONPath, parsed.
#[derive(Clone)]
pub struct Path {
    source: String,
    compiled: Arc<JsonPath>,
}

impl Path {
    /// Parses `source`.
    pub fn new(source: &str) -> Result<Path, String> {
        JsonPath::parse(source)
            .map(|p| Path {
                source: source.to_string(),
                compiled: Arc::new(p),
            })
            .map_err(|e| format!("the path `{source}` does not parse: {e}"))
    }

    /// The path as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// The parsed path.
    pub fn json_path(&self) -> &JsonPath {
        &self.compiled
    }
}

/// The three are told apart, compared and written back by what they were read from.
macro_rules! by_source {
    ($t:ty, $src:ty, $new:expr) => {
        impl PartialEq for $t {
            fn eq(&self, other: &Self) -> bool {
                self.source == other.source
            }
        }

        impl fmt::Debug for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Debug::fmt(&self.source, f)
            }
        }

        impl Serialize for $t {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                self.source.serialize(s)
            }
        }

        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let source = <$src>::deserialize(d)?;
                $new(source).map_err(D::Error::custom)
            }
        }
    };
}

by_source!(Pattern, String, |s: String| Pattern::new(&s));
by_source!(Schema, Value, Schema::new);
by_source!(Path, String, |s: String| Path::new(&s));

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_is_compiled_when_read_and_written_back_as_it_was_read() {
        let p: Pattern = serde_json::from_str(r#""^\\d+$""#).expect("pattern");
        assert!(p.regex().is_match("42"));
        assert_eq!(serde_json::to_string(&p).expect("json"), r#""^\\d+$""#);
        let s: Schema = serde_json::from_str(r#"{"type": "integer"}"#).expect("schema");
        assert!(s.validator().is_valid(&serde_json::json!(3)));
        assert_eq!(s.value(), &serde_json::json!({"type": "integer"}));
        let path: Path = serde_json::from_str(r#""$.a""#).expect("path");
        assert_eq!(
            path.json_path().select_value(&serde_json::json!({"a": 1})),
            Some(serde_json::json!(1))
        );
    }

    #[test]
    fn a_bad_one_is_refused_with_why() {
        let e = serde_json::from_str::<Pattern>(r#""(unclosed""#).expect_err("bad regex");
        assert!(
            e.to_string().contains("the pattern does not compile"),
            "{e}"
        );
        let e = serde_json::from_str::<Schema>(r#"{"type": 5}"#).expect_err("bad schema");
        assert!(e.to_string().contains("the schema does not compile"), "{e}");
        let e = serde_json::from_str::<Path>(r#""$[""#).expect_err("bad path");
        assert!(e.to_string().contains("does not parse"), "{e}");
    }
}
