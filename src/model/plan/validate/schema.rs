//! What each part of a plan must look like: field names, types, required fields, the
//! names a field may hold and the range of every number (from [`crate::base::ranges`]), each
//! field with a sentence on what it is for. The shape check walks these, and
//! `plexus schema plan` turns them into a JSON Schema.

pub(super) use super::ref_schema::{DIRECTIONS, FILE_FORMATS, REFERENCE};
use super::shape::{field, Field, Obj, Want};
use crate::base::ranges as r;
use crate::model::plan::react::TOOL_NAMES;
use crate::model::plan::ExecutionMode;

pub(super) use super::shape::{OPT_STR, OPT_STRS, STRS};
const TRANSFER_MODES: &[&str] = &["full", "summary", "reference"];
const STRATEGIES: Want = Want::OneOf(&["use_default", "retry", "skip", "abort"]);

/// The grades a `quality_threshold` may name (checked by `crate::base::protocol::Grade`).
pub(super) const GRADES: &[&str] = &["A", "B", "C", "D"];
/// A skill name as `crate::model::plan::react::check_skill` allows it: one plain folder name.
pub(super) const SKILL_NAME: &str = r"^(?!\.\.?$)[\p{Alphabetic}\p{N}._-]{1,100}$";

const TOOLS: Want = Want::Opt(&Want::List(&Want::Named(&TOOL_NAMES)));
const SKILLS: Want = Want::Opt(&Want::List(&Want::Matching(SKILL_NAME)));
const MAX_STEPS: Want = Want::Opt(&Want::Num(&r::MAX_STEPS));
const TOKEN_BUDGET: Want = Want::Opt(&Want::Num(&r::TOKEN_BUDGET));

/// A task's `constraints`.
pub(super) const CONSTRAINTS: Want = Want::Obj(&Obj {
    fields: &[
        field(
            "timeout_seconds",
            Want::Opt(&Want::Num(&r::TASK_TIMEOUT)),
            "Timeout of the task's request, used as written (the execution mode does not scale it).",
        ),
        field(
            "max_tokens",
            Want::Opt(&Want::Num(&r::TASK_MAX_TOKENS)),
            "Most output tokens, used as written.",
        ),
        field(
            "temperature",
            Want::Opt(&Want::Num(&r::TASK_TEMPERATURE)),
            "Temperature, used as written.",
        ),
    ],
    required: &[],
});

/// An entry of the plan's `agents`.
pub(super) const AGENT: Want = Want::Obj(&Obj {
    fields: &[
        field(
            "short_name",
            OPT_STR,
            "Short name shown in the terminal UI.",
        ),
        field("system_prompt", OPT_STR, "The agent's system prompt."),
        field(
            "temperature",
            Want::Opt(&Want::Num(&r::AGENT_TEMPERATURE)),
            "Base temperature, scaled by the execution mode.",
        ),
        field(
            "max_tokens",
            Want::Opt(&Want::Num(&r::AGENT_MAX_TOKENS)),
            "Base output token limit, scaled by the execution mode.",
        ),
        field(
            "timeout_seconds",
            Want::Opt(&Want::Num(&r::AGENT_TIMEOUT)),
            "Base timeout, scaled by the execution mode (300 by default).",
        ),
        field(
            "max_input_tokens",
            Want::Opt(&Want::Num(&r::AGENT_MAX_INPUT)),
            "The model's context window (100000 by default).",
        ),
        field(
            "data_area_tokens",
            Want::Opt(&Want::Num(&r::AGENT_DATA_AREA)),
            "The part of the context window data may take.",
        ),
        field(
            "preferred_transfer",
            Want::Opt(&Want::OneOf(TRANSFER_MODES)),
            "How the agent likes mid-sized inputs handed to it.",
        ),
        field(
            "atom_type",
            Want::Opt(&Want::Id),
            "The type of the atoms the agent writes.",
        ),
        field(
            "tools",
            TOOLS,
            "Tools the agent may call by default (a task's own list overrides it).",
        ),
        field(
            "skills",
            SKILLS,
            "Skills offered to the agent by default: folders skills/NAME/ with a SKILL.md.",
        ),
    ],
    required: &[],
});

/// A task's `context`.
pub(super) const CONTEXT: Want = Want::Obj(&Obj {
    fields: &[
        field(
            "paper_info",
            Want::Opt(&Want::Obj(&Obj {
                fields: &[
                    field("paper_id", OPT_STR, ""),
                    field("title", OPT_STR, ""),
                    field("pdf_path", OPT_STR, ""),
                    field("arxiv_url", OPT_STR, ""),
                    field("focus_sections", OPT_STRS, ""),
                ],
                required: &[],
            })),
            "The paper the task is about.",
        ),
        field(
            "code_info",
            Want::Opt(&Want::Obj(&Obj {
                fields: &[
                    field("repo_url", OPT_STR, ""),
                    field("branch", OPT_STR, ""),
                    field("commit_hash", OPT_STR, ""),
                    field("focus_files", OPT_STRS, ""),
                    field("entry_point", OPT_STR, ""),
                ],
                required: &[],
            })),
            "The code the task is about.",
        ),
        field(
            "dependencies",
            Want::Opt(&Want::List(&Want::Obj(&Obj {
                fields: &[
                    field("task_id", Want::Str, ""),
                    field("output_ref", OPT_STR, ""),
                    field("required", Want::Opt(&Want::Bool), ""),
                ],
                required: &["task_id"],
            }))),
            "",
        ),
        field(
            "existing_assets",
            OPT_STRS,
            "Atom ids already known; the atoms of upstream tasks are added.",
        ),
    ],
    required: &[],
});

