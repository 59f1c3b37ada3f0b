//! `plexus bench eval`: an eval of a one-task plan with five checks over a generated
//! dataset, on the simulated provider at zero latency, run by this binary as a child
//! process beside its baseline — the bare run of the very same copies of the plan
//! (`plexus run` of the plan the eval made), alternated so both see the same machine.
//! Reported: wall and CPU time per sample with the overhead over the bare run, peak
//! memory, database bytes per sample, the tree's files; and `compare` of two evals with
//! ten checks over the same number of samples, in this process.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use color_eyre::eyre::{eyre, Result, WrapErr};
use serde::Serialize;
use serde_json::json;

use crate::cli::args::EvalBenchOpts;
use crate::features::eval::compare::compare;
use crate::features::eval::read::{find_eval, sample_results};
use crate::features::eval::record::{self, AttemptRow, CheckRow, EvalRow, SampleRow};
use crate::features::eval::score::{check_marks, sample_verdict};

/// One child process measured.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Measured {
    /// Wall time, s.
    pub wall_s: f64,
    /// CPU time (user and system), s.
    pub cpu_s: f64,
    /// Peak resident memory, MiB (the high-water mark last read before it ended).
    pub peak_mib: f64,
    /// The database file's size after it ended (with its write-ahead log), bytes.
    pub db_bytes: u64,
}

/// The report.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Samples.
    pub samples: usize,
    /// Each pair: the eval and the bare run of its copies.
    pub pairs: Vec<(Measured, Measured)>,
    /// Median wall time of the eval per sample, ms.
    pub eval_ms_per_sample: f64,
    /// Median wall time of the bare run per sample, ms.
    pub run_ms_per_sample: f64,
    /// Median of (eval − run) wall time per sample, ms: what scoring and the tree add.
    pub overhead_ms_per_sample: f64,
    /// Median of (eval − run) CPU time per sample, ms.
    pub overhead_cpu_ms_per_sample: f64,
    /// Median peak memory of the eval and of the bare run, MiB.
    pub peak_mib: (f64, f64),
    /// Database bytes per sample: the eval's file and the bare run's.
    pub db_bytes_per_sample: (f64, f64),
    /// Files in the eval's tree.
    pub tree_files: usize,
    /// Median time of `eval compare` of two evals of `samples` samples with ten checks
    /// (reading both, aligning, the statistics), ms.
    pub compare_ms: f64,
    /// The Eval screen on the second of those evals (its parent the first).
    pub screen: ScreenTimes,
    /// The Eval screen on the last eval run (five checks, no parent), when one ran.
    pub screen_of_run: Option<ScreenTimes>,
}

/// The Eval screen's figures, medians of five readings, ms.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct ScreenTimes {
    /// Opening: the eval, its parent, every sample's row and the check table.
    pub open_ms: f64,
    /// A filter by status (failed).
    pub filter_status_ms: f64,
    /// A filter by a check missed.
    pub filter_check_ms: f64,
    /// The samples that flipped against the parent.
    pub filter_flips_ms: f64,
    /// A search in the ids.
    pub filter_search_ms: f64,
    /// The first filter on a metadata field (its values read once).
    pub meta_first_ms: f64,
    /// A filter on a metadata field already read.
    pub meta_again_ms: f64,
}

