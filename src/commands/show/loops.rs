//! The tool-using loops of a run, as `show` reports them: per loop (one invocation) its
//! end, steps, compressions and tokens, and per tool call its metrics.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::event::EngineEvent;
use crate::protocol::messages::ToolMetrics;
use crate::store::EventRow;

/// One loop's figures (a conversation's metrics).
#[derive(Debug, Clone, Default, Serialize)]
pub struct LoopReport {
    /// Task.
    pub task_id: String,
    /// The invocation the loop ran in.
    pub invocation_id: String,
    /// `answer`, `step_limit` or `token_budget` (empty while it runs).
    pub stop: String,
    /// Model calls.
    pub steps: u32,
    /// Compressions of the conversation.
    pub compressions: u32,
    /// Prompt and output tokens over every step.
    pub total_tokens: u64,
    /// Skills activated, as chains.
    pub skills: Vec<String>,
    /// Skill activations refused, with why.
    pub refusals: Vec<String>,
    /// Every tool call, in order.
    pub tool_calls: Vec<ToolCallReport>,
}

/// One tool call's metrics, with whether it was answered from the run's cache.
#[derive(Debug, Clone, Serialize)]
pub struct ToolCallReport {
    /// The metrics (duration, tokens in and out, success, retries, output level).
    #[serde(flatten)]
    pub metrics: ToolMetrics,
    /// Answered from the cache.
    pub cached: bool,
    /// File the data went to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data_file: Option<String>,
}

/// Folds a run's events into its loops, keyed by invocation.
#[derive(Debug, Default)]
pub struct Loops(BTreeMap<String, LoopReport>);

impl Loops {
    /// Folds one event.
    pub fn fold(&mut self, row: &EventRow, event: &EngineEvent) {
        let (Some(task), Some(inv)) = (&row.task_id, &row.invocation_id) else {
            return;
        };
        let entry = || LoopReport {
            task_id: task.clone(),
            invocation_id: inv.clone(),
            ..LoopReport::default()
        };
        match event {
            EngineEvent::ToolAnswered(a) => {
                let l = self.0.entry(inv.clone()).or_insert_with(entry);
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
                let l = self.0.entry(inv.clone()).or_insert_with(entry);
                l.skills.push(s.chain.join(" → "));
            }
            EngineEvent::SkillRefused(s) => {
                let l = self.0.entry(inv.clone()).or_insert_with(entry);
                l.refusals.push(s.reason.clone());
            }
            EngineEvent::LoopFinished(f) => {
                let l = self.0.entry(inv.clone()).or_insert_with(entry);
                l.stop = f.stop.clone();
                l.steps = f.steps;
                l.compressions = f.compressions;
                l.total_tokens = f.total_tokens;
            }
            _ => {}
        }
    }

    /// The loops, in invocation order.
    pub fn into_reports(self) -> Vec<LoopReport> {
        self.0.into_values().collect()
    }
}
