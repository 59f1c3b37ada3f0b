//! The file format of an exported run: the header on the first line, the record kinds,
//! and how column values are written so that every one of them reads back byte for
//! byte (text, stored JSON, integers, floats, NULL).
//!
//! A file is JSON lines, each ending with `\n`. Line 1 is the [`Header`]; every other
//! line is one record `{"t":KIND, COLUMN: VALUE, …}` whose fields are the columns of
//! its table, named as in the schema, without `run_id` (the run's id is the header's,
//! or the one chosen on import). Stored JSON (requests, responses, payloads, atom
//! content) is written inline when it is an object or array exactly as stored, and as
//! a JSON string of its text otherwise, so an object or array in a file always means
//! stored JSON text and a string always means the text itself.

use std::borrow::Cow;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;

/// The `format` of the header.
pub const FORMAT: &str = "plexus-run";

/// The newest format version this build writes and reads. Version 2 adds `review`
/// records (a person's decisions on hallucinations) and the `reviewed_by` and
/// `reviewed_at` of the atoms they accepted; a run without reviews is written as
/// version 1, which older builds read.
pub const VERSION: u64 = 2;

/// The format version of a file whose records are counted by `counts`: the oldest that
/// holds them.
pub fn version_for(counts: &Counts) -> u64 {
    if counts.reviews > 0 {
        2
    } else {
        1
    }
}

/// The first line of an exported run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// Always [`FORMAT`].
    pub format: String,
    /// Format version ([`VERSION`] when written by this build).
    pub version: u64,
    /// Version of the plexus that wrote the file.
    pub plexus: String,
    /// Schema version of the database it was read from.
    pub schema: i64,
    /// The run's id in that database.
    pub run_id: String,
    /// When the export was made (RFC 3339).
    pub exported_at: String,
    /// The run's status when it was exported.
    pub status: String,
    /// Whether a live process was executing the run when it was exported (the file
    /// holds what had been committed then).
    pub live: bool,
    /// How many records of each kind follow.
    pub counts: Counts,
}

/// Records of each kind in a file (the run record is always exactly one).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Counts {
    /// `task` records.
    pub tasks: u64,
    /// `prompt` records: the system prompts the invocations refer to.
    pub prompts: u64,
    /// `invocation` records.
    pub invocations: u64,
    /// `atom` records: the run's accepted atoms.
    pub atoms: u64,
    /// `quality` records.
    pub quality_records: u64,
    /// `relation` records.
    pub relations: u64,
    /// `paper` records: papers the run's atoms (or the assets) cite.
    pub papers: u64,
    /// `asset` records: library atoms (no run) that the run's relations point at.
    pub assets: u64,
    /// `event` records.
    pub events: u64,
    /// `review` records (format version 2; absent when none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reviews: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Counts {
    /// The count of `kind` (1 for the run record).
    pub fn of(&self, kind: Kind) -> u64 {
        match kind {
            Kind::Run => 1,
            Kind::Task => self.tasks,
            Kind::Prompt => self.prompts,
            Kind::Invocation => self.invocations,
            Kind::Atom => self.atoms,
            Kind::Quality => self.quality_records,
            Kind::Relation => self.relations,
            Kind::Paper => self.papers,
            Kind::Asset => self.assets,
            Kind::Event => self.events,
            Kind::Review => self.reviews,
        }
    }

    /// The count of `kind`, to add to.
    pub fn slot(&mut self, kind: Kind) -> Option<&mut u64> {
        Some(match kind {
            Kind::Run => return None,
            Kind::Task => &mut self.tasks,
            Kind::Prompt => &mut self.prompts,
            Kind::Invocation => &mut self.invocations,
            Kind::Atom => &mut self.atoms,
            Kind::Quality => &mut self.quality_records,
            Kind::Relation => &mut self.relations,
            Kind::Paper => &mut self.papers,
            Kind::Asset => &mut self.assets,
            Kind::Event => &mut self.events,
            Kind::Review => &mut self.reviews,
        })
    }
}

/// The kind of a record (its `t`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// The `runs` row; always the first record.
    Run,
    /// A `tasks` row.
    Task,
    /// A `prompts` row.
    Prompt,
    /// An `invocations` row.
    Invocation,
    /// A `knowledge_atoms` row of the run.
    Atom,
    /// A `quality_records` row.
    Quality,
    /// A `relations` row.
    Relation,
    /// A `reviews` row: a person's decision on a hallucination.
    Review,
    /// A `papers` row.
    Paper,
    /// A `knowledge_atoms` row of no run (a library asset).
    Asset,
    /// An `execution_logs` row.
    Event,
}

