//! The tool-using loops of a run, as `show` reports them: per loop (one invocation, the
//! conversation) its end, steps, compressions, time and tokens in and out, its tool
//! calls added up per tool, and every call's metrics. Folded from the logged events
//! only, so a stored or imported run reports the same as it did live.

use std::collections::BTreeMap;

use serde::Serialize;

use super::tool_stats::{tool_stats, CallTotals, ToolCallReport, ToolStats};
use crate::base::protocol::messages::ToolMetrics;
use crate::data::store::EventRow;
use crate::model::event::EngineEvent;

/// One loop's figures (a conversation's metrics).
#[derive(Debug, Clone, Default, Serialize)]
pub struct LoopReport {
    /// The conversation: the id of the invocation the loop ran in, unique in the
    /// database and the same in the log, the invocations table and a replay.
    pub conversation_id: String,
    /// Task.
    pub task_id: String,
    /// The invocation the loop ran in (the same as `conversation_id`).
    pub invocation_id: String,
    /// `answer`, `step_limit`, `token_budget` or `context_window` (empty while it runs).
    pub stop: String,
    /// Model calls.
    pub steps: u32,
    /// Compressions of the conversation.
    pub compressions: u32,
    /// Wall time from the invocation's first event to the loop's end, ms (none while
    /// it runs).
    pub duration_ms: Option<u64>,
    /// Tokens of every step's prompt, added up (none while it runs, or when its log
    /// does not split the total).
    pub input_tokens: Option<u64>,
    /// Tokens of the model's text: thoughts and the final answer (none likewise).
    pub output_tokens: Option<u64>,
    /// Prompt and output tokens over every step.
    pub total_tokens: u64,
    /// Skills activated, as chains.
    pub skills: Vec<String>,
    /// Skill activations refused, with why.
    pub refusals: Vec<String>,
    /// The tool calls added up: calls, successes, success rate, retries, time.
    pub tool_totals: CallTotals,
    /// The same per tool, by tool name.
    pub tool_stats: Vec<ToolStats>,
    /// Every tool call, in order.
    pub tool_calls: Vec<ToolCallReport>,
}

/// Folds a run's events into its loops, keyed by invocation.
#[derive(Debug, Default)]
pub struct Loops {
    loops: BTreeMap<String, LoopReport>,
    /// Time of each invocation's first event, ms since the Unix epoch.
    started: BTreeMap<String, i64>,
}

/// The kinds of events [`Loops::fold`] reads (an invocation's start times its loop).
pub const KINDS: [&str; 5] = [
    "invocation_started",
    "tool_answered",
    "skill_activated",
    "skill_refused",
    "loop_finished",
];

impl Loops {
    /// Folds one event.
    pub fn fold(&mut self, row: &EventRow, event: &EngineEvent) {
        let (Some(task), Some(inv)) = (&row.task_id, &row.invocation_id) else {
            return;
        };
        if !self.started.contains_key(inv) {
            self.started.insert(inv.clone(), row.ts);
        }
        let entry = || LoopReport {
            conversation_id: inv.clone(),
            task_id: task.clone(),
            invocation_id: inv.clone(),
            ..LoopReport::default()
        };
        match event {
            EngineEvent::ToolAnswered(a) => {
                let l = self.loops.entry(inv.clone()).or_insert_with(entry);
                l.tool_calls.push(ToolCallReport {
                    metrics: ToolMetrics {
                        tool_name: a.tool.clone(),
                        duration_ms: a.duration_ms,
                        input_tokens: a.input_tokens,
                        output_tokens: a.output_tokens,
                        success: !a.is_error,
                        retry_count: a.retries,
                        output_level: serde_json::to_value(a.output_level)
                            .ok()
                            .and_then(|v| v.as_str().map(str::to_string))
                            .unwrap_or_default(),
                    },
                    cached: a.cached,
                    data_file: a.data_file.clone(),
                });
            }
            EngineEvent::SkillActivated(s) => {
                let l = self.loops.entry(inv.clone()).or_insert_with(entry);
                l.skills.push(s.chain.join(" → "));
            }
            EngineEvent::SkillRefused(s) => {
                let l = self.loops.entry(inv.clone()).or_insert_with(entry);
                l.refusals.push(s.reason.clone());
            }
            EngineEvent::LoopFinished(f) => {
                let started = self.started.get(inv).copied();
                let l = self.loops.entry(inv.clone()).or_insert_with(entry);
                l.stop = f.stop.clone();
                l.steps = f.steps;
                l.compressions = f.compressions;
                l.total_tokens = f.total_tokens;
                l.duration_ms = started.map(|s| u64::try_from(row.ts - s).unwrap_or(0));
                // A log written before the split was recorded has only the total.
                let split = f.input_tokens + f.output_tokens == f.total_tokens;
                l.input_tokens = split.then_some(f.input_tokens);
                l.output_tokens = split.then_some(f.output_tokens);
            }
            _ => {}
        }
    }

