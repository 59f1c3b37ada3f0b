//! The shape check: a JSON value walked against a small declarative schema, every wrong
//! type, unknown or missing field and out-of-range number reported with its own path,
//! before serde turns the value into a typed struct.

use serde::de::DeserializeOwned;
use serde_json::{Number, Value};

use super::{Collector, K};
use crate::base::ranges::NumRange;

/// A list of strings.
pub(super) const STRS: Want = Want::List(&Want::Str);
/// An optional string.
pub(super) const OPT_STR: Want = Want::Opt(&Want::Str);
/// An optional list of strings.
pub(super) const OPT_STRS: Want = Want::Opt(&STRS);

/// What a value must be. The same description drives the shape check and the JSON
/// Schema of plans (`super::json_schema`).
pub(super) enum Want {
    /// Anything.
    Any,
    /// A string.
    Str,
    /// A string with more than white space in it.
    Text,
    /// An id: [`Want::Text`] without control characters or bidi controls.
    Id,
    /// `true` or `false`.
    Bool,
    /// A number within its range.
    Num(&'static NumRange),
    /// One of these strings.
    OneOf(&'static [&'static str]),
    /// One of these names: the shape check wants a string, and a later check of the
    /// validator refuses any other name with its own message.
    Named(&'static [&'static str]),
    /// A string this regular expression matches: the shape check wants a string, and a
    /// later check of the validator (in code) refuses the others; the expression says
    /// the same for the JSON Schema.
    Matching(&'static str),
    /// An array of such values.
    List(&'static Want),
    /// A non-empty array of such values.
    NonEmptyList(&'static Want),
    /// An object of these fields.
    Obj(&'static Obj),
    /// An object whose keys are ids, each value such a value.
    Map(&'static Want),
    /// An object whose kind a field of it names.
    Tagged(&'static Tagged),
    /// `null` (the same as absent) or the inner value.
    Opt(&'static Want),
}

/// One field of an object.
pub(super) struct Field {
    /// Its name.
    pub name: &'static str,
    /// What it must be.
    pub want: Want,
    /// What it is for, in a sentence (empty: nothing to add to its name).
    pub doc: &'static str,
}

/// A field named `name`, of shape `want`, documented by `doc`.
pub(super) const fn field(name: &'static str, want: Want, doc: &'static str) -> Field {
    Field { name, want, doc }
}

/// The fields of an object.
pub(super) struct Obj {
    /// Known fields and what each must be.
    pub fields: &'static [Field],
    /// Fields that must be present.
    pub required: &'static [&'static str],
}

impl Obj {
    /// The field called `name`.
    pub(super) fn get(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.name == name)
    }

    /// The names of the fields, in order.
    pub(super) fn names(&self) -> Vec<&'static str> {
        self.fields.iter().map(|f| f.name).collect()
    }
}

/// Objects of several kinds, told apart by the string in their field `tag`.
pub(super) struct Tagged {
    /// The field naming the kind.
    pub tag: &'static str,
    /// Each kind's name and fields (among them `tag`).
    pub kinds: &'static [(&'static str, Obj)],
}

impl Tagged {
    /// The fields of kind `name`.
    pub(super) fn kind(&self, name: &str) -> Option<&'static Obj> {
        let kinds: &'static [(&'static str, Obj)] = self.kinds;
        kinds.iter().find(|(n, _)| *n == name).map(|(_, o)| o)
    }

    /// The kinds' names.
    pub(super) fn names(&self) -> Vec<&'static str> {
        self.kinds.iter().map(|(n, _)| *n).collect()
    }
}

/// What a value is, in words: `a string`, `a number`, …
pub(super) fn describe(v: &Value) -> &'static str {
    crate::base::json_text::kind_of(v)
}

/// What JSON text is, in words, from its first character (for text that is not decoded).
pub(super) fn describe_text(raw: &str) -> &'static str {
    match raw.trim_start().as_bytes().first() {
        Some(b'n') => "null",
        Some(b't') => "`true`",
        Some(b'f') => "`false`",
        Some(b'"') => "a string",
        Some(b'[') => "an array",
        Some(b'{') => "an object",
        _ => "a number",
    }
}

