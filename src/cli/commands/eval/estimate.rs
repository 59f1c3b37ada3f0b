//! `plexus eval SPEC --estimate`: the tokens and money an eval would use, printed
//! before anything runs (nothing is written, no model is called).

use std::process::ExitCode;

use color_eyre::eyre::Result;
use serde_json::json;

use super::estimate_count::{estimate, Calls, Estimate};
use super::prepare::{copies_plan, Prepared};
use crate::base::cost::{CallTokens, Price};
use crate::base::tokens::TokenCounter;
use crate::cli::launch::profile::{price_of, priced_model, profile_named};
use crate::cli::launch::Globals;
use crate::features::eval::read::scoring_of;
use crate::features::eval::spec::Scoring;

/// The cost of `c`: its prompts alone, and with every answer at its most.
fn range(c: &Calls, extra_in: u64, price: Option<Price>) -> Option<(f64, f64)> {
    let p = price?;
    let low = p.cost(CallTokens {
        input: c.prompt_tokens,
        cached_input: 0,
        output: 0,
    });
    let high = p.cost(CallTokens {
        input: c.prompt_tokens + extra_in,
        cached_input: 0,
        output: c.max_output_tokens,
    });
    Some((low, high))
}

fn money(r: Option<(f64, f64)>, model: &str) -> String {
    match r {
        Some((lo, hi)) => format!(
            "{} to {}",
            crate::base::cost::usd(lo),
            crate::base::cost::usd(hi)
        ),
        None => format!("no price for `{model}` in the config ([prices.\"{model}\"])"),
    }
}

/// Prints the estimate of prepared eval `p` run on profile `provider`.
pub fn print_estimate(
    g: &Globals,
    p: &Prepared,
    provider: &str,
    json_out: bool,
) -> Result<ExitCode> {
    let scoring = scoring_of(&p.row)?;
    let refs: Vec<&crate::features::eval::dataset::Sample> = p.samples.iter().collect();
    let plan = copies_plan(
        &p.plan,
        &refs,
        p.spec.epochs,
        &p.spec.plan.display().to_string(),
    )?;
    let profile = profile_named(g, provider)?;
    let model = priced_model(&profile).to_string();
    let counter = TokenCounter::for_model(&profile.model);
    let samples: Vec<(String, serde_json::Value, serde_json::Value)> = p
        .samples
        .iter()
        .map(|s| {
            (
                s.id.clone(),
                s.input.clone(),
                s.expected.clone().unwrap_or(serde_json::Value::Null),
            )
        })
        .collect();
    let min_temperature = crate::run::engine::EngineConfig::default().min_temperature;
    let e = estimate(&plan, &scoring, &samples, &counter, min_temperature);
    let costs = Costs {
        model,
        plan: range(&e.plan, 0, price_of(g, &profile)?),
        judges: judge_costs(g, &scoring, &e, provider)?,
    };
    if json_out {
        print_json(p, &e, &costs)?;
    } else {
        print_text(p, &e, &costs);
    }
    Ok(ExitCode::SUCCESS)
}

/// The estimate of one judge check.
struct JudgeCost {
    /// The check's name.
    name: String,
    calls: Calls,
    /// Tokens of the output judged, at most, added to each prompt.
    added: u64,
    /// The model priced.
    model: String,
    cost: Option<(f64, f64)>,
}

/// What the eval's calls would cost.
struct Costs {
    /// The model of the eval's provider, as priced.
    model: String,
    /// The plan's calls.
    plan: Option<(f64, f64)>,
    judges: Vec<JudgeCost>,
}

