//! The driver loop: one `tokio::select!` over terminal input, committed engine events
//! (drained in batches), loader answers and the frame timer. Everything available is
//! folded first, then at most one frame is drawn; frames are capped at ~30/s and none is
//! drawn when nothing changed (a spinner asks for one every 100 ms while tasks run).

use std::sync::Arc;
use std::time::Duration;

use crossterm::event::{Event, EventStream, KeyEventKind, MouseEventKind};
use futures_util::StreamExt;
use tokio::sync::mpsc::UnboundedReceiver;
use tokio::time::Instant;

use super::application::App;
use super::loader::Loaded;
use super::terminal::TerminalGuard;
use crate::model::event::Envelope;
use crate::model::state::reduce;
use crate::run::engine::Control;
use crate::tui::app::input::{input, InputKey};
use crate::tui::app::ui_state::Overlay;
use crate::tui::app::{mouse, update, Action, Effect};

/// Shortest time between two frames.
pub const FRAME_INTERVAL: Duration = Duration::from_millis(33);
/// Spinner period.
pub const SPIN_INTERVAL: Duration = Duration::from_millis(100);
/// How often the clock of a live run is redrawn when nothing else changes (it keeps
/// ticking while paused).
pub const CLOCK_TICK: Duration = Duration::from_secs(1);
/// How often the UI checks that its terminal is still there.
pub const TERMINAL_CHECK: Duration = Duration::from_millis(250);

