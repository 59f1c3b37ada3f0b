//! Reading indexes: parsing `failure_summary.json` or a `failure_samples_index` entry
//! by entry, liberally (an entry that does not parse is read field by field; one
//! without an id is skipped with a warning), or listing `samples/` when there is no
//! index. Finding the tree is [`super::discover`]'s.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use crate::base::protocol::handoff::FailurePriority;

use super::layout;
use super::sample::{natural_cmp, IndexSource, Iteration, Sample};

/// An index file is read whole up to this size (1 GiB).
pub(crate) const INDEX_CAP: u64 = 1 << 30;

/// Shares the text of repeated names (failure types, checkers) between samples.
#[derive(Debug, Clone, Default)]
pub(crate) struct Interner {
    set: rustc_hash::FxHashSet<Arc<str>>,
}

impl Interner {
    /// The shared copy of `s`.
    pub(crate) fn get(&mut self, s: &str) -> Arc<str> {
        if let Some(a) = self.set.get(s) {
            return a.clone();
        }
        let a: Arc<str> = s.into();
        self.set.insert(a.clone());
        a
    }
}

/// The samples of one iteration and what was odd about its index.
pub(crate) struct ReadIteration {
    pub(crate) samples: Vec<Sample>,
    pub(crate) warnings: Vec<String>,
}

/// Reads `it`'s index: the context's when given, else its summary, else its file names.
pub(crate) fn read_iteration(
    it: &mut Iteration,
    context: Option<(&PathBuf, &Value)>,
    interner: &mut Interner,
) -> ReadIteration {
    let mut out = ReadIteration {
        samples: Vec::new(),
        warnings: Vec::new(),
    };
    if let Some((path, v)) = context {
        it.source = Some(IndexSource::Context(path.clone()));
        let summary = v.get("iteration_summary");
        it.total_samples = count_field(summary, "total_samples");
        it.failed_samples = count_field(summary, "failed_samples");
        it.context_summary = summary.and_then(|s| serde_json::from_value(s.clone()).ok());
        match v.get("failure_samples_index").and_then(Value::as_array) {
            Some(entries) => {
                for (i, e) in entries.iter().enumerate() {
                    push_entry(&mut out, it.number, i, entry_from_value(e), interner);
                }
            }
            None => out
                .warnings
                .push("the context's failure_samples_index is not a list".into()),
        }
        return out;
    }
    let summary = it.dir.join(layout::SUMMARY_FILE);
    match read_summary(it, &summary, &mut out, interner) {
        Ok(()) => {
            it.source = Some(IndexSource::Summary);
            return out;
        }
        Err(Some(why)) => out.warnings.push(format!(
            "iteration {}: {} {why}; the index is built from the file names in {}/",
            it.number,
            layout::SUMMARY_FILE,
            layout::SAMPLES_DIR
        )),
        Err(None) => {}
    }
    it.source = Some(IndexSource::Scan);
    scan(it, &mut out);
    out
}

fn count_field(v: Option<&Value>, key: &str) -> Option<u32> {
    let x = v?.get(key)?;
    x.as_u64()
        .or_else(|| x.as_array().map(|a| a.len() as u64))
        .and_then(|n| u32::try_from(n).ok())
}

#[derive(Deserialize)]
struct SummaryHead<'a> {
    #[serde(default)]
    iteration: Option<Value>,
    #[serde(default)]
    total_samples: Option<Value>,
    #[serde(default)]
    failed_samples: Option<Value>,
    #[serde(borrow, default)]
    failure_samples_index: Option<Vec<&'a RawValue>>,
}

/// Reads the summary into `out`; `Err(None)` when there is none, `Err(Some(why))` when
/// it cannot be used.
fn read_summary(
    it: &mut Iteration,
    path: &Path,
    out: &mut ReadIteration,
    interner: &mut Interner,
) -> Result<(), Option<String>> {
    let bytes = match std::fs::read(path) {
        Ok(b) if b.len() as u64 > INDEX_CAP => return Err(Some("is over 1 GiB".into())),
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(None),
        Err(e) => return Err(Some(format!("cannot be read ({e})"))),
    };
    // A bare list of entries is accepted too.
    let head: SummaryHead = match serde_json::from_slice::<Vec<&RawValue>>(&bytes) {
        Ok(list) => SummaryHead {
            iteration: None,
            total_samples: None,
            failed_samples: None,
            failure_samples_index: Some(list),
        },
        Err(_) => serde_json::from_slice(&bytes).map_err(|e| {
            Some(format!(
                "is broken (line {}, column {}: {e})",
                e.line(),
                e.column()
            ))
        })?,
    };
    let Some(entries) = head.failure_samples_index else {
        return Err(Some("has no failure_samples_index".into()));
    };
    if it.number == 0 {
        if let Some(n) = head.iteration.as_ref().and_then(Value::as_u64) {
            it.number = u32::try_from(n).unwrap_or(0);
        }
    }
    let num = |v: &Option<Value>| {
        v.as_ref()
            .and_then(Value::as_u64)
            .and_then(|n| u32::try_from(n).ok())
    };
    it.total_samples = num(&head.total_samples);
    it.failed_samples = num(&head.failed_samples).or(Some(entries.len() as u32));
    out.samples.reserve(entries.len());
    for (i, raw) in entries.iter().enumerate() {
        let e = match serde_json::from_str::<EntryRaw>(raw.get()) {
            Ok(e) => e,
            Err(_) => match serde_json::from_str::<Value>(raw.get()) {
                Ok(v) => entry_from_value(&v),
                Err(_) => EntryRaw::default(),
            },
        };
        push_entry(out, it.number, i, e, interner);
    }
    Ok(())
}

