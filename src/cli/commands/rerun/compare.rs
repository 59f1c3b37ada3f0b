//! A rerun's events against its recording's, event by event. Each task's own events
//! are compared in order, and so are the run's own events (those of no task): how many
//! invocations run at once changes how tasks interleave in the log, not what happens
//! within a task.
//!
//! Left out of the comparison, because they differ from run to run by nature: the run
//! id, sequence numbers and timestamps of events, invocation ids (an invocation is known
//! by its place in its task), `execution_time_ms`, the provider's name and the
//! concurrency in `run_started`, how a stream was grouped into chunk events (an
//! invocation's consecutive chunk events compare as one text), `last_seq`/`last_ts` of
//! `crash_detected`, the previous owner in `lease_taken_over`, the timestamp of a
//! reference failure, who decided a review and what they wrote, and — when the recorded provider was not the simulated one, whose
//! jitter comes from the seed — the delay of a transient retry.
//!
//! Events are paired by their place in their task, except that a chunk or an
//! `atoms_graded` event only one side has (an answer with no text or no atoms) is noted
//! as missing and skipped, so the invocation's other events still pair up. Both logs
//! are read in batches, side by side; an event waits in its task's queue only until the
//! other log's event at the same place in that task arrives.

use std::collections::{HashMap, HashSet, VecDeque};

use serde_json::Value;

use crate::base::json_diff::{differences, Difference};
use crate::data::store::{EventRow, Store, StoreError};
use crate::model::event::EngineEvent;

/// Events read from a log at a time.
const BATCH: u64 = 2_000;
/// Most differing fields noted per pair of events.
const FIELDS_PER_EVENT: usize = 16;
/// Most mismatches kept per task (all are counted).
pub const KEPT_PER_TASK: usize = 20;

/// What the comparison leaves out besides ids and times.
#[derive(Debug, Clone, Copy, Default)]
pub struct CompareOptions {
    /// The recorded provider's retry jitter was random (not the simulated provider's
    /// seeded one): transient retry delays are not compared.
    pub random_jitter: bool,
}

/// One difference between an event of the recording and the event at the same place
/// in the rerun (of the same task, or of the run itself).
#[derive(Debug, Clone, PartialEq)]
pub struct Mismatch {
    /// The task (`None`: the run's own events).
    pub task_id: Option<String>,
    /// The recorded event's seq (`None`: the recording has no event there).
    pub recorded_seq: Option<u64>,
    /// The new event's seq (`None`: the rerun has no event there).
    pub new_seq: Option<u64>,
    /// The recorded event's kind (the new one's when the recording has none).
    pub kind: String,
    /// The field that differs first (`kind` when the events are of different kinds,
    /// `event` when one side has none) and both values.
    pub difference: Difference,
}

/// A task (or the run itself) whose events differ.
#[derive(Debug, Clone, PartialEq)]
pub struct Divergence {
    /// The first mismatches, in order (at most [`KEPT_PER_TASK`]; never empty).
    pub mismatches: Vec<Mismatch>,
    /// Every mismatch of this task.
    pub count: usize,
}

impl Divergence {
    /// The first mismatch.
    pub fn first(&self) -> Option<&Mismatch> {
        self.mismatches.first()
    }
}

/// The outcome of a comparison.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Comparison {
    /// Pairs of events compared (consecutive chunks of an invocation count as one).
    pub compared: u64,
    /// Mismatches in all.
    pub mismatches: usize,
    /// Per task that diverged (the run's own events as `task_id: None`), in the order
    /// of their first mismatch in the recording.
    pub divergences: Vec<Divergence>,
}

/// An event reduced to what is compared.
#[derive(Debug)]
struct Norm {
    seq: u64,
    kind: &'static str,
    agent: Option<String>,
    invocation: Option<String>,
    body: Body,
}

#[derive(Debug)]
enum Body {
    /// The text of consecutive chunk events of one invocation.
    Chunk(String),
    /// Any other event, normalised, as JSON.
    Event(Value),
}

type Key = Option<String>;

/// One log being read.
struct Side<'a> {
    store: &'a Store,
    run: &'a str,
    next: u64,
    done: bool,
    queues: HashMap<Key, VecDeque<Norm>>,
}