impl App {
    /// Handles one terminal event; returns whether anything may have changed.
    pub fn on_terminal(&mut self, ev: Event) -> bool {
        match ev {
            Event::Key(k) if k.kind != KeyEventKind::Release => {
                if self.ui.input.is_some() {
                    let Some(key) = InputKey::from_code(k.code) else {
                        return false;
                    };
                    let fx = input(&mut self.ui, &self.run, key);
                    self.run_effects(fx);
                    return true;
                }
                self.ui.flash = None;
                match self.keys.lookup(&k) {
                    Some(a) => self.act(a),
                    None => {
                        // Any other key answers "no" to a question.
                        if matches!(self.ui.overlay, Some(Overlay::Confirm(_))) {
                            self.ui.overlay = None;
                        }
                    }
                }
                true
            }
            Event::Mouse(m) => {
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
            Event::Resize(..) => true,
            _ => false,
        }
    }

    /// Applies an action and its effects.
    pub fn act(&mut self, a: Action) {
        let fx = update(&mut self.ui, &self.run, a);
        self.run_effects(fx);
    }

    /// Whether the run on screen is a live one whose clock moves (paused included).
    fn clock_ticks(&self) -> bool {
        self.ui.replay.is_none() && !self.ui.read_only && self.run.is_live()
    }

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

/// Runs the UI until the person quits and the engine (if any) has stopped.
pub async fn run_loop(
    guard: &mut TerminalGuard,
    app: &mut App,
    mut events: UnboundedReceiver<Vec<Arc<Envelope>>>,
    mut loaded: UnboundedReceiver<Loaded>,
    mut engine_done: Option<tokio::sync::oneshot::Receiver<()>>,
) -> std::io::Result<()> {
    let mut input = EventStream::new();
    let mut batches: Vec<Vec<Arc<Envelope>>> = Vec::with_capacity(64);
    let mut batch: Vec<Arc<Envelope>> = Vec::with_capacity(8192);
    let mut dirty = true;
    let mut last_frame = Instant::now() - FRAME_INTERVAL;
    let mut last_spin = Instant::now();
    let mut events_open = true;
    let mut loaded_open = true;
    let mut terminal_lost = false;
    // SIGINT / SIGTERM / SIGHUP: leave like a confirmed quit (the run stays resumable);
    // a second one within 2 s exits at once.
    let mut stop_signal = crate::base::signals::stop_signals();
    let mut signal_count = crate::base::signals::SignalCount::default();
    let mut watchdog = tokio::time::interval(TERMINAL_CHECK);
    watchdog.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        if app.ui.quitting && engine_done.is_none() {
            break;
        }
        let now = Instant::now();
        // A status message gives the hints back after a while (it stays in `M`).
        if app
            .ui
            .flash
            .as_ref()
            .is_some_and(|f| f.expired(chrono::Utc::now().timestamp_millis()))
        {
            app.ui.flash = None;
            dirty = true;
        }
        if app.animating() && now.duration_since(last_spin) >= SPIN_INTERVAL {
            dirty = true;
        }
        if app.clock_ticks() && now.duration_since(last_frame) >= CLOCK_TICK {
            dirty = true;
        }
        // A replay that plays folds what is due now, and says when the next is.
        let (played, replay_wake) = app.replay_tick(now.into_std());
        dirty |= played;
        let due = last_frame + FRAME_INTERVAL;
        if terminal_lost {
            // Nothing can be drawn on a terminal that is gone.
            dirty = false;
        }
        if dirty && now >= due {
            app.refresh();
            app.ui.now_ms = chrono::Utc::now().timestamp_millis();
            app.ui.tick = (app.ui.now_ms / SPIN_INTERVAL.as_millis() as i64) as u64;
            draw(guard, app)?;
            last_frame = Instant::now();
            if app.animating() {
                last_spin = last_frame;
            }
            dirty = false;
        }
        let wake = if dirty {
            due
        } else if app.animating() {
            last_spin + SPIN_INTERVAL
        } else if app.clock_ticks() {
            last_frame + CLOCK_TICK
        } else {
            Instant::now() + Duration::from_secs(3600)
        };
        let wake = match replay_wake {
            Some(w) => wake.min(Instant::from_std(w)),
            None => wake,
        };
        tokio::select! {
            ev = input.next(), if !terminal_lost => match ev {
                Some(Ok(ev)) => dirty |= app.on_terminal(ev),
                // Input that fails or ends means the terminal is gone: like a hang-up.
                Some(Err(e)) => {
                    tracing::warn!("terminal input failed: {e}; leaving as on SIGHUP");
                    terminal_lost = true;
                    app.run_effects(vec![Effect::Engine(Control::Interrupt), Effect::Quit]);
                }
                None => {
                    tracing::warn!("terminal input ended; leaving as on SIGHUP");
                    terminal_lost = true;
                    app.run_effects(vec![Effect::Engine(Control::Interrupt), Effect::Quit]);
                }
            },
            _ = watchdog.tick(), if !terminal_lost => {
                if super::terminal::terminal_gone() {
                    tracing::warn!("the terminal hung up; leaving as on SIGHUP");
                    terminal_lost = true;
                    app.run_effects(vec![Effect::Engine(Control::Interrupt), Effect::Quit]);
                }
            },
            n = events.recv_many(&mut batches, 64), if events_open => {
                if n == 0 {
                    events_open = false;
                } else {
                    batch.extend(batches.drain(..).flatten());
                    app.fold(&batch);
                    batch.clear();
                    dirty = true;
                }
            },
            msg = loaded.recv(), if loaded_open => {
                match msg {
                    Some(m) => {
                        app.loaded(m);
                        dirty = true;
                    }
                    None => {
                        loaded_open = false;
                        app.ui.flash("the database reader stopped; documents cannot be loaded", true);
                        dirty = true;
                    }
                }
            },
            _ = async { if let Some(rx) = engine_done.as_mut() { let _ = rx.await; } }, if engine_done.is_some() => {
                engine_done = None;
                // The engine ended; keep showing the run until the person quits.
                app.control = None;
                if !app.ui.quitting {
                    app.ui.engine_attached = true;
                }
                dirty = true;
            },
            Some(name) = stop_signal.recv() => {
                match signal_count.arrived(std::time::Instant::now()) {
                    crate::base::signals::Verdict::ExitNow => {
                        super::terminal::restore();
                        let run = app.live_mut().run_id.clone();
                        crate::base::signals::exit_now(name, &run, crate::data::exit::RUN_FAILED);
                    }
                    _ => {
                        let fx = vec![Effect::Engine(Control::Interrupt), Effect::Quit];
                        app.run_effects(fx);
                        dirty = true;
                    }
                }
            },
            _ = tokio::time::sleep_until(wake) => {},
        }
    }
    // Fold what is left so the last frame is right, then leave.
    while let Ok(b) = events.try_recv() {
        for env in b {
            reduce(app.live_mut(), &env);
        }
    }
    Ok(())
}

fn draw(guard: &mut TerminalGuard, app: &mut App) -> std::io::Result<()> {
    use crossterm::terminal::{BeginSynchronizedUpdate, EndSynchronizedUpdate};
    let _ = crossterm::execute!(std::io::stdout(), BeginSynchronizedUpdate);
    let res = guard.terminal.draw(|f| {
        crate::tui::ui::draw(f, &app.run, &mut app.ui, &app.theme, &app.keys);
    });
    let _ = crossterm::execute!(std::io::stdout(), EndSynchronizedUpdate);
    res.map(|_| ())
}
