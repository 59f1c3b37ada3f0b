//! Planning a task's context: each resolved input gets its transfer mode (§5), its
//! payload (full data, a summary, or a reference with stats and a preview), then the
//! whole prompt (system prompt, instruction, the context's lists and these payloads) is
//! trimmed by priority to the agent's effective data limit (§6.3), giving the payloads
//! and list entries sent and the `context_management` report (§7.2).

use serde_json::{json, Value};

use super::payload::{
    atoms_of, count, reference_payload, retain_atoms_by_priority, summarize, summary_method,
};
use super::prompt::{PromptList, PromptParts};
use super::select::{choose, DataType, Rule};
pub use super::settings::TransferSettings;
use super::trim::{atom_priority, trim, Decision, Item, Part};
pub use crate::base::protocol::context::InputPlan;
use crate::base::protocol::context::{ContextManagement, TransferMode};
use crate::base::tokens::TokenCounter;

/// A resolved input before planning.
#[derive(Debug, Clone, PartialEq)]
pub struct Input {
    /// Name in the report (`task_output:TASK_A`, `file:papers/x.md`, `db_query:papers`).
    pub name: String,
    /// The data.
    pub data: Value,
    /// Priority 1–4.
    pub priority: u8,
    /// What the data is.
    pub data_type: DataType,
    /// Mode named by the task's transfer_config.
    pub configured: Option<TransferMode>,
    /// The reference itself, passed on in reference mode.
    pub reference: Value,
    /// Tokens of `data` when already known (counted when it was produced); counted here
    /// otherwise.
    pub tokens: Option<u64>,
}

/// A planned context.
#[derive(Debug, Clone, PartialEq)]
pub struct Planned {
    /// Payloads to put in the request (omitted inputs are left out).
    pub payloads: Vec<Value>,
    /// Per input, then per list of the prompt.
    pub inputs: Vec<InputPlan>,
    /// Entries kept of each list of the prompt (a head of it), in the order given.
    pub lists: Vec<usize>,
    /// Tokens of the whole prompt as planned: system prompt, instruction, lists and
    /// payloads after trimming.
    pub prompt_tokens: u64,
    /// The §7.2 report.
    pub report: ContextManagement,
}

/// Plans the context of `task_id` for `agent` within `limit` data tokens, for a prompt
/// whose only other parts are the system prompt and the instruction.
#[allow(clippy::too_many_arguments)]
pub fn plan(
    task_id: &str,
    agent: &str,
    limit: u64,
    system_tokens: u64,
    instruction_tokens: u64,
    inputs: &[Input],
    settings: &TransferSettings,
    c: &TokenCounter,
) -> Planned {
    let prompt = PromptParts {
        system_tokens,
        instruction_tokens,
        lists: Vec::new(),
    };
    plan_prompt(task_id, agent, limit, &prompt, inputs, settings, c)
}

/// Plans the context of `task_id` for `agent` within `limit` tokens: the `inputs` and the
/// `prompt`'s own parts are trimmed together.
pub fn plan_prompt(
    task_id: &str,
    agent: &str,
    limit: u64,
    prompt: &PromptParts,
    inputs: &[Input],
    settings: &TransferSettings,
    c: &TokenCounter,
) -> Planned {
    // 1. Modes and payloads.
    let (payloads, mut plans): (Vec<Value>, Vec<InputPlan>) = inputs
        .iter()
        .map(|input| payload_of(input, agent, settings, c))
        .unzip();
    // 2. Trimming over what would be sent, with the system prompt and instructions.
    let mut items = payload_items(&payloads, inputs, c);
    // The system prompt and the instruction are critical and go whole (§6.3 table).
    for (name, tokens) in [
        ("system_prompt", prompt.system_tokens),
        ("task_instructions", prompt.instruction_tokens),
    ] {
        items.push(Item {
            name: name.into(),
            priority: 1,
            tokens,
            parts: Vec::new(),
            compressible: false,
            truncatable: false,
        });
    }
    let first_list = items.len();
    items.extend(prompt.lists.iter().map(|l| l.item()));
    let trimmed = trim(task_id, &items, limit);
    // 3. Apply the decisions.
    let mut out = Vec::with_capacity(payloads.len());
    for (i, p) in payloads.into_iter().enumerate() {
        let d = trimmed.decisions[i];
        if let Some(p) = apply(d, p, &inputs[i], &mut plans[i], settings, c) {
            out.push(p);
        }
    }
    // 4. The lists keep the head their decision leaves room for; the report gives what
    // that head takes.
    let mut report = trimmed.report;
    let mut lists = Vec::with_capacity(prompt.lists.len());
    for (k, l) in prompt.lists.iter().enumerate() {
        let d = trimmed.decisions[first_list + k];
        let (kept, plan) = plan_list(l, d, &items[first_list + k], &mut report);
        plans.push(plan);
        lists.push(kept);
    }
    let prompt_tokens = prompt.system_tokens
        + prompt.instruction_tokens
        + plans.iter().map(|p| p.tokens_after).sum::<u64>();
    Planned {
        payloads: out,
        inputs: plans,
        lists,
        prompt_tokens,
        report,
    }
}

