//! The loader thread: the UI's one owner of a read connection to the database. It answers
//! document, run-list and log queries off the UI loop and sends the results back as
//! messages, so a slow query never stalls a frame.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;
use tokio::sync::mpsc::UnboundedSender;

use super::worker::Worker;
use crate::data::store::{RunSummary, Store};
use crate::model::state::{OutputBuffer, RunState};
use crate::tui::app::docs::{Doc, DocKey};
use crate::tui::app::runs_list::{sort_outcomes, RunFactsById};

/// A query for the loader.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Query {
    /// A document.
    Doc(DocKey),
    /// The list of runs.
    Runs,
    /// The failed invocations of a run (`None`: every run).
    Failures(Option<String>),
    /// The review queue of a run (`None`: every run).
    Reviews(Option<String>),
    /// The differences between two runs, as text.
    Diff(String, String),
    /// A task's streamed text, rebuilt from the log.
    Output {
        /// Run.
        run_id: String,
        /// Task index in the run's state.
        task: usize,
    },
}

/// An answer from the loader.
#[derive(Debug)]
pub enum Loaded {
    /// A document.
    Doc(DocKey, Doc),
    /// The list of runs with each one's tasks by outcome and reviews waiting, or why not.
    Runs(Result<(Vec<RunSummary>, RunFactsById), String>),
    /// Failed invocations, or why not.
    Failures(Result<Vec<crate::data::store::FailedInvocation>, String>),
    /// The review queue, or why not.
    Reviews(Result<Vec<crate::run::review::ReviewItem>, String>),
    /// A review decided (written to the database), or why not.
    Reviewed(Result<crate::run::review::Decided, String>),
    /// Two runs compared: a title and the lines, or why not.
    Diff(Result<(String, Vec<String>), String>),
    /// A message of the replay player of generation `.0`.
    Player(u64, crate::data::replay::player::PlayerMsg),
    /// A task's text.
    Output {
        /// Run.
        run_id: String,
        /// Task index.
        task: usize,
        /// The text.
        text: OutputBuffer,
    },
}

/// Handle to the loader thread.
pub struct Loader {
    worker: Worker<Query>,
    out: UnboundedSender<Loaded>,
    db: PathBuf,
}

impl Loader {
    /// Starts the loader on `db`; answers go to `out`.
    pub fn spawn(db: PathBuf, out: UnboundedSender<Loaded>) -> Loader {
        let open_db = db.clone();
        let worker = Worker::spawn(
            "plexus-loader",
            out.clone(),
            move || (Store::open(&open_db).map_err(|e| e.to_string()), open_db),
            |(store, db), q| answer(store, db, q),
        );
        Loader { worker, out, db }
    }

    /// Starts a replay player on `run`; its messages arrive as [`Loaded::Player`] with
    /// generation `gen` (so a replaced player's late answers can be told apart).
    pub fn player(&self, run: String, gen: u64) -> crate::data::replay::player::Player {
        let out = self.out.clone();
        crate::data::replay::player::Player::spawn(self.db.clone(), run, move |m| {
            out.send(Loaded::Player(gen, m)).is_ok()
        })
    }

    /// Decides a review of a run no process of this session executes: written to the
    /// database on a thread of its own (it takes the run's lease for one transaction);
    /// the answer arrives as [`Loaded::Reviewed`].
    pub fn decide(&self, run: String, task: String, verdict: crate::run::review::Verdict) {
        let (db, out) = (self.db.clone(), self.out.clone());
        let spawned = std::thread::Builder::new()
            .name("plexus-review".into())
            .spawn(move || {
                let reviewer = crate::run::review::default_reviewer();
                let r = crate::run::review::decide(&db, &run, &task, &verdict, &reviewer)
                    .map_err(|e| e.to_string());
                let _ = out.send(Loaded::Reviewed(r));
            });
        if let Err(e) = spawned {
            let _ = self.out.send(Loaded::Reviewed(Err(format!(
                "cannot start the review: {e}"
            ))));
        }
    }

    /// Queues a query (answers arrive as `Loaded` messages).
    pub fn ask(&self, q: Query) {
        self.worker.ask(q);
    }
}

