//! The replay transport, the UI's pure half: where the replay is (`event N/M`), whether
//! it plays, how fast, and what each transport action asks the driver to do. The driver
//! carries the effects out (seeks go to the player thread; playing releases events by
//! the run's own timing) and reports back through [`Transport`]'s fields.

use std::sync::{Arc, RwLock};

use super::action::Action;
use super::effect::Effect;
use crate::data::replay::marks::{Dir, Marks};

/// Playing speeds, slowest first; past the last comes "as fast as possible".
pub const SPEEDS: [f64; 9] = [0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0];

/// Index of ×1 in [`SPEEDS`].
const NORMAL: usize = 2;

/// Default cap on the pause between two events while playing, ms (a run that waited
/// an hour for a rate limit does not make the replay wait an hour).
pub const DEFAULT_MAX_GAP_MS: u64 = 2_000;

/// How fast a replay plays.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Speed {
    /// A multiple of the run's own pace: an index into [`SPEEDS`].
    Times(usize),
    /// As fast as the screen can fold events.
    Max,
}

impl Speed {
    /// The multiple, `None` for as fast as possible.
    pub fn factor(self) -> Option<f64> {
        match self {
            Speed::Times(i) => SPEEDS.get(i).copied(),
            Speed::Max => None,
        }
    }

    /// `×0.25` … `×64`, or `max`.
    pub fn label(self) -> String {
        match self.factor() {
            Some(f) if f < 1.0 => format!("×{f}"),
            Some(f) => format!("×{}", f as u64),
            None => "max".into(),
        }
    }

    /// The nearest speed to `factor` (0 or less, or infinite: as fast as possible).
    pub fn nearest(factor: f64) -> Speed {
        if !(factor.is_finite() && factor > 0.0) || factor > SPEEDS[SPEEDS.len() - 1] * 1.5 {
            return Speed::Max;
        }
        let i = SPEEDS
            .iter()
            .enumerate()
            .min_by(|(_, a), (_, b)| {
                (factor.ln() - a.ln())
                    .abs()
                    .total_cmp(&(factor.ln() - b.ln()).abs())
            })
            .map_or(NORMAL, |(i, _)| i);
        Speed::Times(i)
    }

    fn faster(self) -> Speed {
        match self {
            Speed::Times(i) if i + 1 < SPEEDS.len() => Speed::Times(i + 1),
            _ => Speed::Max,
        }
    }

    fn slower(self) -> Speed {
        match self {
            Speed::Max => Speed::Times(SPEEDS.len() - 1),
            Speed::Times(i) => Speed::Times(i.saturating_sub(1)),
        }
    }
}

/// What a transport action asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct Acted {
    /// Effects for the driver.
    pub effects: Vec<Effect>,
    /// A message for the status line.
    pub say: Option<String>,
    /// The task a jump (`{` `}` `(` `)`) reached: to be selected.
    pub task: Option<Arc<str>>,
}

/// Where a replay is and how it plays.
#[derive(Debug, Clone)]
pub struct Transport {
    /// The run replayed.
    pub run_id: String,
    /// Events folded into the state on screen (`event N`).
    pub position: u64,
    /// Events in the log (`/M`).
    pub total: u64,
    /// Events the player has indexed (jumps reach this far).
    pub indexed: u64,
    /// Playing (or paused).
    pub playing: bool,
    /// Speed.
    pub speed: Speed,
    /// Longest pause between two events while playing, ms.
    pub max_gap_ms: u64,
    /// Another process is writing the run.
    pub live: bool,
    /// At the live edge: new events are shown as they are committed.
    pub follow: bool,
    /// A seek asked for and not answered: (token, target).
    pub seeking: Option<(u64, u64)>,
    /// The last token given to a seek.
    tokens: u64,
    /// Times and jump targets (shared with the player).
    pub marks: Arc<RwLock<Marks>>,
}

impl Transport {
    /// A transport over `run_id`, not opened yet.
    pub fn new(run_id: impl Into<String>, marks: Arc<RwLock<Marks>>) -> Transport {
        Transport {
            run_id: run_id.into(),
            position: 0,
            total: 0,
            indexed: 0,
            playing: false,
            speed: Speed::Times(NORMAL),
            max_gap_ms: DEFAULT_MAX_GAP_MS,
            live: false,
            follow: false,
            seeking: None,
            tokens: 0,
            marks,
        }
    }

