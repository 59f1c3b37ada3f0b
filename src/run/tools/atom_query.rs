//! `atom_query`: read-only queries over the stored knowledge atoms. Filters are fixed
//! columns; every value is a bound parameter, never part of the SQL text.

use rusqlite::types::Value as SqlValue;
use rusqlite::Connection;
use serde_json::{json, Value};

use super::args::{count_arg, one_line, str_arg};
use super::context::ToolContext;
use super::error::{ToolError, ToolErrorCode};
use super::tool::{run_blocking, Tool, ToolData, ToolFuture};
use crate::data::store::open::is_busy;
use crate::data::store::{open_read_only, StoreError};

/// Atoms returned when the call sets no limit.
pub const DEFAULT_LIMIT: usize = 20;

/// Most atoms one call returns.
pub const MAX_LIMIT: usize = 200;

/// Characters of an atom's content in the standard listing.
const SNIPPET_CHARS: usize = 160;

/// Exact-match filters: argument name → column. Only these names reach the SQL text.
const EQUAL_FILTERS: [(&str, &str); 7] = [
    ("run_id", "run_id"),
    ("task_id", "task_id"),
    ("agent", "agent"),
    ("atom_type", "atom_type"),
    ("category", "category"),
    ("paper_id", "paper_id"),
    ("grade", "grade"),
];

/// Queries the run database's knowledge atoms.
#[derive(Debug, Clone, Copy, Default)]
pub struct AtomQuery;

impl Tool for AtomQuery {
    fn name(&self) -> &str {
        "atom_query"
    }

    fn description(&self) -> &str {
        "Lists knowledge atoms stored in the plexus database, newest first, filtered by run, \
         task, agent, atom type, category, paper, grade (A-D), minimum score and text contained \
         in the content. Read-only."
    }

    fn input_schema(&self) -> Value {
        let s = |d: &str| json!({"type": "string", "minLength": 1, "maxLength": 1000, "description": d});
        json!({
            "type": "object",
            "properties": {
                "run_id": s("Run id (exact)"),
                "task_id": s("Task id (exact)"),
                "agent": s("Agent that produced the atom (exact)"),
                "atom_type": s("Atom type (exact), e.g. concept, method"),
                "category": s("Category (exact)"),
                "paper_id": s("Paper id (exact)"),
                "grade": {"type": "string", "enum": ["A", "B", "C", "D", "a", "b", "c", "d"],
                          "description": "Quality grade"},
                "min_score": {"type": "number", "minimum": 0, "maximum": 1,
                              "description": "Lowest quality score, 0-1"},
                "text": s("Text the atom's content contains (case-insensitive for ASCII)"),
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT,
                          "description": "Most atoms returned (default 20)"}
            },
            "additionalProperties": false
        })
    }

    /// Not cached: atoms are stored as the run goes, so the same query may find more
    /// later in the run.
    fn is_idempotent(&self, _args: &Value) -> bool {
        false
    }

    fn run<'a>(&'a self, ctx: &'a ToolContext, args: &'a Value) -> ToolFuture<'a> {
        run_blocking(ctx, args, query)
    }
}

fn store_error(e: StoreError) -> ToolError {
    match e {
        StoreError::Missing(p) => ToolError::not_found(
            ToolErrorCode::NotFound,
            format!("no database at {}", p.display()),
        ),
        StoreError::Sqlite(e) if is_busy(&e) => ToolError::resource(
            ToolErrorCode::ResourceBusy,
            format!("the database is busy: {e}"),
        ),
        other => ToolError::failed(ToolErrorCode::DatabaseError, other.to_string()),
    }
}

/// The `WHERE` clause (with `?n` placeholders) and its values, from the arguments.
pub fn build_filter(args: &Value) -> (String, Vec<SqlValue>) {
    let mut clauses = Vec::new();
    let mut values = Vec::new();
    for (arg, column) in EQUAL_FILTERS {
        if let Some(v) = str_arg(args, arg) {
            values.push(SqlValue::Text(if arg == "grade" {
                v.to_ascii_uppercase()
            } else {
                v.to_string()
            }));
            clauses.push(format!("{column} = ?{}", values.len()));
        }
    }
    if let Some(min) = args.get("min_score").and_then(Value::as_f64) {
        values.push(SqlValue::Real(min));
        clauses.push(format!("score >= ?{}", values.len()));
    }
    if let Some(t) = str_arg(args, "text") {
        values.push(SqlValue::Text(t.to_string()));
        clauses.push(format!(
            "instr(lower(content), lower(?{})) > 0",
            values.len()
        ));
    }
    let sql = if clauses.is_empty() {
        String::new()
    } else {
        format!(" WHERE {}", clauses.join(" AND "))
    };
    (sql, values)
}