/// The Eval screen's figures on eval `id` of `db` (five readings each; medians).
fn screen_times(db: &Path, id: &str) -> Result<ScreenTimes> {
    use crate::tui::app::Action;
    use crate::tui::eval_ui::{EvalModel, EvalScreen};
    let store = crate::data::store::Store::open(db)?;
    let conn = store.conn();
    let ms = |t: Instant| t.elapsed().as_secs_f64() * 1000.0;
    let mut all: Vec<[f64; 7]> = Vec::new();
    for _ in 0..5 {
        let mut f = [0.0; 7];
        let t = Instant::now();
        let row = find_eval(conn, id)?;
        let mut s = EvalScreen::new(EvalModel::load(conn, row)?);
        f[0] = ms(t);
        let mut time = |s: &mut EvalScreen, k: usize, a: Action| {
            let t = Instant::now();
            s.act(a);
            f[k] = ms(t);
            s.act(Action::ClearFilters);
        };
        time(&mut s, 1, Action::FilterGrade);
        time(&mut s, 2, Action::FilterType);
        time(&mut s, 3, Action::Compare);
        s.filter.search = "s99".into();
        let t = Instant::now();
        s.refresh();
        f[4] = ms(t);
        s.act(Action::ClearFilters);
        let t = Instant::now();
        let values = s.model.metadata_values(conn, "level")?;
        s.meta_values = Some(("level".into(), values));
        s.filter.meta = Some(("level".into(), "hard".into()));
        s.refresh();
        f[5] = ms(t);
        s.act(Action::ClearFilters);
        s.filter.meta = Some(("level".into(), "easy".into()));
        let t = Instant::now();
        s.refresh();
        f[6] = ms(t);
        std::hint::black_box(&s.rows);
        all.push(f);
    }
    let m = |k: usize| median(all.iter().map(|f| f[k]).collect());
    Ok(ScreenTimes {
        open_ms: m(0),
        filter_status_ms: m(1),
        filter_check_ms: m(2),
        filter_flips_ms: m(3),
        filter_search_ms: m(4),
        meta_first_ms: m(5),
        meta_again_ms: m(6),
    })
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// Writes the dataset, the plan and the spec into `dir`; returns the spec's path.
fn write_inputs(dir: &Path, samples: usize) -> Result<PathBuf> {
    use std::io::Write;
    let mut data = std::io::BufWriter::new(std::fs::File::create(dir.join("data.jsonl"))?);
    for i in 0..samples {
        let level = LEVELS[i % 3];
        writeln!(
            data,
            "{}",
            json!({"id": format!("s{i}"), "input": format!("What is {i} + {i}?"),
                   "expected": (2 * i).to_string(), "metadata": {"level": level}})
        )?;
    }
    data.flush()?;
    std::fs::write(
        dir.join("plan.json"),
        json!({"plan_id": "BENCH_EVAL", "tasks": [{
            "task_id": "answer", "agent": "Scholar_Internalizer",
            "instruction": "Answer the question {{id}}: {{sample.input}}",
            "context": {"paper_info": {"title": "Question of level {{metadata.level}}"}},
            "output_requirements": {"atom_type": "knowledge_atoms", "quality_threshold": "C", "max_atoms": 2}
        }]})
        .to_string(),
    )?;
    let spec = dir.join("bench.eval.json");
    std::fs::write(
        &spec,
        json!({"name": "bench", "plan": "plan.json", "dataset": "data.jsonl", "checks": [
            {"name": "format", "kind": "json_valid"},
            {"name": "atom_type", "kind": "jsonpath", "path": "$.atoms[0].atom_type", "equals": "knowledge_atoms"},
            {"name": "grade", "kind": "grade_at_least", "grade": "B"},
            {"name": "confidence", "kind": "numeric", "path": "$.atoms[0].confidence", "value": 0.8, "abs_tol": 0.1},
            {"name": "short", "kind": "tokens_at_most", "tokens": 2000, "severity": "warning"}
        ]})
        .to_string(),
    )?;
    Ok(spec)
}

fn cpu_of_children() -> f64 {
    use nix::sys::resource::{getrusage, UsageWho};
    getrusage(UsageWho::RUSAGE_CHILDREN)
        .map(|u| {
            let t = |tv: nix::sys::time::TimeVal| tv.tv_sec() as f64 + tv.tv_usec() as f64 / 1e6;
            t(u.user_time()) + t(u.system_time())
        })
        .unwrap_or(0.0)
}

fn high_water_mib(pid: u32) -> Option<f64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

fn file_bytes(db: &Path) -> u64 {
    ["", "-wal"]
        .iter()
        .filter_map(|s| std::fs::metadata(format!("{}{s}", db.display())).ok())
        .map(|m| m.len())
        .sum()
}

/// Runs this binary with `args` in `dir`, measured.
fn measure(dir: &Path, args: &[&str], db: &Path) -> Result<Measured> {
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", db.display()));
    }
    let exe = std::env::current_exe()?;
    let cpu0 = cpu_of_children();
    let start = Instant::now();
    let mut child = Command::new(exe)
        .current_dir(dir)
        .env("PLEXUS_CONFIG", dir.join("none.toml"))
        .env_remove("PLEXUS_PROVIDER")
        .env_remove("PLEXUS_DB")
        .arg("--db")
        .arg(db)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::from(std::fs::File::create(dir.join("child.err"))?))
        .spawn()
        .wrap_err("cannot start the child plexus")?;
    let pid = child.id();
    let mut peak = 0.0f64;
    let status = loop {
        if let Some(s) = child.try_wait()? {
            break s;
        }
        if let Some(m) = high_water_mib(pid) {
            peak = peak.max(m);
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let wall_s = start.elapsed().as_secs_f64();
    if !matches!(status.code(), Some(0) | Some(8)) {
        return Err(eyre!(
            "plexus {} ended with {status}: {}",
            args.join(" "),
            std::fs::read_to_string(dir.join("child.err")).unwrap_or_default()
        ));
    }
    Ok(Measured {
        wall_s,
        cpu_s: cpu_of_children() - cpu0,
        peak_mib: peak,
        db_bytes: file_bytes(db),
    })
}

/// The plan of the copies the eval in `db` ran, written to `path`.
fn copies_plan(db: &Path, path: &Path) -> Result<()> {
    let store = crate::data::store::Store::open(db)?;
    let row = find_eval(store.conn(), "latest")?;
    let run = row.run_id.ok_or_else(|| eyre!("the eval has no run"))?;
    let (_, plan, _) = store.run_plan(&run)?;
    std::fs::write(path, plan)?;
    Ok(())
}

fn count_files(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| {
            let p = e.path();
            if p.is_dir() {
                count_files(&p)
            } else {
                1
            }
        })
        .sum()
}

