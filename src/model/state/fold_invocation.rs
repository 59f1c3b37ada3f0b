//! One call's events: its start, the text it streams, its end (or loss in a crash),
//! and the atoms graded from it.

use std::sync::Arc;

use super::ops::{enforce_budget, marker, set_status};
use super::view::{AtomView, InvocationFailure, InvocationSummary, RunState};
use crate::model::event::{
    AtomsGraded, Chunk, Envelope, InvocationFinished, InvocationLost, InvocationStarted, TaskStatus,
};

/// `invocation_started`: the attempt's marker and the agent's token counts.
pub(super) fn started(st: &mut RunState, env: &Envelope, i: usize, s: &InvocationStarted) {
    let agent = st.tasks[i].agent;
    let t = Arc::make_mut(&mut st.tasks[i]);
    t.attempts = t.attempts.max(s.attempt);
    t.invocation = env.invocation_id.clone();
    if let Some(inv) = &env.invocation_id {
        if t.invocations.last() != Some(inv) {
            super::slim::push(&mut t.invocations, inv.clone());
        }
    }
    t.running_since = Some(env.ts);
    t.last_output_ts = None;
    t.timeout_ms = (s.constraints.timeout_seconds.max(0.0) * 1000.0) as u64;
    t.prompt_tokens = s.prompt_tokens;
    t.max_tokens = s.constraints.max_tokens;
    let marker_text = format!(
        "── attempt {} · {} · {} prompt tokens · threshold {} ──",
        s.attempt,
        env.invocation_id.as_deref().unwrap_or("?"),
        s.prompt_tokens,
        s.quality_threshold
    );
    marker(st, i, &marker_text);
    set_status(st, i, TaskStatus::Running);
    let a = &mut st.agents[agent];
    a.invocations += 1;
    a.in_flight += 1;
    a.last_prompt = s.prompt_tokens;
    a.peak_prompt = a.peak_prompt.max(s.prompt_tokens);
    a.tokens_in += s.prompt_tokens;
    a.max_tokens = s.constraints.max_tokens;
    a.streaming = Some((i, 0));
}

/// `chunk`: streamed text into the task's output, within the output budget.
pub(super) fn chunk(st: &mut RunState, env: &Envelope, i: usize, c: &Chunk) {
    let t = Arc::make_mut(&mut st.tasks[i]);
    t.last_output_ts = Some(env.ts);
    let before = t.output.bytes();
    t.output.push(&c.text);
    let after = t.output.bytes();
    st.output_bytes = (st.output_bytes + after).saturating_sub(before);
    let agent = st.tasks[i].agent;
    if let Some((task, bytes)) = &mut st.agents[agent].streaming {
        if *task == i {
            *bytes += c.text.len() as u64;
        }
    }
    if st.output_bytes > st.output_budget {
        enforce_budget(st);
    }
}

