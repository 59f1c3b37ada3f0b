//! The allowed range of every number a plan or the config file may hold, in one table,
//! and the checked conversion of seconds into a `Duration`.
//!
//! docs/plans.md and docs/providers.md list the same ranges by hand; a test checks that
//! each row of [`PLAN`] and [`CONFIG`] is mentioned there.

use std::time::Duration;

/// The allowed values of one numeric field.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NumRange {
    /// Where the number is written, as the docs name it (`constraints.timeout_seconds`).
    pub field: &'static str,
    /// Smallest value allowed.
    pub min: f64,
    /// Largest value allowed.
    pub max: f64,
    /// Only whole numbers.
    pub whole: bool,
    /// What the number counts (`seconds`, `tokens`; empty for a plain number).
    pub unit: &'static str,
    /// 0 is allowed too, meaning "off", although it is below `min`.
    pub zero_is_off: bool,
}

const fn whole(field: &'static str, min: f64, max: f64, unit: &'static str) -> NumRange {
    NumRange {
        field,
        min,
        max,
        whole: true,
        unit,
        zero_is_off: false,
    }
}

const fn real(field: &'static str, min: f64, max: f64, unit: &'static str) -> NumRange {
    NumRange {
        field,
        min,
        max,
        whole: false,
        unit,
        zero_is_off: false,
    }
}

/// A task's timeout override.
pub const TASK_TIMEOUT: NumRange = real("constraints.timeout_seconds", 0.1, 86_400.0, "seconds");
/// A task's max_tokens override.
pub const TASK_MAX_TOKENS: NumRange = whole("constraints.max_tokens", 1.0, 1e6, "tokens");
/// A task's temperature override.
pub const TASK_TEMPERATURE: NumRange = real("constraints.temperature", 0.0, 2.0, "");
/// An agent's base timeout.
pub const AGENT_TIMEOUT: NumRange = real("agents.NAME.timeout_seconds", 0.1, 86_400.0, "seconds");
/// An agent's base max_tokens.
pub const AGENT_MAX_TOKENS: NumRange = whole("agents.NAME.max_tokens", 1.0, 1e6, "tokens");
/// An agent's base temperature.
pub const AGENT_TEMPERATURE: NumRange = real("agents.NAME.temperature", 0.0, 2.0, "");
/// An agent's context window.
pub const AGENT_MAX_INPUT: NumRange = whole("agents.NAME.max_input_tokens", 100.0, 1e8, "tokens");
/// An agent's data area.
pub const AGENT_DATA_AREA: NumRange = whole("agents.NAME.data_area_tokens", 0.0, 1e8, "tokens");
/// Most atoms of a task's answer.
pub const MAX_ATOMS: NumRange = whole("output_requirements.max_atoms", 1.0, 10_000.0, "atoms");
/// The token budget of a summary.
pub const TRANSFER_MAX_TOKENS: NumRange = whole("transfer_config.max_tokens", 1.0, 1e8, "tokens");
/// One priority level kept.
pub const PRIORITY_LEVEL: NumRange = whole("transfer_config.priority_filter[]", 1.0, 4.0, "");
/// Atoms shown inline in reference mode.
pub const INLINE_PREVIEW: NumRange = whole(
    "transfer_config.inline_preview_count",
    0.0,
    1_000.0,
    "atoms",
);
/// Tokens of a summary, as a plan gives them.
pub const SUMMARY_LENGTH: NumRange = whole(
    "transfer_config.summary_config.max_length",
    1.0,
    1e8,
    "tokens",
);
/// A summary's share of its input.
pub const SUMMARY_RATIO: NumRange = real(
    "transfer_config.summary_config.summary_ratio",
    0.01,
    1.0,
    "",
);
/// Tokens per batch.
pub const BATCH_SIZE: NumRange = whole(
    "transfer_config.batch_config.batch_size_tokens",
    1.0,
    1e8,
    "tokens",
);
/// Tokens repeated between batches.
pub const BATCH_OVERLAP: NumRange = whole(
    "transfer_config.batch_config.overlap_tokens",
    0.0,
    1e8,
    "tokens",
);
/// Most batches.
pub const MAX_BATCHES: NumRange = whole(
    "transfer_config.batch_config.max_batches",
    1.0,
    1_000.0,
    "batches",
);
/// Retries of a reference.
pub const RETRY_COUNT: NumRange = whole("fallback_config.retry_count", 0.0, 100.0, "retries");
/// Wait between retries of a reference.
pub const RETRY_DELAY: NumRange = whole(
    "fallback_config.retry_delay_ms",
    0.0,
    3_600_000.0,
    "milliseconds",
);
/// Rows of a db_query reference.
pub const DB_LIMIT: NumRange = whole("data_references[].limit", 1.0, 1_000.0, "rows");
/// Steps of a tool-using loop.
pub const MAX_STEPS: NumRange = whole("max_steps", 1.0, 100.0, "steps");
/// Tokens of a tool-using loop.
pub const TOKEN_BUDGET: NumRange = whole("token_budget", 1.0, 1e10, "tokens");

