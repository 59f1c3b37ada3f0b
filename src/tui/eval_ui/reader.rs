//! The Eval screen's reads and writes, done on its reader thread: the eval read again,
//! a sample opened, a metadata field read, the handoff and the marks written. The
//! screen asks with an [`EvalQuery`] and gets an [`EvalAnswer`] back as a message.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::detail::{self, Detail};
use super::model::{metadata_by_id, EvalModel, ParentSide};
use crate::data::store::Store;
use crate::features::eval::finish::{write_end, SampleFiles, ToolsByRun};
use crate::features::eval::record::EvalRow;
use crate::features::eval::spec::Scoring;

/// What the Eval screen asks its reader.
pub enum EvalQuery {
    /// Read the eval again (the parent side, read once, is kept).
    Reread {
        /// The eval.
        eval_id: String,
        /// Its parent iteration as read before.
        parent_side: Option<Arc<ParentSide>>,
    },
    /// Open sample `id`.
    Open {
        /// The sample.
        id: String,
        /// Its eval.
        row: EvalRow,
        /// The eval's checks.
        scoring: Scoring,
        /// Read the runs' tool calls afresh (a running eval's log grows).
        fresh_tools: bool,
    },
    /// Read metadata field `key` of every sample, to filter on `value`.
    Meta {
        /// The eval.
        eval_id: String,
        /// The field.
        key: String,
        /// The value filtered on.
        value: String,
    },
    /// Write the eval's end (handoff and summary) into its failure tree `out`.
    Handoff {
        /// The eval.
        row: EvalRow,
        /// Its failure tree, as the eval was given it.
        out: String,
    },
    /// Write the marks file.
    SaveMarks {
        /// Where.
        path: PathBuf,
        /// Its text.
        text: String,
        /// What to say once it is written.
        done: String,
    },
}

/// The reader's answer.
pub enum EvalAnswer {
    /// The eval read again, and how long the reading took.
    Reread(Result<Box<EvalModel>, String>, Duration),
    /// Sample `.0` opened, or why not.
    Opened(String, Result<Detail, String>),
    /// A metadata field read: `(key, value, values by sample id)`.
    Meta(String, String, Result<HashMap<String, String>, String>),
    /// Something to say (a write done or refused): the text and whether it warns.
    Say(String, bool),
}

/// What the reader thread holds: its database connection and the tool calls it has
/// read from the eval's runs.
pub struct Reader {
    store: Result<Store, String>,
    tools: ToolsByRun,
}

impl Reader {
    /// A reader over database `db` (opened now: call it on the reader's thread).
    pub fn open(db: &std::path::Path) -> Reader {
        Reader {
            store: Store::open(db).map_err(|e| format!("cannot open {}: {e}", db.display())),
            tools: ToolsByRun::new(),
        }
    }
}

/// Answers one query.
pub fn serve(r: &mut Reader, q: EvalQuery) -> EvalAnswer {
    let store = match &r.store {
        Ok(s) => s,
        Err(e) => return refused(q, e.clone()),
    };
    match q {
        EvalQuery::Reread {
            eval_id,
            parent_side,
        } => {
            let t = Instant::now();
            let fresh = EvalModel::read_again(store.conn(), &eval_id, parent_side)
                .map(Box::new)
                .map_err(|e| e.to_string());
            EvalAnswer::Reread(fresh, t.elapsed())
        }
        EvalQuery::Open {
            id,
            row,
            scoring,
            fresh_tools,
        } => {
            if fresh_tools {
                r.tools.clear();
            }
            let d = detail::load(store, &mut r.tools, &row, &scoring, &id);
            EvalAnswer::Opened(id, d.map_err(|e| e.to_string()))
        }
        EvalQuery::Meta {
            eval_id,
            key,
            value,
        } => {
            let values = metadata_by_id(store.conn(), &eval_id, &key).map_err(|e| e.to_string());
            EvalAnswer::Meta(key, value, values)
        }
        EvalQuery::Handoff { row, out } => handoff(store, &row, &out),
        EvalQuery::SaveMarks { path, text, done } => {
            match crate::data::failures::write::write_bytes_atomic(&path, text.as_bytes()) {
                Ok(()) => EvalAnswer::Say(done, false),
                Err(e) => EvalAnswer::Say(format!("cannot write {}: {e}", path.display()), true),
            }
        }
    }
}

/// The answer to `q` when the database cannot be opened.
fn refused(q: EvalQuery, why: String) -> EvalAnswer {
    match q {
        EvalQuery::Reread { .. } => EvalAnswer::Reread(Err(why), Duration::ZERO),
        EvalQuery::Open { id, .. } => EvalAnswer::Opened(id, Err(why)),
        EvalQuery::Meta { key, value, .. } => EvalAnswer::Meta(key, value, Err(why)),
        EvalQuery::Handoff { .. } | EvalQuery::SaveMarks { .. } => EvalAnswer::Say(why, true),
    }
}

/// Writes the eval's end into `out`; what to say about it.
fn handoff(store: &Store, row: &EvalRow, out: &str) -> EvalAnswer {
    let at = crate::base::clock::now_rfc3339();
    let incomplete = row.status != "finished";
    // `out_dir` is as the eval was given it: relative to where it ran, which is where
    // this screen was opened in the common case.
    match write_end(
        store.conn(),
        SampleFiles::Written,
        row,
        out.as_ref(),
        &at,
        incomplete,
    ) {
        Ok(_) => EvalAnswer::Say(
            format!(
                "handoff written: {}{}",
                PathBuf::from(out)
                    .join(crate::features::eval::tree::HANDOFF_FILE)
                    .display(),
                if incomplete {
                    " (incomplete: the eval has not finished)"
                } else {
                    ""
                }
            ),
            false,
        ),
        Err(e) => EvalAnswer::Say(format!("cannot write the handoff: {e}"), true),
    }
}
