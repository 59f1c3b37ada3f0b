//! What a replay knows about every event of a run without holding the events: its time,
//! and where the task starts and the failures are. Built while the log is read once;
//! small (8 bytes an event), shared with the UI for the transport's jumps and clock.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use crate::base::protocol::InvocationStatus;
use crate::model::event::{EngineEvent, Envelope, InvocationFinished, TaskStatus};

/// Per-event times and jump targets of one run's log, up to the events read so far.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Marks {
    /// `ts[i]` is the time (ms) of event `i + 1`, never earlier than the events before it
    /// (events of concurrent tasks may be stamped a little out of order; a replay's
    /// clock and a seek by time need them in order, as the state's own clock is).
    ts: Vec<i64>,
    /// Each task's first and last event so far.
    span: std::collections::HashMap<Arc<str>, (u64, u64)>,
    /// Events where a task starts running: its first attempt, a new attempt after a
    /// retry, or its first attempt after it was reset or the run resumed.
    starts: Vec<Mark>,
    /// Events that record a failure, one stop per failure: an invocation that did not
    /// succeed, a task that failed with no such invocation since it started (before any
    /// call), a reference that did not resolve, a crash found on resume. A task blocked
    /// by a failure is not a stop of its own: the failure that blocked it is.
    failures: Vec<Mark>,
    /// Tasks started since they were last reset, with the attempt last started.
    started: HashMap<Arc<str>, u32>,
    /// Tasks with a failure marked since their latest start: their end is no new stop.
    failed: HashSet<Arc<str>>,
}

/// A jump target: an event, the task it is about and what happened there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mark {
    /// The event.
    pub seq: u64,
    /// The task, when the event is a task's.
    pub task: Option<Arc<str>>,
    /// What happened, e.g. `attempt 2 failed (E003)`.
    pub what: String,
}

/// A direction through the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    /// Towards the end.
    Forward,
    /// Towards the start.
    Back,
}

impl Marks {
    /// Events marked so far.
    pub fn len(&self) -> u64 {
        self.ts.len() as u64
    }

    /// Whether no event is marked.
    pub fn is_empty(&self) -> bool {
        self.ts.is_empty()
    }

    /// Records event `env`, which must be the next one (`len() + 1`); events out of
    /// order are ignored.
    pub fn add(&mut self, env: &Envelope) {
        if env.seq != self.len() + 1 {
            return;
        }
        let last = self.ts.last().copied().unwrap_or(i64::MIN);
        self.ts.push(env.ts.max(last));
        let task = env.task_id.as_ref();
        if let Some(t) = task {
            self.span
                .entry(t.clone())
                .and_modify(|s| s.1 = env.seq)
                .or_insert((env.seq, env.seq));
        }
        let failure: Option<String> = match &env.event {
            EngineEvent::InvocationStarted(st) => {
                if let Some(t) = task {
                    self.started_attempt(env.seq, t, st.attempt);
                }
                None
            }
            EngineEvent::TaskReset(_) => {
                if let Some(t) = task {
                    self.started.remove(t);
                    self.failed.remove(t);
                }
                None
            }
            EngineEvent::RunResumed(_) => {
                self.started.clear();
                self.failed.clear();
                None
            }
            EngineEvent::InvocationFinished(f) => self.invocation_failure(task, f),
            // A task's failed end after its failed attempt is the same failure.
            EngineEvent::TaskFinished(_) if task.is_some_and(|t| self.failed.contains(t)) => None,
            other => failure_of(other),
        };
        if let Some(what) = failure {
            if let Some(t) = task {
                self.failed.insert(t.clone());
            }
            self.failures.push(Mark {
                seq: env.seq,
                task: task.cloned(),
                what,
            });
        }
    }

    /// Marks event `seq` as a start of task `t` when it is one: the task's first attempt
    /// since a reset or resume, or a later attempt than the one last started (a retry).
    fn started_attempt(&mut self, seq: u64, t: &Arc<str>, attempt: u32) {
        let new = self.started.get(t).is_none_or(|&a| attempt > a);
        if new {
            self.started.insert(t.clone(), attempt);
            self.failed.remove(t);
            self.starts.push(Mark {
                seq,
                task: Some(t.clone()),
                what: format!("attempt {attempt} started"),
            });
        }
    }

