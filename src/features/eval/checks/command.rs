//! The `command` check: a program of the eval's author reads one sample's outcome as
//! JSON on stdin and answers `{"pass": bool, "score": number, "reason": text}` on
//! stdout. A program that cannot start, fails, overruns its time or answers something
//! else fails the check, with the reason.

use std::io::{Read, Write};
use std::process::{Command, ExitStatus, Stdio};
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
    let input = input_of(seen, expected);
    let (status, out, err) = match execute(program, args, timeout_s, &input) {
        Ok(ran) => ran,
        Err(why) => return failed(program, why, Value::Null),
    };
    if !status.success() {
        let tail = last_chars(err.trim(), 300);
        return failed(
            program,
            format!("`{program}` failed ({status}): {tail}"),
            json!(out.trim()),
        );
    }
    let answer: Value = match serde_json::from_str(out.trim()) {
        Ok(v) => v,
        Err(e) => {
            return failed(
                program,
                format!("`{program}` did not answer JSON: {e}"),
                json!(out.trim()),
            )
        }
    };
    let Some(pass) = answer.get("pass").and_then(Value::as_bool) else {
        return failed(
            program,
            format!("`{program}` answered without a boolean `pass`"),
            answer,
        );
    };
    let Some(score) = score_of(&answer, pass) else {
        return failed(
            program,
            format!("`{program}` answered a score outside 0 to 1"),
            answer,
        );
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

/// The JSON the program reads on stdin: the sample's outcome and its expected value.
fn input_of(seen: &Observed, expected: Option<&Value>) -> Value {
    json!({
        "output": seen.output,
        "expected": expected,
        "atoms": seen.atoms,
        "tools": seen.tools.iter().map(|t| json!({"name": t.name, "args": t.args})).collect::<Vec<_>>(),
        "grade": seen.grade.map(|g| g.as_str()),
        "tokens": seen.tokens,
        "latency_ms": seen.latency_ms,
        "cost_usd": seen.cost_usd,
    })
}

/// A failed check of `program`, saying why and what was found.
fn failed(program: &str, why: String, found: Value) -> Outcome {
    Outcome {
        passed: false,
        score: 0.0,
        expected: json!({"program": program}),
        found,
        at: "command".into(),
        why,
    }
}

/// Starts `program`, feeds it `input` and waits up to `timeout_s` for it to end: its exit
/// status, stdout and stderr, or why it could not be run to its end.
fn execute(
    program: &str,
    args: &[String],
    timeout_s: f64,
    input: &Value,
) -> Result<(ExitStatus, String, String), String> {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start `{program}`: {e}"))?;
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
                return Err(format!(
                    "`{program}` took longer than {timeout_s} s and was stopped"
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(2)),
            Err(e) => return Err(format!("cannot wait for `{program}`: {e}")),
        }
    };
    let _ = writer.join();
    let out = reader.join().unwrap_or_default();
    let err = err_reader.join().unwrap_or_default();
    Ok((status, out, err))
}

/// The score the program answered, or its pass as 1 or 0 when it answered none; `None`
/// for a score that is not a number from 0 to 1.
fn score_of(answer: &Value, pass: bool) -> Option<f64> {
    match answer.get("score") {
        None | Some(Value::Null) => Some(if pass { 1.0 } else { 0.0 }),
        Some(v) => v.as_f64().filter(|x| (0.0..=1.0).contains(x)),
    }
}

/// The last `n` characters of `text`.
fn last_chars(text: &str, n: usize) -> String {
    text.chars()
        .rev()
        .take(n)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect()
}

/// Up to [`MOST`] bytes of a child's pipe, as text (nothing if there is no pipe).
fn read_capped(pipe: Option<impl Read>) -> String {
    let mut out = String::new();
    if let Some(p) = pipe {
        let _ = p.take(MOST).read_to_string(&mut out);
    }
    out
}
