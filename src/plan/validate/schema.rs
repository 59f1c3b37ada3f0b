//! What each part of a plan must look like, for the shape check: field names, types,
//! required fields and the range of every number (from [`crate::ranges`]).

use super::shape::{Obj, Want};
use crate::ranges as r;

const STRS: Want = Want::List(&Want::Str);
const OPT_STR: Want = Want::Opt(&Want::Str);
const OPT_STRS: Want = Want::Opt(&STRS);
const OPERATORS: Want = Want::OneOf(&["eq", "ne", "in", "gt", "gte", "lt", "lte", "contains"]);
const TRANSFER_MODES: &[&str] = &["full", "summary", "reference"];
const STRATEGIES: Want = Want::OneOf(&["use_default", "retry", "skip", "abort"]);

/// A task's `constraints`.
pub(super) const CONSTRAINTS: Want = Want::Obj(&Obj {
    fields: &[
        ("timeout_seconds", Want::Opt(&Want::Num(&r::TASK_TIMEOUT))),
        ("max_tokens", Want::Opt(&Want::Num(&r::TASK_MAX_TOKENS))),
        ("temperature", Want::Opt(&Want::Num(&r::TASK_TEMPERATURE))),
    ],
    required: &[],
    closed: true,
});

/// An entry of the plan's `agents`.
pub(super) const AGENT: Want = Want::Obj(&Obj {
    fields: &[
        ("short_name", OPT_STR),
        ("system_prompt", OPT_STR),
        ("temperature", Want::Opt(&Want::Num(&r::AGENT_TEMPERATURE))),
        ("max_tokens", Want::Opt(&Want::Num(&r::AGENT_MAX_TOKENS))),
        ("timeout_seconds", Want::Opt(&Want::Num(&r::AGENT_TIMEOUT))),
        (
            "max_input_tokens",
            Want::Opt(&Want::Num(&r::AGENT_MAX_INPUT)),
        ),
        (
            "data_area_tokens",
            Want::Opt(&Want::Num(&r::AGENT_DATA_AREA)),
        ),
        (
            "preferred_transfer",
            Want::Opt(&Want::OneOf(TRANSFER_MODES)),
        ),
        ("atom_type", OPT_STR),
        ("tools", OPT_STRS),
        ("skills", OPT_STRS),
    ],
    required: &[],
    closed: true,
});

/// A task's `context`.
pub(super) const CONTEXT: Want = Want::Obj(&Obj {
    fields: &[
        (
            "paper_info",
            Want::Opt(&Want::Obj(&Obj {
                fields: &[
                    ("paper_id", OPT_STR),
                    ("title", OPT_STR),
                    ("pdf_path", OPT_STR),
                    ("arxiv_url", OPT_STR),
                    ("focus_sections", OPT_STRS),
                ],
                required: &[],
                closed: false,
            })),
        ),
        (
            "code_info",
            Want::Opt(&Want::Obj(&Obj {
                fields: &[
                    ("repo_url", OPT_STR),
                    ("branch", OPT_STR),
                    ("commit_hash", OPT_STR),
                    ("focus_files", OPT_STRS),
                    ("entry_point", OPT_STR),
                ],
                required: &[],
                closed: false,
            })),
        ),
        (
            "dependencies",
            Want::Opt(&Want::List(&Want::Obj(&Obj {
                fields: &[
                    ("task_id", Want::Str),
                    ("output_ref", OPT_STR),
                    ("required", Want::Opt(&Want::Bool)),
                ],
                required: &["task_id"],
                closed: false,
            }))),
        ),
        ("existing_assets", OPT_STRS),
    ],
    required: &[],
    closed: false,
});

/// A task's `output_requirements`.
pub(super) const OUTPUT_REQUIREMENTS: Want = Want::Obj(&Obj {
    fields: &[
        ("atom_type", OPT_STR),
        ("required_fields", STRS),
        ("quality_threshold", OPT_STR),
        ("max_atoms", Want::Opt(&Want::Num(&r::MAX_ATOMS))),
    ],
    required: &[],
    closed: false,
});