    /// Asks for the state after event `to`; the effect carries the token of the answer
    /// that counts.
    pub fn seek(&mut self, to: u64) -> Effect {
        let to = to.min(self.total);
        self.tokens += 1;
        self.seeking = Some((self.tokens, to));
        self.follow = false;
        Effect::ReplaySeek {
            to,
            token: self.tokens,
        }
    }

    /// Where the replay is about to be: the pending seek's target, else the position.
    pub fn target(&self) -> u64 {
        self.seeking.map_or(self.position, |(_, to)| to)
    }

    /// The time (ms) of the event on screen, when known.
    pub fn time(&self) -> Option<i64> {
        self.marks.read().ok().and_then(|m| m.ts(self.position))
    }

    /// Whether the replay is at the end of what is in the log.
    pub fn at_end(&self) -> bool {
        self.target() >= self.total
    }

    /// Goes to the live edge (or the end of a finished run) and, for a live run, stays
    /// there as new events come.
    pub fn to_end(&mut self) -> Effect {
        let fx = self.seek(self.total);
        self.follow = self.live;
        self.playing = false;
        fx
    }

    /// The play state and speed for the status line: `▶ ×4`, `❚❚`, `live`, `seeking`.
    pub fn play_label(&self) -> String {
        let state = if self.seeking.is_some() {
            "seeking"
        } else if self.follow {
            "live"
        } else if self.playing {
            "▶"
        } else {
            "❚❚"
        };
        if self.playing {
            format!("{state} {}", self.speed.label())
        } else {
            state.to_string()
        }
    }

    /// Applies a transport action; returns what the driver must do, a message for the
    /// status line and the task a jump reached. `None` when the action is not a
    /// transport's.
    pub fn act(&mut self, action: Action) -> Option<Acted> {
        let here = self.target();
        let mut fx = Vec::new();
        let mut say = None;
        match action {
            Action::TogglePause => say = self.toggle_pause(),
            Action::ReplayStepForward => {
                self.playing = false;
                self.follow = false;
                if here < self.total {
                    // While a seek is on its way, a step goes one past its target.
                    fx.push(if self.seeking.is_some() {
                        self.seek(here + 1)
                    } else {
                        Effect::ReplayStep
                    });
                }
            }
            Action::ReplayStepBack => {
                self.playing = false;
                self.follow = false;
                if here > 0 {
                    fx.push(self.seek(here - 1));
                }
            }
            Action::ReplayNextStart => return Some(self.jump(here, Dir::Forward, false)),
            Action::ReplayPrevStart => return Some(self.jump(here, Dir::Back, false)),
            Action::ReplayNextFailure => return Some(self.jump(here, Dir::Forward, true)),
            Action::ReplayPrevFailure => return Some(self.jump(here, Dir::Back, true)),
            Action::ReplayFaster => {
                self.speed = self.speed.faster();
                say = Some(format!("speed {}", self.speed.label()));
            }
            Action::ReplaySlower => {
                self.speed = self.speed.slower();
                say = Some(format!("speed {}", self.speed.label()));
            }
            Action::ReplayStart => fx.push(self.seek(self.total.min(1))),
            Action::ReplayEnd => fx.push(self.to_end()),
            _ => return None,
        }
        Some(Acted {
            effects: fx,
            say,
            task: None,
        })
    }

    /// Space: leaves the live edge, pauses, follows the live edge again, or plays; says
    /// why when it cannot play.
    fn toggle_pause(&mut self) -> Option<String> {
        if self.follow {
            self.follow = false;
            self.playing = false;
            Some("paused at the live edge (> goes back to it)".to_string())
        } else if self.playing {
            self.playing = false;
            None
        } else if self.at_end() && self.live {
            self.follow = true;
            None
        } else if self.at_end() {
            Some("at the end (< to start)".to_string())
        } else {
            self.playing = true;
            None
        }
    }