impl<'a> Side<'a> {
    fn new(store: &'a Store, run: &'a str) -> Self {
        Side {
            store,
            run,
            next: 1,
            done: false,
            queues: HashMap::new(),
        }
    }

    /// Reads the next batch; notes the tasks it touched.
    fn pull(&mut self, o: &CompareOptions, touched: &mut HashSet<Key>) -> Result<(), StoreError> {
        let rows = self
            .store
            .events(self.run, self.next, self.next + BATCH - 1)?;
        self.next += BATCH;
        if (rows.len() as u64) < BATCH {
            self.done = true;
        }
        for row in rows {
            touched.insert(row.task_id.clone());
            self.push(row, o);
        }
        Ok(())
    }

    fn push(&mut self, row: EventRow, o: &CompareOptions) {
        let (kind, body) = match row.event {
            Ok(ev) => normalise(ev, o),
            Err(e) => ("undecodable", Body::Event(Value::String(e.to_string()))),
        };
        let q = self.queues.entry(row.task_id).or_default();
        queue(
            q,
            Norm {
                seq: row.seq,
                kind,
                agent: row.agent,
                invocation: row.invocation_id,
                body,
            },
        );
    }

    /// Whether the first waiting event of `key` is complete (a chunk may still grow
    /// while it is the last event read and the log goes on).
    fn ready(&self, key: &Key) -> bool {
        self.queues.get(key).is_some_and(|q| complete(q, self.done))
    }

    fn pop(&mut self, key: &Key) -> Option<Norm> {
        self.queues.get_mut(key).and_then(VecDeque::pop_front)
    }
}

/// Whether `n` is the `loop_finished` of `invocation`.
fn ends_loop_of(n: &Norm, invocation: &Option<String>) -> bool {
    n.kind == "loop_finished" && n.invocation == *invocation
}

/// Queues an event of one task: an invocation's consecutive chunks join into one text,
/// and a chunk that comes right after its invocation's `loop_finished` goes before it
/// (a tool-using loop may log its end before the stream's last text is flushed, and
/// when that flush falls depends on timing, not on what happened).
fn queue(q: &mut VecDeque<Norm>, n: Norm) {
    let Body::Chunk(more) = &n.body else {
        q.push_back(n);
        return;
    };
    let end = match q.back() {
        Some(back) if ends_loop_of(back, &n.invocation) => q.len() - 1,
        _ => q.len(),
    };
    if let Some(before) = end.checked_sub(1).and_then(|i| q.get_mut(i)) {
        if let Body::Chunk(text) = &mut before.body {
            if before.invocation == n.invocation {
                text.push_str(more);
                return;
            }
        }
    }
    q.insert(end, n);
}

/// Whether the first waiting event of a queue is complete: a chunk may still grow while
/// nothing but its loop's end follows it, and a loop's end may still have a chunk put
/// before it, until something else of the task (or the log's end) comes.
fn complete(q: &VecDeque<Norm>, done: bool) -> bool {
    let Some(front) = q.front() else {
        return false;
    };
    if done {
        return true;
    }
    match &front.body {
        Body::Chunk(_) => match q.len() {
            1 => false,
            2 => !ends_loop_of(&q[1], &front.invocation),
            _ => true,
        },
        Body::Event(_) if front.kind == "loop_finished" => q.len() > 1,
        Body::Event(_) => true,
    }
}