/// A task's `transfer_config`.
pub(super) const TRANSFER_CONFIG: Want = Want::Obj(&Obj {
    fields: &[
        ("mode", Want::Opt(&Want::OneOf(TRANSFER_MODES))),
        ("max_tokens", Want::Opt(&Want::Num(&r::TRANSFER_MAX_TOKENS))),
        (
            "priority_filter",
            Want::Opt(&Want::List(&Want::Num(&r::PRIORITY_LEVEL))),
        ),
        (
            "inline_preview_count",
            Want::Opt(&Want::Num(&r::INLINE_PREVIEW)),
        ),
        ("summary_strategy", OPT_STR),
        (
            "batch_config",
            Want::Opt(&Want::Obj(&Obj {
                fields: &[
                    ("enabled", Want::Bool),
                    ("batch_size_tokens", Want::Num(&r::BATCH_SIZE)),
                    ("overlap_tokens", Want::Num(&r::BATCH_OVERLAP)),
                    ("max_batches", Want::Num(&r::MAX_BATCHES)),
                    ("aggregation_strategy", Want::Str),
                    ("batch_priority", Want::Str),
                ],
                required: &[],
                closed: false,
            })),
        ),
    ],
    required: &[],
    closed: false,
});

/// A task's `fallback_config`.
pub(super) const FALLBACK_CONFIG: Want = Want::Obj(&Obj {
    fields: &[
        ("strategy", STRATEGIES),
        ("default_value", Want::Any),
        ("retry_count", Want::Num(&r::RETRY_COUNT)),
        ("retry_delay_ms", Want::Num(&r::RETRY_DELAY)),
        ("on_final_failure", Want::Opt(&STRATEGIES)),
    ],
    required: &["strategy"],
    closed: false,
});

/// The kinds of data reference, by `ref_type`.
pub(super) const REF_TYPES: &[&str] = &["task_output", "file", "db_query"];

/// The fields of a data reference of kind `ref_type` (one of [`REF_TYPES`]).
pub(super) fn reference(ref_type: &str) -> Option<Want> {
    let obj: &'static Obj = match ref_type {
        "task_output" => &Obj {
            fields: &[
                ("ref_type", Want::Str),
                ("task_id", Want::Str),
                ("path", OPT_STR),
                (
                    "filter",
                    Want::Opt(&Want::Obj(&Obj {
                        fields: &[
                            ("field", Want::Str),
                            ("operator", OPERATORS),
                            ("value", Want::Any),
                        ],
                        required: &["field", "operator", "value"],
                        closed: false,
                    })),
                ),
                (
                    "transform",
                    Want::Opt(&Want::OneOf(&["none", "summary", "keys_only"])),
                ),
            ],
            required: &["task_id"],
            closed: false,
        },
        "file" => &Obj {
            fields: &[
                ("ref_type", Want::Str),
                ("path", Want::Str),
                ("format", OPT_STR),
                ("encoding", OPT_STR),
                ("sections", OPT_STRS),
            ],
            required: &["path"],
            closed: false,
        },
        "db_query" => &Obj {
            fields: &[
                ("ref_type", Want::Str),
                ("table", Want::Str),
                (
                    "conditions",
                    Want::Opt(&Want::List(&Want::Obj(&Obj {
                        fields: &[
                            ("field", Want::Str),
                            ("operator", OPERATORS),
                            ("value", Want::Any),
                        ],
                        required: &["field", "operator", "value"],
                        closed: false,
                    }))),
                ),
                ("select", OPT_STRS),
                (
                    "order_by",
                    Want::Opt(&Want::Obj(&Obj {
                        fields: &[("field", Want::Str), ("direction", Want::Str)],
                        required: &["field"],
                        closed: false,
                    })),
                ),
                ("limit", Want::Opt(&Want::Num(&r::DB_LIMIT))),
            ],
            required: &["table"],
            closed: false,
        },
        _ => return None,
    };
    Some(Want::Obj(obj))
}

/// The tool-using fields of a task, each checked at its own name.
pub(super) const REACT_FIELDS: &[(&str, Want)] = &[
    ("tools", OPT_STRS),
    ("skills", OPT_STRS),
    ("max_steps", Want::Opt(&Want::Num(&r::MAX_STEPS))),
    ("token_budget", Want::Opt(&Want::Num(&r::TOKEN_BUDGET))),
];