/// Each judge check's price: its first judge's (the eval's provider when it names none).
fn judge_costs(
    g: &Globals,
    scoring: &Scoring,
    e: &Estimate,
    provider: &str,
) -> Result<Vec<JudgeCost>> {
    let mut judges = Vec::new();
    for (name, calls, added) in &e.judges {
        let first = scoring
            .checks
            .iter()
            .find(|c| &c.name == name)
            .and_then(|c| c.judge()?.judges.first().cloned())
            .unwrap_or_else(|| provider.to_string());
        let jp = profile_named(g, &first)?;
        let cost = range(calls, *added, price_of(g, &jp)?);
        judges.push(JudgeCost {
            name: name.clone(),
            calls: calls.clone(),
            added: *added,
            model: priced_model(&jp).to_string(),
            cost,
        });
    }
    Ok(judges)
}

/// Prints the estimate as one JSON document.
fn print_json(p: &Prepared, e: &Estimate, costs: &Costs) -> Result<()> {
    crate::rawln!(
        "{}",
        serde_json::to_string_pretty(&json!({
            "samples": p.samples.len(),
            "epochs": p.spec.epochs,
            "model": costs.model,
            "plan": e.plan,
            "plan_cost_usd": costs.plan.map(|(lo, hi)| json!({"prompts_only": lo, "at_most": hi})),
            "tasks_reading_upstream": e.reading_upstream,
            "tasks_using_tools": e.using_tools,
            "too_large": e.too_large,
            "judges": costs.judges.iter().map(|j| json!({
                "check": j.name, "model": j.model, "calls": j.calls, "output_judged_at_most_tokens": j.added,
                "cost_usd": j.cost.map(|(lo, hi)| json!({"prompts_only": lo, "at_most": hi})),
            })).collect::<Vec<_>>(),
        }))?
    );
    Ok(())
}

/// Prints the estimate as text: the plan's calls, what was not counted, each judge.
fn print_text(p: &Prepared, e: &Estimate, costs: &Costs) {
    let model = &costs.model;
    crate::outln!(
        "estimate of eval {}: {} samples × {} epoch(s) = {} call(s) of `{model}` (first attempts; retries not counted)",
        p.spec.name,
        p.samples.len(),
        p.spec.epochs,
        e.plan.calls
    );
    crate::outln!(
        "  prompts: {} tokens, counted one by one · answers: at most {} tokens (each call's max_tokens)",
        e.plan.prompt_tokens,
        e.plan.max_output_tokens
    );
    crate::outln!("  cost: {}", money(costs.plan, model));
    print_too_large(e);
    if e.reading_upstream > 0 {
        crate::outln!(
            "  not counted: what {} task(s) read from other tasks or data references (known once they run)",
            e.reading_upstream
        );
    }
    if e.using_tools > 0 {
        crate::outln!(
            "  not counted: the tool schemas and results of {} task(s) that use tools",
            e.using_tools
        );
    }
    for j in &costs.judges {
        let (name, c, m) = (&j.name, &j.calls, &j.model);
        crate::outln!(
            "judge `{name}`: {} call(s) of `{m}` · prompts {} tokens, plus the output judged (at most {} tokens) · answers at most {} tokens",
            c.calls,
            c.prompt_tokens,
            j.added,
            c.max_output_tokens
        );
        crate::outln!(
            "  cost: {} (answers already in the judges' cache cost nothing)",
            money(j.cost, m)
        );
    }
    crate::outln!("nothing was run; drop --estimate to run it");
}

/// Prints the calls that would not be sent, their prompts over the input limit (the
/// first few of them; nothing when there are none).
fn print_too_large(e: &Estimate) {
    if e.too_large.is_empty() {
        return;
    }
    crate::outln!(
        "  would not be sent: {} call(s) whose prompt is over the agent's input limit (their samples are errors):",
        e.too_large.len()
    );
    const SHOWN: usize = 10;
    for t in e.too_large.iter().take(SHOWN) {
        crate::outln!(
            "    {}: {} tokens, limit {}",
            crate::base::text::sanitize::sanitize(&t.task_id),
            t.prompt_tokens,
            t.limit
        );
    }
    if e.too_large.len() > SHOWN {
        crate::outln!(
            "    and {} more (--json lists them all)",
            e.too_large.len() - SHOWN
        );
    }
}