/// The event with what legitimately varies set to a fixed value; chunks as their text.
/// Every kind is named here, so that a new one is a decision.
fn normalise(ev: EngineEvent, o: &CompareOptions) -> (&'static str, Body) {
    let kind = ev.kind();
    let ev = match ev {
        EngineEvent::Chunk(c) => return (kind, Body::Chunk(c.text)),
        e @ (EngineEvent::RunStarted(_)
        | EngineEvent::CrashDetected(_)
        | EngineEvent::LeaseTakenOver(_)
        | EngineEvent::InvocationFinished(_)
        | EngineEvent::InvocationLost(_)
        | EngineEvent::RetryScheduled(_)
        | EngineEvent::ReferenceFailed(_)
        | EngineEvent::ReviewAccepted(_)
        | EngineEvent::ReviewRejected(_)) => fixed_run_fields(e, o),
        e @ (EngineEvent::ToolAnswered(_)
        | EngineEvent::ToolCalled(_)
        | EngineEvent::LoopFinished(_)
        | EngineEvent::DebateReply(_)
        | EngineEvent::DebateOutput(_)
        | EngineEvent::PositionsCompared(_)
        | EngineEvent::HostDecided(_)) => fixed_tool_and_debate_fields(e),
        e @ (EngineEvent::RunResumed(_)
        | EngineEvent::RunPaused(_)
        | EngineEvent::RunUnpaused(_)
        | EngineEvent::CancelRequested(_)
        | EngineEvent::BudgetReached(_)
        | EngineEvent::RunFinished(_)
        | EngineEvent::TaskReady(_)
        | EngineEvent::TaskBlocked(_)
        | EngineEvent::TaskFinished(_)
        | EngineEvent::TaskReset(_)
        | EngineEvent::InvocationStarted(_)
        | EngineEvent::AtomsGraded(_)
        | EngineEvent::ContextPlanned(_)
        | EngineEvent::SkillActivated(_)
        | EngineEvent::SkillRefused(_)
        | EngineEvent::ContextCompressed(_)
        | EngineEvent::DebateStarted(_)
        | EngineEvent::DebateTurnStarted(_)
        | EngineEvent::DebateError(_)
        | EngineEvent::DebateFinished(_)) => e,
    };
    let mut v = serde_json::to_value(&ev).unwrap_or(Value::Null);
    if let Some(o) = v.as_object_mut() {
        o.remove("kind");
    }
    (kind, Body::Event(v))
}

/// [`normalise`] of the run's, the invocations' and the reviews' events: times, pids,
/// hosts and providers fixed (other events as they are).
fn fixed_run_fields(ev: EngineEvent, o: &CompareOptions) -> EngineEvent {
    match ev {
        EngineEvent::RunStarted(mut r) => {
            r.provider.clear();
            r.concurrency = 0;
            EngineEvent::RunStarted(r)
        }
        EngineEvent::CrashDetected(mut c) => {
            c.last_seq = 0;
            c.last_ts = 0;
            EngineEvent::CrashDetected(c)
        }
        EngineEvent::LeaseTakenOver(mut l) => {
            l.previous_pid = 0;
            l.previous_host.clear();
            l.previous_since.clear();
            l.previous_heartbeat_ms = 0;
            EngineEvent::LeaseTakenOver(l)
        }
        EngineEvent::InvocationFinished(mut f) => {
            f.execution_time_ms = 0;
            EngineEvent::InvocationFinished(f)
        }
        EngineEvent::InvocationLost(mut l) => {
            l.started_ts = 0;
            l.last_ts = 0;
            EngineEvent::InvocationLost(l)
        }
        EngineEvent::RetryScheduled(mut r) => {
            if o.random_jitter && r.is_transient() {
                r.delay_ms = 0;
            }
            EngineEvent::RetryScheduled(r)
        }
        EngineEvent::ReferenceFailed(mut r) => {
            r.failure.timestamp.clear();
            EngineEvent::ReferenceFailed(r)
        }
        // Who decided and what they wrote are a person's, not the engine's.
        EngineEvent::ReviewAccepted(mut r) => {
            r.reviewer.clear();
            r.note = None;
            EngineEvent::ReviewAccepted(r)
        }
        EngineEvent::ReviewRejected(mut r) => {
            r.reviewer.clear();
            r.reason.clear();
            EngineEvent::ReviewRejected(r)
        }
        other => other,
    }
}