    /// The loops, in invocation order, their calls added up.
    pub fn into_reports(self) -> Vec<LoopReport> {
        self.loops
            .into_values()
            .map(|mut l| {
                (l.tool_totals, l.tool_stats) = tool_stats(&l.tool_calls);
                l
            })
            .collect()
    }
}

/// The loops of a run added up: the model's tokens, and the tool calls in all and per
/// tool.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RunToolMetrics {
    /// Tool-using loops (conversations).
    pub loops: u32,
    /// Tokens of the prompts over every loop (none when a loop's log does not split
    /// its totals, or has not finished).
    pub input_tokens: Option<u64>,
    /// Tokens of the model's text over every loop (none likewise).
    pub output_tokens: Option<u64>,
    /// Prompt and output tokens over every loop.
    pub total_tokens: u64,
    /// The tool calls added up.
    pub tool_totals: CallTotals,
    /// The same per tool, by tool name.
    pub tool_stats: Vec<ToolStats>,
}

impl RunToolMetrics {
    /// Adds up `loops`.
    pub fn from_loops(loops: &[LoopReport]) -> RunToolMetrics {
        let (tool_totals, tool_stats) = tool_stats(loops.iter().flat_map(|l| &l.tool_calls));
        let sum = |f: fn(&LoopReport) -> Option<u64>| loops.iter().map(f).sum::<Option<u64>>();
        RunToolMetrics {
            loops: u32::try_from(loops.len()).unwrap_or(u32::MAX),
            input_tokens: sum(|l| l.input_tokens),
            output_tokens: sum(|l| l.output_tokens),
            total_tokens: loops.iter().map(|l| l.total_tokens).sum(),
            tool_totals,
            tool_stats,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::protocol::messages::OutputLevel;
    use crate::data::store::EventRow;
    use crate::model::event::{EngineEvent, LoopFinished, ToolAnswered};

    fn answered(tool: &str, ok: bool, retries: u32, ms: f64) -> EngineEvent {
        EngineEvent::ToolAnswered(ToolAnswered {
            step: 1,
            tool_call_id: "c".into(),
            tool: tool.into(),
            observation: String::new(),
            is_error: !ok,
            output_level: OutputLevel::Standard,
            data_file: None,
            data_size_bytes: 0,
            duration_ms: ms,
            input_tokens: 2,
            output_tokens: 3,
            retries,
            cached: false,
        })
    }

    fn finished(input: u64, output: u64, total: u64) -> EngineEvent {
        EngineEvent::LoopFinished(LoopFinished {
            stop: "answer".into(),
            steps: 2,
            tool_calls: 2,
            compressions: 0,
            total_tokens: total,
            answer_tokens: None,
            input_tokens: input,
            output_tokens: output,
        })
    }

    fn fold(loops: &mut Loops, inv: &str, ts: i64, event: EngineEvent) {
        let row = EventRow {
            seq: 0,
            ts,
            task_id: Some("T".into()),
            invocation_id: Some(inv.into()),
            agent: None,
            event: Ok(event.clone()),
        };
        loops.fold(&row, &event);
    }

    #[test]
    fn loops_add_up_per_tool_and_across_the_run() {
        let mut loops = Loops::default();
        fold(&mut loops, "I1", 1_000, answered("get_now", true, 2, 4.0));
        fold(&mut loops, "I1", 1_010, answered("get_now", false, 1, 6.0));
        fold(&mut loops, "I1", 1_250, finished(90, 10, 100));
        // An older log: the loop's total only.
        fold(
            &mut loops,
            "I2",
            2_000,
            answered("file_search", true, 0, 1.0),
        );
        fold(&mut loops, "I2", 2_040, finished(0, 0, 50));
        let reports = loops.into_reports();
        let first = &reports[0];
        assert_eq!(first.conversation_id, "I1");
        assert_eq!(first.duration_ms, Some(250));
        assert_eq!(
            (first.input_tokens, first.output_tokens),
            (Some(90), Some(10))
        );
        assert_eq!(
            first.tool_stats,
            [ToolStats {
                tool_name: "get_now".into(),
                totals: CallTotals {
                    calls: 2,
                    successes: 1,
                    success_rate: Some(0.5),
                    retries: 3,
                    cached: 0,
                    duration_ms: 10.0,
                },
                mean_ms: 5.0,
                input_tokens: 4,
                output_tokens: 6,
            }]
        );
        assert_eq!(
            (reports[1].input_tokens, reports[1].output_tokens),
            (None, None)
        );
        let run = RunToolMetrics::from_loops(&reports);
        assert_eq!(run.loops, 2);
        assert_eq!((run.input_tokens, run.total_tokens), (None, 150));
        assert_eq!(run.tool_totals.calls, 3);
        assert_eq!(run.tool_totals.retries, 3);
        assert_eq!(run.tool_stats.len(), 2);
    }
}
