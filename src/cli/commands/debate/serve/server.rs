//! What every connection of `plexus serve` shares: the server's settings and state, and
//! its limits.

use std::sync::Arc;

use tokio::sync::{watch, Semaphore};

use super::access::Access;
use crate::base::protocol::debate_spec::EmbeddingSource;
use crate::cli::args::DebateOpts;
use crate::data::provider::{Provider, ProviderProfile};

/// The path sessions are started at.
pub const CHAT_PATH: &str = "/api/chat";
/// Sessions that may run at once; past it a request is answered 503.
pub const MAX_SESSIONS: usize = 32;
/// Most bytes of a request body.
pub const MAX_BODY: usize = 64 * 1024;

/// What every connection shares.
pub struct Server {
    pub(super) db: std::path::PathBuf,
    pub(super) options: DebateOpts,
    pub(super) provider: Arc<dyn Provider>,
    pub(super) profile: ProviderProfile,
    pub(super) embedding: EmbeddingSource,
    pub(super) access: Access,
    pub(super) sessions: Arc<Semaphore>,
    /// The signal the server is stopping on, once it is.
    pub(super) stop: watch::Receiver<Option<&'static str>>,
}
