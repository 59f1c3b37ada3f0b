//! The Run screen (and the screens over the database it leads to) as a screen of the
//! driver: its keys and mouse, its sources (committed engine events drained in batches,
//! loader answers, the engine's end), its spinner and clock, and its frame.

use std::sync::Arc;
use std::time::Duration;

use crossterm::event::{Event, KeyEventKind, MouseEventKind};
use ratatui::Frame;
use tokio::sync::mpsc::UnboundedReceiver;
use tokio::time::Instant;

use super::application::App;
use super::driver::{drive, Inbox, Screen};
use super::loader::Loaded;
use super::terminal::TerminalGuard;
use crate::model::event::Envelope;
use crate::model::state::reduce;
use crate::run::engine::Control;
use crate::tui::app::input::{input, InputKey};
use crate::tui::app::ui_state::Overlay;
use crate::tui::app::{mouse, update, Action, Effect};

/// Spinner period.
pub const SPIN_INTERVAL: Duration = Duration::from_millis(100);
/// How often the clock of a live run is redrawn when nothing else changes (it keeps
/// ticking while paused).
pub const CLOCK_TICK: Duration = Duration::from_secs(1);

/// What reaches the Run screen besides the terminal.
pub enum RunMsg {
    /// Committed engine events, in order.
    Events(Vec<Arc<Envelope>>),
    /// A loader answer.
    Loaded(Loaded),
    /// The loader thread stopped.
    LoaderGone,
    /// The engine ended.
    EngineDone,
}

/// The Run screen's sources: the engine's committed events, the loader's answers and
/// the engine's end.
pub struct RunInbox {
    events: UnboundedReceiver<Vec<Arc<Envelope>>>,
    loaded: UnboundedReceiver<Loaded>,
    engine_done: Option<tokio::sync::oneshot::Receiver<()>>,
    events_open: bool,
    loaded_open: bool,
    batches: Vec<Vec<Arc<Envelope>>>,
}

impl Inbox for RunInbox {
    type Msg = RunMsg;

    async fn next(&mut self) -> Option<RunMsg> {
        if !self.events_open && !self.loaded_open && self.engine_done.is_none() {
            return None;
        }
        tokio::select! {
            n = self.events.recv_many(&mut self.batches, 64), if self.events_open => {
                if n == 0 {
                    self.events_open = false;
                    return Some(RunMsg::Events(Vec::new()));
                }
                let mut batch = Vec::with_capacity(self.batches.iter().map(Vec::len).sum());
                batch.extend(self.batches.drain(..).flatten());
                Some(RunMsg::Events(batch))
            },
            msg = self.loaded.recv(), if self.loaded_open => match msg {
                Some(m) => Some(RunMsg::Loaded(m)),
                None => {
                    self.loaded_open = false;
                    Some(RunMsg::LoaderGone)
                }
            },
            _ = async { if let Some(rx) = self.engine_done.as_mut() { let _ = rx.await; } }, if self.engine_done.is_some() => {
                self.engine_done = None;
                Some(RunMsg::EngineDone)
            },
        }
    }
}

impl Screen for App {
    type Msg = RunMsg;

    fn on_terminal(&mut self, ev: Event) -> bool {
        match ev {
            Event::Key(k) if k.kind != KeyEventKind::Release => {
                if self.ui.input.is_some() {
                    let Some(key) = InputKey::from_key(&k) else {
                        return false;
                    };
                    let fx = input(&mut self.ui, &self.run, key);
                    self.run_effects(fx);
                    return true;
                }
                self.ui.flash = None;
                match self.keys.lookup(&k) {
                    Some(a) => self.act(a),
                    // Any other key answers "no" to a question.
                    None if matches!(self.ui.overlay, Some(Overlay::Confirm(_))) => {
                        self.ui.overlay = None;
                    }
                    None => {}
                }
                true
            }
            Event::Mouse(m) => self.on_mouse(m),
            Event::Resize(..) => true,
            _ => false,
        }
    }

    fn on_msg(&mut self, msg: RunMsg) -> bool {
        match msg {
            RunMsg::Events(batch) if batch.is_empty() => return false,
            RunMsg::Events(batch) => self.fold(&batch),
            RunMsg::Loaded(m) => self.loaded(m),
            RunMsg::LoaderGone => self.ui.flash(
                "the database reader stopped; documents cannot be loaded",
                true,
            ),
            RunMsg::EngineDone => {
                self.engine_running = false;
                // The engine ended; keep showing the run until the person quits.
                self.control = None;
                if !self.ui.quitting {
                    self.ui.engine_attached = true;
                }
            }
        }
        true
    }

