//! The application's replay handling: opening a run from its log as a replay (putting a
//! live run aside meanwhile), the player's messages, and the playing clock's ticks.

use std::time::Instant;

use super::driver::App;
use super::replay_feed::{ReplayFeed, StartAt};
use super::transport::{Speed, Transport, DEFAULT_MAX_GAP_MS};
use crate::replay::log::replay_state;
use crate::replay::player::PlayerMsg;

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
        self.ui.screen = super::Screen::Run;
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