    /// What an invocation that did not succeed did (`attempt 2 failed (E003)`); none for
    /// a success.
    fn invocation_failure(
        &self,
        task: Option<&Arc<str>>,
        f: &InvocationFinished,
    ) -> Option<String> {
        let st = match f.status {
            Some(InvocationStatus::Success) | None => return None,
            Some(st) => st,
        };
        let attempt = task
            .and_then(|t| self.started.get(t))
            .map(|a| format!("attempt {a} "))
            .unwrap_or_default();
        let codes: Vec<&str> = f.errors.iter().map(|c| c.as_str()).collect();
        Some(format!(
            "{attempt}{}{}",
            match st {
                InvocationStatus::Timeout => "timed out",
                InvocationStatus::Partial => "ended partial",
                _ => "failed",
            },
            if codes.is_empty() {
                String::new()
            } else {
                format!(" ({})", codes.join(", "))
            }
        ))
    }

    /// Records the next event as one that could not be read (it keeps its number and
    /// takes the time `ts`).
    pub fn skip(&mut self, ts: i64) {
        let last = self.ts.last().copied().unwrap_or(i64::MIN);
        self.ts.push(ts.max(last));
    }

    /// The first and the last event of task `task` read so far, if it has one.
    pub fn span_of(&self, task: &str) -> Option<(u64, u64)> {
        self.span.get(task).copied()
    }

    /// Time (ms) of event `seq` (`None` for 0 or an event not read yet).
    pub fn ts(&self, seq: u64) -> Option<i64> {
        seq.checked_sub(1)
            .and_then(|i| self.ts.get(i as usize))
            .copied()
    }

    /// The last event at or before time `ts` (ms); 0 when the run starts later.
    pub fn at_time(&self, ts: i64) -> u64 {
        self.ts.partition_point(|&t| t <= ts) as u64
    }

    /// The next task start after `seq` (forward) or the last one before it (back).
    pub fn start(&self, seq: u64, dir: Dir) -> Option<&Mark> {
        step(&self.starts, seq, dir)
    }

    /// The next failure after `seq` (forward) or the last one before it (back).
    pub fn failure(&self, seq: u64, dir: Dir) -> Option<&Mark> {
        step(&self.failures, seq, dir)
    }
}

fn step(marks: &[Mark], seq: u64, dir: Dir) -> Option<&Mark> {
    match dir {
        Dir::Forward => marks.get(marks.partition_point(|m| m.seq <= seq)),
        Dir::Back => marks
            .partition_point(|m| m.seq < seq)
            .checked_sub(1)
            .and_then(|i| marks.get(i)),
    }
}