/// One input's transfer mode for `agent` and its payload in that mode, with its plan
/// before trimming.
fn payload_of(
    input: &Input,
    agent: &str,
    settings: &TransferSettings,
    c: &TokenCounter,
) -> (Value, InputPlan) {
    let data = settings.filtered(&input.data);
    let filtered = matches!(data, std::borrow::Cow::Owned(_));
    let tokens = match input.tokens {
        Some(t) if !filtered => t,
        _ => count(&data, c),
    };
    let mut choice = choose(
        tokens,
        agent,
        input.data_type,
        input.configured,
        settings.full_under,
    );
    // Whole over the task's cap: summarised within it.
    if choice.mode == TransferMode::Full && settings.max_tokens.is_some_and(|m| tokens > m) {
        choice.mode = TransferMode::Summary;
        choice.rule = Rule::Configured;
    }
    let payload = match choice.mode {
        TransferMode::Full => {
            json!({"source": input.name, "transfer_mode": "full", "data": data})
        }
        TransferMode::Summary => {
            let target = settings.summary_target(tokens);
            json!({"source": input.name, "transfer_mode": "summary",
                   "summary_config": {"max_length": target, "preserve_fields": settings.fields.preserve,
                                      "summarize_fields": settings.fields.summarize, "summary_ratio": settings.summary_ratio,
                                      "strategy": summary_method(input.data_type, settings.strategy)},
                   "data": summarize(&data, input.data_type, target, settings.strategy, &settings.fields, c)})
        }
        TransferMode::Reference => reference_payload(
            &input.name,
            &data,
            &input.reference,
            tokens,
            choice.batched,
            settings.preview_count,
        ),
    };
    let plan = InputPlan {
        name: input.name.clone(),
        tokens,
        mode: choice.mode,
        batched: choice.batched,
        rule: choice.rule,
        priority: input.priority,
        action: "keep".into(),
        tokens_after: 0,
    };
    (payload, plan)
}

/// The trimming items of the payloads: a full payload of atoms has each atom as a part
/// of its type's priority.
fn payload_items(payloads: &[Value], inputs: &[Input], c: &TokenCounter) -> Vec<Item> {
    payloads
        .iter()
        .zip(inputs)
        .map(|(p, input)| {
            let parts = match (p["transfer_mode"].as_str(), atoms_of(&p["data"])) {
                (Some("full"), Some(atoms)) => atoms
                    .iter()
                    .map(|a| Part {
                        priority: atom_priority(
                            a.get("atom_type").and_then(Value::as_str).unwrap_or(""),
                        ),
                        tokens: count(a, c),
                    })
                    .collect(),
                _ => Vec::new(),
            };
            Item {
                name: input.name.clone(),
                priority: input.priority,
                tokens: count(p, c),
                parts,
                compressible: true,
                truncatable: false,
            }
        })
        .collect()
}

