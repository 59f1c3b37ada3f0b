//! What each kind of check compares.

use serde_json::{json, Map, Value};

use crate::base::protocol::Grade;

use super::compare::{as_number, as_text, normalized};
use super::compiled::{Path, Pattern, Schema};
use super::spec::{CheckKind, Normalize, Over};
use super::{Observed, Outcome};

/// Scores a kind on one sample's outcome.
pub fn evaluate_kind(kind: &CheckKind, seen: &Observed, expected: Option<&Value>) -> Outcome {
    match kind {
        CheckKind::Exact {
            value,
            normalize,
            path,
        } => exact(value, normalize, path, seen, expected),
        CheckKind::Contains { text, ignore_case } => contains(text, *ignore_case, seen, expected),
        CheckKind::Regex { pattern } => regex(pattern, seen),
        CheckKind::JsonSchema { schema, path } => json_schema(schema, path, seen),
        CheckKind::JsonValid => json_valid(seen),
        CheckKind::Jsonpath { path, over, equals } => jsonpath(path, over, equals, seen),
        CheckKind::Numeric {
            value,
            path,
            abs_tol,
            rel_tol,
        } => numeric((value, path), (*abs_tol, *rel_tol), seen, expected),
        CheckKind::ToolCalled { tool, min } => tool_called(tool, *min, seen),
        CheckKind::ToolSequence { tools, strict } => tool_sequence(tools, *strict, seen),
        CheckKind::ToolArgs { tool, args } => tool_args(tool, args, seen),
        CheckKind::GradeAtLeast { grade } => grade_at_least(*grade, seen),
        CheckKind::TokensAtMost { tokens } => {
            let passed = seen.tokens <= *tokens;
            out(
                passed,
                json!(tokens),
                json!(seen.tokens),
                "tokens",
                format!("{} tokens", seen.tokens),
            )
        }
        CheckKind::LatencyAtMost { ms } => {
            let passed = seen.latency_ms <= *ms;
            out(
                passed,
                json!(ms),
                json!(seen.latency_ms),
                "latency_ms",
                format!("{} ms", seen.latency_ms),
            )
        }
        CheckKind::CostAtMost { usd } => cost_at_most(*usd, seen),
        CheckKind::All { checks }
        | CheckKind::Any { checks }
        | CheckKind::AtLeastK { checks, .. } => combined(kind, checks, seen, expected),
        CheckKind::Command {
            program,
            args,
            timeout_s,
        } => super::command::run(program, args, *timeout_s, seen, expected),
        // Refused by the spec's checks: a judge is scored by `evaluate` at the top.
        CheckKind::Judge { .. } => out(
            false,
            Value::Null,
            Value::Null,
            "judge",
            "a judge cannot be nested in another check".into(),
        ),
        CheckKind::Not { check } => {
            let inner = evaluate_kind(check, seen, expected);
            Outcome {
                passed: !inner.passed,
                score: 1.0 - inner.score,
                why: format!("not ({})", inner.why),
                ..inner
            }
        }
    }
}

/// `contains`: the output holds the text (or the expected value), in any case when asked.
fn contains(
    text: &Option<String>,
    ignore_case: bool,
    seen: &Observed,
    expected: Option<&Value>,
) -> Outcome {
    let Some(want) = text.clone().or_else(|| expected.map(as_text)) else {
        return no_expected("output");
    };
    let passed = if ignore_case {
        seen.output.to_lowercase().contains(&want.to_lowercase())
    } else {
        seen.output.contains(&want)
    };
    let why = if passed { "found" } else { "not in the output" };
    out(
        passed,
        json!(want),
        json!(excerpt(&seen.output)),
        "output",
        why.into(),
    )
}

/// `regex`: the pattern matches somewhere in the output.
fn regex(pattern: &Pattern, seen: &Observed) -> Outcome {
    match pattern.regex().find(&seen.output) {
        Some(m) => out(
            true,
            json!(pattern),
            json!(m.as_str()),
            "output",
            format!("matched at byte {}", m.start()),
        ),
        None => out(
            false,
            json!(pattern),
            json!(excerpt(&seen.output)),
            "output",
            "no match".into(),
        ),
    }
}

/// `json_valid`: the output parses as JSON.
fn json_valid(seen: &Observed) -> Outcome {
    match serde_json::from_str::<Value>(&seen.output) {
        Ok(_) => out(
            true,
            json!("valid JSON"),
            Value::Null,
            "output",
            "parses".into(),
        ),
        Err(e) => out(
            false,
            json!("valid JSON"),
            json!(excerpt(&seen.output)),
            "output",
            format!("not valid JSON: {e}"),
        ),
    }
}

/// `tool_called`: the tool was called at least `min` times.
fn tool_called(tool: &str, min: usize, seen: &Observed) -> Outcome {
    let n = seen.tools.iter().filter(|c| c.name == tool).count();
    let passed = n >= min;
    out(
        passed,
        json!({"tool": tool, "at_least": min}),
        json!(n),
        "tools",
        format!("called {n} time(s)"),
    )
}

