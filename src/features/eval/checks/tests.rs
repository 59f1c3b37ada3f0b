use serde_json::{json, Value};

use super::*;

fn seen() -> Observed {
    Observed {
        output: "  The answer is 42.  ".into(),
        atoms: vec![json!({"atom_type": "Math_Atom", "confidence": 0.9})],
        trace: json!({"response": {"model": "m1"}}),
        tools: vec![
            ToolCall {
                name: "search".into(),
                args: json!({"q": "x", "k": 3}),
            },
            ToolCall {
                name: "read".into(),
                args: json!({"path": "/a"}),
            },
            ToolCall {
                name: "search".into(),
                args: json!({"q": "y", "k": 5}),
            },
        ],
        grade: Some(Grade::B),
        tokens: 1200,
        latency_ms: 850,
        cost_usd: Some(0.004),
        judgments: Default::default(),
    }
}

fn kind(v: Value) -> CheckKind {
    serde_json::from_value(v.clone()).unwrap_or_else(|e| panic!("{v}: {e}"))
}

fn passes(v: Value, seen: &Observed, expected: Option<&Value>) -> (bool, Outcome) {
    let o = evaluate_kind(&kind(v), seen, expected);
    (o.passed, o)
}

/// The output of [`seen`] replaced by a JSON object.
fn json_out() -> Observed {
    Observed {
        output: r#"{"total": "1,234.5", "items": [1, 2]}"#.into(),
        ..seen()
    }
}

/// Asserts each case — (check, observed, the sample's expected value, should pass) —
/// passes or fails as it should, saying where it looked and why.
fn assert_cases(cases: Vec<(Value, &Observed, Option<&Value>, bool)>) {
    for (check, observed, expected, want) in cases {
        let (got, o) = passes(check.clone(), observed, expected);
        assert_eq!(got, want, "{check}: {o:?}");
        assert!(!o.why.is_empty() && !o.at.is_empty(), "{check}: {o:?}");
    }
}

#[test]
fn exact_passes_and_fails_on_the_samples_it_should() {
    let s = seen();
    let json_out = json_out();
    let forty_two = json!("the answer is 42.");
    let (n42, n1235) = (json!(42), json!("1235"));
    assert_cases(vec![
        (
            json!({"kind": "exact", "normalize": ["trim", "lowercase"]}),
            &s,
            Some(&forty_two),
            true,
        ),
        (json!({"kind": "exact"}), &s, Some(&forty_two), false),
        // The number a model said, however it said it, against the number expected.
        (
            json!({"kind": "exact", "normalize": ["last_number"]}),
            &s,
            Some(&n42),
            true,
        ),
        (
            json!({"kind": "exact", "normalize": ["last_number"]}),
            &s,
            Some(&n1235),
            false,
        ),
        (
            json!({"kind": "exact", "value": 2, "path": "$.items[1]"}),
            &json_out,
            None,
            true,
        ),
        (
            json!({"kind": "exact", "value": 3, "path": "$.items[1]"}),
            &json_out,
            None,
            false,
        ),
    ]);
}

#[test]
fn contains_and_regex_pass_and_fail_on_the_samples_they_should() {
    let s = seen();
    let n42 = json!(42);
    assert_cases(vec![
        (
            json!({"kind": "contains", "text": "ANSWER", "ignore_case": true}),
            &s,
            None,
            true,
        ),
        (
            json!({"kind": "contains", "text": "ANSWER"}),
            &s,
            None,
            false,
        ),
        (json!({"kind": "contains"}), &s, Some(&n42), true),
        (
            json!({"kind": "regex", "pattern": "\\b\\d{2}\\b"}),
            &s,
            None,
            true,
        ),
        (
            json!({"kind": "regex", "pattern": "^\\d+$"}),
            &s,
            None,
            false,
        ),
    ]);
}

