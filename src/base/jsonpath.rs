//! The JSONPath subset used by `task_output` references (seed 000 §2.2, §7.1).
//!
//! Grammar: `$` followed by steps — `.name`, `['name']`, `[n]` (negative counts from the
//! end), `[*]` / `.*`, and filters `[?(@.a.b OP literal)]` or `[?(@.a)]` with OP one of
//! `== != > >= < <=` and literals number, 'string', "string", true, false, null.

use std::fmt;

use serde_json::Value;

/// A parsed path.
#[derive(Debug, Clone, PartialEq)]
pub struct JsonPath {
    steps: Vec<Step>,
    source: String,
}

/// One step of a path.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    Key(String),
    Index(i64),
    Wildcard,
    Filter(FilterExpr),
}

/// `@.field OP literal`, or `@.field` (exists and truthy) when `op` is `None`.
#[derive(Debug, Clone, PartialEq)]
struct FilterExpr {
    field: Vec<String>,
    op: Option<(CmpOp, Value)>,
}

/// A comparison of a filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmpOp {
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `<`
    Lt,
    /// `<=`
    Le,
}

/// Why a path did not parse: the byte offset and what was expected there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathError {
    /// Byte offset in the path text.
    pub offset: usize,
    /// What was wrong.
    pub message: String,
}

impl fmt::Display for PathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at offset {}: {}", self.offset, self.message)
    }
}

impl std::error::Error for PathError {}

impl fmt::Display for JsonPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

struct Parser<'a> {
    src: &'a str,
    pos: usize,
}

impl<'a> Parser<'a> {
    fn err<T>(&self, message: impl Into<String>) -> Result<T, PathError> {
        Err(PathError {
            offset: self.pos,
            message: message.into(),
        })
    }

    fn peek(&self) -> Option<char> {
        self.src[self.pos..].chars().next()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        Some(c)
    }

    fn eat(&mut self, s: &str) -> bool {
        if self.src[self.pos..].starts_with(s) {
            self.pos += s.len();
            true
        } else {
            false
        }
    }

    fn skip_ws(&mut self) {
        while let Some(c) = self.peek().filter(|c| c.is_whitespace()) {
            self.pos += c.len_utf8();
        }
    }

    fn ident(&mut self) -> Result<String, PathError> {
        let start = self.pos;
        while let Some(c) = self.peek() {
            if c.is_alphanumeric() || c == '_' || c == '-' {
                self.bump();
            } else {
                break;
            }
        }
        if self.pos == start {
            return self.err("expected a field name");
        }
        Ok(self.src[start..self.pos].to_string())
    }

    fn quoted(&mut self) -> Result<String, PathError> {
        let quote = match self.bump() {
            Some(q @ ('\'' | '"')) => q,
            _ => return self.err("expected a quoted string"),
        };
        let mut out = String::new();
        loop {
            match self.bump() {
                None => return self.err("unterminated string"),
                Some('\\') => match self.bump() {
                    Some(c) => out.push(c),
                    None => return self.err("unterminated escape"),
                },
                Some(c) if c == quote => return Ok(out),
                Some(c) => out.push(c),
            }
        }
    }

    fn number(&mut self) -> Result<Value, PathError> {
        let start = self.pos;
        if self.peek() == Some('-') {
            self.bump();
        }
        while matches!(self.peek(), Some(c) if c.is_ascii_digit() || c == '.' || c == 'e' || c == 'E' || c == '+')
        {
            self.bump();
        }
        let text = &self.src[start..self.pos];
        if let Ok(i) = text.parse::<i64>() {
            return Ok(Value::from(i));
        }
        match text.parse::<f64>() {
            Ok(f) if f.is_finite() => Ok(Value::from(f)),
            _ => Err(PathError {
                offset: start,
                message: format!("invalid number `{text}`"),
            }),
        }
    }

    fn literal(&mut self) -> Result<Value, PathError> {
        self.skip_ws();
        match self.peek() {
            Some('\'' | '"') => Ok(Value::String(self.quoted()?)),
            Some(c) if c.is_ascii_digit() || c == '-' => self.number(),
            _ => {
                if self.eat("true") {
                    Ok(Value::Bool(true))
                } else if self.eat("false") {
                    Ok(Value::Bool(false))
                } else if self.eat("null") {
                    Ok(Value::Null)
                } else {
                    self.err("expected a literal (number, quoted string, true, false or null)")
                }
            }
        }
    }

