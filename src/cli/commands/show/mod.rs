//! `plexus runs` and `plexus show RUN`: what is in the database, as tables or JSON.

pub mod debate;
pub mod loop_report;
pub mod loops;
pub mod tool_stats;

use std::collections::BTreeMap;

use color_eyre::eyre::Result;
use serde_json::json;

use crate::base::cost::Spend;
use crate::base::table::{Col, TextTable};
use crate::data::store::{InvocationRow, RunSummary, Store, StoreError, TaskRow};
use crate::model::event::EngineEvent;
use crate::model::state::debate::DebateState;

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
    let view = RunView::read(store, id)?;
    if json_out {
        return view.print_json();
    }
    view.print_header();
    view.print_tasks(store);
    crate::outln!();
    view.print_tokens();
    loop_report::print(&view.loop_reports, &view.tool_metrics);
    view.print_kinds();
    Ok(())
}

/// Invocations, prompt tokens and output tokens per agent.
type AgentTokens = BTreeMap<String, (u64, i64, i64)>;

/// What `plexus show RUN` prints of one run, read from the store.
struct RunView {
    run: RunSummary,
    tasks: Vec<TaskRow>,
    invocations: Vec<InvocationRow>,
    per_agent: AgentTokens,
    /// The run's last event sequence number.
    last: u64,
    /// Events that could not be decoded.
    undecodable: u64,
    /// Events by kind.
    kinds: BTreeMap<String, u64>,
    /// The debate's state, when the run is a debate.
    debate: Option<DebateState>,
    /// A debate's model calls and output tokens per agent.
    debate_tokens: Option<BTreeMap<String, (u64, u64)>>,
    spend: BTreeMap<String, Spend>,
    /// Tasks awaiting review.
    waiting: Vec<String>,
    loop_reports: Vec<loops::LoopReport>,
    tool_metrics: loops::RunToolMetrics,
}

impl RunView {
    /// Reads run `id` and all that is shown of it.
    fn read(store: &Store, id: &str) -> Result<RunView> {
        let run = store.run(id)?;
        let tasks = store.tasks(&run.run_id)?;
        let invocations = store.invocations(&run.run_id)?;
        let per_agent = agent_tokens(&invocations);
        let (last, _) = store.last_event(&run.run_id)?;
        // The events by kind come from the run's state, read from its stored snapshot (only
        // the events after it are folded); the tool loops, when the run has any, from the
        // events of their kinds alone.
        let run_key: std::sync::Arc<str> = std::sync::Arc::from(run.run_id.as_str());
        let state = crate::data::replay::stored::open_at(store, &run_key, last)?.state;
        let undecodable = last.saturating_sub(state.events);
        let kinds = state.kinds;
        let loops = read_loops(store, &run.run_id, &kinds, last)?;
        let (debate, debate_tokens) = read_debate(store, &run)?;
        let spend = store.agent_spend(&run.run_id)?;
        let waiting = crate::cli::launch::next_steps::waiting_tasks(store, &run.run_id)?;
        let loop_reports = loops.into_reports();
        let tool_metrics = loops::RunToolMetrics::from_loops(&loop_reports);
        Ok(RunView {
            run,
            tasks,
            invocations,
            per_agent,
            last,
            undecodable,
            kinds,
            debate,
            debate_tokens,
            spend,
            waiting,
            loop_reports,
            tool_metrics,
        })
    }

    /// What the run's calls of `agent` cost.
    fn cost_of(&self, agent: &str) -> Spend {
        self.spend.get(agent).copied().unwrap_or_default()
    }

    /// Prints the run as one JSON document.
    fn print_json(&self) -> Result<()> {
        let tokens_json: Vec<serde_json::Value> = match &self.debate_tokens {
            Some(t) => t
                .iter()
                .map(|(a, (n, o))| json!({"agent": a, "invocations": n, "output_tokens": o}))
                .collect(),
            None => self
                .per_agent
                .iter()
                .map(|(a, (n, p, o))| {
                    let c = self.cost_of(a);
                    json!({"agent": a, "invocations": n, "prompt_tokens": p, "output_tokens": o,
                           "cost_usd": c.known(), "unpriced_calls": c.unpriced})
                })
                .collect(),
        };
        let debate = self.debate.as_ref();
        let v = json!({
            "debate_session": debate.map(|d| d.session_state()),
            "multi_agent_session": debate
                .map(|d| crate::model::state::debate_front::front_end_json(d, &self.run.run_id)),
            "run": self.run,
            "tasks": self.tasks,
            "awaiting_review": self.waiting,
            "invocations": self.invocations,
            "tokens_per_agent": tokens_json,
            "events_by_kind": self.kinds,
            "undecodable_events": self.undecodable,
            "tool_loops": self.loop_reports,
            "tool_metrics": self.tool_metrics,
        });
        crate::rawln!("{}", serde_json::to_string_pretty(&v)?);
        Ok(())
    }

