//! `plexus runs` and `plexus show RUN`: what is in the database, as tables or JSON.

pub mod debate;
pub mod loop_report;
pub mod loops;
pub mod tool_stats;

use std::collections::BTreeMap;

use color_eyre::eyre::Result;
use serde_json::json;

use crate::base::table::{Col, TextTable};
use crate::data::store::{Store, StoreError};
use crate::model::event::EngineEvent;

/// Prints the runs of the database at `db`. A database that does not exist yet (or is
/// being created by another process this instant) has no runs; nothing is created.
pub fn print_runs_at(db: &std::path::Path, json_out: bool) -> Result<()> {
    match Store::open(db) {
        Ok(store) => print_runs(&store, json_out),
        Err(StoreError::Missing(_) | StoreError::NotPlexus { empty: true, .. }) => {
            if json_out {
                crate::rawln!("[]");
            } else {
                crate::outln!("no runs: there is no database at {} yet", db.display());
            }
            Ok(())
        }
        Err(e) => Err(e.into()),
    }
}

/// Prints the runs table (or JSON).
pub fn print_runs(store: &Store, json_out: bool) -> Result<()> {
    let runs = store.list_runs()?;
    if json_out {
        crate::rawln!("{}", serde_json::to_string_pretty(&runs)?);
        return Ok(());
    }
    if runs.is_empty() {
        crate::outln!("no runs in {}", store.path().display());
        return Ok(());
    }
    let mut table = TextTable::new(&[
        Col::left("RUN"),
        Col::left("STATUS"),
        Col::left("PLAN").max(32),
        Col::right("TASKS"),
        Col::right("EVENTS"),
        Col::right("ATOMS"),
        Col::right("COST"),
        Col::left("CREATED"),
        Col::left("PROVIDER"),
    ]);
    for r in runs {
        // A debate names its question (kept as the run's plan source).
        let plan = if crate::features::debate::is_debate(&r.plan_id) {
            r.plan_source
        } else {
            r.plan_id
        };
        table.row([
            r.run_id,
            r.status,
            plan,
            r.task_count.to_string(),
            r.events.to_string(),
            r.atoms.to_string(),
            r.spend.label(),
            r.created_at,
            r.provider,
        ]);
    }
    table.print();
    Ok(())
}

