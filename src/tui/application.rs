//! The application the driver runs: the run on screen, the live run put aside while a
//! stored one is shown, the UI state, keys, theme and the loader; folding committed
//! events, and the replay of a run opened from its log (opening it, the player's
//! messages, the playing clock's ticks).

use std::sync::Arc;
use std::time::Instant;

use tokio::sync::mpsc::UnboundedSender;

use super::loader::Loader;
use super::replay_feed::{ReplayFeed, StartAt};
use crate::data::replay::log::replay_state;
use crate::data::replay::player::PlayerMsg;
use crate::model::event::{EngineEvent, Envelope};
use crate::model::state::{reduce, RunState};
use crate::run::engine::Control;
use crate::tui::app::docs::Doc;
use crate::tui::app::keymap::Keymap;
use crate::tui::app::transport::{Speed, Transport, DEFAULT_MAX_GAP_MS};
use crate::tui::app::{Screen, UiState};
use crate::tui::ui::theme::Theme;

/// The application: the run shown, the live run (when another one is open), UI state.
pub struct App {
    /// The run on screen.
    pub run: RunState,
    /// The live run while a run opened from the log is on screen.
    pub stashed_live: Option<RunState>,
    /// What the person sees.
    pub ui: UiState,
    /// Colours.
    pub theme: Theme,
    /// Keys.
    pub keys: Keymap,
    /// Engine commands (None: no engine attached).
    pub control: Option<UnboundedSender<Control>>,
    /// Store queries.
    pub loader: Loader,
    /// The replay of the run on screen, when it is shown from its log.
    pub replay: Option<ReplayFeed>,
    /// How replays play.
    pub replay_settings: ReplaySettings,
    /// Where a run opened from the Runs screen starts its replay.
    pub open_at: StartAt,
    /// Replays opened so far (numbers each one's player, so a closed one's late
    /// answers are told apart).
    pub replay_generation: u64,
    /// Whether an engine this screen drives is still running (the screen stays until
    /// it has stopped).
    pub engine_running: bool,
    /// When the spinner last moved.
    pub last_spin: tokio::time::Instant,
}

/// How replays opened in this session play.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReplaySettings {
    /// Speed to start at.
    pub speed: Speed,
    /// Longest pause between two events, ms.
    pub max_gap_ms: u64,
    /// Start playing when opened at the start or at an event (a run opened at its end
    /// waits, or follows its live edge).
    pub autoplay: bool,
}

impl Default for ReplaySettings {
    fn default() -> Self {
        ReplaySettings {
            speed: Speed::nearest(1.0),
            max_gap_ms: DEFAULT_MAX_GAP_MS,
            autoplay: true,
        }
    }
}

impl App {
    /// The live run's state, wherever it currently is.
    pub fn live_mut(&mut self) -> &mut RunState {
        match &mut self.stashed_live {
            Some(s) => s,
            None => &mut self.run,
        }
    }

    /// Folds a batch of committed events into the live run.
    pub fn fold(&mut self, batch: &[Arc<Envelope>]) {
        let viewing_live = self.stashed_live.is_none();
        let selected_inv = self
            .run
            .tasks
            .get(self.ui.task)
            .and_then(|t| t.invocation.clone());
        let live = self.live_mut();
        for env in batch {
            reduce(live, env);
        }
        let running = live.is_live();
        self.ui.live_running = running;
        // The Failures screen reloads when an attempt failed or was retried.
        if batch.iter().any(|e| match &e.event {
            EngineEvent::InvocationFinished(f) => {
                f.status != Some(crate::base::protocol::InvocationStatus::Success)
            }
            EngineEvent::RetryScheduled(_)
            | EngineEvent::ReviewAccepted(_)
            | EngineEvent::ReviewRejected(_) => true,
            _ => false,
        }) {
            self.ui.failures.stale = true;
        }
        // A document that was missing because the invocation was still going is asked
        // for again once it ended.
        if viewing_live {
            if let Some(inv) = selected_inv {
                let ended = batch.iter().any(|e| {
                    matches!(e.event, EngineEvent::InvocationFinished(_))
                        && e.invocation_id.as_deref() == Some(&*inv)
                });
                if ended {
                    self.ui
                        .docs
                        .retain(|k, d| !(matches!(d, Doc::Missing(_)) && k.invocation() == &*inv));
                }
            }
        }
    }

    /// Shows `run` from its log as a replay starting at `start`. A live run on screen is
    /// put aside (Esc brings it back) and keeps folding its events.
    pub fn open_replay(&mut self, run: String, start: StartAt) {
        self.replay_generation += 1;
        let generation = self.replay_generation;
        let player = self.loader.player(run.clone(), generation);
        let feed = ReplayFeed::new(player, generation, start);
        let mut transport = Transport::new(run.clone(), feed.marks());
        transport.max_gap_ms = self.replay_settings.max_gap_ms;
        transport.speed = self.replay_settings.speed;
        transport.playing = !matches!(start, StartAt::End) && self.replay_settings.autoplay;
        self.ui.replay = Some(transport);
        self.replay = Some(feed);
        let shown = std::mem::replace(&mut self.run, replay_state(&run));
        if self.ui.engine_attached && self.stashed_live.is_none() {
            self.stashed_live = Some(shown);
        }
        self.ui.read_only = true;
        self.ui.task = 0;
        self.ui.dag_top = 0;
        self.ui.docs.clear();
        self.ui.outputs_asked.clear();
        self.ui.screen = Screen::Run;
        self.ui.debate = Default::default();
        self.ui.flash(
            format!(
                "{run}: replay from its log{}",
                if self.ui.engine_attached {
                    " (Esc: back to the live run)"
                } else {
                    ""
                }
            ),
            false,
        );
    }

    /// A message of the replay player of generation `generation`.
    pub fn on_player(&mut self, generation: u64, msg: PlayerMsg) {
        let (Some(feed), Some(t)) = (self.replay.as_mut(), self.ui.replay.as_mut()) else {
            return;
        };
        if feed.generation != generation {
            return;
        }
        let seeked = matches!(msg, PlayerMsg::Seeked { .. });
        let position = t.position;
        let o = feed.on_msg(msg, &mut self.run, t);
        if seeked && t.position != position {
            // Text read back for another position does not belong to this one.
            self.ui.outputs_asked.clear();
        }
        if let Some(task) = o.output_done {
            self.ui.outputs_asked.remove(&task);
        }
        if let Some((text, warn)) = o.say {
            self.ui.flash(text, warn);
        }
        if seeked {
            self.find_pending();
        }
    }

    /// Plays the replay on: folds what is due at `now`; returns whether the screen
    /// changed and when the next event is due.
    pub fn replay_tick(&mut self, now: Instant) -> (bool, Option<Instant>) {
        match (self.replay.as_mut(), self.ui.replay.as_mut()) {
            (Some(feed), Some(t)) => feed.tick(now, &mut self.run, t),
            _ => (false, None),
        }
    }
}