/// Answers one query (`None`: nothing to send back).
fn answer(store: &Result<Store, String>, db: &std::path::Path, q: Query) -> Option<Loaded> {
    let store = match store {
        Ok(s) => s,
        Err(e) => {
            let msg = format!("cannot open {}: {e}", db.display());
            return match q {
                Query::Doc(k) => Some(Loaded::Doc(k, Doc::Missing(msg))),
                Query::Runs => Some(Loaded::Runs(Err(msg))),
                Query::Failures(_) => Some(Loaded::Failures(Err(msg))),
                Query::Reviews(_) => Some(Loaded::Reviews(Err(msg))),
                Query::Diff(..) => Some(Loaded::Diff(Err(msg))),
                Query::Output { .. } => None,
            };
        }
    };
    Some(match q {
        Query::Doc(key) => {
            let doc = load_doc(store, &key);
            Loaded::Doc(key, doc)
        }
        Query::Runs => Loaded::Runs(
            store
                .list_runs()
                .map_err(|e| e.to_string())
                .and_then(|rows| Ok((rows, run_facts(store)?))),
        ),
        Query::Reviews(run) => Loaded::Reviews(
            store
                .review_queue(run.as_deref())
                .map_err(|e| e.to_string()),
        ),
        Query::Failures(run) => Loaded::Failures(
            store
                .failed_invocations(run.as_deref())
                .map_err(|e| e.to_string()),
        ),
        Query::Diff(a, b) => Loaded::Diff(compare_runs(store, &a, &b)),
        Query::Output { run_id, task } => match fold_run(store, &run_id, Some(task), None) {
            Ok(mut st) => {
                let text = st
                    .tasks
                    .get_mut(task)
                    .map(|t| std::mem::take(&mut std::sync::Arc::make_mut(t).output))
                    .unwrap_or_default();
                Loaded::Output { run_id, task, text }
            }
            Err(e) => {
                tracing::warn!("cannot reload output of task {task}: {e}");
                return None;
            }
        },
    })
}

/// Every run's tasks counted by status and its reviews waiting for a decision.
fn run_facts(store: &Store) -> Result<RunFactsById, String> {
    let mut facts = RunFactsById::new();
    let mut st = store
        .conn()
        .prepare("SELECT run_id, status, COUNT(*) FROM tasks GROUP BY run_id, status")
        .map_err(|e| e.to_string())?;
    let rows = st
        .query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, i64>(2)?,
            ))
        })
        .map_err(|e| e.to_string())?;
    for row in rows {
        let (run, status, n) = row.map_err(|e| e.to_string())?;
        facts.entry(run).or_default().outcomes.push((status, n));
    }
    for f in facts.values_mut() {
        sort_outcomes(&mut f.outcomes);
    }
    for item in store.review_queue(None).map_err(|e| e.to_string())? {
        if item.waits() {
            facts.entry(item.run_id).or_default().reviews_waiting += 1;
        }
    }
    Ok(facts)
}

/// Folds a run's log (the whole of it, or up to event `upto`) into a fresh state,
/// keeping only `only`'s text when set.
pub fn fold_run(
    store: &Store,
    run_id: &str,
    only: Option<usize>,
    upto: Option<u64>,
) -> Result<RunState, String> {
    let summary = store.run(run_id).map_err(|e| e.to_string())?;
    let (last, _) = store
        .last_event(&summary.run_id)
        .map_err(|e| e.to_string())?;
    let last = upto.map_or(last, |u| u.min(last));
    let mut st = RunState::new();
    st.output_only = only;
    if only.is_some() {
        st.output_budget = usize::MAX;
    }
    let run: Arc<str> = Arc::from(summary.run_id.as_str());
    crate::data::replay::feed::fold_range(store, &run, &mut st, 1, last)
        .map_err(|e| e.to_string())?;
    if st.run_id.is_empty() {
        st.run_id = summary.run_id.clone();
        st.plan_id = summary.plan_id.clone();
    }
    Ok(st)
}

/// Compares runs `a` and `b` as `plexus diff` does; the title and the text.
fn compare_runs(store: &Store, a: &str, b: &str) -> Result<(String, Vec<String>), String> {
    use crate::data::diff::{compare, load, render, DiffOptions};
    let run_a = load(store, a).map_err(|e| format!("run {a}: {e}"))?;
    let run_b = load(store, b).map_err(|e| format!("run {b}: {e}"))?;
    let d = compare(&run_a, &run_b, &DiffOptions::default());
    Ok((format!(" {a} ↔ {b} "), render::render(&d)))
}

