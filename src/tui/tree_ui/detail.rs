//! One sample opened: its four documents loaded (each with its status and tokens), the
//! trace parsed into a conversation folded around its key turns, and the lines each tab
//! shows. JSON is pretty-printed with deep levels folded until `z` unfolds them.

use serde_json::Value;

use crate::data::failures::{
    key_turns, parse_trace, Conversation, Doc, DocKind, Folding, Row, Tree, DEFAULT_KEEP,
};

/// Depth below which JSON objects and arrays are folded to one line.
pub const JSON_FOLD_DEPTH: usize = 3;

/// A sample opened in the detail view.
#[derive(Debug, Clone)]
pub struct Detail {
    /// Row of the sample in the tree.
    pub sample: u32,
    /// Its id.
    pub id: String,
    /// The four documents, in [`DocKind::ALL`] order.
    pub docs: Vec<Doc>,
    /// The tab shown (index into `docs`).
    pub tab: usize,
    /// The trace as a conversation, when it parsed.
    pub conversation: Option<Conversation>,
    /// Its folding.
    pub folding: Option<Folding>,
    /// JSON shown whole (nothing folded).
    pub unfolded_json: bool,
    /// First line shown.
    pub top: usize,
    /// Selected line (for unfolding a folded row of the trace).
    pub cursor: usize,
}

impl Detail {
    /// Loads sample `row` of `tree`: every document read now (the index was read at
    /// open; documents only when a sample is opened).
    pub fn open(tree: &Tree, row: u32) -> Option<Detail> {
        let s = tree.samples.get(row as usize)?;
        let docs: Vec<Doc> = tree.load_all(s).into_iter().collect();
        let trace = docs
            .get(DocKind::Trace.index())
            .and_then(|d| d.value.as_ref())
            .map(parse_trace);
        let folding = trace.as_ref().map(|c| {
            let others: Vec<Option<&Value>> = [DocKind::Evaluation, DocKind::Attribution]
                .iter()
                .map(|k| docs.get(k.index()).and_then(|d| d.value.as_ref()))
                .collect();
            Folding::new(c, &key_turns(&others), DEFAULT_KEEP)
        });
        Some(Detail {
            sample: row,
            id: s.id.to_string(),
            docs,
            tab: DocKind::Trace.index(),
            conversation: trace,
            folding,
            unfolded_json: false,
            top: 0,
            cursor: 0,
        })
    }

    /// The lines of the tab shown, and for each the folded trace row it stands for.
    pub fn lines(&self) -> Vec<(String, Option<usize>)> {
        let Some(doc) = self.docs.get(self.tab) else {
            return vec![];
        };
        let mut out: Vec<(String, Option<usize>)> = vec![(
            format!(
                "{} · {} · {} bytes · {} tokens",
                crate::data::failures::layout::slash(&doc.path),
                doc.status.describe(),
                doc.bytes,
                doc.tokens
            ),
            None,
        )];
        out.push((String::new(), None));
        if self.tab == DocKind::Trace.index() {
            if let (Some(c), Some(f)) = (&self.conversation, &self.folding) {
                trace_lines(c, f, &mut out);
                return out;
            }
        }
        match (&doc.value, &doc.text) {
            (Some(v), _) => {
                let depth = if self.unfolded_json {
                    usize::MAX
                } else {
                    JSON_FOLD_DEPTH
                };
                let mut text = String::new();
                json_folded(v, 0, depth, &mut text);
                out.extend(text.lines().map(|l| (l.to_string(), None)));
            }
            (None, Some(t)) => {
                out.push(("the file as it is (up to where it breaks):".into(), None));
                out.extend(t.lines().take(400).map(|l| (l.to_string(), None)));
            }
            (None, None) => out.push(("nothing to show".into(), None)),
        }
        out
    }

    /// Unfolds the trace row under `line` (of [`Detail::lines`]); whether one was.
    pub fn unfold_at(&mut self, line: usize) -> bool {
        let row = self.lines().get(line).and_then(|(_, r)| *r);
        match (row, self.folding.as_mut()) {
            (Some(r), Some(f)) => f.unfold(r),
            _ => false,
        }
    }