/// Prints one run: header, tasks, tokens per agent, event counts.
pub fn print_run(store: &Store, id: &str, json_out: bool) -> Result<()> {
    let run = store.run(id)?;
    let tasks = store.tasks(&run.run_id)?;
    let invocations = store.invocations(&run.run_id)?;
    let mut per_agent: BTreeMap<String, (u64, i64, i64)> = BTreeMap::new();
    for inv in &invocations {
        let e = per_agent.entry(inv.agent.clone()).or_default();
        e.0 += 1;
        e.1 += inv.prompt_tokens;
        e.2 += inv.output_tokens.unwrap_or(0);
    }
    let mut loops = loops::Loops::default();
    let (last, _) = store.last_event(&run.run_id)?;
    // The events by kind come from the run's state, read from its stored snapshot (only
    // the events after it are folded); the tool loops, when the run has any, from the
    // events of their kinds alone.
    let run_key: std::sync::Arc<str> = std::sync::Arc::from(run.run_id.as_str());
    let state = crate::data::replay::stored::open_at(store, &run_key, last)?.state;
    let undecodable = last.saturating_sub(state.events);
    let kinds = state.kinds;
    if loops::KINDS.iter().any(|k| kinds.contains_key(*k)) {
        let mut from = 1;
        while from <= last {
            let to = from + 20_000;
            for e in store.events_of_kinds(&run.run_id, &loops::KINDS, from, to)? {
                if let Ok(ev) = &e.event {
                    loops.fold(&e, ev);
                }
            }
            from = to + 1;
        }
    }
    // A debate keeps its model calls as events, not invocations: its tokens come from
    // them (output tokens only; the calls' prompts are not counted).
    let (debate, debate_tokens) = if crate::features::debate::is_debate(&run.plan_id) {
        let events = crate::features::debate::replay::load_events(store, &run.run_id)?;
        (
            Some(crate::model::state::debate::DebateState::from_stored(
                &events,
                &run.status,
            )),
            Some(debate::tokens_per_agent(&events)),
        )
    } else {
        (None, None)
    };
    let spend = store.agent_spend(&run.run_id)?;
    let cost_of = |a: &str| spend.get(a).copied().unwrap_or_default();
    let tokens_json: Vec<serde_json::Value> = match &debate_tokens {
        Some(t) => t
            .iter()
            .map(|(a, (n, o))| json!({"agent": a, "invocations": n, "output_tokens": o}))
            .collect(),
        None => per_agent
            .iter()
            .map(|(a, (n, p, o))| {
                let c = cost_of(a);
                json!({"agent": a, "invocations": n, "prompt_tokens": p, "output_tokens": o,
                       "cost_usd": c.known(), "unpriced_calls": c.unpriced})
            })
            .collect(),
    };
    let waiting = crate::cli::launch::next_steps::waiting_tasks(store, &run.run_id)?;
    let loop_reports = loops.into_reports();
    let tool_metrics = loops::RunToolMetrics::from_loops(&loop_reports);
    if json_out {
        let v = json!({
            "debate_session": debate.as_ref().map(|d| d.session_state()),
            "multi_agent_session": debate
                .as_ref()
                .map(|d| crate::model::state::debate_front::front_end_json(d, &run.run_id)),
            "run": run,
            "tasks": tasks,
            "awaiting_review": waiting,
            "invocations": invocations,
            "tokens_per_agent": tokens_json,
            "events_by_kind": kinds,
            "undecodable_events": undecodable,
            "tool_loops": loop_reports,
            "tool_metrics": tool_metrics,
        });
        crate::rawln!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    crate::outln!("run       {}", run.run_id);
    crate::outln!("plan      {} ({})", run.plan_id, run.plan_source);
    crate::outln!("provider  {}", run.provider);
    crate::outln!("status    {}", run.status);
    crate::outln!(
        "cost      {}{}",
        run.spend.label(),
        if run.spend.unpriced > 0 {
            format!(
                " ({} call(s) without a price for their model)",
                run.spend.unpriced
            )
        } else {
            String::new()
        }
    );
    crate::outln!(
        "created   {}{}",
        run.created_at,
        run.finished_at
            .as_ref()
            .map(|f| format!("   finished {f}"))
            .unwrap_or_default()
    );
    crate::outln!(
        "events    {last}{}",
        if undecodable > 0 {
            format!(" ({undecodable} undecodable)")
        } else {
            String::new()
        }
    );
    if let Some(d) = &debate {
        for line in debate::summary_lines(d) {
            crate::outln!("{line}");
        }
    }
    crate::outln!();
    let mut table = TextTable::new(&[
        Col::left("TASK").max(40),
        Col::left("AGENT").max(32),
        Col::left("STATUS"),
        Col::right("ATTEMPTS"),
        Col::right("ATOMS"),
        Col::left("ERROR"),
    ]);
    for t in &tasks {
        table.row([
            t.task_id.clone(),
            t.agent.clone(),
            t.status.clone(),
            t.attempts.to_string(),
            t.atoms.to_string(),
            match (&t.error_code, waiting.contains(&t.task_id)) {
                (Some(code), true) => format!("{code}, awaiting review"),
                (code, _) => code.clone().unwrap_or_default(),
            },
        ]);
    }
    table.print();
    print_lost_calls(&invocations);
    let next = crate::cli::launch::next_steps::review_lines(store.path(), &run.run_id, &waiting);
    if !next.is_empty() {
        crate::outln!();
        for line in next {
            crate::outln!("{line}");
        }
    }
    crate::outln!();
    match &debate_tokens {
        Some(t) => {
            let mut table = TextTable::new(&[
                Col::left("AGENT").max(32),
                Col::right("MODEL CALLS"),
                Col::right("OUTPUT TOK"),
            ]);
            for (a, (n, o)) in t {
                table.row([a.clone(), n.to_string(), o.to_string()]);
            }
            table.print();
        }
        None => {
            let mut table = TextTable::new(&[
                Col::left("AGENT").max(32),
                Col::right("INVOCATIONS"),
                Col::right("PROMPT TOK"),
                Col::right("OUTPUT TOK"),
                Col::right("COST"),
                Col::right("PER CALL"),
            ]);
            for (a, (n, p, o)) in &per_agent {
                let c = cost_of(a);
                let per_call = match c.known() {
                    Some(usd) if *n > 0 => crate::base::cost::usd(usd / *n as f64),
                    _ => crate::base::cost::NO_PRICE.to_string(),
                };
                table.row([
                    a.clone(),
                    n.to_string(),
                    p.to_string(),
                    o.to_string(),
                    c.label(),
                    per_call,
                ]);
            }
            table.print();
        }
    }
    loop_report::print(&loop_reports, &tool_metrics);
    crate::outln!();
    crate::outln!("events by kind");
    let mut table = TextTable::new(&[Col::left("KIND"), Col::right("EVENTS")])
        .without_header()
        .indent(2);
    for k in EngineEvent::KINDS {
        if let Some(n) = kinds.get(*k) {
            table.row([k.to_string(), n.to_string()]);
        }
    }
    table.print();
    Ok(())
}

/// The calls that were in flight when a process running the run died, closed as lost by
/// the resume that found them (nothing when there were none).
fn print_lost_calls(invocations: &[crate::data::store::InvocationRow]) {
    let lost: Vec<_> = invocations
        .iter()
        .filter(|i| i.status.as_deref() == Some("lost"))
        .collect();
    if lost.is_empty() {
        return;
    }
    crate::outln!();
    crate::outln!(
        "calls lost in a crash ({}): in flight when the process stopped, closed on resume; each task ran again",
        lost.len()
    );
    let mut table = TextTable::new(&[
        Col::left("INVOCATION"),
        Col::left("TASK").max(40),
        Col::right("ATTEMPT"),
        Col::right("PROMPT TOK"),
        Col::right("OUTPUT TOK"),
    ])
    .indent(2);
    for i in lost {
        table.row([
            i.invocation_id.clone(),
            i.task_id.clone(),
            i.attempt.to_string(),
            i.prompt_tokens.to_string(),
            i.output_tokens.unwrap_or(0).to_string(),
        ]);
    }
    table.print();
}