    /// Jumps from `here` to the next (or previous, by `dir`) task start or, with
    /// `failure`, failure; names the task it reached, or says there is none.
    fn jump(&mut self, here: u64, dir: Dir, failure: bool) -> Acted {
        let found = self.marks.read().ok().and_then(|m| {
            if failure {
                m.failure(here, dir).cloned()
            } else {
                m.start(here, dir).cloned()
            }
        });
        let what = if failure { "failure" } else { "task start" };
        let Some(mark) = found else {
            return Acted {
                effects: Vec::new(),
                say: Some(self.no_mark(dir, what)),
                task: None,
            };
        };
        let effects = vec![self.seek(mark.seq)];
        // The status line shows the event; the message names the task.
        let say = match &mark.task {
            Some(t) => format!("{t} · {}", mark.what),
            None => format!("{what}: {}", mark.what),
        };
        Acted {
            effects,
            say: Some(say),
            task: mark.task,
        }
    }

    /// Why a jump `dir` to the next `what` found none: none yet in the events indexed so
    /// far, or none at all that way.
    fn no_mark(&self, dir: Dir, what: &str) -> String {
        let more = dir == Dir::Forward && self.indexed < self.total;
        match (dir, more) {
            (Dir::Forward, true) => {
                format!(
                    "no {what} in the events read so far ({} of {})",
                    self.indexed, self.total
                )
            }
            (Dir::Forward, false) => format!("no later {what}"),
            (Dir::Back, _) => format!("no earlier {what}"),
        }
    }

    /// Parses a seek target typed at the prompt: `40%`, an event number (`1234` or
    /// `#1234`), a time of day (`14:03:21`), a time into the run (`+1:30`), `start` or
    /// `end`.
    pub fn parse_target(&self, text: &str) -> Result<u64, String> {
        let t = text.trim();
        let bad = || {
            format!("`{t}`: give a percentage (40%), an event (1234), a time (14:03:21 or +1:30), start or end")
        };
        match t {
            "" => return Err(bad()),
            "start" => return Ok(self.total.min(1)),
            "end" => return Ok(self.total),
            _ => {}
        }
        if let Some(p) = t.strip_suffix('%') {
            let p: f64 = p.trim().parse().map_err(|_| bad())?;
            if !(0.0..=100.0).contains(&p) {
                return Err(format!("`{t}`: a percentage is from 0 to 100"));
            }
            return Ok(((self.total as f64) * p / 100.0).round() as u64);
        }
        if let Some(n) = t
            .strip_prefix('#')
            .or(Some(t))
            .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
        {
            let n: u64 = n.parse().map_err(|_| bad())?;
            return Ok(n.min(self.total));
        }
        let marks = self.marks.read().map_err(|_| bad())?;
        let first = marks
            .ts(1)
            .ok_or_else(|| "the log is not read yet".to_string())?;
        let ts = if let Some(rel) = t.strip_prefix('+') {
            first.saturating_add(clock_ms(rel, false).ok_or_else(bad)?)
        } else {
            let of_day = clock_ms(t, true).ok_or_else(bad)?;
            // The first moment of the run at or after that time of day (UTC).
            let day = first - first.rem_euclid(86_400_000);
            let mut ts = day + of_day;
            if ts < first - 43_200_000 {
                ts += 86_400_000;
            }
            ts
        };
        Ok(marks.at_time(ts))
    }
}

