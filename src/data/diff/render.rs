//! A [`RunDiff`] as aligned text lines, at most [`WIDTH`] columns, every piece of
//! stored text sanitised (ids, agent names and model text are untrusted).
//!
//! A field whose two values fit their columns takes one row (`FIELD  A  B`); a longer
//! one takes a block: the field name, then `A` and `B` lines, a list one item a line,
//! wrapped. A value that is absent shows as `—`.

use serde_json::Value;

use super::RunDiff;
use crate::base::text::sanitize::{display_width, sanitize};
use crate::base::text::wrap::{pad_or_truncate, wrap_ranges};

/// Most columns a line takes.
pub const WIDTH: usize = 100;
/// Indent of a field under its task.
const INDENT: usize = 2;
/// Columns of the field name.
const FIELD_W: usize = 26;
/// Columns of each value in the one-row form.
const VALUE_W: usize = (WIDTH - INDENT - FIELD_W - 2) / 2;
/// Indent of the `A` / `B` lines of the block form.
const BLOCK_INDENT: usize = 4;
/// Shown for an absent value.
const ABSENT: &str = "—";
/// Keys of an object value shown first, in this order (the rest alphabetically).
const FIRST_KEYS: &[&str] = &["status", "errors", "grade", "score", "grades"];
/// Most task ids the summary line names.
const SUMMARY_IDS: usize = 12;

/// The whole text report: `no differences`, or a header, the differences grouped by
/// task, the times, and a summary line.
pub fn render(d: &RunDiff) -> Vec<String> {
    if d.same {
        return vec!["no differences".to_string()];
    }
    let mut out = Vec::new();
    let id_w = display_width(&sanitize(&d.a.run_id)).max(display_width(&sanitize(&d.b.run_id)));
    let pv_w = display_width(&sanitize(&d.a.provider)).max(display_width(&sanitize(&d.b.provider)));
    for (tag, r) in [("A", &d.a), ("B", &d.b)] {
        out.push(fit(&format!(
            "{tag}  {}  {} {:>5} tasks  {}  plan {}",
            pad_or_truncate(&sanitize(&r.run_id), id_w),
            pad_or_truncate(&sanitize(&r.status), 11),
            r.tasks,
            pad_or_truncate(&sanitize(&r.provider), pv_w),
            r.plan_id
        )));
    }
    out.push(String::new());
    out.push(fit(&format!(
        "{}{}  {}  {}",
        " ".repeat(INDENT),
        pad_or_truncate("FIELD", FIELD_W),
        pad_or_truncate("A", VALUE_W),
        "B"
    )));
    if !d.run.is_empty() {
        out.push("run".to_string());
        for f in &d.run {
            field_lines(&mut out, &f.field, &f.a, &f.b);
        }
    }
    for t in &d.tasks {
        out.push(fit(&format!("{}  ({})", t.task_id, t.agent)));
        for f in &t.fields {
            field_lines(&mut out, &f.field, &f.a, &f.b);
        }
    }
    out.push(String::new());
    out.push(fit(&timing_line(d)));
    out.push(fit(&summary(d)));
    out
}

/// The last line of the report: how many tasks differ and which, and the run-level
/// fields that differ (`no differences` when there are none).
pub fn summary(d: &RunDiff) -> String {
    if d.same {
        return "no differences".into();
    }
    let run_part = (!d.run.is_empty()).then(|| {
        let names: Vec<&str> = d.run.iter().map(|f| f.field.as_str()).collect();
        names.join(", ")
    });
    let n = d.tasks.len();
    if n == 0 {
        return format!("the runs differ: {}", run_part.unwrap_or_default());
    }
    let mut s = format!(
        "{n} task{} differ{}: ",
        if n == 1 { "" } else { "s" },
        if n == 1 { "s" } else { "" }
    );
    let tail = run_part.map(|r| format!("; run: {r}")).unwrap_or_default();
    for (i, t) in d.tasks.iter().enumerate() {
        let id = sanitize(&t.task_id);
        let more = n - i;
        let rest = if more > 1 {
            format!(", … (+{} more)", more - 1)
        } else {
            String::new()
        };
        let sep = if i == 0 { "" } else { ", " };
        if i >= SUMMARY_IDS
            || display_width(&s) + sep.len() + display_width(&id) + rest.len() + tail.len() > WIDTH
        {
            s.push_str(&format!("{sep}… (+{more} more)"));
            break;
        }
        s.push_str(sep);
        s.push_str(&id);
    }
    s.push_str(&tail);
    s
}