/// Applies trimming decision `d` to `input`'s payload `p` and notes it in the input's
/// plan; `None` when the input is left out.
fn apply(
    d: Decision,
    mut p: Value,
    input: &Input,
    plan: &mut InputPlan,
    settings: &TransferSettings,
    c: &TokenCounter,
) -> Option<Value> {
    plan.action = match d {
        Decision::Keep => "keep",
        Decision::FilterByPriority { .. } => "filter_by_priority",
        Decision::Summarize { .. } => "summarize",
        Decision::Omit => "omit",
    }
    .into();
    match d {
        Decision::Keep => {}
        Decision::FilterByPriority { max_priority, .. } => {
            retain_atoms_by_priority(&mut p["data"], |level| level <= max_priority);
            p["priority_filter"] = json!(format!("priority <= {max_priority}"));
        }
        Decision::Summarize { tokens } => {
            p = json!({"source": input.name, "transfer_mode": "summary",
                       "summary_config": {"max_length": tokens, "summary_ratio": tokens as f64 / plan.tokens.max(1) as f64,
                                          "strategy": summary_method(input.data_type, settings.strategy)},
                       "data": summarize(&settings.filtered(&input.data), input.data_type, tokens, settings.strategy, &settings.fields, c)});
            plan.mode = TransferMode::Summary;
        }
        Decision::Omit => {
            plan.tokens_after = 0;
            return None;
        }
    }
    plan.tokens_after = count(&p, c);
    Some(p)
}

