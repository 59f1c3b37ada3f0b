//! What a debate session is asked to do: the question, the round limit, the host's
//! thresholds and the limits every agent works under.

use serde::{Deserialize, Serialize};

use crate::base::protocol::debate::{
    CONTINUE_ABOVE, CONVERGE_ABOVE, STUBBORN_ROUNDS, STUBBORN_SELF_SIMILARITY,
};

/// Most rounds a session may have (the protocol's safety limit).
pub const MAX_ROUNDS_LIMIT: u32 = 5;
/// Rounds when none are asked for.
pub const DEFAULT_MAX_ROUNDS: u32 = 5;
/// Most tokens an agent's output may have.
pub const MAX_OUTPUT_TOKENS: u64 = 2000;
/// Longest question accepted, in characters.
pub const MAX_QUESTION_CHARS: usize = 4000;

/// The host's decision thresholds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Thresholds {
    /// Mean similarity above which the host converges.
    pub converge_above: f64,
    /// Mean similarity above which (up to `converge_above`) the host continues; at or
    /// below it the host forces opposition.
    pub continue_above: f64,
    /// Self-similarity above which an agent's round counts as unchanged.
    pub stubborn_self_similarity: f64,
    /// Consecutive unchanged rounds that make an agent stubborn.
    pub stubborn_rounds: u32,
    /// Change of the mean similarity below which a round counts as no significant change.
    pub no_change_delta: f64,
    /// Consecutive rounds without significant change that end the discussion early.
    pub no_change_rounds: u32,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            converge_above: CONVERGE_ABOVE,
            continue_above: CONTINUE_ABOVE,
            stubborn_self_similarity: STUBBORN_SELF_SIMILARITY,
            stubborn_rounds: STUBBORN_ROUNDS as u32,
            no_change_delta: 0.02,
            no_change_rounds: 2,
        }
    }
}

impl Thresholds {
    /// Checks that the thresholds are in range and ordered; the message names the field.
    pub fn validate(&self) -> Result<(), String> {
        let unit = |name: &str, v: f64| {
            if (0.0..=1.0).contains(&v) {
                Ok(())
            } else {
                Err(format!("{name} must be between 0 and 1 (got {v})"))
            }
        };
        unit("converge_above", self.converge_above)?;
        unit("continue_above", self.continue_above)?;
        unit("stubborn_self_similarity", self.stubborn_self_similarity)?;
        unit("no_change_delta", self.no_change_delta)?;
        if self.continue_above >= self.converge_above {
            return Err(format!(
                "continue_above ({}) must be below converge_above ({})",
                self.continue_above, self.converge_above
            ));
        }
        if self.stubborn_rounds == 0 || self.no_change_rounds == 0 {
            return Err("stubborn_rounds and no_change_rounds must be at least 1".into());
        }
        Ok(())
    }
}

/// Where embeddings come from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum EmbeddingSource {
    /// The built-in embedding: no network.
    Builtin,
    /// An OpenAI-compatible `/embeddings` endpoint of a provider profile.
    Endpoint {
        /// The profile.
        profile: String,
        /// Endpoint root (`…/v1`); `/embeddings` is appended.
        base_url: String,
        /// Embedding model.
        model: String,
    },
}

fn one() -> u64 {
    1
}

fn is_one(n: &u64) -> bool {
    *n == 1
}

/// A debate session's settings, stored as the run's plan snapshot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DebateSpec {
    /// The user's question.
    pub question: String,
    /// Most rounds (1 to [`MAX_ROUNDS_LIMIT`]).
    pub max_rounds: u32,
    /// The host's thresholds.
    pub thresholds: Thresholds,
    /// Time an agent has for one answer, ms.
    pub agent_timeout_ms: u64,
    /// Tries for an output that does not follow the protocol (the first included).
    pub output_tries: u32,
    /// What every retry delay of a failing provider is divided by (1: the protocol's).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub retry_delay_div: u64,
    /// IANA time zone of the dates the agents plan with.
    pub timezone: String,
    /// Where embeddings come from.
    pub embedding: EmbeddingSource,
    /// Who asked (the front end's `userId`), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_id: Option<String>,
    /// The front end's `conversationId`, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation_id: Option<String>,
    /// The profile whose moderation endpoint checks the outputs (besides the built-in
    /// check), when it names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moderation: Option<String>,
}

impl DebateSpec {
    /// A session on `question` with the default settings.
    pub fn new(question: impl Into<String>) -> DebateSpec {
        DebateSpec {
            question: question.into(),
            max_rounds: DEFAULT_MAX_ROUNDS,
            thresholds: Thresholds::default(),
            agent_timeout_ms: 300_000,
            output_tries: 3,
            retry_delay_div: 1,
            timezone: "UTC".into(),
            embedding: EmbeddingSource::Builtin,
            user_id: None,
            conversation_id: None,
            moderation: None,
        }
    }

    /// Checks the settings; the message says what is wrong.
    pub fn validate(&self) -> Result<(), String> {
        let q = self.question.trim();
        if q.is_empty() {
            return Err("the question is empty".into());
        }
        if q.chars().count() > MAX_QUESTION_CHARS {
            return Err(format!(
                "the question has {} characters; at most {MAX_QUESTION_CHARS} are accepted",
                q.chars().count()
            ));
        }
        if !(1..=MAX_ROUNDS_LIMIT).contains(&self.max_rounds) {
            return Err(format!(
                "max rounds must be between 1 and {MAX_ROUNDS_LIMIT} (got {})",
                self.max_rounds
            ));
        }
        if self.agent_timeout_ms == 0 {
            return Err("the agent timeout must be above 0".into());
        }
        if !(1..=5).contains(&self.output_tries) {
            return Err(format!(
                "output tries must be between 1 and 5 (got {})",
                self.output_tries
            ));
        }
        if self.timezone.parse::<chrono_tz::Tz>().is_err() {
            return Err(format!(
                "`{}` is not an IANA time zone (e.g. UTC, Asia/Shanghai)",
                self.timezone
            ));
        }
        self.thresholds.validate()
    }
}