fn query(ctx: &ToolContext, args: &Value) -> Result<ToolData, ToolError> {
    let Some(db) = &ctx.db_path else {
        return Err(ToolError::not_found(
            ToolErrorCode::NoDatabase,
            "no database: this run has no plexus database to query",
        ));
    };
    let limit = count_arg(args, "limit", DEFAULT_LIMIT, MAX_LIMIT)?;
    let conn = open_read_only(db).map_err(store_error)?;
    let cancel = ctx.cancel.clone();
    conn.progress_handler(10_000, Some(move || cancel.is_cancelled()));
    let (filter, values) = build_filter(args);
    let (total, rows) =
        run_query(&conn, &filter, values, limit).map_err(|e| store_error(e.into()))?;
    Ok(report(args, total, rows))
}

fn run_query(
    conn: &Connection,
    filter: &str,
    mut values: Vec<SqlValue>,
    limit: usize,
) -> rusqlite::Result<(i64, Vec<Value>)> {
    let total: i64 = conn.query_row(
        &format!("SELECT COUNT(*) FROM knowledge_atoms{filter}"),
        rusqlite::params_from_iter(values.iter()),
        |r| r.get(0),
    )?;
    values.push(SqlValue::Integer(limit as i64));
    let sql = format!(
        "SELECT atom_id, run_id, task_id, agent, atom_type, category, paper_id, grade, score, \
         confidence, created_at, content FROM knowledge_atoms{filter} \
         ORDER BY created_at DESC, rowid DESC LIMIT ?{}",
        values.len()
    );
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt
        .query_map(rusqlite::params_from_iter(values.iter()), |r| {
            let content: String = r.get(11)?;
            Ok(json!({
                "atom_id": r.get::<_, String>(0)?,
                "run_id": r.get::<_, Option<String>>(1)?,
                "task_id": r.get::<_, Option<String>>(2)?,
                "agent": r.get::<_, Option<String>>(3)?,
                "atom_type": r.get::<_, Option<String>>(4)?,
                "category": r.get::<_, Option<String>>(5)?,
                "paper_id": r.get::<_, Option<String>>(6)?,
                "grade": r.get::<_, Option<String>>(7)?,
                "score": r.get::<_, Option<f64>>(8)?,
                "confidence": r.get::<_, Option<f64>>(9)?,
                "created_at": r.get::<_, String>(10)?,
                "content": serde_json::from_str::<Value>(&content).unwrap_or(Value::String(content)),
            }))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok((total, rows))
}

fn report(args: &Value, total: i64, rows: Vec<Value>) -> ToolData {
    let filters: Vec<String> = args
        .as_object()
        .map(|m| {
            m.iter()
                .filter(|(k, _)| k.as_str() != "limit")
                .map(|(k, v)| {
                    format!(
                        "{k}={}",
                        v.as_str().map_or_else(|| v.to_string(), str::to_string)
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let scope = if filters.is_empty() {
        "in the database".to_string()
    } else {
        format!("for {}", one_line(&filters.join(", "), 300))
    };
    let brief = if total == 0 {
        format!("No atoms {scope}.")
    } else {
        format!(
            "Found {total} atoms {scope} (showing {}, newest first).",
            rows.len()
        )
    };
    let mut standard = brief.clone();
    for a in &rows {
        let s = |k: &str| a[k].as_str().unwrap_or("-").to_string();
        let content = match &a["content"] {
            Value::String(t) => t.clone(),
            v => v.to_string(),
        };
        standard.push_str(&format!(
            "\n- {} [{} {}] {}/{} task {}: {}",
            s("atom_id"),
            s("grade"),
            a["score"]
                .as_f64()
                .map_or("-".into(), |x| format!("{x:.2}")),
            s("agent"),
            s("atom_type"),
            s("task_id"),
            one_line(&content, SNIPPET_CHARS)
        ));
    }
    let data = json!({"total": total, "returned": rows.len(), "atoms": rows});
    ToolData::json(data, brief, standard)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_become_parameters_not_sql() {
        let args = json!({"run_id": "r'; DROP TABLE knowledge_atoms; --", "grade": "b", "text": "x", "min_score": 0.5});
        let (sql, values) = build_filter(&args);
        assert_eq!(
            sql,
            " WHERE run_id = ?1 AND grade = ?2 AND score >= ?3 AND instr(lower(content), lower(?4)) > 0"
        );
        assert!(!sql.contains("DROP"));
        assert_eq!(
            values[0],
            SqlValue::Text("r'; DROP TABLE knowledge_atoms; --".into())
        );
        assert_eq!(values[1], SqlValue::Text("B".into()));
        assert_eq!(build_filter(&json!({})).0, "");
    }
}
