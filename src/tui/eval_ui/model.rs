//! What the Eval screen shows, read from the database: the eval, its samples (one row
//! each, from their marks: no check row is read), each check's pass rate with its
//! interval and its difference to the parent iteration, the progress and the spend.
//! Read again while the eval runs.

use std::collections::HashMap;
use std::sync::Arc;

use rusqlite::Connection;

use crate::features::eval::read::{self, mark_result, ReadError};
use crate::features::eval::record::EvalRow;
use crate::features::eval::spec::Scoring;
use crate::features::eval::stats::{wilson, Interval, Paired, Z95};

/// A sample's status.
pub use crate::features::eval::record::SampleStatus as Status;

/// How a sample's verdict changed from the parent iteration's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flip {
    /// Not compared, or the same.
    None,
    /// Failed there, passes here.
    Improved,
    /// Passed there, fails here.
    Regressed,
}

/// One sample as the list shows it.
#[derive(Debug, Clone)]
pub struct SampleLine {
    /// Its id.
    pub id: String,
    /// Its position in the dataset.
    pub ord: u64,
    /// Its status.
    pub status: Status,
    /// Its score once scored.
    pub score: Option<f64>,
    /// Its result per check, one letter per check of the eval (empty before scored).
    pub marks: Box<[u8]>,
    /// Its result is inherited from the parent (a rerun).
    pub inherited: bool,
    /// Its verdict against the parent's.
    pub flip: Flip,
    /// Some check passed on one side and failed on the other.
    pub check_flipped: bool,
}

impl SampleLine {
    /// Whether check `k` did not pass (failed, or could not be scored).
    pub fn misses(&self, k: usize) -> bool {
        self.marks
            .get(k)
            .is_some_and(|m| mark_result(*m) != Some(true))
    }
}

/// A check's difference to the parent iteration.
#[derive(Debug, Clone, PartialEq)]
pub struct ParentDiff {
    /// The parent's pass rate of this check.
    pub parent_rate: f64,
    /// This eval's rate minus the parent's over the samples both scored, with its
    /// 95% interval.
    pub difference: Interval,
    /// Samples that passed there and fail here.
    pub regressed: u64,
    /// Samples that failed there and pass here.
    pub improved: u64,
}

/// One check's line of the table.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckLine {
    /// The check.
    pub name: String,
    /// Samples that passed it.
    pub passed: u64,
    /// Samples scored (errors included).
    pub of: u64,
    /// Samples that could not be scored.
    pub errors: u64,
    /// The pass rate with its 95% Wilson interval.
    pub rate: Interval,
    /// Its gate, when it has one.
    pub gate: Option<f64>,
    /// Against the parent iteration, when there is one with this check.
    pub parent: Option<ParentDiff>,
}

/// The eval as the screen shows it.
#[derive(Debug, Clone)]
pub struct EvalModel {
    /// The eval.
    pub row: EvalRow,
    /// Its scoring.
    pub scoring: Scoring,
    /// The eval it is compared with: its parent, or the previous iteration of the
    /// same eval on the same dataset.
    pub parent: Option<EvalRow>,
    /// What the comparison reads of the parent (finished: read once, kept across the
    /// readings of a running eval).
    pub parent_side: Option<Arc<ParentSide>>,
    /// The samples, in dataset order.
    pub samples: Vec<SampleLine>,
    /// One line per check, in the spec's order.
    pub checks: Vec<CheckLine>,
    /// Samples by status: pending, passed, failed, error.
    pub counts: [u64; 4],
    /// Tokens of every attempt.
    pub tokens: u64,
    /// Cost of the attempts whose cost is known (`None`: none is).
    pub cost_usd: Option<f64>,
}

/// A sample's stored row, as the screen reads it.
struct Stored {
    id: String,
    ord: u64,
    /// A 64-bit digest of its content hash (equal contents, equal digests).
    hash: u64,
    status: Status,
    score: Option<f64>,
    marks: Option<String>,
    inherited: bool,
}

/// A 64-bit digest of a stored content hash, read without copying it.
fn digest(text: &[u8]) -> u64 {
    use std::hash::Hasher;
    let mut h = rustc_hash::FxHasher::default();
    h.write(text);
    h.finish()
}

