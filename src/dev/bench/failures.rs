//! `plexus bench failures`: failure trees of 10 % and 100 % of `--samples` are
//! generated, then each is measured in a child process of its own (so that its peak
//! memory is the reader's alone): opening the index, filtering and sorting, opening a
//! sample (four documents, the trace parsed, key turns found, folded). A database of
//! `--invocations` failed invocations measures `Store::failed_invocations` (every run,
//! one run) and the Failures screen's first frame. Medians of `--runs` repetitions.

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use color_eyre::eyre::{eyre, Result};
use serde::{Deserialize, Serialize};

use super::engine::peak_rss_mib;
use crate::base::protocol::handoff::FailurePriority;
use crate::cli::args::FailuresBenchOpts;
use crate::data::exit;
use crate::data::failures::{
    self, key_turns, parse_trace, DocKind, Filter, Folding, Selector, Sort, SortKey, DEFAULT_KEEP,
};
use crate::data::store::Store;
use crate::dev::gen_failures;

/// Figures of one tree, measured in a child process.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TreeFigures {
    /// Samples in the index.
    pub samples: usize,
    /// Bytes of the tree on disk.
    pub tree_bytes: u64,
    /// Open (read the index): median ms.
    pub open_ms: f64,
    /// Filter and sort (four queries): median ms of one query.
    pub query_ms: f64,
    /// Slowest query seen, ms.
    pub query_max_ms: f64,
    /// Open a sample (four documents, trace parsed, key turns, folded): median ms.
    pub sample_ms: f64,
    /// Slowest sample opened, ms.
    pub sample_max_ms: f64,
    /// Peak resident memory of the measuring process, MiB.
    pub peak_rss_mib: f64,
}

/// The whole report.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The smaller tree (10 %) and the larger.
    pub trees: Vec<TreeFigures>,
    /// Failed invocations in the database.
    pub invocations: usize,
    /// `failed_invocations` across all runs (the Failures screen's rows): median ms.
    pub rows_ms: f64,
    /// The same for one run of a tenth of the invocations: median ms.
    pub run_rows_ms: f64,
    /// The Failures screen's first frame over every run: its query (rows with messages
    /// and scores), the list's view, and one 200x60 frame drawn: median ms.
    pub screen_first_frame_ms: f64,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