/// `tool_sequence`: the tools were called in this order — exactly these calls when
/// `strict`, else with other calls between them allowed.
fn tool_sequence(tools: &[String], strict: bool, seen: &Observed) -> Outcome {
    let names: Vec<&str> = seen.tools.iter().map(|c| c.name.as_str()).collect();
    let passed = if strict {
        names == tools.iter().map(String::as_str).collect::<Vec<_>>()
    } else {
        let mut want = tools.iter().peekable();
        for n in &names {
            if want.peek().is_some_and(|w| w.as_str() == *n) {
                want.next();
            }
        }
        want.peek().is_none()
    };
    let why = if passed {
        "in order"
    } else {
        "not in this order"
    };
    out(passed, json!(tools), json!(names), "tools", why.into())
}

/// `tool_args`: some call of the tool has these arguments (among others).
fn tool_args(tool: &str, args: &Map<String, Value>, seen: &Observed) -> Outcome {
    let calls: Vec<&Value> = seen
        .tools
        .iter()
        .filter(|c| c.name == tool)
        .map(|c| &c.args)
        .collect();
    let matches = |a: &Value| args.iter().all(|(k, v)| a.get(k) == Some(v));
    let passed = calls.iter().any(|a| matches(a));
    let why = match (calls.is_empty(), passed) {
        (true, _) => format!("`{tool}` was not called"),
        (false, true) => "a call has these arguments".into(),
        (false, false) => "no call has these arguments".into(),
    };
    out(
        passed,
        Value::Object(args.clone()),
        json!(calls),
        "tools",
        why,
    )
}

/// `grade_at_least`: the sample's best atom is graded this well or better.
fn grade_at_least(grade: Grade, seen: &Observed) -> Outcome {
    match seen.grade {
        None => out(
            false,
            json!(grade.as_str()),
            Value::Null,
            "grade",
            "no atom was graded".into(),
        ),
        Some(g) => {
            let passed = g <= grade;
            out(
                passed,
                json!(grade.as_str()),
                json!(g.as_str()),
                "grade",
                format!("graded {}", g.as_str()),
            )
        }
    }
}

/// `cost_at_most`: the sample cost at most `usd` (it fails when the cost is unknown).
fn cost_at_most(usd: f64, seen: &Observed) -> Outcome {
    match seen.cost_usd {
        None => out(
            false,
            json!(usd),
            Value::Null,
            "cost_usd",
            "the cost is unknown: the model has no price".into(),
        ),
        Some(c) => out(c <= usd, json!(usd), json!(c), "cost_usd", format!("${c}")),
    }
}

/// An outcome that passed or not, with what was expected and found, where, and why.
fn out(passed: bool, expected: Value, found: Value, at: &str, why: String) -> Outcome {
    Outcome {
        passed,
        score: if passed { 1.0 } else { 0.0 },
        expected,
        found,
        at: at.to_string(),
        why,
    }
}

/// The outcome of a check with nothing to compare the output with.
fn no_expected(at: &str) -> Outcome {
    out(
        false,
        Value::Null,
        Value::Null,
        at,
        "nothing to compare with: the check gives no value and the sample no expected value".into(),
    )
}

/// `exact`: the output (or the value at `path`) equals the expected value once normalised.
fn exact(
    value: &Option<Value>,
    normalize: &Option<Vec<Normalize>>,
    path: &Option<Path>,
    seen: &Observed,
    expected: Option<&Value>,
) -> Outcome {
    let Some(want) = value.as_ref().or(expected) else {
        return no_expected("output");
    };
    let how = normalize.clone().unwrap_or_else(|| vec![Normalize::Trim]);
    let (found, at) = match looked_at(path.as_ref(), &seen.output) {
        Ok(found) => found,
        Err((at, why)) => return out(false, want.clone(), Value::Null, &at, why),
    };
    let (w, f) = (
        normalized(&as_text(want), &how),
        normalized(&as_text(&found), &how),
    );
    let passed = w == f;
    let why = if passed {
        "equal".into()
    } else {
        format!("differs: expected {w:?}, found {f:?}")
    };
    out(passed, want.clone(), found, &at, why)
}

/// `json_schema`: the output (or the value at `path`) matches the schema.
fn json_schema(schema: &Schema, path: &Option<Path>, seen: &Observed) -> Outcome {
    let want = json!("matches the schema");
    let (found, at) = match path {
        Some(p) => match at_path(p, &seen.output) {
            Ok(v) => (v, p.as_str().to_string()),
            Err(why) => return out(false, want, Value::Null, p.as_str(), why),
        },
        None => match serde_json::from_str::<Value>(&seen.output) {
            Ok(v) => (v, "output".to_string()),
            Err(e) => {
                return out(
                    false,
                    want,
                    json!(excerpt(&seen.output)),
                    "output",
                    format!("not valid JSON: {e}"),
                )
            }
        },
    };
    let validator = schema.validator();
    let errors: Vec<String> = validator
        .iter_errors(&found)
        .take(5)
        .map(|e| {
            let at = e.instance_path().to_string();
            format!("{}: {e}", if at.is_empty() { "/" } else { &at })
        })
        .collect();
    if errors.is_empty() {
        out(true, want, Value::Null, &at, "matches the schema".into())
    } else {
        let why = format!("does not match the schema: {}", errors[0]);
        out(false, want, json!(errors), &at, why)
    }
}