/// [`normalise`] of the tools' and the debates' events: durations fixed, and what older
/// recordings do not have (other events as they are).
fn fixed_tool_and_debate_fields(ev: EngineEvent) -> EngineEvent {
    match ev {
        // A tool's wall time varies; what it answered does not (a rerun answers the
        // tools from the recording too).
        EngineEvent::ToolAnswered(mut a) => {
            a.duration_ms = 0.0;
            EngineEvent::ToolAnswered(a)
        }
        // A recording made before a step's message tokens were logged has none.
        EngineEvent::ToolCalled(mut c) => {
            c.message_tokens = None;
            EngineEvent::ToolCalled(c)
        }
        // A recording made before the loop's tokens were split in two has no split;
        // the total is compared.
        EngineEvent::LoopFinished(mut f) => {
            f.input_tokens = 0;
            f.output_tokens = 0;
            f.answer_tokens = None;
            EngineEvent::LoopFinished(f)
        }
        EngineEvent::DebateReply(mut r) => {
            r.duration_ms = 0;
            EngineEvent::DebateReply(r)
        }
        EngineEvent::DebateOutput(mut o) => {
            o.duration_ms = 0;
            EngineEvent::DebateOutput(o)
        }
        EngineEvent::PositionsCompared(mut p) => {
            p.duration_us = 0;
            p.embedded = 0;
            p.cached = 0;
            EngineEvent::PositionsCompared(p)
        }
        EngineEvent::HostDecided(mut h) => {
            if let Some(o) = h.output.as_object_mut() {
                o.remove("timestamp");
            }
            EngineEvent::HostDecided(h)
        }
        other => other,
    }
}

/// The fields in which two normalised events differ (the kind alone when their kinds
/// differ).
fn differ(a: &Norm, b: &Norm) -> Vec<Difference> {
    let field = |path: &str, x: Value, y: Value| Difference {
        path: path.into(),
        recorded: Some(x),
        now: Some(y),
    };
    if a.kind != b.kind {
        return vec![field("kind", a.kind.into(), b.kind.into())];
    }
    let mut out = Vec::new();
    if a.agent != b.agent {
        let opt = |s: &Option<String>| s.clone().map(Value::String).unwrap_or(Value::Null);
        out.push(field("agent", opt(&a.agent), opt(&b.agent)));
    }
    match (&a.body, &b.body) {
        (Body::Chunk(x), Body::Chunk(y)) if x == y => {}
        (Body::Chunk(x), Body::Chunk(y)) => {
            out.push(field("text", x.as_str().into(), y.as_str().into()))
        }
        (Body::Event(x), Body::Event(y)) => out.extend(differences(x, y, FIELDS_PER_EVENT)),
        // Same kind, so both are chunks or neither is.
        (Body::Chunk(_), Body::Event(_)) | (Body::Event(_), Body::Chunk(_)) => {}
    }
    out
}

/// Collects mismatches per task.
#[derive(Default)]
struct Tally {
    compared: u64,
    mismatches: usize,
    by_key: HashMap<Key, Divergence>,
}

impl Tally {
    fn note(&mut self, key: &Key, a: Option<&Norm>, b: Option<&Norm>) {
        let found = match (a, b) {
            (Some(a), Some(b)) => {
                self.compared += 1;
                differ(a, b)
            }
            (x, y) => vec![Difference {
                path: "event".into(),
                recorded: x.map(|n| Value::String(n.kind.into())),
                now: y.map(|n| Value::String(n.kind.into())),
            }],
        };
        for difference in found {
            self.mismatches += 1;
            let d = self.by_key.entry(key.clone()).or_insert(Divergence {
                mismatches: Vec::new(),
                count: 0,
            });
            d.count += 1;
            if d.mismatches.len() < KEPT_PER_TASK {
                d.mismatches.push(Mismatch {
                    task_id: key.clone(),
                    recorded_seq: a.map(|n| n.seq),
                    new_seq: b.map(|n| n.seq),
                    kind: a.or(b).map(|n| n.kind).unwrap_or_default().to_string(),
                    difference,
                });
            }
        }
    }
}

/// Events an invocation may or may not have (no text, no atoms): when only one side
/// has one, it is noted as missing on the other and the two logs stay aligned.
const OPTIONAL: [&str; 2] = ["chunk", "atoms_graded"];