/// Runs the benchmark (or, with `--measure`, measures one tree and prints its figures),
/// printing its report as JSON with `json`.
pub fn main(o: &FailuresBenchOpts, json: bool) -> Result<ExitCode> {
    if let Some(tree) = o.measure.as_deref() {
        let f = measure_tree(tree, o.runs)?;
        crate::rawln!("{}", serde_json::to_string(&f)?);
        return Ok(ExitCode::from(exit::OK));
    }
    std::fs::create_dir_all(&o.dir).map_err(|e| {
        eyre!(
            "cannot create the scratch directory {}: {e}",
            o.dir.display()
        )
    })?;
    let mut trees = Vec::new();
    for n in [(o.samples / 10).max(1), o.samples] {
        let dir = o.dir.join(format!("failures-{n}"));
        let _ = std::fs::remove_dir_all(&dir);
        crate::errln!("generating a tree of {n} samples…");
        let started = Instant::now();
        let spec = gen_failures::GenSpec {
            samples: n,
            turns: o.turns,
            seed: 7,
            broken: 8,
            iteration: 12,
        };
        let g = gen_failures::generate_tree(&dir, &spec)?;
        crate::errln!(
            "  {:.1} MB in {:.1} s; measuring…",
            g.bytes as f64 / 1e6,
            started.elapsed().as_secs_f64()
        );
        let out = std::process::Command::new(std::env::current_exe()?)
            .args([
                "bench",
                "failures",
                "--runs",
                &o.runs.to_string(),
                "--measure",
            ])
            .arg(&dir)
            .output()?;
        if !out.status.success() {
            return Err(eyre!(
                "measuring the tree failed: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        let mut f: TreeFigures = serde_json::from_slice(&out.stdout)?;
        f.tree_bytes = g.bytes;
        trees.push(f);
        let _ = std::fs::remove_dir_all(&dir);
    }
    let (rows_ms, run_rows_ms, screen_first_frame_ms) = if o.invocations > 0 {
        crate::errln!(
            "writing a database of {} failed invocations…",
            o.invocations
        );
        let db = o.dir.join("failures-bench.db");
        super::failures_db::write_db(&db, o.invocations)?;
        let r = measure_db(&db, o.runs)?;
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", db.display()));
        }
        r
    } else {
        (0.0, 0.0, 0.0)
    };
    let r = Report {
        trees,
        invocations: o.invocations,
        rows_ms,
        run_rows_ms,
        screen_first_frame_ms,
    };
    if json {
        crate::rawln!("{}", serde_json::to_string_pretty(&r)?);
    } else {
        print_report(&r);
    }
    Ok(ExitCode::from(exit::OK))
}

/// Measures the tree at `dir` in this process.
pub fn measure_tree(dir: &Path, runs: usize) -> Result<TreeFigures> {
    let mut open = Vec::new();
    let mut tree = None;
    for _ in 0..runs {
        let t = Instant::now();
        tree = Some(failures::open(dir)?);
        open.push(ms(t));
    }
    let tree = tree.ok_or_else(|| eyre!("no run"))?;
    let queries = [
        (
            Filter::default(),
            Sort {
                key: SortKey::Id,
                descending: true,
            },
        ),
        (
            Filter {
                checker: Some("leave_balance_deducted".into()),
                ..Filter::default()
            },
            Sort {
                key: SortKey::Priority,
                descending: false,
            },
        ),
        (
            Filter {
                search: "mt_0012".into(),
                ..Filter::default()
            },
            Sort {
                key: SortKey::Turns,
                descending: true,
            },
        ),
        (
            Filter {
                priority: Some(FailurePriority::High),
                search: "layer1".into(),
                ..Filter::default()
            },
            Sort {
                key: SortKey::FailureType,
                descending: false,
            },
        ),
    ];
    let mut sel = Selector::new();
    let mut q = Vec::new();
    for _ in 0..runs {
        for (f, s) in &queries {
            let t = Instant::now();
            let n = sel.run(&tree, f, *s).len();
            q.push(ms(t));
            std::hint::black_box(n);
        }
    }
    let mut rng = fastrand::Rng::with_seed(3);
    let mut open_sample = Vec::new();
    for _ in 0..runs.max(1) * 10 {
        let Some(s) = tree.samples.get(rng.usize(..tree.samples.len().max(1))) else {
            break;
        };
        let t = Instant::now();
        let docs = tree.load_all(s);
        let conv = docs[DocKind::Trace.index()]
            .value
            .as_ref()
            .map(parse_trace)
            .unwrap_or_default();
        let keys = key_turns(&[
            docs[DocKind::Evaluation.index()].value.as_ref(),
            docs[DocKind::Attribution.index()].value.as_ref(),
        ]);
        let fold = Folding::new(&conv, &keys, DEFAULT_KEEP);
        open_sample.push(ms(t));
        std::hint::black_box((docs, fold));
    }
    let max = |v: &[f64]| v.iter().copied().fold(0.0, f64::max);
    Ok(TreeFigures {
        samples: tree.samples.len(),
        tree_bytes: 0,
        open_ms: median(open),
        query_max_ms: max(&q),
        query_ms: median(q),
        sample_max_ms: max(&open_sample),
        sample_ms: median(open_sample),
        peak_rss_mib: peak_rss_mib(),
    })
}

/// The Failures screen's first frame: rows loaded, the view computed, one frame drawn.
fn screen_first_frame(store: &Store) -> Result<f64> {
    let t = Instant::now();
    let rows = store.failed_invocations(None)?;
    let mut ui = crate::tui::app::UiState::new(false);
    ui.screen = crate::tui::app::Screen::Failures;
    ui.failures.this_run_only = false;
    ui.failures
        .set_rows(rows, chrono::Utc::now().timestamp_millis());
    let area = ratatui::layout::Rect::new(0, 0, 200, 60);
    let mut buf = ratatui::buffer::Buffer::empty(area);
    crate::tui::ui::draw_buffer(
        &mut buf,
        area,
        &crate::model::state::RunState::new(),
        &mut ui,
        &crate::tui::ui::theme::Theme::dark(),
        &crate::tui::app::keymap::Keymap::default_keys(),
    );
    std::hint::black_box(&buf);
    Ok(ms(t))
}

/// Medians of `(rows_ms, run_rows_ms, screen_first_frame_ms)` over `runs` repetitions.
fn measure_db(db: &Path, runs: usize) -> Result<(f64, f64, f64)> {
    let store = Store::open(db)?;
    let mut frames = Vec::new();
    for _ in 0..runs {
        frames.push(screen_first_frame(&store)?);
    }
    let mut all = Vec::new();
    let mut one = Vec::new();
    for _ in 0..runs {
        let t = Instant::now();
        let n = store.failed_invocations(None)?.len();
        all.push(ms(t));
        std::hint::black_box(n);
        let t = Instant::now();
        let n = store.failed_invocations(Some("R-bench-0"))?.len();
        one.push(ms(t));
        std::hint::black_box(n);
    }
    Ok((median(all), median(one), median(frames)))
}

/// Prints the report for a person.
pub fn print_report(r: &Report) {
    for t in &r.trees {
        crate::outln!(
            "tree of {} samples, {:.0} MB: open {:.0} ms · query {:.1} ms (max {:.1}) · open a sample {:.1} ms (max {:.1}) · peak memory {:.0} MiB",
            t.samples,
            t.tree_bytes as f64 / 1e6,
            t.open_ms,
            t.query_ms,
            t.query_max_ms,
            t.sample_ms,
            t.sample_max_ms,
            t.peak_rss_mib
        );
    }
    if r.invocations > 0 {
        crate::outln!(
            "database of {} failed invocations: their rows {:.0} ms (all runs) · {:.0} ms for one run · the Failures screen's first frame {:.0} ms",
            r.invocations,
            r.rows_ms,
            r.run_rows_ms,
            r.screen_first_frame_ms
        );
    }
}
