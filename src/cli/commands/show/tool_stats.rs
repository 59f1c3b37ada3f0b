//! Tool calls added up, as `show` reports them: for a loop or a whole run, how many
//! calls, how many succeeded, the retries, the cache hits and the time, in all and per
//! tool (with the tokens sent to each tool and those of its observations).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::base::protocol::messages::ToolMetrics;

/// Tool calls added up.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CallTotals {
    /// Calls made.
    pub calls: u32,
    /// Calls that succeeded (their observation is not an error).
    pub successes: u32,
    /// Successes over calls, 0 to 1 (none without calls).
    pub success_rate: Option<f64>,
    /// Retries made over the calls.
    pub retries: u32,
    /// Calls answered from the run's cache.
    pub cached: u32,
    /// Wall time of the calls, retries included, ms.
    pub duration_ms: f64,
}

impl CallTotals {
    /// Adds one call.
    fn add(&mut self, c: &ToolCallReport) {
        self.calls += 1;
        self.successes += u32::from(c.metrics.success);
        self.retries += c.metrics.retry_count;
        self.cached += u32::from(c.cached);
        self.duration_ms += c.metrics.duration_ms;
        self.success_rate = Some(f64::from(self.successes) / f64::from(self.calls));
    }
}

/// One tool's calls added up.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ToolStats {
    /// Tool.
    pub tool_name: String,
    /// Its calls added up.
    #[serde(flatten)]
    pub totals: CallTotals,
    /// Mean wall time of a call, ms.
    pub mean_ms: f64,
    /// Tokens sent to the tool.
    pub input_tokens: u64,
    /// Tokens of its observations.
    pub output_tokens: u64,
}

/// `calls` added up, in all and per tool (by tool name).
pub fn tool_stats<'a>(
    calls: impl IntoIterator<Item = &'a ToolCallReport>,
) -> (CallTotals, Vec<ToolStats>) {
    let mut all = CallTotals::default();
    let mut per: BTreeMap<&str, ToolStats> = BTreeMap::new();
    for c in calls {
        all.add(c);
        let t = per.entry(&c.metrics.tool_name).or_default();
        t.totals.add(c);
        t.input_tokens += c.metrics.input_tokens;
        t.output_tokens += c.metrics.output_tokens;
    }
    let stats = per
        .into_iter()
        .map(|(name, mut t)| {
            t.tool_name = name.to_string();
            t.mean_ms = t.totals.duration_ms / f64::from(t.totals.calls.max(1));
            t
        })
        .collect();
    (all, stats)
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
