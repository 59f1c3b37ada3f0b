//! `plexus show` lists a run's tasks in plan order — the order of the plan's `tasks`
//! array — in its table and in `--json`, not by id and not by when they finished.

use crate::common;

use common::bin::{output, plexus, run_fast};

#[test]
fn show_lists_tasks_in_plan_order() {
    let dir = tempfile::tempdir().expect("tempdir");
    // Not alphabetical; `zeta` waits for `mid`, so it also finishes last.
    let plan = serde_json::json!({
        "plan_id": "ORDER",
        "execution_mode": "Deep_Internalization",
        "tasks": [
            {"task_id": "zeta", "agent": "Scholar_Internalizer", "instruction": "Last.", "depends_on": ["mid"]},
            {"task_id": "alpha", "agent": "Scholar_Internalizer", "instruction": "Alone."},
            {"task_id": "mid", "agent": "Scholar_Internalizer", "instruction": "First."}
        ]
    });
    std::fs::write(dir.path().join("plan.json"), plan.to_string()).expect("plan");
    let db = dir.path().join("o.db");
    let cli = |args: &[&str]| output(plexus(dir.path()).arg("--db").arg(&db).args(args));
    let run = run_fast(dir.path(), &db, "plan.json");
    assert_eq!(run.code, Some(0), "{}", run.stderr);

    let show = cli(&["show", "latest"]);
    assert_eq!(show.code, Some(0), "{}", show.stderr);
    let listed: Vec<&str> = show
        .stdout
        .lines()
        .skip_while(|l| !l.starts_with("TASK"))
        .skip(1)
        .take_while(|l| !l.is_empty())
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(listed, ["zeta", "alpha", "mid"], "{}", show.stdout);

    let json = cli(&["show", "latest", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&json.stdout).expect("show --json");
    let ids: Vec<&str> = v["tasks"]
        .as_array()
        .expect("tasks")
        .iter()
        .filter_map(|t| t["task_id"].as_str())
        .collect();
    assert_eq!(ids, ["zeta", "alpha", "mid"], "{}", json.stdout);
}
