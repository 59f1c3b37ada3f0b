//! Starting the terminal UI: on a live run (demo, run, resume) with the engine attached,
//! or on the database alone (browse runs, open one read-only).

use color_eyre::eyre::{eyre, Result, WrapErr};

use super::launch::{start, Finished, Resuming, Started};
use super::{Globals, RunConfig};
use crate::app::keymap::Keymap;
use crate::app::{Screen, UiState};
use crate::config::{config_dir, Config};
use crate::event::RunStatus;
use crate::plan::Plan;
use crate::state::debate::DebateState;
use crate::state::RunState;
use crate::store::Store;
use crate::tui::app::App;
use crate::tui::app::ReplaySettings;
use crate::tui::driver::run_loop;
use crate::tui::loader::{fold_run, Loader};
use crate::tui::replay_feed::StartAt;
use crate::tui::terminal::TerminalGuard;
use crate::ui::theme::{load_or_fallback, Theme};

/// Look and keys of the UI.
pub struct UiSetup {
    /// Colours.
    pub theme: Theme,
    /// Keys.
    pub keys: Keymap,
    /// A warning to show at start (theme fell back, …).
    pub warning: Option<String>,
}

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
    ui.resume_hint = super::resume_command(&globals.db, &run_id);
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
    };
    app.run.run_id = run_id.clone();
    // The engine's end is signalled to the loop; the outcome is collected afterwards.
    let (done_tx, done_rx) = tokio::sync::oneshot::channel();
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
            let _ = c.send(crate::engine::Control::Interrupt);
        }
        tracing::error!("terminal error: {e}");
    }
    drop(control);
    let status = finishing
        .await
        .map_err(|e| eyre!("the engine crashed: {e}"))??;
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

/// The end-of-session summary of a debate: how it ended, the consensus by round, the
/// report, the errors handled.
pub fn debate_summary(d: &DebateState) -> String {
    let status = d
        .status
        .as_ref()
        .map_or("in_progress", |s| s.as_str())
        .to_string();
    let trend: Vec<String> = d
        .consensus_trend
        .iter()
        .map(|c| format!("{c:.2}"))
        .collect();
    let mut out = format!(
        "debate: {status} after {} round(s); consensus {}\n",
        d.rounds.len(),
        if trend.is_empty() {
            "not measured".to_string()
        } else {
            trend.join(" → ")
        }
    );
    out.push_str(if d.report.is_some() {
        "report: written\n"
    } else {
        "report: none\n"
    });
    if !d.errors.is_empty() {
        out.push_str(&format!("errors handled: {}\n", d.errors.len()));
    }
    out
}

fn app_state(app: &App) -> &RunState {
    app.stashed_live.as_ref().unwrap_or(&app.run)
}

/// How a run is opened from its log: where its replay starts and how it plays.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReplayOptions {
    /// Where a run opened starts (from the command line, or by Enter on the Runs
    /// screen).
    pub start: StartAt,
    /// Speed, gap cap, autoplay.
    pub settings: ReplaySettings,
}

impl ReplayOptions {
    /// `browse`: a run opens at its end (following it when it is still being written)
    /// and waits.
    pub fn browse() -> ReplayOptions {
        ReplayOptions {
            start: StartAt::End,
            settings: ReplaySettings::default(),
        }
    }
}

/// Browses the database without running anything: the Runs screen, or `run` opened as
/// a replay (at its end for `browse`, where `options` says for `replay`).
pub async fn browse_tui(
    globals: &Globals,
    run: Option<&str>,
    setup: UiSetup,
    options: ReplayOptions,
) -> Result<()> {
    browse_tui_on(globals, run, setup, options, false).await
}