    fn on_time(&mut self, now: Instant, last_frame: Instant) -> (bool, Option<Instant>) {
        let mut dirty = false;
        // A status message gives the hints back after a while (it stays in `M`).
        if self
            .ui
            .flash
            .as_ref()
            .is_some_and(|f| f.expired(chrono::Utc::now().timestamp_millis()))
        {
            self.ui.flash = None;
            dirty = true;
        }
        let animating = self.animating();
        dirty |= animating && now.duration_since(self.last_spin) >= SPIN_INTERVAL;
        let clock = self.clock_ticks();
        dirty |= clock && now.duration_since(last_frame) >= CLOCK_TICK;
        // A replay that plays folds what is due now, and says when the next is.
        let (played, replay_wake) = self.replay_tick(now.into_std());
        dirty |= played;
        let wake = if animating {
            Some(self.last_spin + SPIN_INTERVAL)
        } else if clock {
            Some(last_frame + CLOCK_TICK)
        } else {
            None
        };
        let replay_wake = replay_wake.map(Instant::from_std);
        (dirty, [wake, replay_wake].into_iter().flatten().min())
    }

    fn draw(&mut self, f: &mut Frame) {
        self.refresh();
        self.ui.now_ms = chrono::Utc::now().timestamp_millis();
        self.ui.tick = (self.ui.now_ms / SPIN_INTERVAL.as_millis() as i64) as u64;
        crate::tui::ui::draw(f, &self.run, &mut self.ui, &self.theme, &self.keys);
        if self.animating() {
            self.last_spin = Instant::now();
        }
    }

    fn done(&self) -> bool {
        self.ui.quitting && !self.engine_running
    }

    fn stop(&mut self) {
        self.run_effects(vec![Effect::Engine(Control::Interrupt), Effect::Quit]);
    }

    fn stop_at_once(&mut self, signal: &'static str) {
        super::terminal::restore();
        let run = self.live_mut().run_id.clone();
        crate::base::signals::exit_now(signal, &run, crate::data::exit::RUN_FAILED);
    }
}

impl App {
    /// Applies an action and its effects.
    pub fn act(&mut self, a: Action) {
        let fx = update(&mut self.ui, &self.run, a);
        self.run_effects(fx);
    }

    /// A click or a turn of the wheel; whether anything may have changed.
    fn on_mouse(&mut self, m: crossterm::event::MouseEvent) -> bool {
        let fx = match m.kind {
            MouseEventKind::Down(crossterm::event::MouseButton::Left) => {
                mouse::click(&mut self.ui, &self.run, m.column, m.row)
            }
            MouseEventKind::ScrollUp => {
                mouse::wheel(&mut self.ui, &self.run, m.column, m.row, true)
            }
            MouseEventKind::ScrollDown => {
                mouse::wheel(&mut self.ui, &self.run, m.column, m.row, false)
            }
            _ => return false,
        };
        self.run_effects(fx);
        true
    }

    /// Whether the run on screen is a live one whose clock moves (paused included).
    fn clock_ticks(&self) -> bool {
        self.ui.replay.is_none() && !self.ui.read_only && self.run.is_live()
    }

    /// Whether running tasks (or debaters) spin on screen.
    fn animating(&self) -> bool {
        // A replay that stands still shows its running tasks still.
        let replay_still = self
            .ui
            .replay
            .as_ref()
            .is_some_and(|t| !t.playing && !t.follow);
        let debating = self
            .run
            .debate
            .as_deref()
            .is_some_and(|d| !crate::tui::ui::debate::timeline::in_flight(d).is_empty());
        !replay_still
            && self.run.is_live()
            && (self.run.count(crate::model::event::TaskStatus::Running) > 0 || debating)
    }
}

/// Runs the Run screen until the person quits and the engine (if any) has stopped.
pub async fn run_loop(
    guard: &mut TerminalGuard,
    app: &mut App,
    events: UnboundedReceiver<Vec<Arc<Envelope>>>,
    loaded: UnboundedReceiver<Loaded>,
    engine_done: Option<tokio::sync::oneshot::Receiver<()>>,
) -> std::io::Result<()> {
    app.engine_running = engine_done.is_some();
    let mut inbox = RunInbox {
        events,
        loaded,
        engine_done,
        events_open: true,
        loaded_open: true,
        batches: Vec::with_capacity(64),
    };
    drive(guard, app, &mut inbox).await?;
    // Fold what is left so the last frame is right, then leave.
    while let Ok(b) = inbox.events.try_recv() {
        for env in b {
            reduce(app.live_mut(), &env);
        }
    }
    Ok(())
}