    fn filter(&mut self) -> Result<FilterExpr, PathError> {
        // after `[?(`
        self.skip_ws();
        if !self.eat("@") {
            return self.err("expected `@` at the start of a filter");
        }
        let mut field = Vec::new();
        loop {
            if self.eat(".") {
                field.push(self.ident()?);
            } else if self.src[self.pos..].starts_with("['")
                || self.src[self.pos..].starts_with("[\"")
            {
                self.bump();
                field.push(self.quoted()?);
                if !self.eat("]") {
                    return self.err("expected `]`");
                }
            } else {
                break;
            }
        }
        if field.is_empty() {
            return self.err("expected `.field` after `@`");
        }
        self.skip_ws();
        let op = if self.eat("==") {
            Some(CmpOp::Eq)
        } else if self.eat("!=") {
            Some(CmpOp::Ne)
        } else if self.eat(">=") {
            Some(CmpOp::Ge)
        } else if self.eat("<=") {
            Some(CmpOp::Le)
        } else if self.eat(">") {
            Some(CmpOp::Gt)
        } else if self.eat("<") {
            Some(CmpOp::Lt)
        } else {
            None
        };
        let op = match op {
            Some(op) => Some((op, self.literal()?)),
            None => None,
        };
        self.skip_ws();
        if !self.eat(")") {
            return self.err("expected `)` to close the filter");
        }
        Ok(FilterExpr { field, op })
    }

    fn bracket(&mut self) -> Result<Step, PathError> {
        // after `[`
        self.skip_ws();
        let step = match self.peek() {
            Some('*') => {
                self.bump();
                Step::Wildcard
            }
            Some('\'' | '"') => Step::Key(self.quoted()?),
            Some('?') => {
                self.bump();
                self.skip_ws();
                if !self.eat("(") {
                    return self.err("expected `(` after `?`");
                }
                Step::Filter(self.filter()?)
            }
            Some(c) if c.is_ascii_digit() || c == '-' => {
                let start = self.pos;
                match self.number()? {
                    Value::Number(n) if n.is_i64() => Step::Index(n.as_i64().unwrap_or(0)),
                    _ => {
                        return Err(PathError {
                            offset: start,
                            message: "array index must be an integer".into(),
                        })
                    }
                }
            }
            _ => return self.err("expected `*`, an index, a quoted name or `?(` after `[`"),
        };
        self.skip_ws();
        if !self.eat("]") {
            return self.err("expected `]`");
        }
        Ok(step)
    }
}

impl JsonPath {
    /// Parses a path such as `$.atoms[?(@.confidence>0.8)]`.
    pub fn parse(src: &str) -> Result<JsonPath, PathError> {
        let mut p = Parser { src, pos: 0 };
        p.skip_ws();
        if !p.eat("$") {
            return p.err("a path must start with `$`");
        }
        let mut steps = Vec::new();
        loop {
            match p.peek() {
                None => break,
                Some('.') => {
                    p.bump();
                    if p.peek() == Some('.') {
                        return p.err("recursive descent `..` is not supported");
                    }
                    if p.eat("*") {
                        steps.push(Step::Wildcard);
                    } else {
                        steps.push(Step::Key(p.ident()?));
                    }
                }
                Some('[') => {
                    p.bump();
                    steps.push(p.bracket()?);
                }
                Some(c) if c.is_whitespace() => {
                    p.skip_ws();
                    if p.peek().is_some() {
                        return p.err("unexpected text after the path");
                    }
                }
                Some(c) => return p.err(format!("unexpected `{c}`")),
            }
        }
        Ok(JsonPath {
            steps,
            source: src.to_string(),
        })
    }

    /// Whether the path can select several values (wildcards or filters).
    pub fn is_multi(&self) -> bool {
        self.steps
            .iter()
            .any(|s| matches!(s, Step::Wildcard | Step::Filter(_)))
    }

    /// Evaluates the path; returns every matched value (empty when nothing matches).
    pub fn select<'v>(&self, root: &'v Value) -> Vec<&'v Value> {
        let mut current = vec![root];
        for step in &self.steps {
            let mut next = Vec::new();
            for v in current {
                step_into(step, v, &mut next);
            }
            current = next;
        }
        current
    }

    /// Evaluates the path into one value: the single match, or an array of all matches
    /// when the path can select several. `None` when a single-valued path matches nothing.
    pub fn select_value(&self, root: &Value) -> Option<Value> {
        let found = self.select(root);
        if self.is_multi() {
            Some(Value::Array(found.into_iter().cloned().collect()))
        } else {
            found.into_iter().next().cloned()
        }
    }
}

