//! Summarising a table (seed 000 §5.3: "保留表头+统计信息"): its header (every column
//! the rows have), its row count, statistics per column (numbers: min,
//! max, mean; other values: distinct count and the most frequent), and as many whole
//! rows from the top as the budget leaves room for.

use std::collections::HashMap;

use serde_json::{json, Map, Value};

use crate::base::tokens::TokenCounter;

/// The rows of a table input: a `db_query` result's `rows` (or an array of objects).
pub(super) fn table_rows(data: &Value) -> Option<&Vec<Value>> {
    let rows = match data {
        Value::Array(a) => a,
        Value::Object(o) => o.get("rows")?.as_array()?,
        _ => return None,
    };
    rows.iter().all(Value::is_object).then_some(rows)
}

/// The columns of `rows`, in the order they first appear.
fn columns(rows: &[Value]) -> Vec<String> {
    let mut cols: Vec<String> = Vec::new();
    for r in rows {
        for k in r.as_object().into_iter().flat_map(Map::keys) {
            if !cols.contains(k) {
                cols.push(k.clone());
            }
        }
    }
    cols
}

/// The statistics of column `col` over `rows`.
fn column_stats(rows: &[Value], col: &str) -> Value {
    let values: Vec<&Value> = rows
        .iter()
        .filter_map(|r| r.get(col))
        .filter(|v| !v.is_null())
        .collect();
    let numbers: Vec<f64> = values.iter().filter_map(|v| v.as_f64()).collect();
    if !numbers.is_empty() && numbers.len() == values.len() {
        let min = numbers.iter().copied().fold(f64::INFINITY, f64::min);
        let max = numbers.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let mean = numbers.iter().sum::<f64>() / numbers.len() as f64;
        return json!({"count": numbers.len(), "min": min, "max": max, "mean": (mean * 1e4).round() / 1e4});
    }
    let mut seen: HashMap<String, usize> = HashMap::new();
    for v in &values {
        let key = match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        *seen.entry(key).or_default() += 1;
    }
    let top = seen
        .iter()
        .max_by(|a, b| a.1.cmp(b.1).then_with(|| b.0.cmp(a.0)))
        .map(|(k, n)| json!({"value": crate::base::text::cut::cut_chars(k, 80), "count": n}));
    json!({"count": values.len(), "distinct": seen.len(), "most_frequent": top})
}

/// `rows` summarised within about `target` tokens: header, row count, per-column
/// statistics, then whole rows from the top while they fit.
pub(super) fn summarize_table(
    table: Option<&str>,
    rows: &[Value],
    target: u64,
    c: &TokenCounter,
) -> Value {
    let cols = columns(rows);
    let stats: Map<String, Value> = cols
        .iter()
        .map(|k| (k.clone(), column_stats(rows, k)))
        .collect();
    let mut out =
        json!({"columns": cols, "row_count": rows.len(), "column_stats": stats, "rows": []});
    if let Some(t) = table {
        out["table"] = json!(t);
    }
    let mut used = c.count(&out.to_string());
    let mut kept = Vec::new();
    for r in rows {
        let t = c.count(&r.to_string()) + 1;
        if used + t > target {
            break;
        }
        used += t;
        kept.push(r.clone());
    }
    out["rows_shown"] = json!(kept.len());
    out["rows"] = Value::Array(kept);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_keeps_its_header_and_statistics_and_whole_rows() {
        let rows: Vec<Value> = (0..500)
            .map(|i| json!({"scene": format!("s{}", i % 7), "ade": i as f64 / 10.0, "note": "ok"}))
            .collect();
        let data = json!({"table": "results", "rows": rows});
        let rows = table_rows(&data).expect("rows");
        let c = TokenCounter::default();
        let s = summarize_table(Some("results"), rows, 400, &c);
        assert_eq!(s["columns"], json!(["ade", "note", "scene"]));
        assert_eq!(s["row_count"], 500);
        assert_eq!(s["column_stats"]["ade"]["min"], 0.0);
        assert_eq!(s["column_stats"]["ade"]["max"], 49.9);
        assert_eq!(s["column_stats"]["scene"]["distinct"], 7);
        let shown = s["rows_shown"].as_u64().expect("shown");
        assert!(shown > 0 && shown < 500, "{shown}");
        assert_eq!(
            s["rows"][0],
            json!({"scene": "s0", "ade": 0.0, "note": "ok"})
        );
        assert!(
            c.count(&s.to_string()) <= 400,
            "{}",
            c.count(&s.to_string())
        );
    }

    #[test]
    fn rows_that_are_not_objects_are_no_table() {
        assert!(table_rows(&json!({"rows": [1, 2]})).is_none());
        assert!(table_rows(&json!("text")).is_none());
    }
}
