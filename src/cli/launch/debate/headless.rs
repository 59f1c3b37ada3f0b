//! A debate session without the UI: progress on stderr; on stdout the report, or the
//! front end's event stream.

use color_eyre::eyre::{eyre, Result, WrapErr};

use crate::cli::launch::{Finished, Globals, Started};
use crate::data::exit;
use crate::model::state::debate::DebateState;
use crate::run::engine::Control;

/// Prints the report of a finished session, and its status line.
pub fn report_text(state: &DebateState) -> String {
    let mut out = String::new();
    match &state.report {
        Some(r) if !r.content.is_empty() => {
            out.push_str(&r.content);
            out.push('\n');
        }
        // Why there is none: the session failed or was stopped.
        _ => match &state.finished {
            Some(f) => out.push_str(&format!("(no report: {})\n", f.reason)),
            None => out.push_str("(no report)\n"),
        },
    }
    let trend: Vec<String> = state
        .consensus_trend
        .iter()
        .map(|x| format!("{x:.2}"))
        .collect();
    out.push_str(&format!(
        "\nsession {}: {} after {} round(s); consensus {}\n",
        state.run_id,
        state
            .status
            .as_ref()
            .map(|s| s.as_str().to_string())
            .unwrap_or_else(|| "unknown".into()),
        state.current_round,
        if trend.is_empty() {
            "not measured".into()
        } else {
            trend.join(" → ")
        }
    ));
    out
}

/// Runs a started session without the UI: progress on stderr; on stdout the report, or
/// the event stream when `sse`.
pub async fn headless(g: &Globals, mut started: Started, sse: bool) -> Result<Finished> {
    let run_id = started.run_id.clone();
    crate::errln!("debate {run_id}: database {}", g.db.display());
    let mut events = std::mem::replace(
        &mut started.events,
        tokio::sync::mpsc::unbounded_channel().1,
    );
    let printer = tokio::spawn(async move {
        let mut state = DebateState::new();
        while let Some(batch) = events.recv().await {
            for env in batch {
                if sse {
                    for item in crate::features::debate::sse::items(&env) {
                        crate::base::out::stdout_raw(&crate::features::debate::sse::frame(&item));
                    }
                }
                if let Some(line) = crate::features::debate::progress::line(&env.event) {
                    crate::errln!("{line}");
                }
                state.apply(&env);
            }
        }
        state
    });
    let control = started.handle.control.clone();
    let ctrl_c = tokio::spawn(async move {
        let mut signals = crate::base::signals::stop_signals();
        if let Some(name) = signals.recv().await {
            crate::errln!("{name}: stopping the session");
            let _ = control.send(Control::Cancel(format!("{name} received")));
        }
        if let Some(name) = signals.recv().await {
            crate::errln!("{name}: exiting at once");
            std::process::exit(i32::from(exit::RUN_FAILED));
        }
    });
    let status_line = crate::cli::launch::status::StatusTicker::start();
    let status = started
        .finish()
        .await
        .wrap_err_with(|| format!("debate {run_id} stopped before its end"))?;
    drop(status_line);
    ctrl_c.abort();
    let state = printer
        .await
        .map_err(|e| eyre!("progress printer failed: {e}"))?;
    if sse {
        crate::base::out::stdout_raw(&crate::features::debate::sse::done());
    } else {
        crate::base::out::stdout_text(&report_text(&state));
    }
    Ok(Finished {
        run_id,
        status,
        summary: String::new(),
    })
}