/// Every number of a plan.
pub const PLAN: &[NumRange] = &[
    TASK_TIMEOUT,
    TASK_MAX_TOKENS,
    TASK_TEMPERATURE,
    AGENT_TIMEOUT,
    AGENT_MAX_TOKENS,
    AGENT_TEMPERATURE,
    AGENT_MAX_INPUT,
    AGENT_DATA_AREA,
    MAX_ATOMS,
    TRANSFER_MAX_TOKENS,
    PRIORITY_LEVEL,
    INLINE_PREVIEW,
    SUMMARY_LENGTH,
    SUMMARY_RATIO,
    BATCH_SIZE,
    BATCH_OVERLAP,
    MAX_BATCHES,
    RETRY_COUNT,
    RETRY_DELAY,
    DB_LIMIT,
    MAX_STEPS,
    TOKEN_BUDGET,
];

/// Calls in flight through a provider profile.
pub const CONCURRENCY: NumRange = whole("concurrency", 1.0, 100_000.0, "calls");
/// Requests per minute of a provider profile (0: unlimited).
pub const RATE_LIMIT_RPM: NumRange = whole("rate_limit_rpm", 0.0, 1e6, "requests per minute");
/// Requests a provider profile's bucket may release at once.
pub const RATE_BURST: NumRange = whole("rate_burst", 1.0, 1e6, "requests");
/// A model's price, US dollars per million tokens.
pub const PRICE: NumRange = real(
    "prices.MODEL.input",
    0.0,
    1e6,
    "US dollars per million tokens",
);
/// A run's money budget, US dollars.
pub const MAX_COST: NumRange = real("--max-cost", 0.0, 1e9, "US dollars");
/// Seconds to open a connection.
pub const CONNECT_TIMEOUT: NumRange = real("connect_timeout_s", 0.1, 86_400.0, "seconds");
/// Seconds a stream may go without a byte.
pub const IDLE_TIMEOUT: NumRange = real("idle_timeout_s", 0.1, 86_400.0, "seconds");
/// Seconds an MCP server's start or one of its calls may take (`[mcp.NAME]`).
pub const MCP_TIMEOUT: NumRange = real("timeout_s", 0.1, 86_400.0, "seconds");
/// Seconds a whole model call may take on a profile.
pub const CALL_TIMEOUT: NumRange = real("timeout_s", 1.0, 86_400.0, "seconds");
/// Seconds to the first byte of a model's answer on a profile.
pub const FIRST_TOKEN_TIMEOUT: NumRange = real("first_token_timeout_s", 0.1, 86_400.0, "seconds");
/// Largest answer accepted.
pub const MAX_RESPONSE_BYTES: NumRange =
    whole("max_response_bytes", 1_024.0, 1_073_741_824.0, "bytes");
/// Anthropic extended thinking budget.
pub const THINKING_BUDGET: NumRange = NumRange {
    zero_is_off: true,
    ..whole("thinking_budget", 1_024.0, 1e6, "tokens")
};

/// Every number of a `[providers.NAME]` table of the config file (by field name).
pub const CONFIG: &[NumRange] = &[
    CONCURRENCY,
    RATE_LIMIT_RPM,
    RATE_BURST,
    CONNECT_TIMEOUT,
    IDLE_TIMEOUT,
    MAX_RESPONSE_BYTES,
    THINKING_BUDGET,
    CALL_TIMEOUT,
    FIRST_TOKEN_TIMEOUT,
];