    /// Unfolds every folded trace row and every JSON level; again folds them back.
    pub fn toggle_unfold_all(&mut self) {
        let folded = self.folding.as_ref().is_some_and(|f| f.hidden() > 0);
        if let Some(f) = self.folding.as_mut() {
            if folded {
                f.unfold_all();
            } else {
                f.refold();
            }
        }
        self.unfolded_json = folded || !self.unfolded_json;
    }
}

fn trace_lines(c: &Conversation, f: &Folding, out: &mut Vec<(String, Option<usize>)>) {
    out.push((
        format!(
            "{} turns · {} tool calls · {} folded (enter on a fold opens it, z opens all)",
            f.total,
            c.tool_call_count(),
            f.hidden()
        ),
        None,
    ));
    for n in &c.notes {
        out.push((format!("note: {n}"), None));
    }
    for (k, row) in f.rows.iter().enumerate() {
        match row {
            Row::Folded { from, to } => {
                out.push((
                    format!("  ┄┄ {} turns folded ({}–{}) ┄┄", to - from, from + 1, to),
                    Some(k),
                ));
            }
            Row::Turn { index, reasons } => {
                let Some(t) = c.turns.get(*index) else {
                    continue;
                };
                let mark = if reasons.is_empty() {
                    String::new()
                } else {
                    format!("  ◀ {}", reasons.join(", "))
                };
                out.push((format!("#{} {}{}", t.number, t.role, mark), None));
                for l in t.content.lines() {
                    out.push((format!("    {l}"), None));
                }
                tool_call_lines(&t.tool_calls, "    ", out);
                for s in &t.states {
                    out.push((format!("    state {}", compact(s)), None));
                }
            }
        }
    }
    if !c.loose_tool_calls.is_empty() {
        out.push((
            format!("tool calls tied to no turn ({}):", c.loose_tool_calls.len()),
            None,
        ));
        tool_call_lines(&c.loose_tool_calls, "  ", out);
    }
    for (name, v) in &c.loose_states {
        out.push((format!("state {name}: {}", compact(v)), None));
    }
}

/// Each call as `→ name(arguments)`, its result below as `← result`.
fn tool_call_lines(
    calls: &[crate::data::failures::ToolCall],
    pad: &str,
    out: &mut Vec<(String, Option<usize>)>,
) {
    for call in calls {
        out.push((
            format!("{pad}→ {}({})", call.name, compact(&call.arguments)),
            None,
        ));
        if let Some(r) = &call.result {
            out.push((format!("{pad}  ← {}", compact(r)), None));
        }
    }
}

fn compact(v: &Value) -> String {
    crate::base::text::cut::cut_chars(&v.to_string(), 400).into_owned()
}

/// Pretty JSON with levels at `depth` and deeper shown as `{…N keys}` / `[…N items]`.
pub fn json_folded(v: &Value, level: usize, depth: usize, out: &mut String) {
    let pad = "  ".repeat(level);
    match v {
        Value::Object(m) if level >= depth && !m.is_empty() => {
            out.push_str(&format!("{{…{} keys}}", m.len()));
        }
        Value::Array(a) if level >= depth && !a.is_empty() => {
            out.push_str(&format!("[…{} items]", a.len()));
        }
        Value::Object(m) if !m.is_empty() => {
            out.push_str("{\n");
            for (i, (k, x)) in m.iter().enumerate() {
                out.push_str(&format!("{pad}  {}: ", Value::String(k.clone())));
                json_folded(x, level + 1, depth, out);
                out.push_str(if i + 1 < m.len() { ",\n" } else { "\n" });
            }
            out.push_str(&format!("{pad}}}"));
        }
        Value::Array(a) if !a.is_empty() => {
            out.push_str("[\n");
            for (i, x) in a.iter().enumerate() {
                out.push_str(&format!("{pad}  "));
                json_folded(x, level + 1, depth, out);
                out.push_str(if i + 1 < a.len() { ",\n" } else { "\n" });
            }
            out.push_str(&format!("{pad}]"));
        }
        other => out.push_str(&other.to_string()),
    }
}