/// The message of an unknown field `key` where `known` are the fields: the nearest one
/// suggested when it looks like a typo of it.
pub(super) fn unknown_field(key: &str, known: &[&str]) -> String {
    match crate::base::text::suggest::nearest(key, known.iter().copied()) {
        Some(near) => format!(
            "unknown field; did you mean `{near}`? (expected one of {})",
            known.join(", ")
        ),
        None => format!("unknown field; expected one of {}", known.join(", ")),
    }
}

/// Joins a path and a field name.
fn join(path: &str, field: &str) -> String {
    if path.is_empty() {
        field.to_string()
    } else {
        format!("{path}.{field}")
    }
}

/// A place inside the plan, written out only when a problem there is reported (a large
/// plan has a million places and few problems).
#[derive(Clone, Copy)]
enum At<'a> {
    /// A path given as text.
    Root(&'a str),
    /// A field of an object.
    Field(&'a At<'a>, &'a str),
    /// An element of an array.
    Index(&'a At<'a>, usize),
}

impl At<'_> {
    fn render(&self) -> String {
        match self {
            At::Root(p) => p.to_string(),
            At::Field(parent, name) => join(&parent.render(), name),
            At::Index(parent, i) => format!("{}[{i}]", parent.render()),
        }
    }
}

impl Collector<'_> {
    /// Checks `value` at `path` against `want`, reporting every problem; false when the
    /// value is malformed (a number merely out of range is reported, and still true).
    pub(super) fn shape(
        &mut self,
        task: Option<&str>,
        path: &str,
        value: &Value,
        want: &Want,
    ) -> bool {
        self.walk(task, At::Root(path), value, want)
    }

    fn walk(&mut self, task: Option<&str>, at: At<'_>, value: &Value, want: &Want) -> bool {
        match (want, value) {
            (Want::Any, _) | (Want::Opt(_), Value::Null) => true,
            (Want::Opt(inner), v) => self.walk(task, at, v, inner),
            (Want::Str | Want::Named(_) | Want::Matching(_), Value::String(_))
            | (Want::Bool, Value::Bool(_)) => true,
            (Want::Text | Want::Id, Value::String(s)) => {
                if s.trim().is_empty() {
                    self.push(task, at.render(), K::Shape, "must be a non-empty string");
                    return false;
                }
                if matches!(want, Want::Id) {
                    super::check_id(self, task, &at.render(), s);
                }
                true
            }
            (Want::Num(range), Value::Number(n)) => self.number(task, at, n, range),
            (Want::OneOf(names), Value::String(s)) => {
                if names.contains(&s.as_str()) {
                    true
                } else {
                    self.push(
                        task,
                        at.render(),
                        K::Shape,
                        format!(
                            "`{}` is not one of {}{}",
                            crate::base::text::sanitize::sanitize(s),
                            names.join(", "),
                            crate::base::text::suggest::did_you_mean(s, names.iter().copied())
                        ),
                    );
                    false
                }
            }
            (Want::NonEmptyList(_), Value::Array(items)) if items.is_empty() => {
                self.push(task, at.render(), K::Shape, "must not be empty");
                false
            }
            (Want::List(item) | Want::NonEmptyList(item), Value::Array(items)) => {
                let mut ok = true;
                for (i, v) in items.iter().enumerate() {
                    ok &= self.walk(task, At::Index(&at, i), v, item);
                }
                ok
            }
            (Want::Map(item), Value::Object(map)) => {
                let mut ok = true;
                for (key, v) in map {
                    super::check_id(self, task, &At::Field(&at, key).render(), key);
                    ok &= self.walk(task, At::Field(&at, key), v, item);
                }
                ok
            }
            (Want::Tagged(tagged), v) => self.tagged(task, at, v, tagged),
            (Want::Obj(obj), Value::Object(map)) => {
                let mut ok = true;
                for (key, v) in map {
                    match obj.get(key) {
                        Some(f) => ok &= self.walk(task, At::Field(&at, key), v, &f.want),
                        None => {
                            self.push(
                                task,
                                At::Field(&at, key).render(),
                                K::UnknownField,
                                unknown_field(key, &obj.names()),
                            );
                            ok = false;
                        }
                    }
                }
                for name in obj.required {
                    if !map.contains_key(*name) {
                        self.push(task, At::Field(&at, name).render(), K::Shape, "missing");
                        ok = false;
                    }
                }
                ok
            }
            (want, v) => {
                let expected = expected(want);
                self.push(
                    task,
                    at.render(),
                    K::Shape,
                    format!("must be {expected}, not {}", describe(v)),
                );
                false
            }
        }
    }

    /// An object of one of the kinds of `tagged`, by its tag field.
    fn tagged(&mut self, task: Option<&str>, at: At<'_>, v: &Value, tagged: &Tagged) -> bool {
        let tag = v.get(tagged.tag);
        if let Some(obj) = tag.and_then(Value::as_str).and_then(|k| tagged.kind(k)) {
            return self.walk(task, at, v, &Want::Obj(obj));
        }
        let message = match (v, tag) {
            (Value::Object(_), None) => format!("missing `{}`", tagged.tag),
            (Value::Object(_), Some(t)) => format!(
                "`{}` is {}; expected one of {}{}",
                tagged.tag,
                match t {
                    Value::String(s) => format!("`{}`", crate::base::text::sanitize::sanitize(s)),
                    other => describe(other).to_string(),
                },
                tagged.names().join(", "),
                t.as_str()
                    .map(|s| crate::base::text::suggest::did_you_mean(s, tagged.names()))
                    .unwrap_or_default()
            ),
            (v, _) => format!("must be an object, not {}", describe(v)),
        };
        let place = if v.is_object() {
            At::Field(&at, tagged.tag).render()
        } else {
            at.render()
        };
        self.push(task, place, K::Shape, message);
        false
    }

    /// A number: in its range, and written as a whole number where one is wanted. Only
    /// the second is a structural problem: a number out of range is reported, but the
    /// value still has the shape serde reads.
    fn number(&mut self, task: Option<&str>, at: At<'_>, n: &Number, range: &NumRange) -> bool {
        let v = n.as_f64().unwrap_or(f64::NAN);
        let shown = || if n.is_f64() { show(v) } else { n.to_string() };
        if !range.contains(v) {
            if let Err(e) = range.check(v, &shown()) {
                self.push(task, at.render(), K::OutOfRange, e);
            }
            return true;
        }
        if range.whole && !(n.is_u64() || n.is_i64()) {
            self.push(
                task,
                at.render(),
                K::Shape,
                format!(
                    "{} must be written as a whole number (no decimal point or exponent)",
                    shown()
                ),
            );
            return false;
        }
        true
    }

    /// Checks `value` at `path` against `want`, then reads it as `T`: `None` when it is
    /// malformed (every problem reported once, at its own path).
    pub(super) fn read<T: DeserializeOwned>(
        &mut self,
        task: Option<&str>,
        path: &str,
        value: &Value,
        want: &Want,
    ) -> Option<T> {
        let before = self.errors.len();
        if !self.shape(task, path, value, want) {
            return None;
        }
        if self.errors.len() > before {
            // Only numbers out of range; one that does not fit its field (a negative
            // count) is not reported a second time.
            return T::deserialize(value).ok();
        }
        self.typed(task, path, value)
    }
}

/// A number as people write it: `1e300`, `1e-9`, `2.5`.
fn show(v: f64) -> String {
    let a = v.abs();
    if a != 0.0 && !(1e-4..1e16).contains(&a) {
        format!("{v:e}")
    } else {
        v.to_string()
    }
}

/// What a schema wants, in words.
fn expected(want: &Want) -> String {
    match want {
        Want::Any => "anything".into(),
        Want::Str | Want::Matching(_) => "a string".into(),
        Want::Text | Want::Id => "a non-empty string".into(),
        Want::Named(names) => format!("one of {}", names.join(", ")),
        Want::Bool => "true or false".into(),
        Want::Num(r) if r.whole => format!("a whole number {}", r.describe()),
        Want::Num(r) => format!("a number {}", r.describe()),
        Want::OneOf(names) => format!("one of {}", names.join(", ")),
        Want::List(item) | Want::NonEmptyList(item) => match item {
            Want::Str => "an array of strings".into(),
            Want::Num(_) => "an array of numbers".into(),
            Want::Obj(_) => "an array of objects".into(),
            _ => "an array".into(),
        },
        Want::Obj(_) | Want::Map(_) | Want::Tagged(_) => "an object".into(),
        Want::Opt(inner) => expected(inner),
    }
}