impl NumRange {
    /// Whether `v` is allowed (NaN and infinities never are).
    pub fn contains(&self, v: f64) -> bool {
        (v >= self.min && v <= self.max) && (!self.whole || v.fract() == 0.0)
            || (self.zero_is_off && v == 0.0)
    }

    /// The range in words: `from 0.1 to 86400 seconds`, `0 (off), or from 1024 to …`.
    pub fn describe(&self) -> String {
        let unit = if self.unit.is_empty() {
            String::new()
        } else {
            format!(" {}", self.unit)
        };
        let off = if self.zero_is_off { "0 (off), or " } else { "" };
        format!("{off}from {} to {}{unit}", self.min, self.max)
    }

    /// `doc`, a sentence on a number, with the range in words before its full stop.
    pub fn document(&self, doc: &str) -> String {
        match doc.strip_suffix('.').unwrap_or(doc) {
            "" => format!("{}.", self.describe()),
            doc => format!("{doc} ({}).", self.describe()),
        }
    }

    /// The range as JSON Schema: its type (`integer` for whole numbers), `minimum` and
    /// `maximum`, and 0 beside them when 0 means "off".
    pub fn json_schema(&self) -> serde_json::Map<String, serde_json::Value> {
        use serde_json::{json, Value};
        let plain = |v: f64| -> Value {
            if v.fract() == 0.0 && v.abs() < 9e15 {
                json!(v as i64)
            } else {
                json!(v)
            }
        };
        let mut s = serde_json::Map::new();
        let kind = if self.whole { "integer" } else { "number" };
        s.insert("type".into(), kind.into());
        let bounds = json!({"minimum": plain(self.min), "maximum": plain(self.max)});
        if self.zero_is_off {
            s.insert("anyOf".into(), json!([{"const": 0}, bounds]));
        } else if let Value::Object(b) = bounds {
            s.extend(b);
        }
        s
    }

    /// Checks a number as written (`shown` is its text, for the message).
    pub fn check(&self, v: f64, shown: &str) -> Result<(), String> {
        if self.contains(v) {
            Ok(())
        } else if self.whole && v.is_finite() && v.fract() != 0.0 {
            Err(format!(
                "{shown} is not a whole number (a whole number {})",
                self.describe()
            ))
        } else {
            Err(format!("{shown} is out of range ({})", self.describe()))
        }
    }
}

/// Seconds as a `Duration` without the panic of `Duration::from_secs_f64`: NaN and
/// negative numbers give zero, numbers too large for a `Duration` give `Duration::MAX`.
pub fn duration_from_secs(secs: f64) -> Duration {
    if secs.is_nan() || secs <= 0.0 {
        return Duration::ZERO;
    }
    Duration::try_from_secs_f64(secs).unwrap_or(Duration::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_refuse_nan_infinities_fractions_and_the_edges_past() {
        assert!(TASK_TIMEOUT.contains(0.1) && TASK_TIMEOUT.contains(86_400.0));
        for bad in [0.0, 0.09, 86_400.5, 1e300, f64::NAN, f64::INFINITY, -1.0] {
            assert!(!TASK_TIMEOUT.contains(bad), "{bad}");
        }
        assert!(!TASK_MAX_TOKENS.contains(1.5));
        let thinking = CONFIG
            .iter()
            .find(|r| r.field == "thinking_budget")
            .expect("listed");
        assert!(thinking.contains(0.0) && thinking.contains(1024.0) && !thinking.contains(5.0));
        assert_eq!(
            TASK_TIMEOUT.check(1e300, "1e300"),
            Err("1e300 is out of range (from 0.1 to 86400 seconds)".into())
        );
        assert_eq!(
            thinking.describe(),
            "0 (off), or from 1024 to 1000000 tokens"
        );
    }

    #[test]
    fn durations_never_panic() {
        assert_eq!(duration_from_secs(1e300), Duration::MAX);
        assert_eq!(duration_from_secs(f64::INFINITY), Duration::MAX);
        assert_eq!(duration_from_secs(f64::NAN), Duration::ZERO);
        assert_eq!(duration_from_secs(-3.0), Duration::ZERO);
        assert_eq!(duration_from_secs(1.5), Duration::from_millis(1500));
    }
}
