//! Folding a long conversation (seed 002: "对长对话历史进行截断（保留开头、结尾、关键轮次）"):
//! the first turns, the last turns and the turns a checker or the attribution points at
//! stay visible; each run of other turns becomes one folded row that can be unfolded.
//! A data structure only — the screen draws its rows.

use serde_json::Value;

use super::conversation::Conversation;

/// How many turns stay visible.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Keep {
    /// Turns kept at the start.
    pub first: usize,
    /// Turns kept at the end.
    pub last: usize,
    /// Turns kept on each side of a key turn.
    pub around: usize,
}

/// Three turns at each end, one on each side of a key turn.
pub const DEFAULT_KEEP: Keep = Keep {
    first: 3,
    last: 3,
    around: 1,
};

/// A turn some document points at, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyTurn {
    /// Turn number (as in [`super::Turn::number`]).
    pub turn: u32,
    /// Who points at it: a checker's name, or the field that holds the number.
    pub reason: String,
}

/// One row of a folded conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Row {
    /// A visible turn: its position in [`Conversation::turns`], and the reasons it is a
    /// key turn (empty when it is not one).
    Turn {
        /// Position in the conversation.
        index: usize,
        /// Why it is a key turn.
        reasons: Vec<String>,
    },
    /// Turns `from..to` (positions) hidden.
    Folded {
        /// First hidden position.
        from: usize,
        /// One past the last hidden position.
        to: usize,
    },
}

/// A conversation's rows with some runs of turns folded.
#[derive(Debug, Clone, PartialEq)]
pub struct Folding {
    /// Rows in order.
    pub rows: Vec<Row>,
    /// Turns in the conversation.
    pub total: usize,
    keys: Vec<(usize, String)>,
    keep: Keep,
}

const TURN_KEYS: [&str; 9] = [
    "turn",
    "turn_index",
    "turn_number",
    "failed_turn",
    "failed_at_turn",
    "key_turns",
    "critical_turns",
    "evidence_turns",
    "turns",
];
const NAME_KEYS: [&str; 5] = ["checker", "checker_name", "check", "name", "problem_id"];
const MAX_NODES: usize = 100_000;

/// The turns that `docs` (an evaluation, an attribution…) point at: numbers under
/// `turn`, `failed_turn`, `key_turns`, `evidence_turns`… anywhere in them, each with the
/// name of the checker in whose entry it was found (else the field's name). Sorted by
/// turn, duplicates of the same turn and reason removed.
pub fn key_turns(docs: &[Option<&Value>]) -> Vec<KeyTurn> {
    let mut out = Vec::new();
    let mut budget = MAX_NODES;
    for d in docs.iter().flatten() {
        walk(d, None, &mut out, &mut budget, 0);
    }
    out.sort_by(|a, b| a.turn.cmp(&b.turn).then_with(|| a.reason.cmp(&b.reason)));
    out.dedup();
    out
}

fn as_turn(v: &Value) -> Option<u32> {
    v.as_u64()
        .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
        .and_then(|n| u32::try_from(n).ok())
}

/// The turns a turn key's value names (a number, or an array of them), each kept
/// for `reason`.
fn push_turns(x: &Value, reason: String, out: &mut Vec<KeyTurn>) {
    match x {
        Value::Array(a) => out.extend(a.iter().filter_map(as_turn).map(|turn| KeyTurn {
            turn,
            reason: reason.clone(),
        })),
        other => {
            if let Some(turn) = as_turn(other) {
                out.push(KeyTurn { turn, reason });
            }
        }
    }
}

fn walk(v: &Value, name: Option<&str>, out: &mut Vec<KeyTurn>, budget: &mut usize, depth: usize) {
    if *budget == 0 || depth > 32 {
        return;
    }
    *budget -= 1;
    match v {
        Value::Object(m) => {
            let own = NAME_KEYS
                .iter()
                .find_map(|k| m.get(*k).and_then(Value::as_str));
            let name = own.or(name);
            for (k, x) in m {
                if TURN_KEYS.contains(&k.as_str()) {
                    push_turns(x, name.unwrap_or(k).to_string(), out);
                }
                if x.is_object() || x.is_array() {
                    walk(x, name, out, budget, depth + 1);
                }
            }
        }
        Value::Array(a) => {
            for x in a {
                walk(x, name, out, budget, depth + 1);
            }
        }
        _ => {}
    }
}

impl Folding {
    /// Folds `conv` keeping `keep` and the `keys`' turns (numbers not in the
    /// conversation are ignored). A hidden run of a single turn is shown instead.
    pub fn new(conv: &Conversation, keys: &[KeyTurn], keep: Keep) -> Folding {
        let keys = keys
            .iter()
            .filter_map(|k| Some((conv.position(k.turn)?, k.reason.clone())))
            .collect();
        let mut f = Folding {
            rows: Vec::new(),
            total: conv.turns.len(),
            keys,
            keep,
        };
        f.refold();
        f
    }

    /// Every turn visible, nothing folded.
    pub fn unfolded(conv: &Conversation) -> Folding {
        let mut f = Folding::new(conv, &[], DEFAULT_KEEP);
        f.unfold_all();
        f
    }

