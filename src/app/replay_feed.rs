//! The replay's I/O half in the UI: the player thread of the run shown, the events read
//! ahead of the position, and the clock that releases them at the run's own pace (times
//! the speed, long pauses capped) — or all at once at the live edge or at full speed.
//! What it folds goes through the same reducer as a live run's events.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::transport::Transport;
use crate::event::Envelope;
use crate::replay::player::{Command, Player, PlayerMsg};
use crate::state::{reduce, RunState};

/// Where a replay starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartAt {
    /// The first event.
    Start,
    /// The last event (the live edge of a run still being written, followed).
    End,
    /// This event.
    Event(u64),
}

/// Read ahead when fewer events than this are waiting.
const LOW_WATER: usize = 2048;

/// Most events folded between two frames at full speed.
const MAX_PER_FRAME: usize = 20_000;

/// The replay of the run on screen.
pub struct ReplayFeed {
    player: Player,
    /// Which player this is (answers of a replaced one are dropped).
    pub generation: u64,
    /// Events after the position, in order, read ahead.
    ahead: VecDeque<Arc<Envelope>>,
    /// An event request in flight, from this event.
    asked_from: Option<u64>,
    /// Steps asked for before their events arrived.
    steps_owed: u64,
    /// Where to go once the run is open.
    start: Option<StartAt>,
    /// The playing clock: when it started, the speed it runs at, the run time (ms,
    /// gaps capped) released since.
    clock: Option<(Instant, f64, f64)>,
    /// Time (ms) of the last event folded.
    last_ts: Option<i64>,
}

impl ReplayFeed {
    /// A replay through `player`, to start at `start` once the run is open.
    pub fn new(player: Player, generation: u64, start: StartAt) -> ReplayFeed {
        ReplayFeed {
            player,
            generation,
            ahead: VecDeque::new(),
            asked_from: None,
            steps_owed: 0,
            start: Some(start),
            clock: None,
            last_ts: None,
        }
    }

    /// The player's marks (for the transport).
    pub fn marks(&self) -> Arc<std::sync::RwLock<crate::replay::marks::Marks>> {
        self.player.marks.clone()
    }

    /// Sends a seek to the player.
    pub fn seek(&mut self, to: u64, token: u64) {
        self.player.ask(Command::Seek { to, token });
    }

    /// One event forward (when its event has not been read yet, as soon as it is).
    pub fn step(&mut self, run: &mut RunState, t: &mut Transport) {
        self.steps_owed += 1;
        self.pay_steps(run, t);
    }

    fn pay_steps(&mut self, run: &mut RunState, t: &mut Transport) {
        while self.steps_owed > 0 {
            if !self.fold_next(run, t) {
                break;
            }
            self.steps_owed -= 1;
        }
    }

    /// Applies a player message; returns whether the screen changed and a message for
    /// the status line.
    pub fn on_msg(
        &mut self,
        msg: PlayerMsg,
        run: &mut RunState,
        t: &mut Transport,
    ) -> (bool, Option<(String, bool)>) {
        match msg {
            PlayerMsg::Opened {
                run_id,
                total,
                live,
            } => {
                t.run_id = run_id;
                t.total = total;
                t.live = live;
                let to = match self.start.take() {
                    Some(StartAt::Start) | None => total.min(1),
                    Some(StartAt::End) => total,
                    Some(StartAt::Event(n)) => n.min(total),
                };
                let follow = live && to == total;
                let fx = t.seek(to);
                t.follow = follow;
                if let super::update::Effect::ReplaySeek { to, token } = fx {
                    self.seek(to, token);
                }
                (true, None)
            }
            PlayerMsg::Progress {
                total,
                indexed,
                live,
            } => {
                let grew = total > t.total;
                t.total = total;
                t.indexed = indexed;
                if t.live && !live {
                    t.follow = false;
                }
                t.live = live;
                (grew, None)
            }
            PlayerMsg::Seeked {
                token,
                position,
                state,
            } => {
                if t.seeking.map(|(k, _)| k) != Some(token) {
                    return (false, None);
                }
                *run = *state;
                t.position = position;
                t.seeking = None;
                self.ahead.clear();
                self.asked_from = None;
                self.steps_owed = 0;
                self.clock = None;
                self.last_ts = None;
                (true, None)
            }
            PlayerMsg::Events { from, events } => {
                if self.asked_from == Some(from) {
                    self.asked_from = None;
                }
                let next = t.position + self.ahead.len() as u64 + 1;
                if t.seeking.is_none() && from == next {
                    self.ahead.extend(events);
                }
                let before = t.position;
                self.pay_steps(run, t);
                (t.position != before, None)
            }
            PlayerMsg::Failed(e) => (true, Some((e, true))),
        }
    }