#[test]
fn json_kinds_pass_and_fail_on_the_samples_they_should() {
    let s = seen();
    let json_out = json_out();
    assert_cases(vec![
        (json!({"kind": "json_valid"}), &json_out, None, true),
        (
            json!({"kind": "json_schema", "schema": {"type": "object", "required": ["total", "items"],
                   "properties": {"items": {"type": "array", "items": {"type": "integer"}}}}}),
            &json_out,
            None,
            true,
        ),
        (
            // `total` is a string in the output: a schema that wants a number fails.
            json!({"kind": "json_schema", "schema": {"type": "object", "properties": {"total": {"type": "number"}}}}),
            &json_out,
            None,
            false,
        ),
        (
            json!({"kind": "json_schema", "path": "$.items", "schema": {"type": "array", "maxItems": 1}}),
            &json_out,
            None,
            false,
        ),
        (
            json!({"kind": "json_schema", "schema": {"type": "object"}}),
            &s,
            None,
            false,
        ),
        (json!({"kind": "json_valid"}), &s, None, false),
        (
            json!({"kind": "jsonpath", "path": "$.items[0]", "equals": 1}),
            &json_out,
            None,
            true,
        ),
        (
            json!({"kind": "jsonpath", "path": "$.missing"}),
            &json_out,
            None,
            false,
        ),
        (
            json!({"kind": "jsonpath", "path": "$[0].atom_type", "over": "atoms", "equals": "Math_Atom"}),
            &s,
            None,
            true,
        ),
        (
            json!({"kind": "jsonpath", "path": "$.response.model", "over": "trace", "equals": "m2"}),
            &s,
            None,
            false,
        ),
    ]);
}

#[test]
fn numeric_passes_and_fails_on_the_samples_it_should() {
    let s = seen();
    let json_out = json_out();
    let n1235 = json!("1235");
    assert_cases(vec![
        (
            json!({"kind": "numeric", "path": "$.total", "value": 1234.49, "abs_tol": 0.02}),
            &json_out,
            None,
            true,
        ),
        (
            // At the edge of the tolerance, in decimal: 1234.5 − 1234.4 is 0.1000…136 in
            // binary, and still passes.
            json!({"kind": "numeric", "path": "$.total", "value": 1234.4, "abs_tol": 0.1}),
            &json_out,
            None,
            true,
        ),
        (
            json!({"kind": "numeric", "path": "$.total", "value": 1234.0, "abs_tol": 0.1}),
            &json_out,
            None,
            false,
        ),
        (
            json!({"kind": "numeric", "path": "$.total", "rel_tol": 0.001}),
            &json_out,
            Some(&n1235),
            true,
        ),
        (json!({"kind": "numeric", "value": 42}), &s, None, false),
    ]);
}

#[test]
fn tool_kinds_pass_and_fail_on_the_samples_they_should() {
    let s = seen();
    assert_cases(vec![
        (
            json!({"kind": "tool_called", "tool": "search", "min": 2}),
            &s,
            None,
            true,
        ),
        (
            json!({"kind": "tool_called", "tool": "write"}),
            &s,
            None,
            false,
        ),
        (
            json!({"kind": "tool_sequence", "tools": ["search", "search"]}),
            &s,
            None,
            true,
        ),
        (
            json!({"kind": "tool_sequence", "tools": ["read", "read"]}),
            &s,
            None,
            false,
        ),
        (
            json!({"kind": "tool_sequence", "tools": ["search", "read", "search"], "strict": true}),
            &s,
            None,
            true,
        ),
        (
            json!({"kind": "tool_sequence", "tools": ["search", "search"], "strict": true}),
            &s,
            None,
            false,
        ),
        (
            json!({"kind": "tool_args", "tool": "search", "args": {"q": "y"}}),
            &s,
            None,
            true,
        ),
        (
            json!({"kind": "tool_args", "tool": "search", "args": {"q": "y", "k": 3}}),
            &s,
            None,
            false,
        ),
    ]);
}