/// Eval `eval_id`'s samples in the order of their ids (the key's BINARY collation:
/// bytewise on UTF-8, the order of Rust's `str`, which the merge with the parent needs).
fn stored(conn: &Connection, eval_id: &str) -> Result<Vec<Stored>, ReadError> {
    let mut st = conn.prepare_cached(
        "SELECT sample_id, ord, hash, status, score, marks, inherited_from IS NOT NULL
         FROM eval_samples WHERE eval_id = ?1 ORDER BY sample_id",
    )?;
    let mut rows = st.query([eval_id])?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        out.push(Stored {
            id: r.get(0)?,
            ord: r.get::<_, i64>(1)?.max(0) as u64,
            hash: digest(r.get_ref(2)?.as_bytes().map_err(rusqlite::Error::from)?),
            status: Status::parse(r.get_ref(3)?.as_str().map_err(rusqlite::Error::from)?),
            score: r.get(4)?,
            marks: r.get(5)?,
            inherited: r.get(6)?,
        });
    }
    // A file written before marks were kept: each scored sample's marks from its
    // check rows.
    if out
        .iter()
        .any(|s| s.status != Status::Pending && s.marks.is_none())
    {
        let row = read::find_eval(conn, eval_id)?;
        let names: Vec<String> = read::scoring_of(&row)?
            .checks
            .into_iter()
            .map(|c| c.name)
            .collect();
        let results: HashMap<String, String> = read::sample_results(conn, &row)?
            .into_iter()
            .map(|r| {
                let marks = names
                    .iter()
                    .map(|n| match r.checks.get(n) {
                        Some(Some(true)) => 'p',
                        Some(Some(false)) => 'f',
                        _ => 'e',
                    })
                    .collect();
                (r.id, marks)
            })
            .collect();
        for s in &mut out {
            if s.marks.is_none() {
                s.marks = results.get(&s.id).cloned();
            }
        }
    }
    Ok(out)
}

/// The eval `row` is compared with: its parent, else the last finished eval of the
/// same name on the same dataset stored before it.
pub fn parent_of(conn: &Connection, row: &EvalRow) -> Result<Option<EvalRow>, ReadError> {
    if let Some(p) = &row.parent_id {
        return match read::find_eval(conn, p) {
            Ok(r) => Ok(Some(r)),
            Err(ReadError::NoSuchEval(_)) => Ok(None),
            Err(e) => Err(e),
        };
    }
    let id: Option<String> = rusqlite::OptionalExtension::optional(conn.query_row(
        "SELECT eval_id FROM evals WHERE name = ?1 AND dataset_path = ?2 AND status = 'finished'
           AND rowid < (SELECT rowid FROM evals WHERE eval_id = ?3)
         ORDER BY rowid DESC LIMIT 1",
        rusqlite::params![row.name, row.dataset_path, row.eval_id],
        |r| r.get(0),
    ))?;
    id.map(|id| read::find_eval(conn, &id)).transpose()
}

/// What the comparison reads of the parent iteration, in the order of our checks: one
/// entry per parent sample, sorted by id, its marks remapped to our checks.
#[derive(Debug)]
pub struct ParentSide {
    row: EvalRow,
    /// Sample ids, sorted.
    ids: Vec<Box<str>>,
    /// Each sample's content digest and status.
    facts: Vec<(u64, Status)>,
    /// Each sample's mark for each of our checks (`checks` per sample; 0: none there).
    marks: Vec<u8>,
    /// Our checks.
    checks: usize,
    /// Whether the parent has each of our checks.
    has: Vec<bool>,
    /// Each of our checks' pass rate in the parent, over its scored samples.
    rates: Vec<f64>,
}

impl ParentSide {
    /// Reads parent `p` for the checks `names` of the eval compared with it.
    fn read(conn: &Connection, p: EvalRow, names: &[&str]) -> Result<ParentSide, ReadError> {
        let theirs: Vec<String> = read::scoring_of(&p)?
            .checks
            .into_iter()
            .map(|c| c.name)
            .collect();
        let at: Vec<Option<usize>> = names
            .iter()
            .map(|n| theirs.iter().position(|t| t == n))
            .collect();
        let rows = stored(conn, &p.eval_id)?;
        let n = names.len();
        let mut side = ParentSide {
            row: p,
            ids: Vec::with_capacity(rows.len()),
            facts: Vec::with_capacity(rows.len()),
            marks: Vec::with_capacity(rows.len() * n),
            checks: n,
            has: at.iter().map(Option::is_some).collect(),
            rates: Vec::new(),
        };
        let (mut passed, mut of) = (vec![0u64; n], 0u64);
        for s in rows {
            let marks = s.marks.unwrap_or_default().into_bytes();
            let scored = s.status != Status::Pending;
            of += u64::from(scored);
            for (k, a) in at.iter().enumerate() {
                let m = a.and_then(|i| marks.get(i).copied()).unwrap_or(0);
                passed[k] += u64::from(scored && mark_result(m) == Some(true));
                side.marks.push(m);
            }
            side.ids.push(s.id.into_boxed_str());
            side.facts.push((s.hash, s.status));
        }
        side.rates = passed
            .iter()
            .map(|&p| if of == 0 { 0.0 } else { p as f64 / of as f64 })
            .collect();
        Ok(side)
    }

