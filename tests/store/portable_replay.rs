//! A run carried to another database file works there exactly as at home: exported
//! from A and imported into B, its replay gives the same state after every event, a
//! rerun of it in B matches it and `plexus diff` finds nothing between them; imported
//! back into A under a new id, `diff` finds nothing between the copy and the original.

use crate::common;

use common::bin::{gen_plan, output, plexus};
use plexus::data::replay::log::ReplayLog;

#[test]
fn export_import_replay_rerun_and_diff_across_two_databases() {
    let dir = tempfile::tempdir().expect("tempdir");
    let plan = gen_plan(dir.path(), 8, 3);
    let rec = output(
        plexus(dir.path())
            .args(["--db", "a.db", "run", "--seed", "5", "--headless"])
            .arg(&plan)
            .args([
                "--faults",
                "demo",
                "--chunk-ms",
                "1",
                "--first-chunk-ms",
                "1",
            ])
            .args(["--retry-delay-div", "1000", "--timeout-scale", "0.002"]),
    );
    assert!(matches!(rec.code, Some(0 | 3)), "{}", rec.stderr);
    let run = plexus::data::store::Store::open(&dir.path().join("a.db"))
        .expect("a")
        .run("latest")
        .expect("run")
        .run_id;
    let exp = output(plexus(dir.path()).args(["--db", "a.db", "export", &run, "-o", "run.jsonl"]));
    assert_eq!(exp.code, Some(0), "{}", exp.stderr);
    let imp = output(plexus(dir.path()).args(["--db", "b.db", "import", "run.jsonl"]));
    assert_eq!(imp.code, Some(0), "{}", imp.stderr);

    // Replay: the same state after every event in both files.
    let mut a = ReplayLog::open(&dir.path().join("a.db"), &run).expect("replay a");
    let mut b = ReplayLog::open(&dir.path().join("b.db"), &run).expect("replay b");
    assert_eq!(a.total(), b.total());
    assert!(a.total() > 50);
    for n in 0..=a.total() {
        assert_eq!(
            a.seek(n).expect("a"),
            b.seek(n).expect("b"),
            "after event {n}"
        );
    }

    // Rerun in B from the imported recording: it matches, and diff agrees.
    let re = output(plexus(dir.path()).args([
        "--db",
        "b.db",
        "rerun",
        &run,
        "--instant",
        "--json",
        "--headless",
    ]));
    assert_eq!(re.code, Some(0), "{}", re.stderr);
    let report: serde_json::Value = serde_json::from_str(&re.stdout).expect("report");
    assert_eq!(report["mismatches"], 0, "{report:#}");
    let new = report["run_id"].as_str().expect("rerun id").to_string();
    let d = output(plexus(dir.path()).args(["--db", "b.db", "diff", &run, &new]));
    assert_eq!(d.code, Some(0), "{}{}", d.stdout, d.stderr);
    assert_eq!(d.stdout.trim(), "no differences");

    // Back into A under another id: the copy and the original do not differ.
    let back =
        output(plexus(dir.path()).args(["--db", "a.db", "import", "run.jsonl", "--rename-auto"]));
    assert_eq!(back.code, Some(0), "{}", back.stderr);
    let copy = format!("{run}-2");
    let d = output(plexus(dir.path()).args(["--db", "a.db", "diff", &run, &copy]));
    assert_eq!(d.code, Some(0), "{}{}", d.stdout, d.stderr);
    assert_eq!(d.stdout.trim(), "no differences");
}