/// A time in ms: `h:mm:ss`, or with two parts `h:mm` for a time of day (`of_day`) and
/// `m:ss` for a time into the run, or seconds alone; seconds may have a fraction.
fn clock_ms(s: &str, of_day: bool) -> Option<i64> {
    let mut parts: Vec<&str> = s.split(':').collect();
    if parts.is_empty() || parts.len() > 3 {
        return None;
    }
    if of_day && parts.len() == 2 {
        parts.push("0");
    }
    let mut ms = 0f64;
    for (i, p) in parts.iter().enumerate() {
        let last = i + 1 == parts.len();
        let v: f64 = if last {
            p.parse().ok()?
        } else {
            p.parse::<u32>().ok()? as f64
        };
        if !(v.is_finite() && v >= 0.0) {
            return None;
        }
        ms = ms * 60.0 + v;
    }
    // Beyond a year is not a time into a run or of a day.
    let ms = ms * 1000.0;
    (ms <= 366.0 * 86_400_000.0).then_some(ms.round() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::event::{EngineEvent, Envelope};

    fn transport(total: u64) -> Transport {
        let marks = Arc::new(RwLock::new(Marks::default()));
        if let Ok(mut m) = marks.write() {
            for seq in 1..=total {
                m.add(&Envelope {
                    run_id: Arc::from("R"),
                    seq,
                    // 14:00:00 UTC on some day, one event a second
                    ts: 1_700_056_800_000 + (seq as i64 - 1) * 1000,
                    task_id: None,
                    invocation_id: None,
                    agent: None,
                    event: EngineEvent::TaskReady(crate::model::event::Empty {}),
                });
            }
        }
        let mut t = Transport::new("R", marks);
        t.total = total;
        t.indexed = total;
        t
    }

    #[test]
    fn seek_targets_parse_from_every_form() {
        let t = transport(200);
        assert_eq!(t.parse_target("50%"), Ok(100));
        assert_eq!(t.parse_target("0%"), Ok(0));
        assert_eq!(t.parse_target("#37"), Ok(37));
        assert_eq!(t.parse_target("37"), Ok(37));
        assert_eq!(t.parse_target("9999"), Ok(200));
        assert_eq!(t.parse_target("start"), Ok(1));
        assert_eq!(t.parse_target("end"), Ok(200));
        assert_eq!(t.parse_target("+0:10"), Ok(11));
        assert_eq!(t.parse_target("+90"), Ok(91));
        assert_eq!(t.parse_target("14:01:00"), Ok(61));
        assert_eq!(
            t.parse_target("14:01"),
            Ok(61),
            "two parts of a time of day: h:mm"
        );
        assert_eq!(
            t.parse_target("+1:30"),
            Ok(91),
            "two parts into the run: m:ss"
        );
        assert!(t.parse_target("+1e300").is_err());
        assert!(t.parse_target("150%").is_err());
        assert!(t.parse_target("soon").is_err());
    }

    #[test]
    fn speeds_step_through_the_range_to_max_and_back() {
        let mut t = transport(10);
        assert_eq!(t.speed.label(), "×1");
        for _ in 0..3 {
            t.act(Action::ReplaySlower);
        }
        assert_eq!(t.speed.label(), "×0.25");
        for _ in 0..20 {
            t.act(Action::ReplayFaster);
        }
        assert_eq!(t.speed, Speed::Max);
        t.act(Action::ReplaySlower);
        assert_eq!(t.speed.label(), "×64");
        assert_eq!(Speed::nearest(3.0).label(), "×4");
        assert_eq!(Speed::nearest(0.0), Speed::Max);
    }

    #[test]
    fn stepping_seeking_and_the_end() {
        let mut t = transport(10);
        t.position = 5;
        let fx = t.act(Action::ReplayStepBack).expect("transport").effects;
        assert_eq!(fx, vec![Effect::ReplaySeek { to: 4, token: 1 }]);
        assert_eq!(t.target(), 4);
        // A step while a seek is on its way goes one past the seek's target.
        let fx = t.act(Action::ReplayStepForward).expect("transport").effects;
        assert_eq!(fx, vec![Effect::ReplaySeek { to: 5, token: 2 }]);
        t.position = 5;
        t.seeking = None;
        let fx = t.act(Action::ReplayStepForward).expect("transport").effects;
        assert_eq!(fx, vec![Effect::ReplayStep]);
        t.position = 10;
        t.seeking = None;
        let a = t.act(Action::TogglePause).expect("transport");
        assert!(a.effects.is_empty() && !t.playing, "{:?}", a.say);
        t.live = true;
        t.act(Action::TogglePause);
        assert!(t.follow, "a live run is followed at its edge");
        t.act(Action::TogglePause);
        assert!(!t.follow && !t.playing, "and can be left");
        // Playing, then to the end of a live run: it follows, not plays; a pause there
        // stays paused.
        t.playing = true;
        t.act(Action::ReplayEnd);
        assert!(t.follow && !t.playing);
        t.act(Action::TogglePause);
        assert!(!t.follow && !t.playing);
        assert!(t.act(Action::Up).is_none());
    }
}