/// Pushes onto `next` what `step` selects in `v`.
fn step_into<'v>(step: &Step, v: &'v Value, next: &mut Vec<&'v Value>) {
    match step {
        Step::Key(k) => next.extend(v.get(k.as_str())),
        Step::Index(i) => next.extend(v.as_array().and_then(|arr| at_index(arr, *i))),
        Step::Wildcard => match v {
            Value::Array(a) => next.extend(a.iter()),
            Value::Object(o) => next.extend(o.values()),
            _ => {}
        },
        Step::Filter(f) => {
            let items: Box<dyn Iterator<Item = &Value>> = match v {
                Value::Array(a) => Box::new(a.iter()),
                Value::Object(o) => Box::new(o.values()),
                _ => Box::new(std::iter::empty()),
            };
            next.extend(items.filter(|item| f.matches(item)));
        }
    }
}

/// The item of `arr` at index `i`, counted from the end when negative.
fn at_index(arr: &[Value], i: i64) -> Option<&Value> {
    let idx = if i < 0 { arr.len() as i64 + i } else { i };
    if idx < 0 {
        return None;
    }
    arr.get(idx as usize)
}

impl FilterExpr {
    fn matches(&self, item: &Value) -> bool {
        let mut v = item;
        for k in &self.field {
            match v.get(k.as_str()) {
                Some(x) => v = x,
                None => return false,
            }
        }
        match &self.op {
            None => !matches!(v, Value::Null | Value::Bool(false)),
            Some((op, lit)) => compare(v, *op, lit),
        }
    }
}

/// Compares a value with a literal: numerically when both are numbers, by text when
/// both are strings; otherwise only `==` / `!=` apply (JSON equality).
pub fn compare(v: &Value, op: CmpOp, lit: &Value) -> bool {
    fn ordered<T: PartialOrd + ?Sized>(a: &T, b: &T, op: CmpOp) -> bool {
        match op {
            CmpOp::Eq => a == b,
            CmpOp::Ne => a != b,
            CmpOp::Gt => a > b,
            CmpOp::Ge => a >= b,
            CmpOp::Lt => a < b,
            CmpOp::Le => a <= b,
        }
    }
    if let (Some(a), Some(b)) = (v.as_f64(), lit.as_f64()) {
        return ordered(&a, &b, op);
    }
    if let (Some(a), Some(b)) = (v.as_str(), lit.as_str()) {
        return ordered(a, b, op);
    }
    match op {
        CmpOp::Eq => v == lit,
        CmpOp::Ne => v != lit,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc() -> Value {
        json!({
            "atoms": [
                {"atom_id": "a1", "atom_type": "claim", "confidence": 0.95, "content": "c1"},
                {"atom_id": "a2", "atom_type": "evidence", "confidence": 0.6, "content": "c2"},
                {"atom_id": "a3", "atom_type": "claim", "confidence": 0.81, "content": "c3"}
            ],
            "metadata": {"quality_score": 0.88}
        })
    }

    fn ids(path: &str) -> Vec<Value> {
        let d = doc();
        JsonPath::parse(path)
            .expect("parses")
            .select(&d)
            .into_iter()
            .cloned()
            .collect()
    }

    #[test]
    fn seed_examples_select_what_they_say() {
        assert_eq!(ids("$.atoms").len(), 1);
        assert_eq!(ids("$.atoms")[0].as_array().map(Vec::len), Some(3));
        assert_eq!(ids("$.atoms[0]")[0]["atom_id"], "a1");
        assert_eq!(
            ids("$.atoms[*].content"),
            vec![json!("c1"), json!("c2"), json!("c3")]
        );
        assert_eq!(ids("$.metadata.quality_score"), vec![json!(0.88)]);
        let high: Vec<_> = ids("$.atoms[?(@.confidence>0.8)]")
            .iter()
            .map(|a| a["atom_id"].clone())
            .collect();
        assert_eq!(high, vec![json!("a1"), json!("a3")]);
        let claims: Vec<_> = ids("$.atoms[?(@.atom_type=='claim')]")
            .iter()
            .map(|a| a["atom_id"].clone())
            .collect();
        assert_eq!(claims, vec![json!("a1"), json!("a3")]);
        assert!(ids("$.validation_results").is_empty());
    }

    #[test]
    fn negative_index_and_bracket_names() {
        assert_eq!(ids("$['atoms'][-1]")[0]["atom_id"], "a3");
        assert_eq!(ids("$.atoms[?(@.confidence <= 0.6)]")[0]["atom_id"], "a2");
    }

    #[test]
    fn bad_paths_are_rejected_with_offsets() {
        for bad in [
            "atoms",
            "$.",
            "$..atoms",
            "$.atoms[",
            "$.atoms[?(@.x>)]",
            "$.atoms[1.5]",
            "$[?(x)]",
            "$.a b",
        ] {
            let err = JsonPath::parse(bad).expect_err(bad);
            assert!(err.offset <= bad.len(), "{bad}: {err}");
        }
    }
}