    /// Prints the run's header lines (and a debate's summary), then a blank line.
    fn print_header(&self) {
        let run = &self.run;
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
        let (last, undecodable) = (self.last, self.undecodable);
        crate::outln!(
            "events    {last}{}",
            if undecodable > 0 {
                format!(" ({undecodable} undecodable)")
            } else {
                String::new()
            }
        );
        if let Some(d) = &self.debate {
            for line in debate::summary_lines(d) {
                crate::outln!("{line}");
            }
        }
        crate::outln!();
    }

    /// Prints the tasks table, the calls lost in a crash and the next steps for tasks
    /// awaiting review.
    fn print_tasks(&self, store: &Store) {
        let mut table = TextTable::new(&[
            Col::left("TASK").max(40),
            Col::left("AGENT").max(32),
            Col::left("STATUS"),
            Col::right("ATTEMPTS"),
            Col::right("ATOMS"),
            Col::left("ERROR"),
        ]);
        for t in &self.tasks {
            table.row([
                t.task_id.clone(),
                t.agent.clone(),
                t.status.clone(),
                t.attempts.to_string(),
                t.atoms.to_string(),
                match (&t.error_code, self.waiting.contains(&t.task_id)) {
                    (Some(code), true) => format!("{code}, awaiting review"),
                    (code, _) => code.clone().unwrap_or_default(),
                },
            ]);
        }
        table.print();
        print_lost_calls(&self.invocations);
        let next = crate::cli::launch::next_steps::review_lines(
            store.path(),
            &self.run.run_id,
            &self.waiting,
        );
        if !next.is_empty() {
            crate::outln!();
            for line in next {
                crate::outln!("{line}");
            }
        }
    }

    /// Prints the tokens per agent: a debate's model calls, or the invocations with
    /// their cost.
    fn print_tokens(&self) {
        if let Some(t) = &self.debate_tokens {
            let mut table = TextTable::new(&[
                Col::left("AGENT").max(32),
                Col::right("MODEL CALLS"),
                Col::right("OUTPUT TOK"),
            ]);
            for (a, (n, o)) in t {
                table.row([a.clone(), n.to_string(), o.to_string()]);
            }
            table.print();
            return;
        }
        let mut table = TextTable::new(&[
            Col::left("AGENT").max(32),
            Col::right("INVOCATIONS"),
            Col::right("PROMPT TOK"),
            Col::right("OUTPUT TOK"),
            Col::right("COST"),
            Col::right("PER CALL"),
        ]);
        for (a, (n, p, o)) in &self.per_agent {
            let c = self.cost_of(a);
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

    /// Prints the count of events of each kind the run has, in the kinds' order.
    fn print_kinds(&self) {
        crate::outln!();
        crate::outln!("events by kind");
        let mut table = TextTable::new(&[Col::left("KIND"), Col::right("EVENTS")])
            .without_header()
            .indent(2);
        for k in EngineEvent::KINDS {
            if let Some(n) = self.kinds.get(*k) {
                table.row([k.to_string(), n.to_string()]);
            }
        }
        table.print();
    }
}

/// The invocations and tokens of each agent.
fn agent_tokens(invocations: &[InvocationRow]) -> AgentTokens {
    let mut per_agent = AgentTokens::new();
    for inv in invocations {
        let e = per_agent.entry(inv.agent.clone()).or_default();
        e.0 += 1;
        e.1 += inv.prompt_tokens;
        e.2 += inv.output_tokens.unwrap_or(0);
    }
    per_agent
}

/// The run's tool loops, folded from the events of their kinds alone, read in pages up
/// to event `last` (none read when `kinds` has none of them).
fn read_loops(
    store: &Store,
    run_id: &str,
    kinds: &BTreeMap<String, u64>,
    last: u64,
) -> Result<loops::Loops> {
    let mut loops = loops::Loops::default();
    if !loops::KINDS.iter().any(|k| kinds.contains_key(*k)) {
        return Ok(loops);
    }
    let mut from = 1;
    while from <= last {
        let to = from + 20_000;
        for e in store.events_of_kinds(run_id, &loops::KINDS, from, to)? {
            if let Ok(ev) = &e.event {
                loops.fold(&e, ev);
            }
        }
        from = to + 1;
    }
    Ok(loops)
}

/// A debate's state and its tokens per agent (`None`s for a run that is not a debate).
/// A debate keeps its model calls as events, not invocations: its tokens come from
/// them (output tokens only; the calls' prompts are not counted).
fn read_debate(store: &Store, run: &RunSummary) -> Result<DebateParts> {
    if !crate::features::debate::is_debate(&run.plan_id) {
        return Ok((None, None));
    }
    let events = crate::features::debate::replay::load_events(store, &run.run_id)?;
    Ok((
        Some(DebateState::from_stored(&events, &run.status)),
        Some(debate::tokens_per_agent(&events)),
    ))
}

/// A debate's state and its model calls and output tokens per agent.
type DebateParts = (Option<DebateState>, Option<BTreeMap<String, (u64, u64)>>);

/// The calls that were in flight when a process running the run died, closed as lost by
/// the resume that found them (nothing when there were none).
fn print_lost_calls(invocations: &[InvocationRow]) {
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
