//! Running a launched run without the UI: progress on stderr, the summary at the end,
//! a stop signal leaving the run resumable.

use color_eyre::eyre::{eyre, Result, WrapErr};

use super::config::RunConfig;
use super::globals::Globals;
use super::progress::{print_progress, Progress};
use super::resume::Resuming;
use super::start::{start, Finished};
use crate::model::plan::Plan;
use crate::run::engine::Control;

/// Runs `plan` (new run) or resumes `resume_id`, headless. Returns the final status.
pub async fn run_headless(
    globals: &Globals,
    plan: Plan,
    config: RunConfig,
    resume: Option<Resuming>,
    demo_assets: bool,
) -> Result<Finished> {
    let mut started = start(globals, plan, config, resume, demo_assets)?;
    let run_id = started.run_id.clone();
    crate::errln!("run {run_id}: database {}", globals.db.display());
    let events = std::mem::replace(
        &mut started.events,
        tokio::sync::mpsc::unbounded_channel().1,
    );
    let printer = tokio::spawn(print_progress(events));
    let ctrl_c = spawn_stop_watcher(started.handle.control.clone(), run_id.clone(), None);
    let _status = super::status::StatusTicker::start();
    let status = started.finish().await.wrap_err_with(|| {
        format!("run {run_id} stopped before its end; once the cause is fixed it resumes with: plexus resume {run_id}")
    })?;
    ctrl_c.abort();
    let progress: Progress = printer
        .await
        .map_err(|e| eyre!("progress printer failed: {e}"))?;
    Ok(Finished {
        run_id,
        status,
        summary: progress.summary(),
    })
}

/// Watches for stop signals while run `run_id` executes: the first asks the engine to
/// stop (the run stays resumable) and raises `stopped` when given (for work that goes on
/// after the engine, such as an eval's scoring), another within 2 s exits at once.
pub fn spawn_stop_watcher(
    control: tokio::sync::mpsc::UnboundedSender<Control>,
    run_id: String,
    stopped: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut signals = crate::base::signals::stop_signals();
        let mut count = crate::base::signals::SignalCount::default();
        while let Some(name) = signals.recv().await {
            match count.arrived(std::time::Instant::now()) {
                crate::base::signals::Verdict::Stop => {
                    crate::errln!(
                        "{name}: stopping; the run stays resumable (another signal within 2 s exits at once)"
                    );
                    let _ = control.send(Control::Interrupt);
                    if let Some(s) = &stopped {
                        s.store(true, std::sync::atomic::Ordering::SeqCst);
                    }
                }
                crate::base::signals::Verdict::ExitNow => {
                    crate::base::signals::exit_now(name, &run_id, crate::data::exit::RUN_FAILED)
                }
                crate::base::signals::Verdict::StillStopping => {
                    crate::errln!(
                        "{name}: still stopping (another signal within 2 s exits at once)"
                    );
                }
            }
        }
    })
}
