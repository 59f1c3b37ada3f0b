//! The replay's I/O half in the UI: the player thread of the run shown, the events read
//! ahead of the position, and the clock that releases them at the run's own pace (times
//! the speed, long pauses capped) — or all at once at the live edge or at full speed.
//! What it folds goes through the same reducer as a live run's events.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::data::replay::player::{Command, Player, PlayerMsg};
use crate::model::event::Envelope;
use crate::model::state::{reduce, RunState};
use crate::tui::app::transport::Transport;

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

/// The playing clock: since `start`, run time passes at `speed` times the wall clock;
/// `released` ms of it (gaps capped) have been shown.
#[derive(Debug, Clone, Copy)]
struct Clock {
    start: Instant,
    speed: f64,
    released: f64,
}

impl Clock {
    /// Run time (ms) passed at `now`.
    fn run_ms(&self, now: Instant) -> f64 {
        now.saturating_duration_since(self.start).as_secs_f64() * 1000.0 * self.speed
    }
}

/// What a player message changed.
#[derive(Debug, Default)]
pub struct Outcome {
    /// The screen needs a frame.
    pub changed: bool,
    /// A message for the status line (and whether it is a warning).
    pub say: Option<(String, bool)>,
    /// A task's text was read back (or could not be used): it may be asked again.
    pub output_done: Option<usize>,
}

/// The replay of the run on screen.
pub struct ReplayFeed {
    player: Player,
    /// Which player this is (answers of a replaced one are dropped).
    pub generation: u64,
    /// Events after the position, in order, read ahead.
    ahead: VecDeque<Arc<Envelope>>,
    /// The last event the pages read so far cover (some may not have decoded).
    read_to: u64,
    /// An event request in flight, from this event.
    asked_from: Option<u64>,
    /// Where to go once the run is open.
    start: Option<StartAt>,
    /// The playing clock, while playing.
    clock: Option<Clock>,
}

impl ReplayFeed {
    /// A replay through `player`, to start at `start` once the run is open.
    pub fn new(player: Player, generation: u64, start: StartAt) -> ReplayFeed {
        ReplayFeed {
            player,
            generation,
            ahead: VecDeque::new(),
            read_to: 0,
            asked_from: None,
            start: Some(start),
            clock: None,
        }
    }

    /// The player's marks (for the transport).
    pub fn marks(&self) -> Arc<std::sync::RwLock<crate::data::replay::marks::Marks>> {
        self.player.marks.clone()
    }

    /// Sends a seek to the player.
    pub fn seek(&mut self, to: u64, token: u64) {
        self.player.ask(Command::Seek { to, token });
    }

    /// Asks for task `task`'s text as it is at the position.
    pub fn ask_output(&self, task: usize, t: &Transport) {
        self.player.ask(Command::Output {
            task,
            upto: t.position,
        });
    }

    /// One event forward; false when its event has not been read yet (the transport
    /// turns a step into a seek then).
    pub fn step(&mut self, run: &mut RunState, t: &mut Transport) -> bool {
        self.fold_next(run, t)
    }