fn front_kind(side: &Side<'_>, key: &Key) -> Option<&'static str> {
    side.queues.get(key).and_then(|q| q.front()).map(|n| n.kind)
}

/// Compares every pair of events that are complete on both sides for `key`.
fn settle(key: &Key, a: &mut Side<'_>, b: &mut Side<'_>, tally: &mut Tally) {
    while a.ready(key) && b.ready(key) {
        let (ka, kb) = (front_kind(a, key), front_kind(b, key));
        let (x, y) = match (ka, kb) {
            (Some(ka), Some(kb)) if ka != kb && OPTIONAL.contains(&ka) => (a.pop(key), None),
            (Some(ka), Some(kb)) if ka != kb && OPTIONAL.contains(&kb) => (None, b.pop(key)),
            _ => (a.pop(key), b.pop(key)),
        };
        tally.note(key, x.as_ref(), y.as_ref());
    }
}

/// Compares run `new_run` of `new` with its recording, run `old_run` of `old`.
pub fn compare_runs(
    old: &Store,
    old_run: &str,
    new: &Store,
    new_run: &str,
    o: CompareOptions,
) -> Result<Comparison, StoreError> {
    let mut a = Side::new(old, old_run);
    let mut b = Side::new(new, new_run);
    let mut tally = Tally::default();
    while !(a.done && b.done) {
        let mut touched = HashSet::new();
        if !a.done {
            a.pull(&o, &mut touched)?;
        }
        if !b.done {
            b.pull(&o, &mut touched)?;
        }
        for key in &touched {
            settle(key, &mut a, &mut b, &mut tally);
        }
    }
    let mut keys: Vec<Key> = a.queues.keys().chain(b.queues.keys()).cloned().collect();
    keys.sort();
    keys.dedup();
    for key in &keys {
        settle(key, &mut a, &mut b, &mut tally);
        // What is left is on one side only.
        loop {
            let (x, y) = (a.pop(key), b.pop(key));
            if x.is_none() && y.is_none() {
                break;
            }
            tally.note(key, x.as_ref(), y.as_ref());
        }
    }
    let mut divergences: Vec<Divergence> = tally.by_key.into_values().collect();
    divergences.sort_by_key(|d| {
        d.first().map(|m| {
            (
                m.recorded_seq.unwrap_or(u64::MAX),
                m.new_seq.unwrap_or(u64::MAX),
            )
        })
    });
    Ok(Comparison {
        compared: tally.compared,
        mismatches: tally.mismatches,
        divergences,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(seq: u64, kind: &'static str, body: Body) -> Norm {
        Norm {
            seq,
            kind,
            agent: None,
            invocation: Some("INV_1".into()),
            body,
        }
    }

    fn chunk(seq: u64, text: &str) -> Norm {
        norm(seq, "chunk", Body::Chunk(text.into()))
    }

    fn loop_end(seq: u64) -> Norm {
        norm(seq, "loop_finished", Body::Event(Value::Null))
    }

    fn shape(q: &VecDeque<Norm>) -> Vec<String> {
        q.iter()
            .map(|n| match &n.body {
                Body::Chunk(t) => format!("chunk:{t}"),
                Body::Event(_) => n.kind.to_string(),
            })
            .collect()
    }

    #[test]
    fn a_loops_last_text_compares_the_same_whenever_it_was_flushed() {
        // Flushed after the loop's end (an idle machine), split around it (a busy one),
        // or all before it: one text, then the end.
        let orders: [Vec<Norm>; 3] = [
            vec![loop_end(1), chunk(2, "answer")],
            vec![chunk(1, "ans"), loop_end(2), chunk(3, "wer")],
            vec![chunk(1, "ans"), chunk(2, "wer"), loop_end(3)],
        ];
        for order in orders {
            let mut q = VecDeque::new();
            for n in order {
                queue(&mut q, n);
            }
            assert_eq!(shape(&q), ["chunk:answer", "loop_finished"]);
        }
    }

    #[test]
    fn a_chunk_or_a_loops_end_waits_while_a_late_chunk_may_still_join_it() {
        let mut q = VecDeque::new();
        queue(&mut q, chunk(1, "ans"));
        assert!(!complete(&q, false), "a chunk may still grow");
        queue(&mut q, loop_end(2));
        assert!(!complete(&q, false), "the last text may still come");
        queue(
            &mut q,
            norm(3, "invocation_finished", Body::Event(Value::Null)),
        );
        assert!(complete(&q, false));
        assert!(complete(&q, true));
        let mut q = VecDeque::new();
        queue(&mut q, loop_end(1));
        assert!(!complete(&q, false));
        assert!(complete(&q, true));
    }
}