/// One index entry as written; every field optional.
#[derive(Deserialize, Default)]
struct EntryRaw<'a> {
    #[serde(borrow, alias = "id")]
    sample_id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    sample_path: Option<Cow<'a, str>>,
    #[serde(borrow)]
    trace_path: Option<Cow<'a, str>>,
    #[serde(borrow)]
    evaluation_path: Option<Cow<'a, str>>,
    #[serde(borrow)]
    attribution_path: Option<Cow<'a, str>>,
    #[serde(borrow)]
    failure_type: Option<Cow<'a, str>>,
    conversation_turns: Option<u32>,
    #[serde(borrow)]
    checkers_failed: Option<Vec<Cow<'a, str>>>,
    #[serde(borrow)]
    priority: Option<Cow<'a, str>>,
}

/// An entry read field by field from any JSON: strings where strings are expected,
/// numbers also from numeric strings, a single checker as a list of one.
fn entry_from_value(v: &Value) -> EntryRaw<'static> {
    let s = |k: &str| -> Option<Cow<'static, str>> {
        match v.get(k)? {
            Value::String(s) => Some(Cow::Owned(s.clone())),
            Value::Number(n) => Some(Cow::Owned(n.to_string())),
            _ => None,
        }
    };
    let turns = v.get("conversation_turns").and_then(|t| {
        t.as_u64()
            .or_else(|| t.as_str().and_then(|s| s.trim().parse().ok()))
            .and_then(|n| u32::try_from(n).ok())
    });
    let checkers = match v.get("checkers_failed") {
        Some(Value::Array(a)) => Some(
            a.iter()
                .filter_map(|c| c.as_str().map(|c| Cow::Owned(c.to_string())))
                .collect(),
        ),
        Some(Value::String(c)) => Some(
            c.split(',')
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(|c| Cow::Owned(c.to_string()))
                .collect(),
        ),
        _ => None,
    };
    EntryRaw {
        sample_id: s("sample_id").or_else(|| s("id")),
        sample_path: s("sample_path"),
        trace_path: s("trace_path"),
        evaluation_path: s("evaluation_path"),
        attribution_path: s("attribution_path"),
        failure_type: s("failure_type"),
        conversation_turns: turns,
        checkers_failed: checkers,
        priority: s("priority"),
    }
}

/// `high` / `medium` / `low` (any case; `critical` and `p0` count as high, `p1` as
/// medium, `p2` as low).
pub(crate) fn parse_priority(s: &str) -> Option<FailurePriority> {
    match s.trim().to_ascii_lowercase().as_str() {
        "high" | "h" | "critical" | "p0" => Some(FailurePriority::High),
        "medium" | "med" | "m" | "p1" => Some(FailurePriority::Medium),
        "low" | "l" | "p2" | "p3" => Some(FailurePriority::Low),
        _ => None,
    }
}

fn push_entry(
    out: &mut ReadIteration,
    iteration: u32,
    position: usize,
    e: EntryRaw,
    interner: &mut Interner,
) {
    let Some(id) = e.sample_id.filter(|s| !s.trim().is_empty()) else {
        out.warnings.push(format!(
            "iteration {iteration}: index entry {} has no sample_id; skipped",
            position + 1
        ));
        return;
    };
    let mut s = Sample::new(&id, iteration);
    s.failure_type = e.failure_type.as_deref().map(|t| interner.get(t));
    s.conversation_turns = e.conversation_turns;
    s.checkers_failed = e
        .checkers_failed
        .unwrap_or_default()
        .iter()
        .map(|c| interner.get(c))
        .collect();
    if let Some(p) = &e.priority {
        s.priority = parse_priority(p);
        if s.priority.is_none() {
            out.warnings.push(format!(
                "iteration {iteration}: {id}: unknown priority `{p}`"
            ));
        }
    }
    if e.sample_path.is_some()
        || e.trace_path.is_some()
        || e.evaluation_path.is_some()
        || e.attribution_path.is_some()
    {
        let or = |p: Option<Cow<str>>, d: String| p.map(|p| p.into_owned()).unwrap_or(d);
        s.set_paths([
            or(e.sample_path, layout::sample_path(&id)),
            or(e.trace_path, layout::trace_path(&id)),
            or(e.evaluation_path, layout::evaluation_path(&id)),
            or(e.attribution_path, layout::attribution_path(&id)),
        ]);
    }
    out.samples.push(s);
}

/// The index from the file names in `samples/`, in natural id order.
fn scan(it: &mut Iteration, out: &mut ReadIteration) {
    let dir = it.dir.join(layout::SAMPLES_DIR);
    let entries = match std::fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) => {
            out.warnings.push(format!(
                "iteration {}: no index and no readable {}/ ({e})",
                it.number,
                layout::SAMPLES_DIR
            ));
            it.total_samples = None;
            return;
        }
    };
    let mut ids: Vec<String> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name();
            let id = name.to_str()?.strip_suffix(".json")?.to_string();
            (!id.is_empty()).then_some(id)
        })
        .collect();
    ids.sort_by(|a, b| natural_cmp(a, b));
    it.total_samples = Some(ids.len() as u32);
    it.failed_samples = None;
    out.samples
        .extend(ids.iter().map(|id| Sample::new(id, it.number)));
}