impl Kind {
    /// Every kind, in the order an export writes them.
    pub const ALL: [Kind; 11] = [
        Kind::Run,
        Kind::Task,
        Kind::Prompt,
        Kind::Invocation,
        Kind::Atom,
        Kind::Quality,
        Kind::Relation,
        Kind::Review,
        Kind::Paper,
        Kind::Asset,
        Kind::Event,
    ];

    /// The kind as written in `t`.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Run => "run",
            Kind::Task => "task",
            Kind::Prompt => "prompt",
            Kind::Invocation => "invocation",
            Kind::Atom => "atom",
            Kind::Quality => "quality",
            Kind::Relation => "relation",
            Kind::Review => "review",
            Kind::Paper => "paper",
            Kind::Asset => "asset",
            Kind::Event => "event",
        }
    }

    /// Parses `t`.
    pub fn parse(s: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

/// A text column: borrowed from the line read (or the row) when it can be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Str<'a>(pub Cow<'a, str>);

impl<'a> Str<'a> {
    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Borrows `s`.
    pub fn from(s: &'a str) -> Str<'a> {
        Str(Cow::Borrowed(s))
    }
}

impl Serialize for Str<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Str<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = <&'de RawValue>::deserialize(d)?;
        string_of(raw.get()).map(Str).map_err(D::Error::custom)
    }
}

/// The text of the JSON string literal `lit`, borrowed when it has no escapes.
fn string_of(lit: &str) -> Result<Cow<'_, str>, String> {
    if !lit.starts_with('"') {
        return Err(format!("expected a string, found {}", describe(lit)));
    }
    match serde_json::from_str::<&str>(lit) {
        Ok(s) => Ok(Cow::Borrowed(s)),
        Err(_) => serde_json::from_str::<String>(lit)
            .map(Cow::Owned)
            .map_err(|e| e.to_string()),
    }
}

/// A short description of a JSON value for an error message.
fn describe(lit: &str) -> &'static str {
    match lit.as_bytes().first() {
        Some(b'{') => "an object",
        Some(b'[') => "an array",
        Some(b'"') => "a string",
        Some(b't' | b'f') => "a boolean",
        Some(b'n') => "null",
        _ => "a number",
    }
}

/// A column that holds JSON text (a request, a payload, atom content): written inline
/// when the text is exactly one JSON object or array, else as a string of the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonText<'a>(pub Cow<'a, str>);

impl<'a> JsonText<'a> {
    /// The stored text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Borrows `s`.
    pub fn from(s: &'a str) -> JsonText<'a> {
        JsonText(Cow::Borrowed(s))
    }
}

impl Serialize for JsonText<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let text = self.0.as_ref();
        if matches!(text.as_bytes().first(), Some(b'{' | b'[')) {
            // Inline only when the value spans the whole text: no whitespace around it
            // (which the reader could not give back) and nothing after it.
            if let Ok(raw) = serde_json::from_str::<&RawValue>(text) {
                if raw.get().len() == text.len() {
                    return raw.serialize(s);
                }
            }
        }
        s.serialize_str(text)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for JsonText<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = <&'de RawValue>::deserialize(d)?;
        let lit = raw.get();
        match lit.as_bytes().first() {
            Some(b'{' | b'[') => Ok(JsonText(Cow::Borrowed(lit))),
            Some(b'"') => string_of(lit).map(JsonText).map_err(D::Error::custom),
            _ => Err(D::Error::custom(format!(
                "expected stored JSON (an object, an array or a string), found {}",
                describe(lit)
            ))),
        }
    }
}

/// A REAL column. Finite values are JSON numbers (written the shortest way that reads
/// back to the same bits); infinities, which JSON has no number for, are the strings
/// `inf` and `-inf`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Real(pub f64);

impl Serialize for Real {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let v = self.0;
        if v.is_finite() {
            s.serialize_f64(v)
        } else if v.is_nan() {
            s.serialize_str("nan")
        } else if v > 0.0 {
            s.serialize_str("inf")
        } else {
            s.serialize_str("-inf")
        }
    }
}

