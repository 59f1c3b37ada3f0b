//! Carrying out `update`'s effects (engine commands, store queries, replays, themes)
//! and applying the loader's answers.

use std::sync::Arc;

use super::application::App;
use super::loader::{Loaded, Query};
use crate::run::engine::Control;
use crate::tui::app::select::request_docs;
use crate::tui::app::ui_state::{OutputView, Overlay};
use crate::tui::app::{failures_keys, follow, Effect, Screen};

impl App {
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
                Effect::LoadFailures(scope) => self.load_failures(scope),
                Effect::Compare(a, b) => self.loader.ask(Query::Diff(a, b)),
                Effect::OpenRun(id) => self.open_run(id),
                Effect::FindInRun(id) => self.find_in_run(id),
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
                Effect::ReplayStep => self.replay_step(),
                Effect::BackToLive => self.back_to_live(),
                Effect::SetTheme(spec) => self.set_theme(&spec),
                Effect::Quit => self.ui.quitting = true,
            }
        }
    }

    /// Asks for the failures of `scope` (this run's when the screen shows this run only).
    fn load_failures(&mut self, scope: Option<String>) {
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

    /// Shows run `id`: the one on screen, the live one, or a replay from its log.
    fn open_run(&mut self, id: String) {
        // A run opened by hand: an attempt still to find is forgotten.
        self.ui.failures.find = None;
        if !self.run.run_id.is_empty() && self.run.run_id == id {
            self.ui.screen = Screen::Run;
        } else if self.ui.engine_attached && self.live_mut().run_id == id {
            self.back_to_live();
            self.ui.screen = Screen::Run;
        } else {
            self.open_replay(id, self.open_at);
        }
    }

    /// Shows run `id` at its end to find the attempt the Failures screen asked for.
    fn find_in_run(&mut self, id: String) {
        if self.ui.engine_attached && self.stashed_live.is_some() && self.live_mut().run_id == id {
            self.back_to_live();
        }
        if self.run.run_id != id {
            self.open_replay(id, super::replay_feed::StartAt::End);
        }
        self.find_pending();
    }

    /// One event on in the replay (by a seek when it is not read yet).
    fn replay_step(&mut self) {
        let (Some(f), Some(t)) = (self.replay.as_mut(), self.ui.replay.as_mut()) else {
            return;
        };
        if f.step(&mut self.run, t) {
            return;
        }
        if let Effect::ReplaySeek { to, token } = t.seek(t.position + 1) {
            f.seek(to, token);
        }
    }

    /// Puts the live run back on screen in place of a replay.
    fn back_to_live(&mut self) {
        let Some(live) = self.stashed_live.take() else {
            return;
        };
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

    /// Loads theme `spec` and uses it, or says why not.
    fn set_theme(&mut self, spec: &str) {
        let dir = crate::base::config::config_dir();
        match crate::tui::ui::theme::Theme::load(spec, dir.as_deref()) {
            Ok(t) => {
                self.ui.flash(format!("theme {}", t.name), false);
                self.theme = t;
            }
            Err(e) => self.ui.flash(format!(":theme: {e}"), true),
        }
    }

    /// Applies a loader answer.
    pub fn loaded(&mut self, msg: Loaded) {
        match msg {
            Loaded::Doc(k, d) => {
                self.ui.docs.insert(k, d);
            }
            Loaded::Runs(Ok((rows, facts))) => {
                self.ui.runs.rows = Some(rows);
                self.ui.runs.facts = facts;
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
                self.ui.overlay = Some(Overlay::Text {
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
    fn review(&mut self, run: String, task: String, verdict: crate::run::review::Verdict) {
        let ours = self.control.is_some() && self.live_mut().run_id == run;
        if ours {
            let req = crate::run::review::ReviewRequest::new(
                task,
                verdict,
                crate::run::review::default_reviewer(),
            );
            self.run_effects(vec![Effect::Engine(Control::Review(req))]);
        } else {
            self.loader.decide(run, task, verdict);
        }
    }

    /// Shows the failed attempt the Failures screen asked to find, once its run is on
    /// screen with the task in it.
    pub fn find_pending(&mut self) {
        let Some(find) = self.ui.failures.find.clone() else {
            return;
        };
        if self.run.run_id != find.run_id {
            return;
        }
        let mut fx = Vec::new();
        if failures_keys::find_in_run(&mut self.ui, &self.run, &find, &mut fx) {
            self.ui.failures.find = None;
            self.run_effects(fx);
        }
    }

    /// Reads the failures list and the review queue again.
    fn reload_failures(&mut self) {
        let mut fx = Vec::new();
        failures_keys::load(&mut self.ui, &mut fx);
        if self.ui.failures.review {
            fx.push(Effect::LoadReviews(self.ui.review_scope()));
        }
        self.run_effects(fx);
    }

    /// Asks for what the current view needs that is not loaded (spilled text, documents).
    pub fn refresh(&mut self) {
        let mut fx = Vec::new();
        if self.ui.screen == Screen::Run {
            follow::apply(&mut self.ui, &self.run, &mut fx);
        }
        if let Some(t) = self.run.tasks.get(self.ui.task) {
            if t.spilled
                && self.ui.view == OutputView::Raw
                && self.ui.outputs_asked.insert(self.ui.task)
            {
                fx.push(Effect::LoadOutput(self.ui.task));
            }
        }
        request_docs(&mut self.ui, &self.run, &mut fx);
        let f = &self.ui.failures;
        let now = chrono::Utc::now().timestamp_millis();
        if self.ui.screen == Screen::Failures && f.stale && !f.loading && now - f.asked_ms >= 1000 {
            self.run_effects(fx);
            self.reload_failures();
            return;
        }
        self.run_effects(fx);
    }
}
