//! `GET /api/sessions/ID`: a stored session in the front end's shape
//! (`type: multi_agent_session`), read from the database, whether it is running or has
//! ended.

use serde_json::Value;

use crate::data::store::Store;
use crate::features::debate::replay::load_events;
use crate::model::state::debate::DebateState;
use crate::model::state::debate_front::front_end_json;

/// Where sessions are read.
pub const SESSIONS_PATH: &str = "/api/sessions/";

/// The session `id` of the database `db` as the front end shows it, or the status and
/// message of why not (404: no such debate session; 400: not an id; 500: the database).
pub fn session_document(db: &std::path::Path, id: &str) -> Result<Value, (u16, String)> {
    let id_ok = !id.is_empty()
        && id.len() <= 64
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !id_ok {
        return Err((400, format!("{id:?} is not a session id")));
    }
    let store = Store::open(db).map_err(|e| (500, format!("cannot read the database: {e}")))?;
    let run = match store.run(id) {
        Ok(r) if crate::features::debate::is_debate(&r.plan_id) && r.run_id == id => r,
        _ => return Err((404, format!("no debate session {id}"))),
    };
    let events = load_events(&store, &run.run_id)
        .map_err(|e| (500, format!("cannot read the session: {e}")))?;
    let state = DebateState::from_stored(&events, &run.status);
    Ok(front_end_json(&state, &run.run_id))
}
