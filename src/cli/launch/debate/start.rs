//! Starting a debate session: its run row, the store writer (holding the run's lease),
//! the session's engine; what comes back is a [`Started`] like any run's.

use std::path::Path;
use std::sync::Arc;

use color_eyre::eyre::{eyre, Result};
use serde_json::{json, Value};

use crate::base::protocol::debate_spec::DebateSpec;
use crate::cli::launch::start::{new_run_id, Started};
use crate::data::provider::Provider;
use crate::data::store::lease::HeldLease;
use crate::data::store::writer::spawn_writer_holding;
use crate::data::store::{RunRow, WriteOp};
use crate::features::debate::session::{start_session, SessionSpec};
use crate::features::debate::similarity::PositionComparer;
use crate::run::tools::{Tool, ToolContext};

/// Where a session's run row says it came from (the Runs screen's plan column).
pub fn plan_source(spec: &DebateSpec) -> String {
    let q = spec.question.replace(['\n', '\r'], " ");
    format!("debate: {}", crate::base::text::cut::cut_chars(&q, 60))
}

/// The current time in `timezone`, by the `get_now` tool (`now`, `timezone`, `weekday`,
/// `date`, and the full ISO time as `datetime`).
pub async fn now_data(timezone: &str) -> Result<Value> {
    let ctx = ToolContext::new(".");
    let data = crate::run::tools::time::GetNow
        .run(&ctx, &json!({ "timezone": timezone }))
        .await
        .map_err(|e| eyre!("get_now: {e}"))?;
    match data.payload {
        crate::run::tools::Payload::Json(v) => Ok(v),
        crate::run::tools::Payload::Text(t) => Err(eyre!("get_now answered text: {t}")),
    }
}

/// Creates the session's run in `db` and starts it. Its traces go nowhere: a caller
/// that wants them sends them with [`Started::with_otlp`].
pub fn start_debate(
    db: &Path,
    spec: DebateSpec,
    provider: Arc<dyn Provider>,
    comparer: Arc<PositionComparer>,
    moderator: Option<Arc<crate::features::debate::moderation::HttpModerator>>,
    now: Value,
) -> Result<Started> {
    let (sub_tx, sub_rx) = tokio::sync::mpsc::unbounded_channel();
    // A stop signal before the session exists ends the command with nothing written.
    crate::base::signals::stop_if_signalled()?;
    let run_id = new_run_id();
    let lease = HeldLease::acquire(db, &run_id)?;
    let (writer, writer_thread) = spawn_writer_holding(db, Some(sub_tx), lease.lease().cloned())?;
    drop(lease.handed_over());
    let (keeper_tx, keeper_rx) = tokio::sync::mpsc::unbounded_channel();
    let keeper = crate::cli::launch::keeper::spawn_keeper(
        db.to_path_buf(),
        run_id.clone(),
        sub_rx,
        keeper_tx,
    )
    .map_err(|e| color_eyre::eyre::eyre!("cannot start the snapshot keeper: {e}"))?;
    let row = RunRow {
        run_id: run_id.clone(),
        plan_id: "debate".into(),
        plan_source: plan_source(&spec),
        plan_json: serde_json::to_string(&spec)?,
        provider: provider.name(),
        config_json: serde_json::to_string(&json!({ "mode": "debate" }))?,
        created_at: crate::base::clock::now_rfc3339(),
        task_count: 0,
        tasks: Vec::new(),
    };
    let begun = crate::base::signals::stop_if_signalled()
        .map_err(color_eyre::Report::from)
        .and_then(|()| {
            writer
                .send(WriteOp::CreateRun(Box::new(row)))
                .and_then(|()| writer.flush())
                .map_err(color_eyre::Report::from)
        });
    if let Err(e) = begun {
        drop(writer);
        let _ = writer_thread.join();
        return Err(e);
    }
    let handle = start_session(SessionSpec {
        run_id: run_id.clone(),
        spec,
        provider,
        comparer,
        moderator,
        now,
        writer: writer.clone(),
    });
    Ok(Started {
        run_id,
        handle,
        writer,
        writer_thread,
        keeper,
        events: keeper_rx,
        otlp: None,
    })
}