/// A task's `output_requirements`.
pub(super) const OUTPUT_REQUIREMENTS: Want = Want::Obj(&Obj {
    fields: &[
        field(
            "atom_type",
            Want::Opt(&Want::Id),
            "The type of the atoms wanted.",
        ),
        field(
            "required_fields",
            STRS,
            "Dotted paths every atom must have, such as content.claim.",
        ),
        field(
            "quality_threshold",
            Want::Opt(&Want::Named(GRADES)),
            "The lowest grade accepted; a worse answer is retried.",
        ),
        field(
            "max_atoms",
            Want::Opt(&Want::Num(&r::MAX_ATOMS)),
            "Most atoms of the answer.",
        ),
    ],
    required: &[],
});

/// A task's `transfer_config`.
pub(super) const TRANSFER_CONFIG: Want = Want::Obj(&Obj {
    fields: &[
        field(
            "mode",
            Want::Opt(&Want::OneOf(TRANSFER_MODES)),
            "How inputs are handed over; without it plexus chooses by size, data type and agent.",
        ),
        field(
            "max_tokens",
            Want::Opt(&Want::Num(&r::TRANSFER_MAX_TOKENS)),
            "The budget of a summary.",
        ),
        field(
            "priority_filter",
            Want::Opt(&Want::List(&Want::Num(&r::PRIORITY_LEVEL))),
            "Keep only atoms of these priority levels (1 claims … 4 citations, raw text).",
        ),
        field(
            "inline_preview_count",
            Want::Opt(&Want::Num(&r::INLINE_PREVIEW)),
            "Atoms shown inline in reference mode (3 by default).",
        ),
        field(
            "summary_strategy",
            Want::Opt(&Want::OneOf(&["extractive", "key_points", "truncate", "abstractive"])),
            "extractive (default), key_points, truncate or abstractive.",
        ),
        field(
            "summary_config",
            Want::Opt(&Want::Obj(&Obj {
                fields: &[
                    field(
                        "max_length",
                        Want::Opt(&Want::Num(&r::SUMMARY_LENGTH)),
                        "Tokens of the summary (else its ratio of the input).",
                    ),
                    field(
                        "preserve_fields",
                        Want::Opt(&STRS),
                        "Atom fields kept whole.",
                    ),
                    field(
                        "summarize_fields",
                        Want::Opt(&STRS),
                        "Atom fields summarised, each as FIELD_summary.",
                    ),
                    field(
                        "summary_ratio",
                        Want::Opt(&Want::Num(&r::SUMMARY_RATIO)),
                        "The summary's share of the input (0.3).",
                    ),
                ],
                required: &[],
            })),
            "How summaries are made: their size and the fields kept and summarised.",
        ),
        field(
            "batch_config",
            Want::Opt(&Want::Obj(&Obj {
                fields: &[
                    field("enabled", Want::Bool, ""),
                    field(
                        "batch_size_tokens",
                        Want::Num(&r::BATCH_SIZE),
                        "Tokens per batch.",
                    ),
                    field(
                        "overlap_tokens",
                        Want::Num(&r::BATCH_OVERLAP),
                        "Tokens repeated between batches.",
                    ),
                    field("max_batches", Want::Num(&r::MAX_BATCHES), "Most batches."),
                    field(
                        "aggregation_strategy",
                        Want::OneOf(&["merge", "vote", "latest", "weighted"]),
                        "How the batches' atoms are combined.",
                    ),
                    field(
                        "batch_priority",
                        Want::OneOf(&["chronological"]),
                        "The order the batches are sent in: the data's own (importance and random are not supported).",
                    ),
                ],
                required: &[],
            })),
            "How an input over 50000 tokens is split into batches.",
        ),
    ],
    required: &[],
});

/// A task's `fallback_config`.
pub(super) const FALLBACK_CONFIG: Want = Want::Obj(&Obj {
    fields: &[
        field(
            "strategy",
            STRATEGIES,
            "What to do when a reference cannot be resolved or an upstream task fails fatally.",
        ),
        field("default_value", Want::Any, "The value use_default uses."),
        field(
            "retry_count",
            Want::Num(&r::RETRY_COUNT),
            "Retries of retry.",
        ),
        field(
            "retry_delay_ms",
            Want::Num(&r::RETRY_DELAY),
            "Wait between retries.",
        ),
        field(
            "on_final_failure",
            Want::Opt(&STRATEGIES),
            "What to do once the retries are spent.",
        ),
    ],
    required: &["strategy"],
});