/// The entries a prompt list keeps under decision `d` (its trimming item `item`), and
/// its plan; the report's action for it says what that head takes.
fn plan_list(
    l: &PromptList,
    d: Decision,
    item: &Item,
    report: &mut ContextManagement,
) -> (usize, InputPlan) {
    let planned = d.tokens_after(item);
    let kept = match d {
        Decision::Omit => 0,
        _ => l.kept_within(planned),
    };
    let after = l.tokens_of(kept);
    let action = match (d, kept) {
        (Decision::Keep, _) => "keep",
        (_, 0) => "omit",
        _ => "truncate",
    };
    if let Some(a) = report
        .resolution
        .actions
        .iter_mut()
        .find(|a| a.data == l.name)
    {
        a.action = action.into();
        a.reduced_tokens = after;
        let r = &mut report.resolution;
        r.final_tokens = r.final_tokens.saturating_sub(planned.saturating_sub(after));
        r.within_limit = r.final_tokens <= report.context_limit;
    }
    let plan = InputPlan {
        name: l.name.clone(),
        tokens: l.tokens(),
        mode: if action == "truncate" {
            TransferMode::Summary
        } else {
            TransferMode::Full
        },
        batched: false,
        rule: Rule::PromptPart,
        priority: l.priority,
        action: action.into(),
        tokens_after: after,
    };
    (kept, plan)
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    fn preview(n: usize) -> TransferSettings {
        TransferSettings {
            preview_count: n,
            ..TransferSettings::default()
        }
    }

    pub(crate) fn atoms(n: usize, words: usize) -> Value {
        let text = "the reverse process removes a little noise at each step ".repeat(words);
        json!({"atoms": (0..n).map(|i| json!({
            "asset_id": format!("A{i}"),
            "atom_type": if i % 4 == 3 { "background" } else { "claim" },
            "confidence": 0.9,
            "content": {"text": text},
        })).collect::<Vec<_>>()})
    }

    pub(crate) fn input(name: &str, data: Value, priority: u8) -> Input {
        Input {
            name: name.into(),
            data,
            priority,
            data_type: DataType::Atoms,
            configured: None,
            reference: json!({"ref_type": "task_output", "task_id": name}),
            tokens: None,
        }
    }

    #[test]
    fn small_inputs_pass_whole_and_the_report_says_so() {
        let c = TokenCounter::default();
        let p = plan(
            "t",
            "Strategic_Critic",
            82_800,
            500,
            200,
            &[input("a", atoms(2, 3), 1)],
            &preview(3),
            &c,
        );
        assert_eq!(p.inputs[0].mode, TransferMode::Full);
        assert_eq!(p.payloads[0]["transfer_mode"], "full");
        assert_eq!(p.report.resolution.strategy, "none");
        assert!(p.report.resolution.within_limit);
        assert_eq!(p.report.total_input_data.len(), 3);
    }

    #[test]
    fn the_critic_gets_a_summary_and_the_vault_a_reference() {
        let c = TokenCounter::default();
        let data = atoms(40, 5); // a few thousand tokens
        let p = plan(
            "t",
            "Strategic_Critic",
            82_800,
            500,
            200,
            &[input("a", data.clone(), 1)],
            &preview(3),
            &c,
        );
        assert_eq!(p.inputs[0].mode, TransferMode::Summary);
        assert!(
            p.inputs[0].tokens_after < p.inputs[0].tokens,
            "{:?}",
            p.inputs[0]
        );
        assert_eq!(p.payloads[0]["data"]["total_atoms"], 40);
        let p = plan(
            "t",
            "Knowledge_Vault",
            82_800,
            500,
            200,
            &[input("a", data, 1)],
            &preview(5),
            &c,
        );
        assert_eq!(p.inputs[0].mode, TransferMode::Reference);
        let r = &p.payloads[0];
        assert_eq!(r["reference"]["data_stats"]["total_atoms"], 40);
        assert_eq!(r["inline_preview"]["preview_count"], 5);
        assert_eq!(r["reference"]["available_paths"], json!(["$.atoms"]));
    }

    #[test]
    fn the_prompt_lists_are_trimmed_with_the_inputs() {
        use super::super::prompt::{PromptList, DEPENDENCIES_PRIORITY, EXISTING_ASSETS_PRIORITY};
        let c = TokenCounter::default();
        let prompt = PromptParts {
            system_tokens: 1_000,
            instruction_tokens: 500,
            lists: vec![
                PromptList {
                    name: "existing_assets".into(),
                    priority: EXISTING_ASSETS_PRIORITY,
                    entries: vec![8; 2_000],
                },
                PromptList {
                    name: "dependencies".into(),
                    priority: DEPENDENCIES_PRIORITY,
                    entries: vec![20; 2_000],
                },
            ],
        };
        let p = plan_prompt(
            "t",
            "Knowledge_Vault",
            10_000,
            &prompt,
            &[input("task_output:U", atoms(2, 3), 1)],
            &preview(3),
            &c,
        );
        // 80 % of the limit, less the critical parts, is left for the assets.
        let room = 8_000 - 1_500 - p.inputs[0].tokens_after;
        let kept = ((room - 24) / 8) as usize;
        assert_eq!(p.lists, vec![kept, 0]);
        let names: Vec<(&str, &str)> = p
            .inputs
            .iter()
            .map(|i| (i.name.as_str(), i.action.as_str()))
            .collect();
        assert_eq!(
            names,
            vec![
                ("task_output:U", "keep"),
                ("existing_assets", "truncate"),
                ("dependencies", "omit")
            ]
        );
        assert_eq!(p.inputs[1].mode, TransferMode::Summary);
        assert_eq!(p.inputs[1].rule, Rule::PromptPart);
        let r = &p.report.resolution;
        assert!(r.within_limit, "{r:?}");
        assert_eq!(r.final_tokens, p.prompt_tokens);
        assert_eq!(
            p.prompt_tokens,
            1_500 + p.inputs.iter().map(|i| i.tokens_after).sum::<u64>()
        );
        let a = r
            .actions
            .iter()
            .find(|a| a.data == "existing_assets")
            .expect("an action");
        assert_eq!(a.reduced_tokens, p.inputs[1].tokens_after);
    }

    #[test]
    fn over_the_limit_inputs_are_trimmed_and_reported() {
        let c = TokenCounter::default();
        // A scholar output that must go whole for a Scholar agent, bigger than the limit.
        let big = atoms(60, 30);
        let mut inp = input("task_output:S", big, 1);
        inp.configured = Some(TransferMode::Full);
        let extra = input("db_query:knowledge_atoms", atoms(20, 30), 2);
        let p = plan(
            "t",
            "Scholar_Internalizer",
            20_000,
            1_000,
            500,
            &[inp, extra],
            &preview(3),
            &c,
        );
        let r = &p.report;
        assert!(r.total_tokens > 20_000, "{}", r.total_tokens);
        assert_eq!(r.resolution.strategy, "priority_based_trimming");
        assert!(!r.resolution.actions.is_empty());
        let sent: u64 = p.inputs.iter().map(|i| i.tokens_after).sum::<u64>() + 1_500;
        assert!(r.resolution.within_limit, "{r:?}");
        // The planned figures are the tokens actually sent, within a small framing margin.
        assert!(sent <= 20_000 + 600, "sent {sent}");
        assert_eq!(p.inputs[0].action, "filter_by_priority");
        let kept = p.payloads[0]["data"]["atoms"]
            .as_array()
            .map_or(0, Vec::len);
        assert_eq!(kept, 45, "background atoms dropped");
    }
}