/// The metadata `level` of the generated samples, by position modulo 3.
const LEVELS: [&str; 3] = ["easy", "medium", "hard"];

/// Two evals of `n` samples with ten checks each, written straight into `db`.
fn write_compare_db(db: &Path, n: usize) -> Result<(String, String)> {
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", db.display()));
    }
    let conn = crate::data::store::open_connection(db)?;
    let checks: Vec<serde_json::Value> = (0..10)
        .map(|k| json!({"name": format!("c{k}"), "kind": "json_valid"}))
        .collect();
    let scoring = json!({"checks": checks, "epochs": 1, "reducer": "mean",
                         "plan_tasks": ["answer"], "output_task": "answer"});
    let scoring_of: crate::features::eval::spec::Scoring = serde_json::from_value(scoring.clone())?;
    let mut ids = Vec::new();
    for (e, seed) in [(0u64, 7u64), (1, 11)] {
        let tx = conn.unchecked_transaction()?;
        let id = format!("E-bench-{e}");
        let row = EvalRow {
            eval_id: id.clone(),
            name: "bench".into(),
            eval_key: id.clone(),
            kind: "run".into(),
            run_id: Some("R-bench".into()),
            parent_id: None,
            iteration: 1,
            spec_path: "bench".into(),
            spec_json: scoring.to_string(),
            dataset_path: "bench".into(),
            out_dir: None,
            status: "finished".into(),
            created_at: crate::base::clock::now_rfc3339(),
            finished_at: None,
            sample_count: n as u64,
        };
        let samples: Vec<SampleRow> = (0..n)
            .map(|i| SampleRow {
                sample_id: format!("s{i}"),
                ord: i as u64,
                file_id: format!("s{i}"),
                hash: format!("{:064x}", i),
                line: i as u64 + 1,
                content: json!({"input": format!("q{i}"),
                                "metadata": {"level": LEVELS[i % 3]}})
                .to_string(),
                status: "pending".into(),
                score: None,
                inherited_from: None,
                marks: None,
            })
            .collect();
        record::insert_eval(&tx, &row, &samples)?;
        let mut rng = fastrand::Rng::with_seed(seed);
        for i in 0..n {
            let attempt = failed_attempt(i, &mut rng);
            record::put_attempt(&tx, &id, &attempt)?;
            let marks = check_marks(&scoring_of, &[&attempt]);
            let verdict = sample_verdict(scoring_of.reducer(), &[("failed".into(), 0.5)]);
            record::put_verdict(&tx, &id, &attempt.sample_id, verdict, &marks)?;
        }
        tx.commit()?;
        ids.push(id);
    }
    Ok((ids[0].clone(), ids[1].clone()))
}