/// The failure another event records, if it records one (every event is named, so a
/// new one is decided on; the ones [`Marks::add`] reads itself record none here).
fn failure_of(event: &EngineEvent) -> Option<String> {
    match event {
        EngineEvent::TaskFinished(f) => match f.status {
            TaskStatus::Failed => Some("task failed".into()),
            TaskStatus::Timeout => Some("task timed out".into()),
            _ => None,
        },
        EngineEvent::ReferenceFailed(_) => Some("a reference did not resolve".into()),
        EngineEvent::SkillRefused(_) => Some("a skill was refused".into()),
        EngineEvent::CrashDetected(_) => Some("a crash found on resume".into()),
        EngineEvent::InvocationLost(_) => Some("an attempt lost in a crash".into()),
        EngineEvent::InvocationStarted(_)
        | EngineEvent::TaskBlocked(_)
        | EngineEvent::TaskReset(_)
        | EngineEvent::RunResumed(_)
        | EngineEvent::InvocationFinished(_)
        | EngineEvent::RunStarted(_)
        | EngineEvent::LeaseTakenOver(_)
        | EngineEvent::RunPaused(_)
        | EngineEvent::RunUnpaused(_)
        | EngineEvent::CancelRequested(_)
        | EngineEvent::BudgetReached(_)
        | EngineEvent::RunFinished(_)
        | EngineEvent::TaskReady(_)
        | EngineEvent::Chunk(_)
        | EngineEvent::AtomsGraded(_)
        | EngineEvent::RetryScheduled(_)
        | EngineEvent::ContextPlanned(_)
        | EngineEvent::ReviewAccepted(_)
        | EngineEvent::ReviewRejected(_)
        | EngineEvent::ToolCalled(_)
        | EngineEvent::ToolAnswered(_)
        | EngineEvent::SkillActivated(_)
        | EngineEvent::ContextCompressed(_)
        | EngineEvent::LoopFinished(_)
        | EngineEvent::DebateStarted(_)
        | EngineEvent::DebateTurnStarted(_)
        | EngineEvent::DebateReply(_)
        | EngineEvent::PositionsCompared(_)
        | EngineEvent::HostDecided(_)
        | EngineEvent::DebateFinished(_) => None,
        EngineEvent::DebateError(_) => Some("a debate error".into()),
        EngineEvent::DebateOutput(o) => (o.outcome
            != crate::model::event::debate::TurnOutcome::Valid)
            .then(|| "a turn that did not read".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::protocol::{Constraints, GradeCounts};
    use crate::model::event::{Chunk, Empty, InvocationFinished, InvocationStarted, TaskReset};

    fn env(seq: u64, ts: i64, task: &str, event: EngineEvent) -> Envelope {
        Envelope {
            run_id: Arc::from("R"),
            seq,
            ts,
            task_id: Some(Arc::from(task)),
            invocation_id: None,
            agent: None,
            event,
        }
    }

    fn started(attempt: u32) -> EngineEvent {
        EngineEvent::InvocationStarted(InvocationStarted {
            attempt,
            prompt_tokens: 1,
            constraints: Constraints {
                timeout_seconds: 1.0,
                max_tokens: 1,
                temperature: 0.1,
            },
            quality_threshold: "B".into(),
        })
    }

    fn finished(status: InvocationStatus) -> EngineEvent {
        EngineEvent::InvocationFinished(InvocationFinished {
            status: Some(status),
            execution_time_ms: 1,
            output_tokens: 1,
            chunks: 1,
            atoms: 0,
            avg_score: 0.0,
            grades: GradeCounts::default(),
            issues: 0,
            errors: vec![],
            error_message: None,
            provider_usage: None,
            cost_usd: None,
            loop_prompt_tokens: None,
        })
    }

    #[test]
    fn starts_failures_and_times_are_found_both_ways() {
        let mut m = Marks::default();
        let chunk = || EngineEvent::Chunk(Chunk { text: "x".into() });
        let events = [
            env(1, 100, "A", EngineEvent::TaskReady(Empty {})),
            env(2, 110, "A", started(1)),
            env(3, 120, "A", chunk()),
            env(4, 130, "A", finished(InvocationStatus::Failed)),
            env(5, 140, "A", started(2)),
            env(6, 150, "B", started(1)),
            env(7, 160, "A", finished(InvocationStatus::Success)),
            env(
                8,
                170,
                "A",
                EngineEvent::TaskReset(TaskReset { reason: "r".into() }),
            ),
            env(9, 180, "A", started(1)),
        ];
        for e in &events {
            m.add(e);
        }
        m.add(&events[3]); // out of order: ignored
        assert_eq!(m.len(), 9);
        let start = |seq, dir| m.start(seq, dir).map(|k| k.seq);
        let failure = |seq, dir| m.failure(seq, dir).map(|k| k.seq);
        assert_eq!(start(0, Dir::Forward), Some(2));
        assert_eq!(
            start(2, Dir::Forward),
            Some(5),
            "a retry's attempt is a start"
        );
        assert_eq!(start(5, Dir::Forward), Some(6));
        assert_eq!(
            start(6, Dir::Forward),
            Some(9),
            "after a reset, attempt 1 is one"
        );
        assert_eq!(start(6, Dir::Back), Some(5));
        assert_eq!(start(2, Dir::Back), None);
        assert_eq!(failure(0, Dir::Forward), Some(4));
        assert_eq!(failure(4, Dir::Forward), None);
        assert_eq!(failure(9, Dir::Back), Some(4));
        let f = m.failure(0, Dir::Forward).expect("a failure");
        assert_eq!(f.task.as_deref(), Some("A"));
        assert_eq!(f.what, "attempt 1 failed");
        assert_eq!(
            m.start(2, Dir::Forward).map(|k| k.what.as_str()),
            Some("attempt 2 started")
        );
        assert_eq!(m.ts(3), Some(120));
        assert_eq!(m.ts(0), None);
        assert_eq!(m.at_time(125), 3);
        assert_eq!(m.at_time(99), 0);
        assert_eq!(m.at_time(10_000), 9);
    }
}