    /// Applies a player message.
    pub fn on_msg(&mut self, msg: PlayerMsg, run: &mut RunState, t: &mut Transport) -> Outcome {
        let mut o = Outcome::default();
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
                if let crate::tui::app::Effect::ReplaySeek { to, token } = t.seek(to) {
                    self.seek(to, token);
                }
                if live && to == total {
                    // At the live edge of a run still being written: follow it.
                    t.follow = true;
                    t.playing = false;
                }
                o.changed = true;
            }
            PlayerMsg::Progress {
                total,
                indexed,
                live,
            } => {
                o.changed = total > t.total || live != t.live;
                t.total = total;
                t.indexed = indexed;
                t.live = live;
            }
            PlayerMsg::Seeked {
                token,
                position,
                state,
            } => {
                if t.seeking.map(|(k, _)| k) != Some(token) {
                    return o;
                }
                *run = *state;
                t.position = position;
                t.seeking = None;
                self.ahead.clear();
                self.read_to = position;
                self.asked_from = None;
                self.clock = None;
                o.changed = true;
            }
            PlayerMsg::Events { from, to, events } => {
                if self.asked_from == Some(from) {
                    self.asked_from = None;
                }
                if t.seeking.is_none() && from == self.read_to + 1 {
                    self.ahead.extend(events);
                    self.read_to = to;
                }
            }
            PlayerMsg::Output { task, upto, text } => {
                // The text counts if nothing could have been added to it between then
                // and now.
                let current = upto == t.position
                    || (upto < t.position
                        && run.tasks.get(task).is_some_and(|v| {
                            v.status.is_final()
                                || v.status == crate::model::event::TaskStatus::Cancelled
                        }));
                if current && t.seeking.is_none() {
                    run.restore_output(task, text);
                    o.changed = true;
                }
                o.output_done = Some(task);
            }
            PlayerMsg::Failed(e) => {
                t.seeking = None;
                t.playing = false;
                o.say = Some((e, true));
                o.changed = true;
            }
        }
        o
    }

    /// Folds the next event into `run`; false when it has not been read yet.
    fn fold_next(&mut self, run: &mut RunState, t: &mut Transport) -> bool {
        if t.seeking.is_some() {
            return false;
        }
        match self.ahead.pop_front() {
            Some(env) if env.seq > t.position => {
                reduce(run, &env);
                t.position = env.seq;
                true
            }
            Some(_) => {
                // Out of step (should not happen): read again from the position.
                self.ahead.clear();
                self.read_to = t.position;
                self.read_ahead(t);
                false
            }
            None if self.read_to > t.position => {
                // What is left of the page did not decode: it folds to nothing.
                t.position = self.read_to;
                true
            }
            None => {
                self.read_ahead(t);
                false
            }
        }
    }

    /// Asks for the events after those read, when few are left.
    fn read_ahead(&mut self, t: &Transport) {
        let next = self.read_to + 1;
        if t.seeking.is_some()
            || self.asked_from.is_some()
            || next > t.total
            || self.ahead.len() >= LOW_WATER
        {
            return;
        }
        self.asked_from = Some(next);
        self.player.ask(Command::Events { from: next });
    }

    /// Time (ms) of the event the state is at, as the marks have it.
    fn ts_at(&self, t: &Transport) -> Option<i64> {
        self.player.marks.read().ok().and_then(|m| m.ts(t.position))
    }

    /// Plays: folds the events that are due at `now`; returns whether anything changed
    /// and when the next one is due.
    pub fn tick(
        &mut self,
        now: Instant,
        run: &mut RunState,
        t: &mut Transport,
    ) -> (bool, Option<Instant>) {
        // The log is not open yet: its length is unknown, so the replay is not at its
        // end (taking 0 of 0 for the end stopped a replay before its first event).
        if self.start.is_some() {
            return (false, None);
        }
        self.read_ahead(t);
        if t.seeking.is_some() {
            self.clock = None;
            return (false, None);
        }
        if t.follow {
            return (self.follow_edge(run, t), None);
        }
        if !t.playing {
            self.clock = None;
            return (false, None);
        }
        let (changed, wake) = match t.speed.factor() {
            None => self.play_at_once(now, run, t),
            Some(speed) => self.play_timed(now, speed, run, t),
        };
        self.read_ahead(t);
        if t.position >= t.total && self.ahead.is_empty() {
            self.clock = None;
            if t.live {
                // Caught up with a run still being written: stay at its edge.
                t.follow = true;
            }
            t.playing = false;
            return (true, None);
        }
        (changed, wake)
    }

    /// At the live edge: folds every event read (new events are shown as they come);
    /// returns whether anything changed.
    fn follow_edge(&mut self, run: &mut RunState, t: &mut Transport) -> bool {
        let mut changed = false;
        while self.fold_next(run, t) {
            changed = true;
        }
        if !t.live && t.position >= t.total {
            // The run ended and every event of it is shown.
            t.follow = false;
        }
        self.read_ahead(t);
        changed
    }

    /// As fast as possible: folds up to a frame's worth of events; returns whether any
    /// folded and `now` when more are due at once.
    fn play_at_once(
        &mut self,
        now: Instant,
        run: &mut RunState,
        t: &mut Transport,
    ) -> (bool, Option<Instant>) {
        let mut n = 0;
        while n < MAX_PER_FRAME && self.fold_next(run, t) {
            n += 1;
        }
        // More is due at once only if more is read; a page on its way wakes
        // the loop when it arrives.
        let wake = (!self.ahead.is_empty() || self.read_to > t.position).then_some(now);
        (n > 0, wake)
    }

    /// At `speed` times the run's pace: folds the events due by the clock at `now`;
    /// returns whether any folded and when the next one is due.
    fn play_timed(
        &mut self,
        now: Instant,
        speed: f64,
        run: &mut RunState,
        t: &mut Transport,
    ) -> (bool, Option<Instant>) {
        let mut clock = self.clock_at(now, speed);
        let (mut changed, wake) = self.release_due(&mut clock, now, run, t);
        if self.ahead.is_empty() {
            // Waiting for events to be read: the clock waits too, so they do not
            // all come out at once when they arrive.
            let behind = clock.run_ms(now) - clock.released;
            if behind > 0.0 {
                clock.start += Duration::from_secs_f64(behind / speed / 1000.0);
            }
            if self.read_to > t.position && self.fold_next(run, t) {
                changed = true;
            }
        }
        self.clock = Some(clock);
        (changed, wake)
    }

    /// The playing clock at `speed`: the one running, a new one from `now`, or (at a
    /// new speed) one that keeps the run time reached so far.
    fn clock_at(&self, now: Instant, speed: f64) -> Clock {
        match self.clock {
            Some(c) if c.speed == speed => c,
            // A new speed keeps the run time reached so far.
            Some(c) => Clock {
                start: now
                    - Duration::from_secs_f64(c.run_ms(now) / speed / 1000.0)
                        .min(now.saturating_duration_since(c.start)),
                speed,
                released: c.released,
            },
            None => Clock {
                start: now,
                speed,
                released: 0.0,
            },
        }
    }

    /// Folds the events read ahead whose (capped) gaps `clock` has released by `now`;
    /// returns whether any folded and when the first one still waiting is due.
    fn release_due(
        &mut self,
        clock: &mut Clock,
        now: Instant,
        run: &mut RunState,
        t: &mut Transport,
    ) -> (bool, Option<Instant>) {
        let mut changed = false;
        let mut last = self.ts_at(t);
        while let Some(next) = self.ahead.front() {
            let gap = match last {
                Some(l) => next.ts.saturating_sub(l).clamp(0, cap(t.max_gap_ms)) as f64,
                None => 0.0,
            };
            let run_ms = clock.run_ms(now);
            if clock.released + gap > run_ms {
                let wait = (clock.released + gap - run_ms) / clock.speed;
                return (changed, Some(now + Duration::from_secs_f64(wait / 1000.0)));
            }
            last = Some(next.ts);
            if !self.fold_next(run, t) {
                break;
            }
            clock.released += gap;
            changed = true;
        }
        (changed, None)
    }
}

/// The gap cap as a number of ms a timestamp difference can be clamped to.
fn cap(max_gap_ms: u64) -> i64 {
    i64::try_from(max_gap_ms).unwrap_or(i64::MAX)
}
