//! Finding runs: the list of `plexus runs`, one run by id, unique prefix or `latest`,
//! and a run's stored status and owner.

use rusqlite::OptionalExtension;
use serde::Serialize;

use super::schema::{run_events_sql, MAX_SEQ};
use super::{Store, StoreError};
use crate::model::state::clock::RunClock;

/// Most runs an ambiguous run-id prefix lists.
const MAX_CANDIDATES: usize = 10;

/// One line of `plexus runs`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunSummary {
    /// Run id.
    pub run_id: String,
    /// Plan id.
    pub plan_id: String,
    /// Plan file.
    pub plan_source: String,
    /// Provider.
    pub provider: String,
    /// Status.
    pub status: String,
    /// Created.
    pub created_at: String,
    /// Finished.
    pub finished_at: Option<String>,
    /// Its running time so far, ms, as its own clock counts it (pauses and the gaps
    /// before a resume left out); `None` when its log has no start.
    pub active_ms: Option<i64>,
    /// When `active_ms` was read, if the run's clock was running then (a screen adds
    /// the time since).
    #[serde(skip)]
    pub ticking_since: Option<i64>,
    /// Tasks.
    pub task_count: i64,
    /// Events logged.
    pub events: i64,
    /// Atoms accepted.
    pub atoms: i64,
    /// What its calls cost, US dollars, when every call had a price (`null` when some
    /// or all had none: unknown, never 0).
    pub cost_usd: Option<f64>,
    /// What its calls cost, with the calls that had no price counted apart.
    #[serde(skip)]
    pub spend: crate::base::cost::Spend,
}

impl Store {
    /// Runs, newest first (of two started in the same second, the one stored last).
    pub fn list_runs(&self) -> Result<Vec<RunSummary>, StoreError> {
        let mut runs = self.summaries("", [])?;
        let mut clocks = self.clocks()?;
        let now = chrono::Utc::now().timestamp_millis();
        for r in &mut runs {
            let Some(clock) = clocks.remove(&r.run_id) else {
                continue;
            };
            // A run that stopped without saying so (a crash) ran until its last event.
            let until = if r.status == "running" || clock.running_since.is_none() {
                now
            } else {
                self.last_event_ts(&r.run_id, r.events)?.unwrap_or(now)
            };
            r.active_ms = Some(clock.active_at(until));
            r.ticking_since =
                (r.status == "running" && clock.running_since.is_some()).then_some(now);
        }
        Ok(runs)
    }

    /// The time of event `seq` of run `run_id`, if it is logged.
    fn last_event_ts(&self, run_id: &str, seq: i64) -> Result<Option<i64>, StoreError> {
        Ok(self
            .conn
            .query_row(
                "SELECT e.ts FROM log_runs l, execution_logs e
                  WHERE l.run_id = ?1 AND e.event_id = (l.run_no << 32) | ?2",
                rusqlite::params![run_id, seq],
                |r| r.get(0),
            )
            .optional()?)
    }

    /// Every run's clock, folded from the events that start and stop it (read from their
    /// own table, not from the log).
    fn clocks(&self) -> Result<std::collections::HashMap<String, RunClock>, StoreError> {
        let mut st = self.conn.prepare(
            "SELECT l.run_id, c.kind, c.ts FROM run_clock_events c
               JOIN log_runs l ON l.run_no = (c.event_id >> 32)
              ORDER BY c.event_id",
        )?;
        let mut clocks: std::collections::HashMap<String, RunClock> = Default::default();
        let mut rows = st.query([])?;
        while let Some(r) = rows.next()? {
            let (run, kind, ts): (String, String, i64) = (r.get(0)?, r.get(1)?, r.get(2)?);
            let clock = clocks.entry(run).or_default();
            match kind.as_str() {
                "run_started" => clock.start(ts),
                "run_resumed" | "run_unpaused" => clock.run(ts),
                "run_paused" => clock.pause(ts),
                _ => clock.stop(ts),
            }
        }
        Ok(clocks)
    }