    fn reasons(&self, index: usize) -> Vec<String> {
        self.keys
            .iter()
            .filter(|(i, _)| *i == index)
            .map(|(_, r)| r.clone())
            .collect()
    }

    /// Folds again as when made (unfolded runs are folded back).
    pub fn refold(&mut self) {
        let n = self.total;
        let mut visible = vec![false; n];
        for v in visible.iter_mut().take(self.keep.first) {
            *v = true;
        }
        for v in visible.iter_mut().skip(n.saturating_sub(self.keep.last)) {
            *v = true;
        }
        for (i, _) in &self.keys {
            let from = i.saturating_sub(self.keep.around);
            let to = (i + self.keep.around + 1).min(n);
            for v in &mut visible[from..to] {
                *v = true;
            }
        }
        self.rows.clear();
        let mut i = 0;
        while i < n {
            if visible[i] {
                self.rows.push(Row::Turn {
                    index: i,
                    reasons: self.reasons(i),
                });
                i += 1;
                continue;
            }
            let from = i;
            while i < n && !visible[i] {
                i += 1;
            }
            if i - from == 1 {
                self.rows.push(Row::Turn {
                    index: from,
                    reasons: Vec::new(),
                });
            } else {
                self.rows.push(Row::Folded { from, to: i });
            }
        }
    }

    /// Unfolds the folded row at `row`; returns whether there was one.
    pub fn unfold(&mut self, row: usize) -> bool {
        let Some(Row::Folded { from, to }) = self.rows.get(row).cloned() else {
            return false;
        };
        let turns: Vec<Row> = (from..to)
            .map(|index| Row::Turn {
                index,
                reasons: Vec::new(),
            })
            .collect();
        self.rows.splice(row..=row, turns);
        true
    }

    /// Unfolds every folded row.
    pub fn unfold_all(&mut self) {
        self.rows = (0..self.total)
            .map(|index| Row::Turn {
                index,
                reasons: self.reasons(index),
            })
            .collect();
    }

    /// Turns hidden in folded rows.
    pub fn hidden(&self) -> usize {
        self.rows
            .iter()
            .map(|r| match r {
                Row::Folded { from, to } => to - from,
                Row::Turn { .. } => 0,
            })
            .sum()
    }

    /// Positions of the visible turns, in order.
    pub fn visible(&self) -> impl Iterator<Item = usize> + '_ {
        self.rows.iter().filter_map(|r| match r {
            Row::Turn { index, .. } => Some(*index),
            Row::Folded { .. } => None,
        })
    }

    /// Positions of the key turns (those pointed at), in order.
    pub fn key_positions(&self) -> Vec<usize> {
        let mut v: Vec<usize> = self.keys.iter().map(|(i, _)| *i).collect();
        v.sort_unstable();
        v.dedup();
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::failures::trace::parse_trace;
    use serde_json::json;

    fn conv(n: usize) -> Conversation {
        let h: Vec<Value> = (1..=n)
            .map(|i| json!({"turn": i, "role": if i % 2 == 1 {"user"} else {"assistant"}, "content": format!("第{i}轮")}))
            .collect();
        parse_trace(&json!({ "conversation_history": h }))
    }

    #[test]
    fn keeps_ends_and_pointed_turns_and_unfolds() {
        let c = conv(30);
        let eval = json!({"checker_results": [
            {"checker": "leave_balance_deducted", "passed": false, "failed_turn": 15},
            {"checker": "date_range_valid", "passed": true}]});
        let attr = json!({"evidence_turns": [22]});
        let keys = key_turns(&[Some(&eval), Some(&attr), None]);
        assert_eq!(
            keys,
            [
                KeyTurn {
                    turn: 15,
                    reason: "leave_balance_deducted".into()
                },
                KeyTurn {
                    turn: 22,
                    reason: "evidence_turns".into()
                },
            ]
        );
        let mut f = Folding::new(&c, &keys, DEFAULT_KEEP);
        let vis: Vec<usize> = f.visible().collect();
        assert_eq!(vis, [0, 1, 2, 13, 14, 15, 20, 21, 22, 27, 28, 29]);
        assert_eq!(f.hidden(), 18);
        assert_eq!(f.rows[3], Row::Folded { from: 3, to: 13 });
        assert_eq!(
            f.rows[5],
            Row::Turn {
                index: 14,
                reasons: vec!["leave_balance_deducted".into()]
            }
        );
        assert!(f.unfold(3));
        assert_eq!(f.hidden(), 8);
        assert!(!f.unfold(0));
        f.unfold_all();
        assert_eq!(f.hidden(), 0);
        assert_eq!(f.rows.len(), 30);
        f.refold();
        assert_eq!(f.hidden(), 18);
    }

    #[test]
    fn short_conversations_are_not_folded() {
        let c = conv(7);
        let f = Folding::new(&c, &[], DEFAULT_KEEP);
        assert_eq!(f.hidden(), 0);
        assert_eq!(f.rows.len(), 7);
        let f = Folding::new(&conv(0), &[], DEFAULT_KEEP);
        assert!(f.rows.is_empty());
    }
}