/// `invocation_finished`: the summary, the end marker and the agent's usage.
pub(super) fn finished(st: &mut RunState, i: usize, f: &InvocationFinished) {
    let agent = st.tasks[i].agent;
    let summary = InvocationSummary {
        status: f.status,
        execution_time_ms: f.execution_time_ms,
        output_tokens: f.output_tokens,
        atoms: f.atoms,
        avg_score: f.avg_score,
        grades: f.grades,
        issues: f.issues,
        failure: InvocationFailure::boxed(f.errors.clone(), f.error_message.clone()),
    };
    let cost = f
        .cost_usd
        .map(|c| format!(" · {}", crate::base::cost::usd(c)))
        .unwrap_or_default();
    let end = match (f.status, f.errors.first()) {
        (Some(s), None) => format!("── {} · {} ms{cost} ──", s.as_str(), f.execution_time_ms),
        (Some(s), Some(e)) => format!(
            "── {} · {} · {}{cost} ──",
            s.as_str(),
            e.as_str(),
            f.error_message.as_deref().unwrap_or("")
        ),
        (None, _) => format!(
            "── stopped: {} ──",
            f.error_message.as_deref().unwrap_or("cancelled")
        ),
    };
    marker(st, i, &end);
    Arc::make_mut(&mut st.tasks[i]).last = Some(summary);
    let a = &mut st.agents[agent];
    a.in_flight = a.in_flight.saturating_sub(1);
    if a.streaming.is_some_and(|(task, _)| task == i) {
        a.streaming = None;
    }
    a.last_output = f.output_tokens;
    a.peak_output = a.peak_output.max(f.output_tokens);
    a.tokens_out += f.output_tokens;
    a.spend.add(f.cost_usd);
    // A loop's later steps: its start counted the first step's prompt only.
    let first_prompt = st.tasks[i].prompt_tokens;
    if let Some(every_step) = f.loop_prompt_tokens {
        let a = &mut st.agents[agent];
        a.tokens_in = a
            .tokens_in
            .saturating_add(every_step.saturating_sub(first_prompt));
    }
    if let Some(u) = f.provider_usage {
        let ours_prompt = f.loop_prompt_tokens.unwrap_or(first_prompt);
        let r = &mut st.agents[agent].reported;
        r.calls += 1;
        r.prompt = r.prompt.saturating_add(u.prompt_tokens);
        r.output = r.output.saturating_add(u.completion_tokens);
        r.counted_prompt = r.counted_prompt.saturating_add(ours_prompt);
        r.counted_output = r.counted_output.saturating_add(f.output_tokens);
    }
}

/// `invocation_lost`: an attempt cut off by a crash.
pub(super) fn lost(st: &mut RunState, env: &Envelope, i: usize, l: &InvocationLost) {
    let agent = st.tasks[i].agent;
    marker(
        st,
        i,
        &format!(
            "── attempt {} lost in a crash · {} · {} output token(s) reached the log ──",
            l.attempt,
            env.invocation_id.as_deref().unwrap_or("?"),
            l.output_tokens
        ),
    );
    Arc::make_mut(&mut st.tasks[i]).last = Some(InvocationSummary {
        status: None,
        execution_time_ms: u64::try_from(l.last_ts.saturating_sub(l.started_ts)).unwrap_or(0),
        output_tokens: l.output_tokens,
        atoms: 0,
        avg_score: 0.0,
        grades: Default::default(),
        issues: 0,
        failure: InvocationFailure::boxed(Vec::new(), Some(l.reason.clone())),
    });
    let a = &mut st.agents[agent];
    if a.streaming.is_some_and(|(task, _)| task == i) {
        a.streaming = None;
    }
    a.last_output = l.output_tokens;
    a.peak_output = a.peak_output.max(l.output_tokens);
    a.tokens_out += l.output_tokens;
    a.spend.add(l.cost_usd);
}

/// Atoms of the last few graded whose type is looked for before a new string is made.
const TYPE_LOOKBACK: usize = 16;

/// The atom type `name`, shared with a recent atom of the same type: a run has a handful
/// of types and can grade hundreds of thousands of atoms.
fn atom_type(st: &RunState, name: &str) -> Arc<str> {
    let recent = st.atoms.len().saturating_sub(TYPE_LOOKBACK)..st.atoms.len();
    recent
        .rev()
        .filter_map(|k| st.atoms.get(k))
        .find(|x| &*x.atom_type == name)
        .map_or_else(|| Arc::from(name), |x| x.atom_type.clone())
}

/// `atoms_graded`: one row per atom.
pub(super) fn atoms_graded(st: &mut RunState, env: &Envelope, i: usize, g: &AtomsGraded) {
    let agent = st.tasks[i].agent;
    for a in &g.atoms {
        let atom_type = atom_type(st, &a.atom_type);
        st.atoms.push(AtomView {
            id: Arc::from(a.asset_id.as_str()),
            atom_type,
            task: i,
            agent,
            invocation: env.invocation_id.clone(),
            grade: a.grade,
            score: a.score,
            confidence: a.confidence,
            issues: a.issues,
        });
    }
}
