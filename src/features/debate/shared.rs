//! What the parts of a running debate session share: the session itself (settings,
//! model, event log, cancel signal, reserved invocation numbers) and what the rounds
//! keep between them. The rounds (`session`), one agent's turn (`speak`) and the end of
//! a round (`round_end`) all read it; it imports none of them.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;
use tokio::sync::watch;

use crate::base::protocol::debate::{AgentRole, PositionSummary};
use crate::base::protocol::debate_spec::DebateSpec;
use crate::base::protocol::debate_turn::RoundDigest;
use crate::base::tokens::TokenCounter;
use crate::data::provider::Provider;
use crate::data::store::StoreError;
use crate::model::event::TaskStatus;
use crate::run::engine::emit::Emitter;

/// The agent's last valid output and position.
pub type LastOutput = Option<(Value, PositionSummary)>;

/// A running session's shared parts.
pub struct Session {
    /// Settings.
    pub spec: DebateSpec,
    /// The model.
    pub provider: Arc<dyn Provider>,
    /// Event log.
    pub emitter: Emitter,
    /// Token counter.
    pub counter: TokenCounter,
    pub(super) now: Value,
    /// The moderation endpoint of the content check, when the profile names one.
    pub moderator: Option<Arc<super::moderation::HttpModerator>>,
    pub(super) cancel: watch::Receiver<bool>,
    /// Invocation numbers reserved and not used yet, per agent short name: (next, end).
    pub(super) ids: std::sync::Mutex<std::collections::HashMap<String, (u64, u64)>>,
}

/// Invocation numbers a session reserves per agent at a time: enough for every try of
/// every round, so the agents of a round (the first runs two at once) never wait on the
/// store for an id, and their order stays the simulated provider's.
const IDS_PER_AGENT: u64 = 32;

impl Session {
    /// Resolves when the session is stopped.
    pub async fn cancelled(&self) {
        let mut rx = self.cancel.clone();
        if rx.wait_for(|c| *c).await.is_err() {
            // Nobody can stop the session any more: it never is.
            std::future::pending::<()>().await;
        }
    }

    /// Whether the session was stopped.
    pub fn is_cancelled(&self) -> bool {
        *self.cancel.borrow()
    }

    /// A new invocation id, `INV_{YYYYMMDD}_{HHMMSS}_{AGENT}_{SEQ}`, its number taken
    /// from the database's counter (unique in the file, whatever the timing: see
    /// [`crate::data::store::ids`]).
    pub async fn invocation_id(&self, role: &AgentRole) -> Result<String, StoreError> {
        let short = role.as_str().to_uppercase();
        let n = match self.take_id(&short) {
            Some(n) => n,
            None => {
                let first = self
                    .emitter
                    .writer()
                    .reserve_ids(&short, IDS_PER_AGENT)
                    .await?;
                self.lock_ids()
                    .insert(short.clone(), (first + 1, first + IDS_PER_AGENT));
                first
            }
        };
        Ok(crate::run::engine::request::invocation_id(
            chrono::Utc::now(),
            &short,
            n,
        ))
    }

    /// Reserves the first block of invocation numbers of each agent, before the rounds.
    pub(super) async fn reserve_ids(&self) -> Result<(), StoreError> {
        for role in [
            AgentRole::Planner,
            AgentRole::Critic,
            AgentRole::Host,
            AgentRole::Reporter,
        ] {
            let short = role.as_str().to_uppercase();
            let first = self
                .emitter
                .writer()
                .reserve_ids(&short, IDS_PER_AGENT)
                .await?;
            self.lock_ids()
                .insert(short, (first, first + IDS_PER_AGENT));
        }
        Ok(())
    }

    fn lock_ids(&self) -> std::sync::MutexGuard<'_, std::collections::HashMap<String, (u64, u64)>> {
        match self.ids.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    /// The next reserved number of `short`, if any is left.
    fn take_id(&self, short: &str) -> Option<u64> {
        let mut ids = self.lock_ids();
        let (next, end) = ids.get_mut(short)?;
        (*next < *end).then(|| {
            *next += 1;
            *next - 1
        })
    }

    /// The session's `now` as an RFC 3339 text (fills a missing output timestamp).
    pub fn now_text(&self) -> String {
        self.now
            .get("datetime")
            .or_else(|| self.now.get("now"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    }
}

/// What the rounds keep between them.
#[derive(Default)]
pub(super) struct Memory {
    /// Each agent's last valid output and position.
    pub(super) last: BTreeMap<AgentRole, (Value, PositionSummary)>,
    /// Each agent's similarity to its previous position, by round.
    pub(super) self_similarity: BTreeMap<AgentRole, Vec<(u32, f64)>>,
    /// Consensus after each compared round.
    pub(super) trend: Vec<f64>,
    /// The rounds as the reporter reads them.
    pub(super) digests: Vec<RoundDigest>,
    /// Turns by final status.
    pub(super) tasks: BTreeMap<TaskStatus, u32>,
    /// The host's last position.
    pub(super) host_last: Option<PositionSummary>,
}

impl Memory {
    pub(super) fn last_of(&self, role: &AgentRole) -> LastOutput {
        self.last.get(role).cloned()
    }
}