/// [`browse_tui`], starting on the Failures screen when `failures` is set (of `run`
/// when one is given, else of every run).
pub async fn browse_tui_on(
    globals: &Globals,
    run: Option<&str>,
    setup: UiSetup,
    options: ReplayOptions,
    failures: bool,
) -> Result<()> {
    // The run is looked up first, so a wrong id or database is said before the screen
    // changes.
    let run_id =
        match run {
            Some(id) => Some(
                Store::open(&globals.db)
                    .wrap_err_with(|| format!("cannot open the database {}", globals.db.display()))?
                    .run(id)?
                    .run_id,
            ),
            None => {
                drop(Store::open(&globals.db).wrap_err_with(|| {
                    format!("cannot open the database {}", globals.db.display())
                })?);
                None
            }
        };
    let (loaded_tx, loaded_rx) = tokio::sync::mpsc::unbounded_channel();
    let mut ui = UiState::new(false);
    if run_id.is_none() {
        ui.screen = Screen::Runs;
    }
    let mut app = App {
        run: RunState::new(),
        stashed_live: None,
        ui,
        theme: setup.theme,
        keys: setup.keys,
        control: None,
        loader: Loader::spawn(globals.db.clone(), loaded_tx),
        replay: None,
        replay_settings: options.settings,
        open_at: options.start,
        replay_generation: 0,
    };
    match run_id.clone() {
        Some(id) => app.open_replay(id, options.start),
        None => app.run_effects(vec![crate::app::Effect::LoadRuns]),
    }
    if failures {
        app.ui.screen = Screen::Failures;
        app.ui.failures.this_run_only = run_id.is_some();
        app.ui.failures_run.clone_from(&run_id);
        app.run_effects(vec![crate::app::Effect::LoadFailures(run_id)]);
    }
    if let Some(w) = setup.warning {
        app.ui.flash(w, true);
    }
    let (_tx, events) =
        tokio::sync::mpsc::unbounded_channel::<Vec<std::sync::Arc<crate::event::Envelope>>>();
    let mut guard = TerminalGuard::enter().wrap_err("cannot start the terminal UI")?;
    let r = run_loop(&mut guard, &mut app, events, loaded_rx, None).await;
    drop(guard);
    r.wrap_err("the terminal UI failed")
}

/// The end-of-run summary printed after the terminal is restored.
pub fn summary(st: &RunState) -> String {
    use crate::event::TaskStatus;
    let mut out = String::new();
    let counts: Vec<String> = TaskStatus::ALL
        .iter()
        .filter(|&&s| st.count(s) > 0)
        .map(|&s| format!("{} {}", st.count(s), s.as_str()))
        .collect();
    out.push_str(&format!(
        "tasks: {} ({})\n",
        st.tasks.len(),
        counts.join(", ")
    ));
    let q = &st.quality;
    out.push_str(&format!(
        "atoms accepted: {} (A {} · B {} · C {} · D {}), average score {:.2}\n",
        q.atoms(),
        q.grades.a,
        q.grades.b,
        q.grades.c,
        q.grades.d,
        q.avg_score()
    ));
    let tokens_in: u64 = st.agents.iter().map(|a| a.tokens_in).sum();
    let tokens_out: u64 = st.agents.iter().map(|a| a.tokens_out).sum();
    out.push_str(&format!(
        "tokens: {tokens_in} in, {tokens_out} out over {} invocation(s); {} events\n",
        st.agents.iter().map(|a| a.invocations).sum::<u32>(),
        st.events
    ));
    if st.status == Some(RunStatus::Running) {
        out.push_str("the run did not end\n");
    }
    out
}

/// Whether to open the TUI: not asked to stay headless and both stdin and stdout are
/// terminals.
pub fn want_tui(globals: &Globals) -> bool {
    use std::io::IsTerminal;
    !globals.headless && std::io::stdout().is_terminal() && std::io::stdin().is_terminal()
}

/// The theme and keymap for the UI from the loaded config; a broken theme falls back.
pub fn ui_setup(cli_theme: Option<&str>, cfg: &Config) -> Result<UiSetup> {
    let keys = Keymap::with_overrides(&cfg.keys).map_err(|e| eyre!("{e}"))?;
    let spec = cli_theme
        .map(str::to_string)
        .unwrap_or_else(|| cfg.ui.theme.clone());
    let (theme, warning) = load_or_fallback(&spec, config_dir().as_deref());
    if let Some(w) = &warning {
        tracing::warn!("{w}");
    }
    Ok(UiSetup {
        theme,
        keys,
        warning,
    })
}

/// The replay options of `plexus replay`, checked.
pub fn replay_options(at: &str, speed: &str, max_gap: f64, paused: bool) -> Result<ReplayOptions> {
    use crate::app::transport::Speed;
    let start = match at {
        "start" => StartAt::Start,
        "end" => StartAt::End,
        n => StartAt::Event(
            n.parse()
                .map_err(|_| eyre!("--at `{n}`: give start, end or an event number"))?,
        ),
    };
    let speed = match speed {
        "max" => Speed::Max,
        s => {
            let f: f64 = s
                .trim_start_matches(['x', '×'])
                .parse()
                .map_err(|_| eyre!("--speed `{s}`: give a number from 0.25 to 64, or max"))?;
            if !(0.25..=64.0).contains(&f) {
                return Err(eyre!("--speed {s}: from 0.25 to 64, or max"));
            }
            Speed::nearest(f)
        }
    };
    if !(max_gap.is_finite() && (0.0..=86_400.0).contains(&max_gap)) {
        return Err(eyre!(
            "--max-gap must be a number of seconds from 0 to 86400"
        ));
    }
    Ok(ReplayOptions {
        start,
        settings: ReplaySettings {
            speed,
            max_gap_ms: (max_gap * 1000.0).round() as u64,
            autoplay: !paused,
        },
    })
}