#[test]
fn grade_and_budget_kinds_pass_and_fail_on_the_samples_they_should() {
    let s = seen();
    assert_cases(vec![
        (
            json!({"kind": "grade_at_least", "grade": "B"}),
            &s,
            None,
            true,
        ),
        (
            json!({"kind": "grade_at_least", "grade": "A"}),
            &s,
            None,
            false,
        ),
        (
            json!({"kind": "tokens_at_most", "tokens": 1200}),
            &s,
            None,
            true,
        ),
        (
            json!({"kind": "tokens_at_most", "tokens": 1199}),
            &s,
            None,
            false,
        ),
        (
            json!({"kind": "latency_at_most", "ms": 1000}),
            &s,
            None,
            true,
        ),
        (
            json!({"kind": "latency_at_most", "ms": 800}),
            &s,
            None,
            false,
        ),
        (json!({"kind": "cost_at_most", "usd": 0.01}), &s, None, true),
        (
            json!({"kind": "cost_at_most", "usd": 0.001}),
            &s,
            None,
            false,
        ),
    ]);
}

#[test]
fn combining_kinds_pass_and_fail_on_the_samples_they_should() {
    let s = seen();
    let json_out = json_out();
    assert_cases(vec![
        (
            json!({"kind": "all", "checks": [{"kind": "json_valid"}, {"kind": "tokens_at_most", "tokens": 5000}]}),
            &json_out,
            None,
            true,
        ),
        (
            json!({"kind": "all", "checks": [{"kind": "json_valid"}, {"kind": "tokens_at_most", "tokens": 5}]}),
            &json_out,
            None,
            false,
        ),
        (
            json!({"kind": "any", "checks": [{"kind": "json_valid"}, {"kind": "tokens_at_most", "tokens": 5}]}),
            &s,
            None,
            false,
        ),
        (
            json!({"kind": "any", "checks": [{"kind": "json_valid"}, {"kind": "tokens_at_most", "tokens": 5000}]}),
            &s,
            None,
            true,
        ),
        (
            json!({"kind": "at_least_k", "k": 2, "checks": [{"kind": "json_valid"}, {"kind": "grade_at_least", "grade": "C"}, {"kind": "tool_called", "tool": "read"}]}),
            &s,
            None,
            true,
        ),
        (
            json!({"kind": "at_least_k", "k": 3, "checks": [{"kind": "json_valid"}, {"kind": "grade_at_least", "grade": "C"}, {"kind": "tool_called", "tool": "read"}]}),
            &s,
            None,
            false,
        ),
        (
            json!({"kind": "not", "check": {"kind": "json_valid"}}),
            &s,
            None,
            true,
        ),
        (
            json!({"kind": "not", "check": {"kind": "json_valid"}}),
            &json_out,
            None,
            false,
        ),
    ]);
}

#[test]
fn a_result_keeps_what_was_expected_what_was_found_where_and_why() {
    let s = Observed {
        output: r#"{"balance_days": 30.01}"#.into(),
        ..seen()
    };
    let check: Check = serde_json::from_value(json!({
        "name": "balance", "severity": "warning", "failure_type": "numeric_mismatch", "weight": 2,
        "kind": "numeric", "path": "$.balance_days", "abs_tol": 0.001
    }))
    .expect("check");
    assert_eq!(check.severity, Severity::Warning);
    assert_eq!(check.weight, 2.0);
    let r = evaluate(&check, &s, Some(&json!(30))).expect("scored");
    assert!(!r.outcome.passed);
    assert_eq!(r.check, "balance");
    assert_eq!(r.outcome.expected, json!(30.0));
    assert_eq!(r.outcome.found, json!(30.01));
    assert_eq!(r.outcome.at, "$.balance_days");
    assert!(
        r.outcome.why.starts_with("off by 0.01"),
        "{}",
        r.outcome.why
    );
    assert_eq!(r.outcome.score, 0.0);
}

