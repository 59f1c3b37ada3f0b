//! `db_query` references (seed 000 §2.4) over the whitelisted tables: conditions ANDed,
//! select, order_by, limit. Table and column names come only from the whitelist (never
//! from the reference's text) and every value is bound as a parameter; a query that
//! runs past its deadline is interrupted (REF_TIMEOUT).

use std::path::Path;
use std::time::{Duration, Instant};

use rusqlite::types::Value as SqlValue;
use rusqlite::{params_from_iter, OpenFlags};
use serde_json::{Map, Value};

use super::RefFailure;
use crate::base::protocol::refs::queryable_columns;
use crate::base::protocol::refs::RefErrorCode;
use crate::base::protocol::{DbCondition, DbQueryRef, FilterOp};

/// Most rows a query returns when it gives no limit (or a larger one).
pub const MAX_ROWS: u64 = 1_000;

fn fail(code: RefErrorCode, message: impl Into<String>) -> RefFailure {
    RefFailure {
        code,
        message: message.into(),
    }
}

/// The whitelisted spelling of a column of `table`.
fn column(
    table: &'static str,
    cols: &[&'static str],
    name: &str,
) -> Result<&'static str, RefFailure> {
    cols.iter().copied().find(|c| *c == name).ok_or_else(|| {
        fail(
            RefErrorCode::RefPermissionDenied,
            format!("column `{name}` of `{table}` may not be queried"),
        )
    })
}

fn sql_value(v: &Value) -> Result<SqlValue, RefFailure> {
    Ok(match v {
        Value::Null => SqlValue::Null,
        Value::Bool(b) => SqlValue::Integer(i64::from(*b)),
        Value::Number(n) => match n.as_i64() {
            Some(i) => SqlValue::Integer(i),
            None => SqlValue::Real(n.as_f64().unwrap_or(0.0)),
        },
        Value::String(s) => SqlValue::Text(s.clone()),
        other => {
            return Err(fail(
                RefErrorCode::RefFormatError,
                format!("condition value {other} is not a string, number, boolean or null"),
            ))
        }
    })
}

/// The SQL text and its parameters (exposed for tests: no value ever appears in the SQL).
pub fn build(q: &DbQueryRef) -> Result<(String, Vec<SqlValue>), RefFailure> {
    let (table, cols) = crate::base::protocol::refs::QUERYABLE
        .iter()
        .find(|(t, _)| *t == q.table)
        .map(|(t, c)| (*t, *c))
        .ok_or_else(|| {
            fail(
                RefErrorCode::RefPermissionDenied,
                format!("table `{}` may not be queried", q.table),
            )
        })?;
    debug_assert!(queryable_columns(table).is_some());
    let select: Vec<&'static str> = match &q.select {
        Some(s) if !s.is_empty() => s
            .iter()
            .map(|c| column(table, cols, c))
            .collect::<Result<_, _>>()?,
        _ => cols.to_vec(),
    };
    let mut sql = format!(
        "SELECT {} FROM {table}",
        select
            .iter()
            .map(|c| format!("\"{c}\""))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let mut wheres = Wheres::default();
    for c in q.conditions.iter().flatten() {
        wheres.add(table, column(table, cols, &c.field)?, c)?;
    }
    let Wheres {
        clauses,
        mut params,
    } = wheres;
    if !clauses.is_empty() {
        sql.push_str(" WHERE ");
        sql.push_str(&clauses.join(" AND "));
    }
    if let Some(o) = &q.order_by {
        let col = column(table, cols, &o.field)?;
        let dir = match o.direction.to_ascii_lowercase().as_str() {
            "asc" => "ASC",
            "desc" => "DESC",
            other => {
                return Err(fail(
                    RefErrorCode::RefFormatError,
                    format!("order direction `{other}` (asc or desc)"),
                ))
            }
        };
        sql.push_str(&format!(" ORDER BY \"{col}\" {dir}"));
    }
    sql.push_str(" LIMIT ?");
    params.push(SqlValue::Integer(
        q.limit.unwrap_or(MAX_ROWS).min(MAX_ROWS) as i64
    ));
    Ok((sql, params))
}

/// The WHERE clauses of a query (ANDed) and the values they bind, in order.
#[derive(Default)]
struct Wheres {
    clauses: Vec<String>,
    params: Vec<SqlValue>,
}

