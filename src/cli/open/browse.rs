//! The terminal UI on the database alone: the Runs screen, a run opened read-only as a
//! replay, the Failures screen; and the replay options of `plexus replay`.

use color_eyre::eyre::{eyre, Result, WrapErr};

use super::setup::UiSetup;
use crate::cli::launch::Globals;
use crate::data::store::Store;
use crate::model::state::RunState;
use crate::tui::app::{Screen, UiState};
use crate::tui::application::App;
use crate::tui::application::ReplaySettings;
use crate::tui::loader::Loader;
use crate::tui::replay_feed::StartAt;
use crate::tui::run_screen::run_loop;
use crate::tui::terminal::TerminalGuard;

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
        engine_running: false,
        last_spin: tokio::time::Instant::now(),
    };
    match run_id.clone() {
        Some(id) => app.open_replay(id, options.start),
        None => app.run_effects(vec![crate::tui::app::Effect::LoadRuns]),
    }
    if failures {
        app.ui.screen = Screen::Failures;
        app.ui.failures.this_run_only = run_id.is_some();
        app.ui.failures_run.clone_from(&run_id);
        app.run_effects(vec![crate::tui::app::Effect::LoadFailures(run_id)]);
    }
    if let Some(w) = setup.warning {
        app.ui.flash(w, true);
    }
    let (_tx, events) = tokio::sync::mpsc::unbounded_channel::<
        Vec<std::sync::Arc<crate::model::event::Envelope>>,
    >();
    let mut guard = TerminalGuard::enter().wrap_err("cannot start the terminal UI")?;
    let r = run_loop(&mut guard, &mut app, events, loaded_rx, None).await;
    drop(guard);
    r.wrap_err("the terminal UI failed")
}

/// The replay options of `plexus replay`, checked.
pub fn replay_options(at: &str, speed: &str, max_gap: f64, paused: bool) -> Result<ReplayOptions> {
    use crate::tui::app::transport::Speed;
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
