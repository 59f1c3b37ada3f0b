//! The `command` check: a program of the eval's author reads one sample's outcome as
//! JSON on stdin and answers `{"pass": bool, "score": number, "reason": text}` on
//! stdout. A program that cannot start, fails, overruns its time or answers something
//! else fails the check, with the reason.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::{Observed, Outcome};

/// Most bytes of the program's answer read (and of its stderr kept).
const MOST: u64 = 1 << 20;

/// Runs `program` on the outcome `seen` (with the sample's `expected` value).
pub fn run(
    program: &str,
    args: &[String],
    timeout_s: f64,
    seen: &Observed,
    expected: Option<&Value>,
) -> Outcome {
    let input = json!({
        "output": seen.output,
        "expected": expected,
        "atoms": seen.atoms,
        "tools": seen.tools.iter().map(|t| json!({"name": t.name, "args": t.args})).collect::<Vec<_>>(),
        "grade": seen.grade.map(|g| g.as_str()),
        "tokens": seen.tokens,
        "latency_ms": seen.latency_ms,
        "cost_usd": seen.cost_usd,
    });
    let fail = |why: String, found: Value| Outcome {
        passed: false,
        score: 0.0,
        expected: json!({"program": program}),
        found,
        at: "command".into(),
        why,
    };
    let mut child = match Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => return fail(format!("cannot start `{program}`: {e}"), Value::Null),
    };
    // Written from a thread of its own: a program that answers before reading all of a
    // large input must not block the writer against a full pipe.
    let stdin = child.stdin.take();
    let body = input.to_string();
    let writer = std::thread::spawn(move || {
        if let Some(mut s) = stdin {
            let _ = s.write_all(body.as_bytes());
        }
    });
    let stdout = child.stdout.take();
    let reader = std::thread::spawn(move || read_capped(stdout));
    let stderr = child.stderr.take();
    let err_reader = std::thread::spawn(move || read_capped(stderr));
    let limit = Duration::from_secs_f64(timeout_s.clamp(0.001, 86_400.0));
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() >= limit => {
                let _ = child.kill();
                let _ = child.wait();
                let _ = writer.join();
                return fail(
                    format!("`{program}` took longer than {timeout_s} s and was stopped"),
                    Value::Null,
                );
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(2)),
            Err(e) => return fail(format!("cannot wait for `{program}`: {e}"), Value::Null),
        }
    };
    let _ = writer.join();
    let out = reader.join().unwrap_or_default();
    let err = err_reader.join().unwrap_or_default();
    if !status.success() {
        let tail: String = err
            .trim()
            .chars()
            .rev()
            .take(300)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        return fail(
            format!("`{program}` failed ({status}): {tail}"),
            json!(out.trim()),
        );
    }
    let answer: Value = match serde_json::from_str(out.trim()) {
        Ok(v) => v,
        Err(e) => {
            return fail(
                format!("`{program}` did not answer JSON: {e}"),
                json!(out.trim()),
            )
        }
    };
    let Some(pass) = answer.get("pass").and_then(Value::as_bool) else {
        return fail(
            format!("`{program}` answered without a boolean `pass`"),
            answer,
        );
    };
    let score = match answer.get("score") {
        None | Some(Value::Null) => {
            if pass {
                1.0
            } else {
                0.0
            }
        }
        Some(v) => match v.as_f64() {
            Some(x) if (0.0..=1.0).contains(&x) => x,
            _ => {
                return fail(
                    format!("`{program}` answered a score outside 0 to 1"),
                    answer,
                )
            }
        },
    };
    let reason = answer
        .get("reason")
        .and_then(Value::as_str)
        .unwrap_or(if pass { "passed" } else { "failed" })
        .to_string();
    Outcome {
        passed: pass,
        score,
        expected: json!({"program": program}),
        found: answer,
        at: "command".into(),
        why: crate::base::text::sanitize::sanitize(&reason).to_string(),
    }
}

/// Up to [`MOST`] bytes of a child's pipe, as text (nothing if there is no pipe).
fn read_capped(pipe: Option<impl Read>) -> String {
    let mut out = String::new();
    if let Some(p) = pipe {
        let _ = p.take(MOST).read_to_string(&mut out);
    }
    out
}
