//! The issues view of an attempt (`i`) as text: what went wrong first (each error with
//! its code, message and suggested action, then the retry decision), the quality check
//! after it, as one line when nothing was graded, and the stored JSON last.

use serde_json::Value;

/// The issues view of response `resp`, with `retry` the engine's retry decision.
pub fn issues_text(resp: &Value, retry: &str) -> String {
    let mut out = String::new();
    let errors = resp["errors"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    if errors.is_empty() {
        out.push_str("errors: none\n");
    } else {
        for e in errors {
            error_lines(&mut out, e);
        }
    }
    out.push_str(&format!("\nretry decision: {retry}\n\n"));
    quality_lines(&mut out, &resp["quality_check"]);
    if !errors.is_empty() {
        out.push_str("\nerrors as stored:\n");
        out.push_str(&pretty(&resp["errors"]));
        out.push('\n');
    }
    out
}

/// `E002 parse_error · recoverable`, then the message and the suggested action.
fn error_lines(out: &mut String, e: &Value) {
    let s = |k: &str| e[k].as_str().unwrap_or("").trim().to_string();
    let code = s("error_code");
    let kind = s("error_type");
    let mut head = [code, kind]
        .into_iter()
        .filter(|x| !x.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    if head.is_empty() {
        head = "error".into();
    }
    match e["recoverable"].as_bool() {
        Some(true) => head.push_str(" · recoverable"),
        Some(false) => head.push_str(" · not recoverable"),
        None => {}
    }
    out.push_str(&format!("✘ {head}\n"));
    for (label, k) in [
        ("", "message"),
        ("field: ", "field"),
        ("next: ", "suggested_action"),
    ] {
        let v = s(k);
        if !v.is_empty() {
            out.push_str(&format!("  {label}{v}\n"));
        }
    }
}

/// The quality check: one line when no atom was graded, else the counts, the issues
/// one a line, and the JSON.
fn quality_lines(out: &mut String, qc: &Value) {
    if qc.is_null() {
        out.push_str("quality check: none stored\n");
        return;
    }
    let n = qc["atoms_generated"].as_u64().unwrap_or(0);
    let issues = qc["issues"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    if n == 0 && issues.is_empty() {
        out.push_str("quality check: no atoms were graded (nothing parsed to grade)\n");
        return;
    }
    let g = |k: &str| qc["grades"][k].as_u64().unwrap_or(0);
    out.push_str(&format!(
        "quality check: {n} atom(s) · A {} B {} C {} D {} · mean score {:.2} · {} issue(s)\n",
        g("A"),
        g("B"),
        g("C"),
        g("D"),
        qc["avg_quality_score"].as_f64().unwrap_or(0.0),
        issues.len()
    ));
    for i in issues {
        let s = |k: &str| i[k].as_str().unwrap_or("");
        let field = s("field");
        out.push_str(&format!(
            "  {} · {} · {}{} · {}\n",
            s("severity"),
            s("atom_id"),
            s("issue_type"),
            if field.is_empty() {
                String::new()
            } else {
                format!(" ({field})")
            },
            s("message")
        ));
    }
    out.push_str("\nquality_check as stored:\n");
    out.push_str(&pretty(qc));
    out.push('\n');
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_parse_error_leads_and_an_empty_check_is_one_line() {
        let resp = json!({
            "errors": [{"error_code": "E002", "error_type": "parse_error",
                "message": "the fenced JSON block does not parse", "recoverable": true,
                "suggested_action": "fix the output format and retry"}],
            "quality_check": {"atoms_generated": 0, "avg_quality_score": 0.0,
                "grades": {"A": 0, "B": 0, "C": 0, "D": 0}, "issues": []}
        });
        let t = issues_text(&resp, "retried as attempt 2");
        assert!(
            t.starts_with("✘ E002 parse_error · recoverable\n  the fenced JSON block"),
            "{t}"
        );
        assert!(t.contains("quality check: no atoms were graded"), "{t}");
        assert!(!t.contains("\"A\": 0"), "no all-zero block: {t}");
        assert!(t.find("retry decision") < t.find("quality check"), "{t}");
    }
}