/// Sample `i`'s failed attempt, with ten checks each passed at random (four in five).
fn failed_attempt(i: usize, rng: &mut fastrand::Rng) -> AttemptRow {
    AttemptRow {
        sample_id: format!("s{i}"),
        epoch: 1,
        run_id: "R-bench".into(),
        status: "failed".into(),
        score: 0.5,
        tokens: 500,
        latency_ms: 1,
        cost_usd: None,
        error: None,
        judge_tokens: 0,
        judge_cost_usd: None,
        checks: (0..10)
            .map(|k| {
                let passed = rng.f64() < 0.8;
                CheckRow {
                    name: format!("c{k}"),
                    passed: Some(passed),
                    score: Some(if passed { 1.0 } else { 0.0 }),
                    result: Some(
                        r#"{"at":"output","expected":null,"found":"…","why":"parses"}"#.into(),
                    ),
                }
            })
            .collect(),
    }
}

/// Runs the benchmark.
pub fn run_bench(o: &EvalBenchOpts) -> Result<Report> {
    let dir = &o.dir;
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join("none.toml"), "")?;
    let spec = write_inputs(dir, o.samples)?;
    let conc = o.concurrency.to_string();
    let pace = [
        "--chunk-ms",
        "0",
        "--first-chunk-ms",
        "0",
        "--concurrency",
        &conc,
    ];
    let mut pairs = Vec::new();
    let mut tree_files = 0;
    let mut trees = Vec::new();
    for i in 0..o.runs {
        crate::errln!("bench eval: pair {} of {}: the eval …", i + 1, o.runs);
        // Each pair writes a tree of its own, and the trees are removed at the end: a
        // file system that has just deleted 300,000 files makes the next ones slow to
        // create (ext4 looks at each recently freed inode), which is the benchmark's
        // cleaning, not the eval.
        let tree_name = format!("tree-{}", i + 1);
        let tree = dir.join(&tree_name);
        let _ = std::fs::remove_dir_all(&tree);
        trees.push(tree.clone());
        let db = dir.join("eval.db");
        let spec_s = spec.display().to_string();
        let mut args = vec!["eval", spec_s.as_str(), "--out", tree_name.as_str()];
        args.extend_from_slice(&pace);
        let e = measure(dir, &args, &db)?;
        tree_files = count_files(&tree);
        copies_plan(&db, &dir.join("copies.json"))?;
        crate::errln!("bench eval: pair {} of {}: the bare run …", i + 1, o.runs);
        let mut args = vec!["run", "copies.json", "--headless"];
        args.extend_from_slice(&pace);
        let r = measure(dir, &args, &dir.join("run.db"))?;
        pairs.push((e, r));
    }
    for t in trees {
        let _ = std::fs::remove_dir_all(t);
    }
    let n = o.samples as f64;
    let per = |f: &dyn Fn(&(Measured, Measured)) -> f64| median(pairs.iter().map(f).collect());
    crate::errln!("bench eval: compare …");
    let cdb = dir.join("compare.db");
    let (a, b) = write_compare_db(&cdb, o.samples)?;
    let mut times = Vec::new();
    let store = crate::data::store::Store::open(&cdb)?;
    for _ in 0..3 {
        let t = Instant::now();
        let ra = find_eval(store.conn(), &a)?;
        let rb = find_eval(store.conn(), &b)?;
        let c = compare(
            &sample_results(store.conn(), &ra)?,
            &sample_results(store.conn(), &rb)?,
        );
        std::hint::black_box(&c);
        times.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    crate::errln!("bench eval: the Eval screen …");
    let screen = screen_times(&cdb, &b)?;
    let screen_of_run = if o.runs > 0 {
        Some(screen_times(&dir.join("eval.db"), "latest")?)
    } else {
        None
    };
    Ok(Report {
        samples: o.samples,
        eval_ms_per_sample: per(&|p| p.0.wall_s * 1000.0 / n),
        run_ms_per_sample: per(&|p| p.1.wall_s * 1000.0 / n),
        overhead_ms_per_sample: per(&|p| (p.0.wall_s - p.1.wall_s) * 1000.0 / n),
        overhead_cpu_ms_per_sample: per(&|p| (p.0.cpu_s - p.1.cpu_s) * 1000.0 / n),
        peak_mib: (per(&|p| p.0.peak_mib), per(&|p| p.1.peak_mib)),
        db_bytes_per_sample: (
            per(&|p| p.0.db_bytes as f64 / n),
            per(&|p| p.1.db_bytes as f64 / n),
        ),
        tree_files,
        compare_ms: median(times),
        screen,
        screen_of_run,
        pairs,
    })
}