    /// Our check `k`'s result on the parent's sample at `i`.
    fn result(&self, i: usize, k: usize) -> Option<bool> {
        self.marks
            .get(i * self.checks + k)
            .copied()
            .and_then(mark_result)
    }
}

impl EvalModel {
    /// Reads eval `row` (and its parent) from `conn`.
    pub fn load(conn: &Connection, row: EvalRow) -> Result<EvalModel, ReadError> {
        EvalModel::load_with(conn, row, None)
    }

    /// Reads eval `eval_id` again, with the parent side already read (a parent that
    /// has ended does not change).
    pub fn read_again(
        conn: &Connection,
        eval_id: &str,
        parent_side: Option<Arc<ParentSide>>,
    ) -> Result<EvalModel, ReadError> {
        let row = read::find_eval(conn, eval_id)?;
        EvalModel::load_with(conn, row, parent_side)
    }

    fn load_with(
        conn: &Connection,
        row: EvalRow,
        parent_side: Option<Arc<ParentSide>>,
    ) -> Result<EvalModel, ReadError> {
        let scoring = read::scoring_of(&row)?;
        let names: Vec<&str> = scoring.checks.iter().map(|c| c.name.as_str()).collect();
        let parent_side = match parent_side {
            Some(p) => Some(p),
            None => parent_of(conn, &row)?
                .map(|p| ParentSide::read(conn, p, &names).map(Arc::new))
                .transpose()?,
        };
        let parent = parent_side.as_ref().map(|p| p.row.clone());
        let here = stored(conn, &row.eval_id)?;
        let mut walk = Walk::new(names.len(), parent_side.as_deref());
        let mut samples: Vec<SampleLine> = here.into_iter().map(|s| walk.add(s)).collect();
        samples.sort_unstable_by_key(|s| s.ord);
        let checks = walk.check_lines(&scoring);
        let (tokens, cost): (i64, Option<f64>) = conn.query_row(
            "SELECT COALESCE(SUM(tokens), 0), SUM(cost_usd) FROM eval_attempts WHERE eval_id = ?1",
            [&row.eval_id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        Ok(EvalModel {
            row,
            scoring,
            parent,
            counts: walk.counts,
            parent_side,
            samples,
            checks,
            tokens: tokens.max(0) as u64,
            cost_usd: cost,
        })
    }

    /// Samples scored.
    pub fn done(&self) -> u64 {
        self.counts[1] + self.counts[2] + self.counts[3]
    }

    /// Every sample.
    pub fn total(&self) -> u64 {
        self.done() + self.counts[0]
    }

    /// The eval is still going (its status says so).
    pub fn running(&self) -> bool {
        self.row.status == "running"
    }

    /// Each sample's value of metadata field `key` (as `--where` reads it: a string's
    /// text, or another value's JSON), in the order of [`EvalModel::samples`].
    pub fn metadata_values(
        &self,
        conn: &Connection,
        key: &str,
    ) -> Result<Vec<Option<String>>, ReadError> {
        let by_id = metadata_by_id(conn, &self.row.eval_id, key)?;
        Ok(self.in_sample_order(by_id))
    }

    /// Values by sample id put in the order of [`EvalModel::samples`].
    pub fn in_sample_order(&self, mut by_id: HashMap<String, String>) -> Vec<Option<String>> {
        self.samples.iter().map(|s| by_id.remove(&s.id)).collect()
    }
}

/// One walk over an eval's stored samples, sorted by id: each check's tally, each
/// sample met with its parent sample (both sides sorted by id), the counts by status.
struct Walk<'p> {
    /// Per check: passed, scored, not scorable.
    tally: Vec<(u64, u64, u64)>,
    /// Per check: the pairs with the parent.
    paired: Vec<Paired>,
    /// Samples by status.
    counts: [u64; 4],
    /// The parent side, and how far through its ids the walk is.
    there: Option<&'p ParentSide>,
    j: usize,
}

impl<'p> Walk<'p> {
    fn new(checks: usize, there: Option<&'p ParentSide>) -> Walk<'p> {
        Walk {
            tally: vec![(0, 0, 0); checks],
            paired: vec![Paired::default(); checks],
            counts: [0; 4],
            there,
            j: 0,
        }
    }

    /// Counts sample `s` and gives its line.
    fn add(&mut self, mut s: Stored) -> SampleLine {
        self.counts[s.status as usize] += 1;
        let marks: Box<[u8]> = s
            .marks
            .take()
            .map(String::into_bytes)
            .unwrap_or_default()
            .into();
        if s.status != Status::Pending {
            for (k, t) in self.tally.iter_mut().enumerate() {
                t.1 += 1;
                match marks.get(k).copied().and_then(mark_result) {
                    Some(true) => t.0 += 1,
                    Some(false) => {}
                    None => t.2 += 1,
                }
            }
        }
        let (flip, check_flipped) = match self.parent_sample(&s.id) {
            Some((p, i)) => self.pair(p, i, &s, &marks),
            None => (Flip::None, false),
        };
        SampleLine {
            id: s.id,
            ord: s.ord,
            status: s.status,
            score: s.score,
            marks,
            inherited: s.inherited,
            flip,
            check_flipped,
        }
    }

    /// The parent's sample `id`, walking on through the parent's sorted ids.
    fn parent_sample(&mut self, id: &str) -> Option<(&'p ParentSide, usize)> {
        let p = self.there?;
        while p.ids.get(self.j).is_some_and(|x| **x < *id) {
            self.j += 1;
        }
        p.ids
            .get(self.j)
            .is_some_and(|x| **x == *id)
            .then_some((p, self.j))
    }

    /// Sample `s` beside its parent sample `i`: its flip, and whether a check flipped.
    fn pair(&mut self, p: &ParentSide, i: usize, s: &Stored, marks: &[u8]) -> (Flip, bool) {
        let (hash, status) = p.facts[i];
        if hash != s.hash || s.status == Status::Pending {
            return (Flip::None, false);
        }
        let flip = match (status, s.status) {
            (Status::Passed, Status::Failed) => Flip::Regressed,
            (Status::Failed, Status::Passed) => Flip::Improved,
            _ => Flip::None,
        };
        let mut check_flipped = false;
        for (k, pair) in self.paired.iter_mut().enumerate() {
            let mine = marks.get(k).copied().and_then(mark_result);
            match (p.result(i, k), mine) {
                (Some(true), Some(true)) => pair.both += 1,
                (Some(true), Some(false)) => {
                    pair.first_only += 1;
                    check_flipped = true;
                }
                (Some(false), Some(true)) => {
                    pair.second_only += 1;
                    check_flipped = true;
                }
                (Some(false), Some(false)) => pair.neither += 1,
                _ => {}
            }
        }
        (flip, check_flipped)
    }

    /// Each check's line: its pass rate and its difference to the parent.
    fn check_lines(&self, scoring: &Scoring) -> Vec<CheckLine> {
        scoring
            .checks
            .iter()
            .enumerate()
            .map(|(k, c)| {
                let (passed, of, errors) = self.tally[k];
                CheckLine {
                    name: c.name.clone(),
                    passed,
                    of,
                    errors,
                    rate: wilson(passed, of, Z95),
                    gate: scoring.fail_under.get(&c.name).copied(),
                    parent: self.there.filter(|p| p.has[k]).map(|p| ParentDiff {
                        parent_rate: p.rates[k],
                        difference: self.paired[k].difference(Z95),
                        regressed: self.paired[k].first_only,
                        improved: self.paired[k].second_only,
                    }),
                }
            })
            .collect()
    }
}

/// Each sample's value of metadata field `key` in eval `eval_id`, by sample id (as
/// `--where` reads it: a string's text, or another value's JSON); samples without the
/// field are left out.
pub fn metadata_by_id(
    conn: &Connection,
    eval_id: &str,
    key: &str,
) -> Result<HashMap<String, String>, ReadError> {
    let mut st = conn.prepare(
        "SELECT sample_id, content -> '$.metadata' FROM eval_samples WHERE eval_id = ?1",
    )?;
    let mut rows = st.query([eval_id])?;
    let mut by_id: HashMap<String, String> = HashMap::new();
    while let Some(r) = rows.next()? {
        let Some(meta) = r.get::<_, Option<String>>(1)? else {
            continue;
        };
        let Ok(serde_json::Value::Object(mut m)) = serde_json::from_str(&meta) else {
            continue;
        };
        if let Some(v) = m.remove(key) {
            let text = match v {
                serde_json::Value::String(s) => s,
                other => other.to_string(),
            };
            by_id.insert(r.get(0)?, text);
        }
    }
    Ok(by_id)
}

#[cfg(test)]
#[path = "model_tests.rs"]
mod tests;