impl<'de> Deserialize<'de> for Real {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = <&'de RawValue>::deserialize(d)?;
        let lit = raw.get();
        let v = match lit {
            "\"inf\"" => f64::INFINITY,
            "\"-inf\"" => f64::NEG_INFINITY,
            "\"nan\"" => f64::NAN,
            // A JSON number is valid Rust float syntax, and Rust's parser rounds
            // correctly, so the shortest form written above reads back to its bits.
            _ if matches!(lit.as_bytes().first(), Some(b'-' | b'0'..=b'9')) => {
                lit.parse::<f64>()
                    .map_err(|e| D::Error::custom(format!("bad number {lit}: {e}")))?
            }
            _ => {
                return Err(D::Error::custom(format!(
                    "expected a number, found {}",
                    describe(lit)
                )))
            }
        };
        Ok(Real(v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Row<'a> {
        #[serde(borrow)]
        j: Option<JsonText<'a>>,
        #[serde(borrow)]
        s: Option<Str<'a>>,
        r: Option<Real>,
    }

    fn round_trip(j: Option<&str>, s: Option<&str>, r: Option<f64>) -> String {
        let row = Row {
            j: j.map(JsonText::from),
            s: s.map(Str::from),
            r: r.map(Real),
        };
        let line = serde_json::to_string(&row).expect("serialise");
        let back: Row<'_> = serde_json::from_str(&line).expect("parse");
        assert_eq!(back.j.as_ref().map(JsonText::as_str), j, "{line}");
        assert_eq!(back.s.as_ref().map(Str::as_str), s, "{line}");
        match (back.r, r) {
            (Some(a), Some(b)) => assert!(
                a.0.to_bits() == b.to_bits() || (a.0.is_nan() && b.is_nan()),
                "{line}"
            ),
            (a, b) => assert_eq!(a.is_none(), b.is_none()),
        }
        line
    }

    #[test]
    fn json_objects_and_arrays_go_inline_and_come_back_byte_exact() {
        let line = round_trip(Some(r#"{"a":[1,2.50,"x\u00e9"],"b":{}}"#), None, None);
        assert!(
            line.starts_with(r#"{"j":{"a":[1,2.50,"x\u00e9"],"b":{}}"#),
            "{line}"
        );
        round_trip(Some("[]"), None, None);
    }

    #[test]
    fn other_json_text_goes_as_a_string_and_comes_back_byte_exact() {
        for text in [
            "null",
            "\"quoted\"",
            "12",
            " {\"a\":1}",
            "{\"a\":1} ",
            "{\"a\":1}{}",
            "{not json",
            "",
            "line\nbreak\u{7}\u{202e}",
        ] {
            let line = round_trip(Some(text), Some(text), None);
            assert!(line.starts_with("{\"j\":\""), "{line}");
        }
        // SQL NULL stays NULL, distinct from the text "null".
        let line = round_trip(None, None, None);
        assert_eq!(line, r#"{"j":null,"s":null,"r":null}"#);
    }

    #[test]
    fn deeply_nested_json_is_kept_as_text() {
        let deep = format!("{}{}", "[".repeat(500), "]".repeat(500));
        round_trip(Some(&deep), None, None);
    }

    #[test]
    fn floats_read_back_to_the_same_bits() {
        for v in [
            0.0,
            -0.0,
            1.0,
            0.1,
            1.0 / 3.0,
            0.850_000_000_000_000_1,
            f64::MIN_POSITIVE,
            5e-324,
            f64::MAX,
            -1e300,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ] {
            round_trip(None, None, Some(v));
        }
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let v = f64::from_bits(x);
            if v.is_finite() {
                round_trip(None, None, Some(v));
            }
        }
    }

    #[test]
    fn a_wrong_type_is_an_error_not_a_guess() {
        assert!(serde_json::from_str::<Row<'_>>(r#"{"j":5}"#).is_err());
        assert!(serde_json::from_str::<Row<'_>>(r#"{"s":{}}"#).is_err());
        assert!(serde_json::from_str::<Row<'_>>(r#"{"r":"1.5"}"#).is_err());
        assert!(serde_json::from_str::<Row<'_>>(r#"{"r":true}"#).is_err());
    }

    #[test]
    fn kinds_parse_back() {
        for k in Kind::ALL {
            assert_eq!(Kind::parse(k.as_str()), Some(k));
            assert_eq!(
                serde_json::to_string(&k).expect("kind"),
                format!("\"{}\"", k.as_str())
            );
        }
        assert_eq!(Kind::parse("runs"), None);
    }
}