#[test]
fn checks_that_cannot_be_run_fail_with_the_reason_instead_of_passing() {
    let s = seen();
    for (check, says) in [
        (json!({"kind": "exact"}), "nothing to compare with"),
        (json!({"kind": "numeric"}), "nothing to compare with"),
        (
            json!({"kind": "jsonpath", "path": "$.a"}),
            "the output is not JSON",
        ),
        (
            json!({"kind": "exact", "value": 1, "path": "$.a"}),
            "not JSON",
        ),
        (json!({"kind": "cost_at_most", "usd": 1}), "unknown"),
        (
            json!({"kind": "grade_at_least", "grade": "D"}),
            "no atom was graded",
        ),
    ] {
        let observed = Observed {
            cost_usd: None,
            grade: None,
            ..s.clone()
        };
        let (ok, o) = passes(check.clone(), &observed, None);
        assert!(!ok, "{check}");
        assert!(o.why.contains(says), "{check}: {}", o.why);
    }
}

#[test]
fn a_pattern_schema_or_path_that_cannot_compile_is_refused_when_the_check_is_read() {
    for (bad, says) in [
        (
            json!({"kind": "regex", "pattern": "("}),
            "the pattern does not compile",
        ),
        (
            json!({"kind": "jsonpath", "path": "nope", "over": "atoms"}),
            "does not parse",
        ),
        (json!({"kind": "exact", "path": "$.a["}), "does not parse"),
        (
            json!({"kind": "json_schema", "schema": {"type": "no such type"}}),
            "the schema does not compile",
        ),
        (
            json!({"kind": "not", "check": {"kind": "regex", "pattern": "["}}),
            "the pattern does not compile",
        ),
    ] {
        let e = serde_json::from_value::<CheckKind>(bad.clone()).expect_err("refused");
        assert!(e.to_string().contains(says), "{bad}: {e}");
    }
}

#[test]
fn a_check_with_an_unknown_field_or_kind_is_refused() {
    for bad in [
        json!({"name": "x", "kind": "exact", "valu": 1}),
        json!({"name": "x", "kind": "similar"}),
        json!({"name": "x", "kind": "tool_called"}),
        json!({"kind": "json_valid"}),
    ] {
        assert!(
            serde_json::from_value::<Check>(bad.clone()).is_err(),
            "{bad}"
        );
    }
}

#[cfg(unix)]
#[test]
fn a_command_reads_the_outcome_on_stdin_and_its_answer_decides() {
    let s = seen();
    let sh = |script: &str, timeout: f64| json!({"kind": "command", "program": "/bin/sh", "args": ["-c", script], "timeout_s": timeout});
    let judge = r#"read -r line; case "$line" in *'answer is 42'*) echo '{"pass": true, "score": 0.75, "reason": "has 42"}';; *) echo '{"pass": false, "reason": "no 42"}';; esac"#;
    let (ok, o) = passes(sh(judge, 10.0), &s, None);
    assert!(ok, "{o:?}");
    assert_eq!((o.score, o.why.as_str()), (0.75, "has 42"));
    let other = Observed {
        output: "no".into(),
        ..seen()
    };
    let (ok, o) = passes(sh(judge, 10.0), &other, None);
    assert!(!ok && o.score == 0.0 && o.why == "no 42", "{o:?}");
    for (script, timeout, says) in [
        ("echo not json", 10.0, "did not answer JSON"),
        ("echo '{\"score\": 1}'", 10.0, "without a boolean `pass`"),
        (
            "echo '{\"pass\": true, \"score\": 7}'",
            10.0,
            "outside 0 to 1",
        ),
        ("echo boom >&2; exit 3", 10.0, "boom"),
        ("sleep 5", 0.2, "longer than 0.2 s"),
    ] {
        let (ok, o) = passes(sh(script, timeout), &s, None);
        assert!(!ok, "{script}: {o:?}");
        assert!(o.why.contains(says), "{script}: {}", o.why);
    }
    let (ok, o) = passes(
        json!({"kind": "command", "program": "/nonexistent/judge"}),
        &s,
        None,
    );
    assert!(!ok && o.why.contains("cannot start"), "{o:?}");
}
