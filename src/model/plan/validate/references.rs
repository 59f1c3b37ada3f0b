//! A task's `data_references`: each checked for its shape by `ref_type`, then for what
//! serde cannot see (JSONPaths that parse, file formats, whitelisted tables and columns).

use serde_json::Value;

use super::shape::{describe, Want};
use super::{schema, Collector, K};
use crate::base::jsonpath::JsonPath;
use crate::base::protocol::refs::{
    queryable_columns, DbQueryRef, FileRef, TaskOutputRef, QUERYABLE,
};
use crate::base::protocol::DataReference;

/// Reads a task's `data_references` (absent: none); `None` when one is malformed.
pub(super) fn parse_references(
    c: &mut Collector<'_>,
    task_id: &str,
    value: Option<&Value>,
) -> Option<Vec<DataReference>> {
    let tid = Some(task_id);
    let refs = match value {
        None | Some(Value::Null) => return Some(Vec::new()),
        Some(Value::Array(refs)) => refs,
        Some(v) => {
            c.push(
                tid,
                "data_references",
                K::Shape,
                format!("must be an array of references, not {}", describe(v)),
            );
            return None;
        }
    };
    let mut out = Vec::with_capacity(refs.len());
    let mut ok = true;
    for (j, r) in refs.iter().enumerate() {
        let field = format!("data_references[{j}]");
        let want = Want::Tagged(&schema::REFERENCE);
        match c.read::<DataReference>(tid, &field, r, &want) {
            Some(dr) => {
                check_reference(c, task_id, &field, &dr);
                out.push(dr);
            }
            None => ok = false,
        }
    }
    ok.then_some(out)
}

/// Checks what serde cannot see in one reference at `field`: its JSONPaths, file format,
/// table and columns.
fn check_reference(c: &mut Collector<'_>, task_id: &str, field: &str, r: &DataReference) {
    let tid = Some(task_id);
    match r {
        DataReference::TaskOutput(t) => check_task_output(c, tid, field, t),
        DataReference::Sample(r) => {
            check_path(c, tid, field, &r.path);
            if r.data.is_none() {
                c.push(
                    tid,
                    format!("{field}.data"),
                    K::Shape,
                    "a `sample` reference reads an eval's sample: run the plan with `plexus eval`",
                );
            }
        }
        DataReference::File(f) => check_file(c, tid, field, f),
        DataReference::DbQuery(q) => check_query(c, tid, field, q),
    }
}

/// Reports a JSONPath at `{field}.path` that does not parse.
fn check_path(c: &mut Collector<'_>, tid: Option<&str>, field: &str, p: &str) {
    if let Err(e) = JsonPath::parse(p) {
        c.push(
            tid,
            format!("{field}.path"),
            K::BadJsonPath,
            format!("JSONPath `{p}` does not parse {e}"),
        );
    }
}

/// A `task_output` reference: its path parses, its filter names a field.
fn check_task_output(c: &mut Collector<'_>, tid: Option<&str>, field: &str, t: &TaskOutputRef) {
    if let Some(p) = &t.path {
        check_path(c, tid, field, p);
    }
    let Some(f) = &t.filter else {
        return;
    };
    if f.field.trim().is_empty() {
        c.push(
            tid,
            format!("{field}.filter.field"),
            K::Shape,
            "filter field must not be empty",
        );
    }
}

/// A `file` reference: a path, and a known format when one is given.
fn check_file(c: &mut Collector<'_>, tid: Option<&str>, field: &str, f: &FileRef) {
    if f.path.trim().is_empty() {
        c.push(
            tid,
            format!("{field}.path"),
            K::Shape,
            "file path must not be empty",
        );
    }
    let Some(fmt) = &f.format else {
        return;
    };
    if !schema::FILE_FORMATS.contains(&fmt.as_str()) {
        c.push(
            tid,
            format!("{field}.format"),
            K::Shape,
            format!(
                "file format `{fmt}` is not one of {}",
                schema::FILE_FORMATS.join(", ")
            ),
        );
    }
}

/// A `db_query` reference: a whitelisted table, its columns in conditions, select and
/// order, and a known direction.
fn check_query(c: &mut Collector<'_>, tid: Option<&str>, field: &str, q: &DbQueryRef) {
    let Some(columns) = queryable_columns(&q.table) else {
        let tables: Vec<&str> = QUERYABLE.iter().map(|(t, _)| *t).collect();
        c.push(
            tid,
            format!("{field}.table"),
            K::UnknownTable,
            format!(
                "table `{}` may not be queried; allowed: {}",
                q.table,
                tables.join(", ")
            ),
        );
        return;
    };
    let check_col = |c: &mut Collector<'_>, sub: String, col: &str| {
        if !columns.contains(&col) {
            c.push(
                tid,
                sub,
                K::UnknownColumn,
                format!(
                    "table `{}` has no column `{col}`; columns: {}",
                    q.table,
                    columns.join(", ")
                ),
            );
        }
    };
    for (k, cond) in q.conditions.iter().flatten().enumerate() {
        check_col(c, format!("{field}.conditions[{k}].field"), &cond.field);
    }
    for (k, col) in q.select.iter().flatten().enumerate() {
        check_col(c, format!("{field}.select[{k}]"), col);
    }
    let Some(o) = &q.order_by else {
        return;
    };
    check_col(c, format!("{field}.order_by.field"), &o.field);
    if !schema::DIRECTIONS.contains(&o.direction.as_str()) {
        c.push(
            tid,
            format!("{field}.order_by.direction"),
            K::Shape,
            "direction must be `asc` or `desc`",
        );
    }
}