    /// Folds the next event into `run`; false when it has not been read yet.
    fn fold_next(&mut self, run: &mut RunState, t: &mut Transport) -> bool {
        if t.seeking.is_some() {
            return false;
        }
        let Some(env) = self.ahead.pop_front() else {
            self.read_ahead(t);
            return false;
        };
        if env.seq != t.position + 1 {
            // Out of step (should not happen): start reading again from the position.
            self.ahead.clear();
            self.read_ahead(t);
            return false;
        }
        reduce(run, &env);
        t.position = env.seq;
        self.last_ts = Some(env.ts);
        true
    }

    /// Asks for the events after those read ahead, when few are left.
    fn read_ahead(&mut self, t: &Transport) {
        let next = t.position + self.ahead.len() as u64 + 1;
        if t.seeking.is_some() || self.asked_from.is_some() || next > t.total {
            return;
        }
        if self.ahead.len() < LOW_WATER {
            self.asked_from = Some(next);
            self.player.ask(Command::Events { from: next });
        }
    }

    /// Plays: folds the events that are due at `now`; returns whether anything changed
    /// and when the next one is due.
    pub fn tick(
        &mut self,
        now: Instant,
        run: &mut RunState,
        t: &mut Transport,
    ) -> (bool, Option<Instant>) {
        self.read_ahead(t);
        if t.seeking.is_some() {
            self.clock = None;
            return (false, None);
        }
        let mut changed = false;
        if t.follow {
            // At the live edge: new events are shown as they come.
            while self.fold_next(run, t) {
                changed = true;
            }
            self.read_ahead(t);
            return (changed, None);
        }
        if !t.playing {
            self.clock = None;
            return (false, None);
        }
        let wake = match t.speed.factor() {
            None => {
                let mut n = 0;
                while n < MAX_PER_FRAME && self.fold_next(run, t) {
                    n += 1;
                }
                changed = n > 0;
                (self.ahead.len() + n > 0 || t.position < t.total).then_some(now)
            }
            Some(speed) => {
                let clock = match self.clock {
                    Some(c) if c.1 == speed => c,
                    _ => (now, speed, 0.0),
                };
                let run_ms = now.duration_since(clock.0).as_secs_f64() * 1000.0 * speed;
                let mut released = clock.2;
                let mut wake = None;
                while let Some(next) = self.ahead.front() {
                    let gap = match self.last_ts {
                        Some(last) => (next.ts - last).clamp(0, t.max_gap_ms as i64) as f64,
                        None => 0.0,
                    };
                    if released + gap > run_ms {
                        let wait = (released + gap - run_ms) / speed;
                        wake = Some(now + Duration::from_secs_f64(wait / 1000.0));
                        break;
                    }
                    if !self.fold_next(run, t) {
                        break;
                    }
                    released += gap;
                    changed = true;
                }
                self.clock = Some((clock.0, speed, released));
                wake
            }
        };
        self.read_ahead(t);
        if t.position >= t.total && self.ahead.is_empty() {
            if t.live {
                // Caught up with a run still being written: stay at its edge.
                t.follow = true;
                t.playing = false;
            } else if t.playing {
                t.playing = false;
                self.clock = None;
                return (true, None);
            }
        }
        (changed, wake)
    }
}
