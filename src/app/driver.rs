//! The driver loop: one `tokio::select!` over terminal input, committed engine events
//! (drained in batches), loader answers and the frame timer. Everything available is
//! folded first, then at most one frame is drawn; frames are capped at ~30/s and none is
//! drawn when nothing changed (a spinner asks for one every 100 ms while tasks run).

use std::sync::Arc;
use std::time::Duration;

use crossterm::event::{Event, EventStream, KeyCode, KeyEventKind, MouseEventKind};
use futures_util::StreamExt;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};
use tokio::time::Instant;

use super::loader::{Loaded, Loader, Query};
use super::terminal::TerminalGuard;
use super::ui_state::{Doc, Overlay};
use super::update::{input, request_docs, update, Effect, InputKey};
use super::{Action, UiState};
use crate::config::keymap::Keymap;
use crate::engine::Control;
use crate::event::{EngineEvent, Envelope};
use crate::state::{reduce, RunState};
use crate::ui::theme::Theme;

/// Shortest time between two frames.
pub const FRAME_INTERVAL: Duration = Duration::from_millis(33);
/// Spinner period.
pub const SPIN_INTERVAL: Duration = Duration::from_millis(100);
/// How often the clock of a live run is redrawn when nothing else changes (it keeps
/// ticking while paused).
pub const CLOCK_TICK: Duration = Duration::from_secs(1);
/// How often the UI checks that its terminal is still there.
pub const TERMINAL_CHECK: Duration = Duration::from_millis(250);

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
    pub replay: Option<super::replay_feed::ReplayFeed>,
    /// How replays play.
    pub replay_settings: super::replay_app::ReplaySettings,
    /// Where a run opened from the Runs screen starts its replay.
    pub open_at: super::replay_feed::StartAt,
    /// Replays opened so far (numbers each one's player, so a closed one's late
    /// answers are told apart).
    pub replay_generation: u64,
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
                f.status != Some(crate::protocol::InvocationStatus::Success)
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

    /// Carries out effects.
    pub fn run_effects(&mut self, fx: Vec<Effect>) {
        for e in fx {
            match e {
                Effect::Engine(c) => {
                    let sent = self.control.as_ref().is_some_and(|tx| tx.send(c).is_ok());
                    if !sent && !self.ui.quitting {
                        self.ui
                            .flash("the engine has stopped; nothing was sent", true);
                    }
                }
                Effect::LoadDoc(k) => self.loader.ask(Query::Doc(k)),
                Effect::LoadRuns => self.loader.ask(Query::Runs),
                Effect::LoadReviews(scope) => self.loader.ask(Query::Reviews(scope)),
                Effect::Review { run, task, verdict } => self.review(run, task, verdict),
                Effect::LoadFailures(scope) => {
                    let run = (!self.run.run_id.is_empty())
                        .then(|| self.run.run_id.clone())
                        .or_else(|| self.ui.failures_run.clone());
                    let scope = match scope {
                        None if self.ui.failures.this_run_only => run,
                        s => s,
                    };
                    self.ui.failures_run.clone_from(&scope);
                    self.loader.ask(Query::Failures(scope));
                }
                Effect::Compare(a, b) => self.loader.ask(Query::Diff(a, b)),
                Effect::OpenRun(id) => {
                    if !self.run.run_id.is_empty() && self.run.run_id == id {
                        self.ui.screen = super::Screen::Run;
                    } else if self.ui.engine_attached && self.live_mut().run_id == id {
                        self.run_effects(vec![Effect::BackToLive]);
                        self.ui.screen = super::Screen::Run;
                    } else {
                        self.open_replay(id, self.open_at);
                    }
                }
                Effect::LoadOutput(task) => match (&self.replay, &self.ui.replay) {
                    // A replay reads a task's text back as it was at the position.
                    (Some(f), Some(t)) => f.ask_output(task, t),
                    _ => self.loader.ask(Query::Output {
                        run_id: self.run.run_id.clone(),
                        task,
                    }),
                },
                Effect::ReplaySeek { to, token } => {
                    if let Some(f) = self.replay.as_mut() {
                        f.seek(to, token);
                    }
                }
                Effect::ReplayStep => {
                    if let (Some(f), Some(t)) = (self.replay.as_mut(), self.ui.replay.as_mut()) {
                        if !f.step(&mut self.run, t) {
                            // Not read yet: go there by a seek.
                            if let Effect::ReplaySeek { to, token } = t.seek(t.position + 1) {
                                f.seek(to, token);
                            }
                        }
                    }
                }
                Effect::BackToLive => {
                    if let Some(live) = self.stashed_live.take() {
                        self.replay = None;
                        self.ui.replay = None;
                        self.ui.outputs_asked.clear();
                        self.run = live;
                        self.ui.read_only = false;
                        self.ui.task = 0;
                        self.ui.debate = Default::default();
                        self.ui.docs.clear();
                        self.ui.flash("back to the live run", false);
                    }
                }
                Effect::SetTheme(spec) => {
                    let dir = crate::config::config_dir();
                    match crate::ui::theme::Theme::load(&spec, dir.as_deref()) {
                        Ok(t) => {
                            self.ui.flash(format!("theme {}", t.name), false);
                            self.theme = t;
                        }
                        Err(e) => self.ui.flash(format!(":theme: {e}"), true),
                    }
                }
                Effect::Quit => self.ui.quitting = true,
            }
        }
    }

    /// Applies a loader answer.
    pub fn loaded(&mut self, msg: Loaded) {
        match msg {
            Loaded::Doc(k, d) => {
                self.ui.docs.insert(k, d);
            }
            Loaded::Runs(Ok(rows)) => {
                self.ui.runs.rows = Some(rows);
                self.ui.runs.error = None;
            }
            Loaded::Runs(Err(e)) => self.ui.runs.error = Some(e),
            Loaded::Failures(Ok(rows)) => {
                let now = chrono::Utc::now().timestamp_millis();
                self.ui.failures.set_rows(rows, now);
            }
            Loaded::Reviews(Ok(items)) => {
                let f = &mut self.ui.failures;
                f.queue_selected = f.queue_selected.min(items.len().saturating_sub(1));
                f.queue = Some(items);
            }
            Loaded::Reviews(Err(e)) => self
                .ui
                .flash(format!("cannot read the review queue: {e}"), true),
            Loaded::Reviewed(r) => {
                match r {
                    Ok(d) => self.ui.flash(
                        format!(
                            "{} {:?} by {}: {}",
                            d.task_id,
                            d.decision,
                            d.reviewer,
                            if d.unblocked.is_empty() {
                                "recorded in the run's log".to_string()
                            } else {
                                format!(
                                    "{} dependent task(s) run on `plexus resume {}`",
                                    d.unblocked.len(),
                                    d.run_id
                                )
                            }
                        ),
                        false,
                    ),
                    Err(e) => self.ui.flash(format!("not decided: {e}"), true),
                }
                self.reload_failures();
            }
            Loaded::Failures(Err(e)) => {
                self.ui.failures.loading = false;
                self.ui.failures.error = Some(e);
            }
            Loaded::Output { run_id, task, text } => {
                if self.run.run_id == run_id && self.ui.replay.is_none() {
                    self.run.restore_output(task, text);
                }
                self.ui.outputs_asked.remove(&task);
            }
            Loaded::Player(generation, msg) => self.on_player(generation, msg),
            Loaded::Diff(Ok((title, lines))) => {
                self.ui.flash = None;
                self.ui.overlay = Some(super::ui_state::Overlay::Text {
                    title,
                    lines: Arc::new(lines),
                    top: 0,
                });
            }
            Loaded::Diff(Err(e)) => self.ui.flash(format!("cannot compare: {e}"), true),
        }
    }

    /// Decides a review: through the engine when this session executes the run (its
    /// dependents run at once), else written to the database.
    fn review(&mut self, run: String, task: String, verdict: crate::review::Verdict) {
        let ours = self.control.is_some() && self.live_mut().run_id == run;
        if ours {
            let req =
                crate::review::ReviewRequest::new(task, verdict, crate::review::default_reviewer());
            self.run_effects(vec![Effect::Engine(Control::Review(req))]);
        } else {
            self.loader.decide(run, task, verdict);
        }
    }

    /// Reads the failures list and the review queue again.
    fn reload_failures(&mut self) {
        let mut fx = Vec::new();
        super::failures_keys::load(&mut self.ui, &mut fx);
        if self.ui.failures.review {
            let scope = self
                .ui
                .failures_run
                .clone()
                .filter(|_| self.ui.failures.this_run_only);
            fx.push(Effect::LoadReviews(scope));
        }
        self.run_effects(fx);
    }

    /// Asks for what the current view needs that is not loaded (spilled text, documents).
    pub fn refresh(&mut self) {
        let mut fx = Vec::new();
        if self.ui.screen == super::Screen::Run {
            super::follow::apply(&mut self.ui, &self.run, &mut fx);
        }
        if let Some(t) = self.run.tasks.get(self.ui.task) {
            if t.spilled
                && self.ui.view == super::ui_state::OutputView::Raw
                && self.ui.outputs_asked.insert(self.ui.task)
            {
                fx.push(Effect::LoadOutput(self.ui.task));
            }
        }
        request_docs(&mut self.ui, &self.run, &mut fx);
        let f = &self.ui.failures;
        let now = chrono::Utc::now().timestamp_millis();
        if self.ui.screen == super::Screen::Failures
            && f.stale
            && !f.loading
            && now - f.asked_ms >= 1000
        {
            self.run_effects(fx);
            self.reload_failures();
            return;
        }
        self.run_effects(fx);
    }

    /// Handles one terminal event; returns whether anything may have changed.
    pub fn on_terminal(&mut self, ev: Event) -> bool {
        match ev {
            Event::Key(k) if k.kind != KeyEventKind::Release => {
                if self.ui.input.is_some() {
                    let key = match k.code {
                        KeyCode::Char(c) => InputKey::Char(c),
                        KeyCode::Backspace => InputKey::Backspace,
                        KeyCode::Enter => InputKey::Enter,
                        KeyCode::Esc => InputKey::Esc,
                        KeyCode::Tab => InputKey::Tab,
                        _ => return false,
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
                        super::mouse::click(&mut self.ui, &self.run, m.column, m.row)
                    }
                    MouseEventKind::ScrollUp => {
                        super::mouse::wheel(&mut self.ui, &self.run, m.column, m.row, true)
                    }
                    MouseEventKind::ScrollDown => {
                        super::mouse::wheel(&mut self.ui, &self.run, m.column, m.row, false)
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
            .is_some_and(|d| !crate::ui::debate::timeline::in_flight(d).is_empty());
        !replay_still
            && self.run.is_live()
            && (self.run.count(crate::event::TaskStatus::Running) > 0 || debating)
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
    let mut stop_signal = crate::signals::stop_signals();
    let mut signal_count = crate::signals::SignalCount::default();
    let mut watchdog = tokio::time::interval(TERMINAL_CHECK);
    watchdog.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        if app.ui.quitting && engine_done.is_none() {
            break;
        }
        let now = Instant::now();
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
                    crate::signals::Verdict::ExitNow => {
                        super::terminal::restore();
                        let run = app.live_mut().run_id.clone();
                        crate::signals::exit_now(name, &run, crate::exit::RUN_FAILED);
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
        crate::ui::draw(f, &app.run, &mut app.ui, &app.theme, &app.keys);
    });
    let _ = crossterm::execute!(std::io::stdout(), EndSynchronizedUpdate);
    res.map(|_| ())
}
