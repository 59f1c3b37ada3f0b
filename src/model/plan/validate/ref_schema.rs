//! What a task's data references must look like, by `ref_type`, for the shape check
//! and the JSON Schema of plans (part of [`super::schema`]).

use super::shape::{field, Obj, Tagged, Want, OPT_STR, OPT_STRS};
use crate::base::protocol::refs::QUERYABLE;
use crate::base::ranges as r;

const OPERATORS: Want = Want::OneOf(&["eq", "ne", "in", "gt", "gte", "lt", "lte", "contains"]);
/// The formats of a `file` reference (without one, the extension decides; a source
/// file's extension reads as `code`).
pub(super) const FILE_FORMATS: &[&str] = &["pdf", "md", "json", "txt", "code", "tex"];
/// The directions of a `db_query` reference's `order_by`.
pub(super) const DIRECTIONS: &[&str] = &["asc", "desc"];
/// The tables a `db_query` reference may read (the names of [`QUERYABLE`]).
pub(super) const TABLES: &[&str] = &table_names();

const fn table_names() -> [&'static str; QUERYABLE.len()] {
    let mut names = [""; QUERYABLE.len()];
    let mut i = 0;
    while i < QUERYABLE.len() {
        names[i] = QUERYABLE[i].0;
        i += 1;
    }
    names
}

const CONDITION: Want = Want::Obj(&Obj {
    fields: &[
        field("field", Want::Str, "The field compared."),
        field("operator", OPERATORS, "How it is compared."),
        field("value", Want::Any, "What it is compared with."),
    ],
    required: &["field", "operator", "value"],
});

/// The `order_by` of a `db_query` reference.
const ORDER_BY: Want = Want::Obj(&Obj {
    fields: &[
        field("field", Want::Str, "A column of the table."),
        field("direction", Want::Named(DIRECTIONS), ""),
    ],
    required: &["field"],
});

/// Text with more than white space in it (for a string a later check wants so).
const NOT_BLANK: &str = r"\S";

const FILTER: Want = Want::Obj(&Obj {
    fields: &[
        field("field", Want::Matching(NOT_BLANK), "The field compared."),
        field("operator", OPERATORS, "How it is compared."),
        field("value", Want::Any, "What it is compared with."),
    ],
    required: &["field", "operator", "value"],
});

/// A data reference, by its `ref_type`.
pub(super) const REFERENCE: Tagged = Tagged {
    tag: "ref_type",
    kinds: &[
        (
            "task_output",
            Obj {
                fields: &[
                    field("ref_type", Want::Str, "The output of a task upstream."),
                    field(
                        "task_id",
                        Want::Str,
                        "The task; it must be upstream of this one (checked by plexus validate).",
                    ),
                    field(
                        "path",
                        OPT_STR,
                        "A JSONPath into the output, such as $.atoms[?(@.confidence>0.8)].",
                    ),
                    field("filter", Want::Opt(&FILTER), "Keep only matching atoms."),
                    field(
                        "transform",
                        Want::Opt(&Want::OneOf(&["none", "summary", "keys_only"])),
                        "",
                    ),
                ],
                required: &["task_id"],
            },
        ),
        (
            "file",
            Obj {
                fields: &[
                    field("ref_type", Want::Str, "A file in the workspace."),
                    field(
                        "path",
                        Want::Matching(NOT_BLANK),
                        "The file, inside the workspace.",
                    ),
                    field("format", Want::Opt(&Want::Named(FILE_FORMATS)), ""),
                    field(
                        "encoding",
                        OPT_STR,
                        "utf-8 (default), utf-16le, utf-16be or latin-1.",
                    ),
                    field(
                        "sections",
                        OPT_STRS,
                        "Markdown headings, or section titles found in PDF text.",
                    ),
                ],
                required: &["path"],
            },
        ),
        (
            "sample",
            Obj {
                fields: &[
                    field(
                        "ref_type",
                        Want::Str,
                        "A field of an eval's sample (plexus eval fills it in each copy).",
                    ),
                    field(
                        "path",
                        OPT_STR,
                        "A JSONPath into {id, input, vars, metadata}, such as $.input.document ($.input by default).",
                    ),
                    field("data", Want::Any, "The value found, put there by plexus eval."),
                ],
                required: &[],
            },
        ),
        (
            "db_query",
            Obj {
                fields: &[
                    field("ref_type", Want::Str, "Rows of the plexus database itself."),
                    field("table", Want::Named(TABLES), "The table read."),
                    field(
                        "conditions",
                        Want::Opt(&Want::List(&CONDITION)),
                        "Conditions on columns of the table, ANDed.",
                    ),
                    field("select", OPT_STRS, "The columns wanted."),
                    field("order_by", Want::Opt(&ORDER_BY), ""),
                    field("limit", Want::Opt(&Want::Num(&r::DB_LIMIT)), "Most rows."),
                ],
                required: &["table"],
            },
        ),
    ],
};