/// `jsonpath`: the path finds something (equal to `equals`, when given).
fn jsonpath(path: &Path, over: &Over, equals: &Option<Value>, seen: &Observed) -> Outcome {
    let root = match over {
        Over::Output => match serde_json::from_str::<Value>(&seen.output) {
            Ok(v) => v,
            Err(e) => {
                return out(
                    false,
                    equals.clone().unwrap_or(Value::Null),
                    Value::Null,
                    path.as_str(),
                    format!("the output is not JSON: {e}"),
                )
            }
        },
        Over::Atoms => Value::Array(seen.atoms.clone()),
        Over::Trace => seen.trace.clone(),
    };
    let found = path.json_path().select_value(&root);
    let path = path.as_str();
    match (found, equals) {
        (None, want) => out(
            false,
            want.clone().unwrap_or(json!("a value")),
            Value::Null,
            path,
            "the path finds nothing".into(),
        ),
        (Some(f), None) => out(true, json!("a value"), f, path, "found".into()),
        (Some(f), Some(want)) => {
            let passed = &f == want;
            let why = if passed { "equal" } else { "differs" };
            out(passed, want.clone(), f, path, why.into())
        }
    }
}

/// `numeric`: the number found is within the tolerance of the one expected.
fn numeric(
    (value, path): (&Option<f64>, &Option<Path>),
    (abs_tol, rel_tol): (f64, f64),
    seen: &Observed,
    expected: Option<&Value>,
) -> Outcome {
    let Some(want) = value.or_else(|| expected.and_then(as_number)) else {
        return no_expected("output");
    };
    let (raw, at) = match looked_at(path.as_ref(), &seen.output) {
        Ok(found) => found,
        Err((at, why)) => return out(false, json!(want), Value::Null, &at, why),
    };
    let Some(got) = as_number(&raw) else {
        return out(
            false,
            json!(want),
            json!(excerpt(&as_text(&raw))),
            &at,
            "not a number".into(),
        );
    };
    let diff = (got - want).abs();
    let allowed = abs_tol.max(rel_tol * want.abs());
    // Decimal numbers are not exact in binary: 0.7 is "off by" 0.1000…09 from
    // 0.8, which a tolerance of 0.1 must still let pass.
    let passed = diff <= allowed + 1e-12 * want.abs().max(1.0);
    let diff = (diff * 1e9).round() / 1e9;
    let why = if passed {
        format!("within {allowed} (off by {diff})")
    } else {
        format!("off by {diff}; {allowed} allowed")
    };
    out(passed, json!(want), json!(got), &at, why)
}

/// `all`, `any`, `at_least_k`: enough of the nested checks pass.
fn combined(
    kind: &CheckKind,
    checks: &[CheckKind],
    seen: &Observed,
    expected: Option<&Value>,
) -> Outcome {
    let parts: Vec<Outcome> = checks
        .iter()
        .map(|c| evaluate_kind(c, seen, expected))
        .collect();
    let passed_n = parts.iter().filter(|p| p.passed).count();
    let need = match kind {
        CheckKind::All { .. } => checks.len(),
        CheckKind::Any { .. } => 1,
        CheckKind::AtLeastK { k, .. } => *k,
        _ => 0,
    };
    let passed = passed_n >= need;
    let failed: Vec<String> = parts
        .iter()
        .filter(|p| !p.passed)
        .map(|p| format!("{}: {}", p.at, p.why))
        .collect();
    let why = format!(
        "{passed_n} of {} passed, {need} needed{}",
        checks.len(),
        if failed.is_empty() || passed {
            String::new()
        } else {
            format!(" ({})", failed.join("; "))
        }
    );
    let found = json!(parts
        .iter()
        .map(|p| json!({"at": p.at, "passed": p.passed, "found": p.found}))
        .collect::<Vec<_>>());
    out(passed, json!({"at_least": need}), found, "checks", why)
}

/// What a check with an optional `path` looks at, and where: the whole output, or the
/// value at the path in the output parsed as JSON. An error is (where, why).
fn looked_at(path: Option<&Path>, output: &str) -> Result<(Value, String), (String, String)> {
    match path {
        None => Ok((Value::String(output.to_string()), "output".to_string())),
        Some(p) => match at_path(p, output) {
            Ok(v) => Ok((v, p.as_str().to_string())),
            Err(why) => Err((p.as_str().to_string(), why)),
        },
    }
}

/// The value at JSONPath `path` in `output` parsed as JSON.
fn at_path(path: &Path, output: &str) -> Result<Value, String> {
    let v: Value =
        serde_json::from_str(output).map_err(|e| format!("the output is not JSON: {e}"))?;
    path.json_path()
        .select_value(&v)
        .ok_or_else(|| "the path finds nothing".to_string())
}

/// The start of a long text, for a result's `found`.
fn excerpt(s: &str) -> String {
    const MAX: usize = 400;
    if s.len() <= MAX {
        return s.to_string();
    }
    let mut end = MAX;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}
