//! The terminal UI on a live run: a plan run or resumed with the engine attached, or a
//! debate session already started; returns how the run ended.

use color_eyre::eyre::{eyre, Result, WrapErr};

use super::setup::UiSetup;
use super::summary::{debate_summary, summary};
use crate::cli::launch::{resume_command, start, Finished, Globals, Resuming, RunConfig, Started};
use crate::data::store::Store;
use crate::model::plan::Plan;
use crate::model::state::RunState;
use crate::tui::app::UiState;
use crate::tui::application::App;
use crate::tui::loader::{fold_run, Loader};
use crate::tui::replay_feed::StartAt;
use crate::tui::run_screen::run_loop;
use crate::tui::terminal::TerminalGuard;

/// Runs a plan (or resumes a run) with the TUI attached. Returns how the run ended.
pub async fn run_tui(
    globals: &Globals,
    plan: Plan,
    mut config: RunConfig,
    resume: Option<Resuming>,
    demo_assets: bool,
    setup: UiSetup,
) -> Result<Finished> {
    // Held open after the last task so a failed task can be retried from the keyboard.
    config.engine.hold_open = true;
    // A resumed run shows what its log already holds; the engine adds to it.
    let prior = match &resume {
        Some(Resuming { run_id: id, .. }) => {
            let store = Store::open(&globals.db)
                .wrap_err_with(|| format!("cannot open the database {}", globals.db.display()))?;
            Some(fold_run(&store, id, None, None).map_err(|e| eyre!("{e}"))?)
        }
        None => None,
    };
    let started = start(globals, plan, config, resume, demo_assets)?;
    attach(globals, started, prior, setup).await
}

/// Runs a debate session already started on the engine with the TUI attached: the
/// Debate screen, folded from the same events as the run. Its control channel takes
/// `Control::Cancel` (the stop key, after a question) and `Control::Interrupt` (quit).
/// Returns how the session's run ended.
pub async fn run_debate_tui(
    globals: &Globals,
    started: Started,
    setup: UiSetup,
) -> Result<Finished> {
    attach(globals, started, None, setup).await
}

/// The UI on a started run until the person quits and the engine has stopped; `prior`
/// is what the log already held (a resumed run).
async fn attach(
    globals: &Globals,
    mut started: Started,
    prior: Option<RunState>,
    setup: UiSetup,
) -> Result<Finished> {
    let run_id = started.run_id.clone();
    let events = std::mem::replace(
        &mut started.events,
        tokio::sync::mpsc::unbounded_channel().1,
    );
    let (loaded_tx, loaded_rx) = tokio::sync::mpsc::unbounded_channel();
    let mut ui = UiState::new(true);
    ui.resume_hint = resume_command(&globals.db, &run_id);
    if let Some(w) = setup.warning {
        ui.flash(w, true);
    }
    let mut app = App {
        // Not `unwrap_or_default`: a new state has its output budget.
        run: match prior {
            Some(p) => p,
            None => RunState::new(),
        },
        stashed_live: None,
        ui,
        theme: setup.theme,
        keys: setup.keys,
        control: Some(started.handle.control.clone()),
        loader: Loader::spawn(globals.db.clone(), loaded_tx),
        replay: None,
        replay_settings: Default::default(),
        open_at: StartAt::End,
        replay_generation: 0,
        engine_running: false,
        last_spin: tokio::time::Instant::now(),
    };
    app.run.run_id = run_id.clone();
    // The engine's end is signalled to the loop; the outcome is collected afterwards.
    let (done_tx, done_rx) = tokio::sync::oneshot::channel();
    // The trace sender flushes on its own threads once the run ends; its report waits
    // until the screen is closed.
    let otlp = started.otlp.take();
    let finishing = tokio::spawn(async move {
        let r = started.finish().await;
        let _ = done_tx.send(());
        r
    });
    let ui_result = {
        let mut guard = TerminalGuard::enter().wrap_err("cannot start the terminal UI")?;
        let r = run_loop(&mut guard, &mut app, events, loaded_rx, Some(done_rx)).await;
        drop(guard);
        r
    };
    let control = app.control.take();
    if let Err(e) = &ui_result {
        // The terminal failed: leave the run resumable rather than running blind.
        if let Some(c) = &control {
            let _ = c.send(crate::run::engine::Control::Interrupt);
        }
        tracing::error!("terminal error: {e}");
    }
    drop(control);
    let status = finishing
        .await
        .map_err(|e| eyre!("the engine crashed: {e}"))?;
    // The screen is down now: the trace sender's report may be printed.
    if let Some(live) = otlp {
        if let Ok(r) = tokio::task::spawn_blocking(move || live.finish()).await {
            crate::errln!("{}", r.line());
        }
    }
    let status = status?;
    ui_result.wrap_err("the terminal UI failed")?;
    let st = app_state(&app);
    let summary = match st.debate.as_deref() {
        Some(d) => debate_summary(d),
        None => summary(st),
    };
    Ok(Finished {
        run_id,
        status,
        summary,
    })
}

fn app_state(app: &App) -> &RunState {
    app.stashed_live.as_ref().unwrap_or(&app.run)
}