/// Prints the report for a person.
pub fn print_report(r: &Report) {
    if r.pairs.is_empty() {
        crate::outln!(
            "readings of two evals of {} samples (no eval run)",
            r.samples
        );
    } else {
        print_runs(r);
    }
    crate::outln!(
        "compare of two evals of {} samples with 10 checks: {:.0} ms",
        r.samples,
        r.compare_ms
    );
    let show = |what: &str, t: &ScreenTimes| {
        crate::outln!(
            "Eval screen on {what}: open {:.0} ms · filter: status {:.1} ms, check {:.1} ms, flips {:.1} ms, id search {:.1} ms, metadata {:.0} ms the first time then {:.1} ms",
            t.open_ms,
            t.filter_status_ms,
            t.filter_check_ms,
            t.filter_flips_ms,
            t.filter_search_ms,
            t.meta_first_ms,
            t.meta_again_ms
        );
    };
    show(
        "the second of those evals (10 checks, its parent the first)",
        &r.screen,
    );
    if let Some(t) = &r.screen_of_run {
        show("the eval run (5 checks, no parent)", t);
    }
}

fn print_runs(r: &Report) {
    crate::outln!(
        "eval of {} samples, one task and five checks each (medians of {} pairs)",
        r.samples,
        r.pairs.len()
    );
    for (i, (e, b)) in r.pairs.iter().enumerate() {
        crate::outln!(
            "  pair {}: eval {:.1} s ({:.1} s CPU, {:.0} MiB) · bare run {:.1} s ({:.1} s CPU, {:.0} MiB)",
            i + 1,
            e.wall_s,
            e.cpu_s,
            e.peak_mib,
            b.wall_s,
            b.cpu_s,
            b.peak_mib
        );
    }
    crate::outln!(
        "per sample: eval {:.3} ms, bare run {:.3} ms, overhead {:.3} ms wall, {:.3} ms CPU",
        r.eval_ms_per_sample,
        r.run_ms_per_sample,
        r.overhead_ms_per_sample,
        r.overhead_cpu_ms_per_sample
    );
    crate::outln!(
        "peak memory: eval {:.0} MiB, bare run {:.0} MiB",
        r.peak_mib.0,
        r.peak_mib.1
    );
    crate::outln!(
        "database bytes per sample: eval {:.0}, bare run {:.0}",
        r.db_bytes_per_sample.0,
        r.db_bytes_per_sample.1
    );
    crate::outln!("tree: {} files", r.tree_files);
}
