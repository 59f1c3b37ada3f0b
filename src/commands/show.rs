//! `plexus runs` and `plexus show RUN`: what is in the database, as tables or JSON.

// Column headers are written as arguments so they line up with the rows' format.
#![allow(clippy::print_literal)]

use std::collections::BTreeMap;

use color_eyre::eyre::Result;
use serde_json::json;

use crate::event::EngineEvent;
use crate::store::{Store, StoreError};

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
    crate::outln!(
        "{:<24} {:<12} {:<26} {:>6} {:>8} {:>6}  {:<25} {}",
        "RUN",
        "STATUS",
        "PLAN",
        "TASKS",
        "EVENTS",
        "ATOMS",
        "CREATED",
        "PROVIDER"
    );
    for r in runs {
        crate::outln!(
            "{:<24} {:<12} {:<26} {:>6} {:>8} {:>6}  {:<25} {}",
            r.run_id,
            r.status,
            truncate(&r.plan_id, 26),
            r.task_count,
            r.events,
            r.atoms,
            r.created_at,
            r.provider
        );
    }
    Ok(())
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n - 1).collect();
        t.push('…');
        t
    }
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
    let mut kinds: BTreeMap<&'static str, u64> = BTreeMap::new();
    let mut undecodable = 0u64;
    let (last, _) = store.last_event(&run.run_id)?;
    let mut from = 1;
    while from <= last {
        let to = from + 20_000;
        for e in store.events(&run.run_id, from, to)? {
            match e.event {
                Ok(ev) => *kinds.entry(ev.kind()).or_insert(0) += 1,
                Err(_) => undecodable += 1,
            }
        }
        from = to + 1;
    }
    if json_out {
        let v = json!({
            "run": run,
            "tasks": tasks,
            "invocations": invocations,
            "tokens_per_agent": per_agent.iter().map(|(a, (n, p, o))| json!({"agent": a, "invocations": n, "prompt_tokens": p, "output_tokens": o})).collect::<Vec<_>>(),
            "events_by_kind": kinds,
            "undecodable_events": undecodable,
        });
        crate::rawln!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    crate::outln!("run       {}", run.run_id);
    crate::outln!("plan      {} ({})", run.plan_id, run.plan_source);
    crate::outln!("provider  {}", run.provider);
    crate::outln!("status    {}", run.status);
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
    crate::outln!();
    crate::outln!(
        "{:<28} {:<20} {:<10} {:>8} {:>6}  {}",
        "TASK",
        "AGENT",
        "STATUS",
        "ATTEMPTS",
        "ATOMS",
        "ERROR"
    );
    for t in &tasks {
        crate::outln!(
            "{:<28} {:<20} {:<10} {:>8} {:>6}  {}",
            truncate(&t.task_id, 28),
            truncate(&t.agent, 20),
            t.status,
            t.attempts,
            t.atoms,
            t.error_code.clone().unwrap_or_default()
        );
    }
    crate::outln!();
    crate::outln!(
        "{:<22} {:>11} {:>13} {:>13}",
        "AGENT",
        "INVOCATIONS",
        "PROMPT TOK",
        "OUTPUT TOK"
    );
    for (a, (n, p, o)) in &per_agent {
        crate::outln!("{a:<22} {n:>11} {p:>13} {o:>13}");
    }
    crate::outln!();
    crate::outln!("events by kind");
    for k in EngineEvent::KINDS {
        if let Some(n) = kinds.get(k) {
            crate::outln!("  {k:<22} {n:>8}");
        }
    }
    Ok(())
}

/// Prints a run's event log as JSON lines (one envelope per line), oldest first.
pub fn print_log(store: &Store, id: &str) -> Result<()> {
    use std::io::Write;
    let run = store.run(id)?;
    let run_id: std::sync::Arc<str> = std::sync::Arc::from(run.run_id.as_str());
    let (last, _) = store.last_event(&run.run_id)?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut from = 1;
    while from <= last {
        let to = from + 20_000;
        for e in store.events(&run.run_id, from, to)? {
            let event = match e.event {
                Ok(ev) => ev,
                Err(err) => {
                    crate::errln!("event {} skipped: {err}", e.seq);
                    continue;
                }
            };
            let env = crate::event::Envelope {
                run_id: run_id.clone(),
                seq: e.seq,
                ts: e.ts,
                task_id: e.task_id.map(Into::into),
                invocation_id: e.invocation_id.map(Into::into),
                agent: e.agent.map(Into::into),
                event,
            };
            serde_json::to_writer(&mut out, &env).map_err(crate::out::closed_pipe_ends)?;
            out.write_all(b"\n").map_err(crate::out::closed_pipe_ends)?;
        }
        from = to + 1;
    }
    out.flush().map_err(crate::out::closed_pipe_ends)?;
    Ok(())
}