    /// Summaries of the runs `filter` (an SQL condition on `r`, may be empty) keeps,
    /// newest first.
    fn summaries<P: rusqlite::Params>(
        &self,
        filter: &str,
        params: P,
    ) -> Result<Vec<RunSummary>, StoreError> {
        let mut st = self.conn.prepare(&format!(
            "SELECT r.run_id, r.plan_id, r.plan_source, r.provider, r.status, r.created_at, r.finished_at, r.task_count,
                    (SELECT COALESCE(MAX(e.event_id) & {MAX_SEQ}, 0) FROM log_runs l, execution_logs e
                      WHERE l.run_id = r.run_id AND {}),
                    (SELECT COALESCE(SUM(atoms), 0) FROM tasks t WHERE t.run_id = r.run_id),
                    (SELECT COALESCE(SUM(i.cost_usd), 0.0) FROM invocations i WHERE i.run_id = r.run_id),
                    (SELECT COUNT(i.cost_usd) FROM invocations i WHERE i.run_id = r.run_id),
                    (SELECT COUNT(*) - COUNT(i.cost_usd) FROM invocations i WHERE i.run_id = r.run_id),
                    l.pid, l.host, l.heartbeat_ms
             FROM runs r LEFT JOIN run_leases l ON l.run_id = r.run_id
             {} ORDER BY r.created_at DESC, r.rowid DESC",
            run_events_sql("l.run_no << 32"),
            if filter.is_empty() { String::new() } else { format!("WHERE {filter}") }
        ))?;
        let now = chrono::Utc::now().timestamp_millis();
        let rows = st.query_map(params, |r| {
            let owner = match (
                r.get::<_, Option<u32>>(13)?,
                r.get::<_, Option<String>>(14)?,
            ) {
                (Some(pid), Some(host)) => Some(super::lease::Owner {
                    pid,
                    host,
                    started_at: String::new(),
                    heartbeat_ms: r.get::<_, Option<i64>>(15)?.unwrap_or(0),
                }),
                _ => None,
            };
            Ok(RunSummary {
                run_id: r.get(0)?,
                plan_id: r.get(1)?,
                plan_source: r.get(2)?,
                provider: r.get(3)?,
                status: shown_status(r.get(4)?, owner.as_ref(), now),
                created_at: r.get(5)?,
                finished_at: r.get(6)?,
                active_ms: None,
                ticking_since: None,
                task_count: r.get(7)?,
                events: r.get(8)?,
                atoms: r.get(9)?,
                cost_usd: None,
                spend: crate::base::cost::Spend {
                    usd: r.get(10)?,
                    priced: r.get(11)?,
                    unpriced: r.get(12)?,
                },
            })
            .map(|mut s: RunSummary| {
                s.cost_usd = s.spend.known();
                s
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// One run, by id or unique prefix; `latest` means the newest run.
    pub fn run(&self, id: &str) -> Result<RunSummary, StoreError> {
        let id = self.resolve_run(id)?;
        self.summaries("r.run_id = ?1", [&id])?
            .pop()
            .ok_or(StoreError::NoSuchRun(id))
    }

    /// The full id of a run named by id or unique prefix (`latest`: the newest run),
    /// without summing up the run (which reads every task row): for readers that only
    /// need to know which run is meant.
    pub fn resolve_run(&self, id: &str) -> Result<String, StoreError> {
        let newest_first = "ORDER BY created_at DESC, rowid DESC";
        if id == "latest" {
            return self
                .conn
                .query_row(
                    &format!("SELECT run_id FROM runs {newest_first} LIMIT 1"),
                    [],
                    |r| r.get(0),
                )
                .optional()?
                .ok_or_else(|| StoreError::NoSuchRun(id.into()));
        }
        let exact: Option<String> = self
            .conn
            .query_row("SELECT run_id FROM runs WHERE run_id = ?1", [id], |r| {
                r.get(0)
            })
            .optional()?;
        if let Some(run) = exact {
            return Ok(run);
        }
        let mut st = self.conn.prepare(&format!(
            "SELECT run_id FROM runs WHERE substr(run_id, 1, length(?1)) = ?1 {newest_first}"
        ))?;
        let mut matching: Vec<String> = st
            .query_map([id], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        match matching.len() {
            0 => Err(StoreError::NoSuchRun(id.into())),
            1 => Ok(matching.remove(0)),
            n => Err(StoreError::Ambiguous {
                prefix: id.into(),
                candidates: matching
                    .into_iter()
                    .take(MAX_CANDIDATES)
                    .chain((n > MAX_CANDIDATES).then(|| format!("and {} more", n - MAX_CANDIDATES)))
                    .collect(),
            }),
        }
    }

    /// What each agent's calls in `run_id` cost, from the cost index alone.
    pub fn agent_spend(
        &self,
        run_id: &str,
    ) -> Result<std::collections::BTreeMap<String, crate::base::cost::Spend>, StoreError> {
        let mut st = self.conn.prepare(
            "SELECT agent, COALESCE(SUM(cost_usd), 0.0), COUNT(cost_usd), COUNT(*) - COUNT(cost_usd)
             FROM invocations WHERE run_id = ?1 GROUP BY agent",
        )?;
        let rows = st.query_map([run_id], |r| {
            Ok((
                r.get::<_, String>(0)?,
                crate::base::cost::Spend {
                    usd: r.get(1)?,
                    priced: r.get(2)?,
                    unpriced: r.get(3)?,
                },
            ))
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The status of `run_id` (its full id), read alone: cheap enough to poll. A run
    /// stored as running whose process is gone reads `interrupted` (see
    /// [`shown_status`]).
    pub fn run_status(&self, run_id: &str) -> Result<String, StoreError> {
        let stored = self.stored_run_status(run_id)?;
        if !matches!(stored.as_str(), "running" | "paused") {
            return Ok(stored);
        }
        let owner = super::lease::owner(&self.conn, run_id)?;
        Ok(shown_status(
            stored,
            owner.as_ref(),
            chrono::Utc::now().timestamp_millis(),
        ))
    }

    /// The status the row of `run_id` holds, as its last owner wrote it (a killed run
    /// still says `running`): for the process that takes the run over.
    pub fn stored_run_status(&self, run_id: &str) -> Result<String, StoreError> {
        self.conn
            .query_row("SELECT status FROM runs WHERE run_id = ?1", [run_id], |r| {
                r.get(0)
            })
            .optional()?
            .ok_or_else(|| StoreError::NoSuchRun(run_id.into()))
    }

    /// Whether a live process owns `run_id` (see [`super::lease`]).
    pub fn run_owner_alive(&self, run_id: &str) -> Result<bool, StoreError> {
        let now = chrono::Utc::now().timestamp_millis();
        Ok(super::lease::owner(&self.conn, run_id)?
            .is_some_and(|o| super::lease::gone(&o, now).is_none()))
    }
}

/// A run's status as every reader shows it: one stored as `running` or `paused` whose
/// owner is gone (killed, crashed: a dead process, a stale heartbeat, or no lease at
/// all) is `interrupted`, as a resume will find it. Readers never write, so the row
/// keeps its word until a process takes the run over.
pub fn shown_status(stored: String, owner: Option<&super::lease::Owner>, now_ms: i64) -> String {
    let live = owner.is_some_and(|o| super::lease::gone(o, now_ms).is_none());
    if matches!(stored.as_str(), "running" | "paused") && !live {
        "interrupted".into()
    } else {
        stored
    }
}