/// Loads and formats one document.
pub fn load_doc(store: &Store, key: &DocKey) -> Doc {
    let not_yet = "stored when the invocation ends; shown then";
    match key {
        DocKey::DataFile(_, path) => super::data_file::read(path, store.path()),
        DocKey::Request(inv) => match store.invocation_request(inv) {
            Ok(Some(v)) => Doc::Ready(pretty(&v).into()),
            Ok(None) => Doc::Missing(format!("request: {not_yet}")),
            Err(e) => Doc::Missing(format!("cannot load the request: {e}")),
        },
        DocKey::Stream(inv) => match store.invocation_stream(inv) {
            Ok(Some(t)) if t.is_empty() => Doc::Ready("(this attempt streamed no text)".into()),
            Ok(Some(t)) => Doc::Ready(t.into()),
            Ok(None) => Doc::Missing(format!("invocation {inv} is not in the database")),
            Err(e) => Doc::Missing(format!("cannot read the stream back: {e}")),
        },
        DocKey::Atoms(inv) | DocKey::Issues(inv) | DocKey::Atom(inv, _) => {
            let resp = match store.invocation_response(inv) {
                Ok(Some(v)) if !v.is_null() => v,
                Ok(_) => return Doc::Missing(format!("response: {not_yet}")),
                Err(e) => return Doc::Missing(format!("cannot load the response: {e}")),
            };
            match key {
                DocKey::Atoms(_) => {
                    let atoms = &resp["output"]["atoms"];
                    let n = atoms.as_array().map_or(0, Vec::len);
                    let mut text = format!("{n} atom(s) parsed\n");
                    if let Some(s) = resp["output"].get("summary") {
                        text.push_str(&format!("summary: {}\n", pretty(s)));
                    }
                    text.push('\n');
                    text.push_str(&pretty(atoms));
                    Doc::Ready(text.into())
                }
                DocKey::Issues(_) => Doc::Ready(
                    super::issues_doc::issues_text(&resp, &retry_decision(store, inv)).into(),
                ),
                DocKey::Atom(_, id) => {
                    let found = resp["output"]["atoms"].as_array().and_then(|a| {
                        a.iter()
                            .find(|x| x["asset_id"].as_str() == Some(&**id))
                            .cloned()
                    });
                    match found {
                        Some(a) => Doc::Ready(atom_with_issues(&a, &resp, id).into()),
                        None => Doc::Missing(format!("atom {id} is not in the stored response")),
                    }
                }
                DocKey::Request(_) | DocKey::Stream(_) | DocKey::DataFile(..) => {
                    Doc::Missing(String::new())
                }
            }
        }
    }
}

/// What the engine decided after invocation `inv`: the retry it scheduled, or why none.
fn retry_decision(store: &Store, inv: &str) -> String {
    let meta = match store.invocation_meta(inv) {
        Ok(Some(m)) => m,
        Ok(None) => return "unknown (the invocation is not in the database)".into(),
        Err(e) => return format!("unknown ({e})"),
    };
    let retries = store.retry_history(&meta.run_id).unwrap_or_default();
    let next = retries
        .get(&meta.task_id)
        .and_then(|rs| rs.iter().find(|r| r.next_attempt == meta.attempt + 1));
    match (next, meta.status.as_deref()) {
        (Some(r), _) => format!(
            "retried as attempt {} after {} ms ({}): {}",
            r.next_attempt,
            r.delay_ms,
            r.error_code.as_str(),
            r.adjustment
        ),
        (None, Some("success")) => "none needed: the attempt succeeded".into(),
        (None, None) => "none yet: the attempt is still running".into(),
        (None, Some(s)) => format!(
            "not retried: the attempt ended {s} and no retry followed (attempts used up, the error is not recoverable, or the run stopped)"
        ),
    }
}

/// An atom's JSON followed by the quality issues the check found in it.
fn atom_with_issues(atom: &Value, resp: &Value, id: &str) -> String {
    let issues: Vec<&Value> = resp["quality_check"]["issues"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter(|i| i["atom_id"].as_str() == Some(id))
                .collect()
        })
        .unwrap_or_default();
    let mut text = pretty(atom);
    if issues.is_empty() {
        text.push_str("\n\nquality issues: none");
    } else {
        text.push_str(&format!("\n\nquality issues ({}):", issues.len()));
        for i in issues {
            let field = i["field"].as_str().unwrap_or("");
            text.push_str(&format!(
                "\n  {} · {}{} · {}",
                i["severity"].as_str().unwrap_or("?"),
                i["issue_type"].as_str().unwrap_or("?"),
                if field.is_empty() {
                    String::new()
                } else {
                    format!(" ({field})")
                },
                i["message"].as_str().unwrap_or("")
            ));
        }
    }
    text
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string())
}