/// `time: run A … / B …` and whether times were compared.
fn timing_line(d: &RunDiff) -> String {
    let [a, b] = d.timing.run_ms;
    let how = match &d.timing.tolerance {
        Some(t) => format!(
            "compared (apart by more than {}% of the longer and {} ms counts)",
            t.pct, t.min_ms
        ),
        None => "not compared (--timing compares them)".to_string(),
    };
    format!("time: run A {} / B {}; {how}", ms(a), ms(b))
}

fn ms(v: Option<u64>) -> String {
    match v {
        Some(v) if v >= 10_000 => format!("{:.1} s", v as f64 / 1000.0),
        Some(v) => format!("{v} ms"),
        None => ABSENT.into(),
    }
}

/// One field: a row when both values fit their columns, else a block.
fn field_lines(out: &mut Vec<String>, field: &str, a: &Value, b: &Value) {
    let content = field.ends_with(".content");
    let (la, lb) = (value_lines(a, content), value_lines(b, content));
    let field = sanitize(field);
    let one =
        |l: &[String]| (l.len() == 1 && display_width(&l[0]) <= VALUE_W).then(|| l[0].clone());
    let pad = " ".repeat(INDENT);
    if let (Some(va), Some(vb), true) = (one(&la), one(&lb), display_width(&field) <= FIELD_W) {
        out.push(
            format!(
                "{pad}{}  {}  {vb}",
                pad_or_truncate(&field, FIELD_W),
                pad_or_truncate(&va, VALUE_W)
            )
            .trim_end()
            .to_string(),
        );
        return;
    }
    out.push(fit(&format!("{pad}{field}")));
    for (tag, lines) in [("A", la), ("B", lb)] {
        let mut first = true;
        for line in lines {
            let lead = if first {
                format!("{}{tag}  ", " ".repeat(BLOCK_INDENT))
            } else {
                " ".repeat(BLOCK_INDENT + 3)
            };
            first = false;
            let room = WIDTH - (BLOCK_INDENT + 3);
            for (k, r) in wrap_ranges(&line, room as u16).into_iter().enumerate() {
                let piece = &line[r];
                let row = if k == 0 {
                    format!("{lead}{piece}")
                } else {
                    format!("{}{piece}", " ".repeat(BLOCK_INDENT + 3))
                };
                out.push(row.trim_end().to_string());
            }
        }
    }
}

/// A value as sanitised lines: a list one item a line, anything else one line.
fn value_lines(v: &Value, as_json: bool) -> Vec<String> {
    match v {
        Value::Array(items) if !items.is_empty() => {
            let items: Vec<String> = items.iter().map(|i| sanitize(&scalar(i))).collect();
            let joined = items.join(", ");
            if display_width(&joined) <= VALUE_W {
                vec![joined]
            } else {
                items
            }
        }
        Value::Object(_) if as_json => vec![sanitize(&v.to_string())],
        other => vec![sanitize(&scalar(other))],
    }
}

/// A value on one line: strings bare, lists space-separated, objects as `key value`.
fn scalar(v: &Value) -> String {
    match v {
        Value::Null => ABSENT.into(),
        Value::String(s) => s.clone(),
        Value::Bool(b) => if *b { "yes" } else { "no" }.into(),
        Value::Number(n) => n.to_string(),
        Value::Array(items) if items.is_empty() => ABSENT.into(),
        Value::Array(items) => items.iter().map(scalar).collect::<Vec<_>>().join(" "),
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort_by_key(|k| FIRST_KEYS.iter().position(|f| f == k).unwrap_or(usize::MAX));
            keys.iter()
                .map(|k| format!("{k} {}", m.get(*k).map(scalar).unwrap_or_default()))
                .collect::<Vec<_>>()
                .join(", ")
        }
    }
}

/// A line cut to [`WIDTH`] columns (sanitised).
fn fit(s: &str) -> String {
    let s = sanitize(s);
    if display_width(&s) <= WIDTH {
        s
    } else {
        pad_or_truncate(&s, WIDTH)
    }
}