impl Wheres {
    /// Adds condition `c` on the whitelisted column `col` of `table`.
    fn add(&mut self, table: &str, col: &'static str, c: &DbCondition) -> Result<(), RefFailure> {
        let clause = match c.operator {
            FilterOp::Eq => "= ?",
            FilterOp::Ne => "IS NOT ?",
            FilterOp::Gt => "> ?",
            FilterOp::Gte => ">= ?",
            FilterOp::Lt => "< ?",
            FilterOp::Lte => "<= ?",
            FilterOp::Contains => "",
            FilterOp::In => "",
        };
        match c.operator {
            FilterOp::In => self.add_in(col, &c.value)?,
            FilterOp::Contains => {
                self.clauses.push(format!("instr(\"{col}\", ?) > 0"));
                self.params.push(sql_value(&c.value)?);
            }
            _ => {
                self.clauses.push(format!("\"{col}\" {clause}"));
                self.params.push(sql_value(&c.value)?);
                // The log is keyed by event id: one run's events are one id range, which
                // SQLite searches instead of reading every run's log (same rows).
                if table == "execution_logs" && col == "run_id" && c.operator == FilterOp::Eq {
                    self.clauses
                        .push(crate::data::store::schema::run_events_sql(
                            "(SELECT run_no << 32 FROM log_runs WHERE run_id = ?)",
                        ));
                    self.params.push(sql_value(&c.value)?);
                    self.params.push(sql_value(&c.value)?);
                }
            }
        }
        Ok(())
    }

    /// Adds `col IN (…)` for the array `value` (an empty array matches nothing).
    fn add_in(&mut self, col: &'static str, value: &Value) -> Result<(), RefFailure> {
        let Value::Array(items) = value else {
            return Err(fail(
                RefErrorCode::RefFormatError,
                format!("`in` on `{col}` needs an array"),
            ));
        };
        if items.is_empty() {
            self.clauses.push("0".to_string());
            return Ok(());
        }
        let marks = vec!["?"; items.len()].join(", ");
        self.clauses.push(format!("\"{col}\" IN ({marks})"));
        for it in items {
            self.params.push(sql_value(it)?);
        }
        Ok(())
    }
}

/// Runs the query read-only against `db`, giving up after `timeout`.
pub fn resolve_db(db: &Path, q: &DbQueryRef, timeout: Duration) -> Result<Value, RefFailure> {
    let (sql, params) = build(q)?;
    let conn = rusqlite::Connection::open_with_flags(
        db,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| {
        fail(
            RefErrorCode::RefNotFound,
            format!("database {}: {e}", db.display()),
        )
    })?;
    let _ = conn.busy_timeout(timeout);
    let deadline = Instant::now() + timeout;
    conn.progress_handler(100, Some(move || Instant::now() > deadline));
    match query_rows(&conn, &sql, &params) {
        Ok(rows) => Ok(serde_json::json!({"table": q.table, "rows": rows})),
        Err(rusqlite::Error::SqliteFailure(e, _))
            if e.code == rusqlite::ErrorCode::OperationInterrupted =>
        {
            Err(fail(
                RefErrorCode::RefTimeout,
                format!("query on `{}` ran past {} ms", q.table, timeout.as_millis()),
            ))
        }
        Err(e) => Err(fail(
            RefErrorCode::RefFormatError,
            format!("query on `{}` failed: {e}", q.table),
        )),
    }
}

/// The rows of `sql` bound to `params`, each an object of its columns.
fn query_rows(
    conn: &rusqlite::Connection,
    sql: &str,
    params: &[SqlValue],
) -> rusqlite::Result<Vec<Value>> {
    let mut st = conn.prepare(sql)?;
    let names: Vec<String> = st.column_names().iter().map(|s| s.to_string()).collect();
    let rows = st.query_map(params_from_iter(params.iter()), |r| {
        let mut m = Map::new();
        for (i, n) in names.iter().enumerate() {
            m.insert(n.clone(), cell_value(r.get_ref(i)?));
        }
        Ok(Value::Object(m))
    })?;
    rows.collect()
}

/// A column's value as JSON: text that starts like JSON (a JSON column) as JSON, a
/// blob as its size.
fn cell_value(v: rusqlite::types::ValueRef<'_>) -> Value {
    match v {
        rusqlite::types::ValueRef::Null => Value::Null,
        rusqlite::types::ValueRef::Integer(x) => Value::from(x),
        rusqlite::types::ValueRef::Real(x) => Value::from(x),
        rusqlite::types::ValueRef::Text(t) => {
            let s = String::from_utf8_lossy(t).to_string();
            // JSON columns come back as JSON.
            match s.chars().next() {
                Some('{') | Some('[') => serde_json::from_str(&s).unwrap_or(Value::String(s)),
                _ => Value::String(s),
            }
        }
        rusqlite::types::ValueRef::Blob(b) => Value::from(format!("<{} bytes>", b.len())),
    }
}
