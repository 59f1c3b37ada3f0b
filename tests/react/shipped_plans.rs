//! The shipped example plans run clean on the simulated provider: run from an empty
//! folder (nothing to find) and from the repository (the README's way), no tool call
//! fails and no skill is refused, and every plan succeeds (the seed-shaped diffusion
//! planner too: the assets its requests list as existing are not hallucinations).

use std::path::{Path, PathBuf};

use crate::common::bin::{output, plexus};
use plexus::data::store::Store;
use plexus::model::event::EngineEvent;

/// Every `fixtures/plans/*.json`.
fn shipped_plans() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/plans");
    let mut plans: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("fixtures/plans")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    plans.sort();
    assert!(plans.len() >= 3, "{plans:?}");
    plans
}

/// Runs `plan` from `cwd` into a fresh database; returns the exit code and the problems
/// of its tool loops (failed tool calls, refused skills).
fn run_plan(plan: &Path, cwd: &Path) -> (Option<i32>, Vec<String>, String) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let db = tmp.path().join("s.db");
    // The empty config goes in the scratch folder, never into the repository.
    let out = output(plexus(tmp.path()).current_dir(cwd).args([
        "--db",
        db.to_str().expect("utf-8"),
        "run",
        plan.to_str().expect("utf-8"),
        "--chunk-ms",
        "0",
        "--first-chunk-ms",
        "0",
        "--headless",
    ]));
    let store = Store::open(&db).expect("db");
    let run = store.run("latest").expect("run").run_id;
    let problems = store
        .events(&run, 1, u64::MAX)
        .expect("events")
        .into_iter()
        .filter_map(|r| match r.event.expect("decodes") {
            EngineEvent::ToolAnswered(a) if a.is_error => {
                Some(format!("{}: {}", a.tool, a.observation))
            }
            EngineEvent::SkillRefused(s) => Some(format!("skill {}: {}", s.skill, s.reason)),
            _ => None,
        })
        .collect();
    (out.code, problems, out.stdout)
}

#[test]
fn every_shipped_plan_succeeds_without_a_tool_error_from_anywhere() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let empty = tempfile::tempdir().expect("tempdir");
    for plan in shipped_plans() {
        for cwd in [repo, empty.path()] {
            let what = format!("{} from {}", plan.display(), cwd.display());
            let (code, problems, stdout) = run_plan(&plan, cwd);
            assert!(problems.is_empty(), "{what}: {problems:#?}");
            // The diffusion-planner plan lists the papers its tasks refer to as existing
            // assets: they are not hallucinations, so it ends `succeeded` too.
            assert_eq!(code, Some(0), "{what}: {stdout}");
        }
    }
}