/// A task of the plan.
pub(super) const TASK: Obj = Obj {
    fields: &[
        field("task_id", Want::Id, "Unique in the plan."),
        field(
            "agent",
            Want::Id,
            "A built-in agent (full name, alias or short name) or an agent of `agents`, in any case.",
        ),
        field(
            "instruction",
            Want::Text,
            "What to do; placed in the prompt's instruction template.",
        ),
        field("context", CONTEXT, "Handed to the agent."),
        field("focus", Want::Str, "A short phrase of what to concentrate on."),
        field(
            "depends_on",
            STRS,
            "Task ids that must finish first (they must exist and form no cycle).",
        ),
        field(
            "data_references",
            Want::Opt(&Want::List(&Want::Tagged(&REFERENCE))),
            "Inputs resolved just before the task is sent.",
        ),
        field(
            "transfer_config",
            TRANSFER_CONFIG,
            "How the inputs are handed over.",
        ),
        field(
            "fallback_config",
            FALLBACK_CONFIG,
            "What to do when a reference cannot be resolved, or an upstream task fails fatally.",
        ),
        field(
            "output_requirements",
            OUTPUT_REQUIREMENTS,
            "What the answer must hold.",
        ),
        field(
            "constraints",
            CONSTRAINTS,
            "Overrides of the computed timeout, max_tokens and temperature.",
        ),
        field(
            "tools",
            TOOLS,
            "Tools the agent may call; overrides the agent's own list, [] included.",
        ),
        field(
            "skills",
            SKILLS,
            "Skills offered to the agent; overrides the agent's own list.",
        ),
        field(
            "max_steps",
            MAX_STEPS,
            "Most model calls of the tool-using loop (12 by default).",
        ),
        field(
            "token_budget",
            TOKEN_BUDGET,
            "Most tokens the tool-using loop may spend over every step.",
        ),
        field(
            "output_format",
            TASK_OUTPUT_FORMAT,
            "atoms (the protocol's AgentResponse, by default) or text: the model's plain answer becomes one text atom, and `$.output` of an eval's checks.",
        ),
    ],
    required: &["task_id", "agent", "instruction"],
};

/// The forms a task's answer may take.
pub(super) const OUTPUT_FORMATS: &[&str] = &["atoms", "text"];

/// A task's `output_format`.
pub(super) const TASK_OUTPUT_FORMAT: Want = Want::Opt(&Want::OneOf(OUTPUT_FORMATS));

/// The tool-using fields of a task (among [`TASK`]'s), each checked at its own name.
pub(super) const REACT_FIELDS: &[&str] = &["tools", "skills", "max_steps", "token_budget"];

/// A whole plan.
pub(super) const PLAN: Obj = Obj {
    fields: &[
        field(
            "$schema",
            OPT_STR,
            "The JSON Schema of this file, for editors; plexus ignores it.",
        ),
        field(
            "plan_id",
            Want::Id,
            "The plan's name, stored with every run.",
        ),
        field(
            "execution_mode",
            Want::OneOf(&ExecutionMode::NAMES),
            "Scales every task's temperature, token limit and timeout (Deep_Internalization when absent).",
        ),
        field("description", OPT_STR, "Free text."),
        field(
            "agents",
            Want::Map(&AGENT),
            "New agents, or changes to the built-in ones, by name. An entry that is not a built-in agent must be used by a task.",
        ),
        field(
            "tasks",
            Want::NonEmptyList(&Want::Obj(&TASK)),
            "The tasks; their depends_on form a DAG.",
        ),
    ],
    required: &["plan_id", "tasks"],
};

/// The field `name` of a task.
pub(super) fn task_field(name: &str) -> Option<&'static Field> {
    let task: &'static Obj = &TASK;
    task.get(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::protocol::refs::QUERYABLE;
    use crate::base::protocol::Grade;

    #[test]
    fn the_named_values_agree_with_the_checks_that_refuse_the_others() {
        for g in GRADES {
            assert!(Grade::parse(g).is_some(), "{g}");
        }
        for g in [Grade::A, Grade::B, Grade::C, Grade::D] {
            assert!(GRADES.contains(&g.as_str()));
        }
        let tables: Vec<&str> = QUERYABLE.iter().map(|(t, _)| *t).collect();
        assert_eq!(super::super::ref_schema::TABLES, tables.as_slice());
        let skill = fancy_regex::Regex::new(SKILL_NAME).expect("the pattern parses");
        let long = "a".repeat(101);
        for name in [
            "lit-review",
            "a.b_c",
            "x",
            "..x",
            "é",
            ".",
            "..",
            "",
            "a/b",
            "a b",
            &long,
        ] {
            assert_eq!(
                skill.is_match(name).unwrap_or(false),
                crate::model::plan::react::check_skill(name).is_ok(),
                "{name:?}"
            );
        }
    }
}
