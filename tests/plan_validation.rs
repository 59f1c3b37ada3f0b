//! Plan validation against the fixtures: every invalid plan in `fixtures/plans/invalid/`
//! fails with exactly the errors listed in its `.expected` file (one `PlanError` Display
//! line each, in order), and the valid plans load.
//!
//! Paths are relative to the crate root, where cargo runs integration tests, so the
//! `file` part of each error is `fixtures/plans/invalid/<name>.json`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use plexus::plan::{load_plan_file, PlanError, PlanErrorKind, PlanErrors};

const INVALID_DIR: &str = "fixtures/plans/invalid";

/// The `.json` files of the invalid fixtures, sorted, as crate-relative paths.
fn invalid_plans() -> Vec<PathBuf> {
    let mut plans: Vec<PathBuf> = std::fs::read_dir(INVALID_DIR)
        .unwrap_or_else(|e| panic!("cannot list {INVALID_DIR}: {e}"))
        .map(|entry| {
            let name = entry
                .unwrap_or_else(|e| panic!("cannot list {INVALID_DIR}: {e}"))
                .file_name();
            Path::new(INVALID_DIR).join(name)
        })
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    plans.sort();
    plans
}

/// Loads a plan that must be invalid and returns its errors.
fn errors_of(path: &Path) -> Vec<PlanError> {
    match load_plan_file(path) {
        Ok(plan) => panic!(
            "{} should be invalid but loaded ({} tasks)",
            path.display(),
            plan.tasks.len()
        ),
        Err(PlanErrors(errors)) => {
            assert!(!errors.is_empty(), "{}: Err with no errors", path.display());
            errors
        }
    }
}

fn invalid(name: &str) -> PathBuf {
    Path::new(INVALID_DIR).join(name)
}

#[test]
fn there_are_enough_invalid_fixtures() {
    let n = invalid_plans().len();
    assert!(n >= 14, "expected at least 14 invalid plans, found {n}");
}

#[test]
fn every_invalid_plan_has_an_expected_file() {
    let missing: Vec<String> = invalid_plans()
        .iter()
        .map(|p| p.with_extension("expected"))
        .filter(|p| !p.is_file())
        .map(|p| p.display().to_string())
        .collect();
    assert!(missing.is_empty(), "missing .expected files: {missing:?}");
}

#[test]
fn every_expected_file_has_a_plan() {
    let orphans: Vec<String> = std::fs::read_dir(INVALID_DIR)
        .unwrap_or_else(|e| panic!("cannot list {INVALID_DIR}: {e}"))
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "expected"))
        .filter(|p| !p.with_extension("json").is_file())
        .map(|p| p.display().to_string())
        .collect();
    assert!(
        orphans.is_empty(),
        ".expected files without a plan: {orphans:?}"
    );
}

#[test]
fn invalid_plans_report_exactly_the_expected_errors() {
    let mut failures = Vec::new();
    for plan in invalid_plans() {
        let expected_path = plan.with_extension("expected");
        let Ok(expected_text) = std::fs::read_to_string(&expected_path) else {
            failures.push(format!("{}: no .expected file", plan.display()));
            continue;
        };
        let expected: Vec<&str> = expected_text.lines().filter(|l| !l.is_empty()).collect();
        let actual: Vec<String> = errors_of(&plan).iter().map(ToString::to_string).collect();
        if actual != expected {
            failures.push(format!(
                "{}:\n  expected:\n    {}\n  actual:\n    {}",
                plan.display(),
                expected.join("\n    "),
                actual.join("\n    ")
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn every_error_names_the_file_it_came_from() {
    for plan in invalid_plans() {
        let file = plan.display().to_string();
        for e in errors_of(&plan) {
            assert_eq!(e.file, file, "{e}");
        }
    }
}

/// The kind of the single error of each one-problem fixture.
#[test]
fn single_problem_fixtures_have_the_right_kind() {
    use PlanErrorKind as K;
    let cases: &[(&str, K, Option<&str>, &str)] = &[
        (
            "unknown_agent.json",
            K::UnknownAgent,
            Some("task_poet"),
            "agent",
        ),
        (
            "missing_dependency.json",
            K::MissingDependency,
            Some("task_validator"),
            "depends_on[1]",
        ),
        (
            "cycle_three_tasks.json",
            K::Cycle,
            Some("task_a"),
            "depends_on",
        ),
        (
            "self_dependency.json",
            K::Cycle,
            Some("task_validator"),
            "depends_on",
        ),
        (
            "duplicate_task_id.json",
            K::DuplicateTaskId,
            Some("task_scholar"),
            "tasks[2].task_id",
        ),
        (
            "ref_not_upstream.json",
            K::RefNotUpstream,
            Some("task_validator"),
            "data_references[1].task_id",
        ),
        (
            "ref_missing_task.json",
            K::RefNotUpstream,
            Some("task_validator"),
            "data_references[0].task_id",
        ),
        (
            "bad_jsonpath.json",
            K::BadJsonPath,
            Some("task_validator"),
            "data_references[0].path",
        ),
        (
            "unknown_db_table.json",
            K::UnknownTable,
            Some("task_vault"),
            "data_references[0].table",
        ),
        (
            "unknown_db_column_condition.json",
            K::UnknownColumn,
            Some("task_vault"),
            "data_references[0].conditions[1].field",
        ),
        (
            "unknown_db_column_select.json",
            K::UnknownColumn,
            Some("task_vault"),
            "data_references[0].select[2]",
        ),
        (
            "unknown_db_column_order_by.json",
            K::UnknownColumn,
            Some("task_critic"),
            "data_references[0].order_by.field",
        ),
        (
            "bad_quality_threshold.json",
            K::BadThreshold,
            Some("task_scholar"),
            "output_requirements.quality_threshold",
        ),
        (
            "bad_quality_threshold_aa.json",
            K::BadThreshold,
            Some("task_scholar"),
            "output_requirements.quality_threshold",
        ),
        (
            "bad_execution_mode.json",
            K::BadExecutionMode,
            None,
            "execution_mode",
        ),
        ("invalid_json_syntax.json", K::Syntax, None, ""),
        (
            "unknown_task_field.json",
            K::UnknownField,
            Some("task_validator"),
            "depend_on",
        ),
        (
            "max_atoms_zero.json",
            K::OutOfRange,
            Some("task_scholar"),
            "output_requirements.max_atoms",
        ),
    ];
    for (name, kind, task, field) in cases {
        let errors = errors_of(&invalid(name));
        assert_eq!(errors.len(), 1, "{name}: {errors:#?}");
        let e = &errors[0];
        assert_eq!(e.kind, *kind, "{name}: {e}");
        assert_eq!(e.task.as_deref(), *task, "{name}: {e}");
        assert_eq!(e.field, *field, "{name}: {e}");
    }
    // Every one-problem fixture is in the table above.
    let listed: BTreeSet<&str> = cases.iter().map(|c| c.0).collect();
    for plan in invalid_plans() {
        let name = plan
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_string();
        if name != "multiple_errors.json" {
            assert!(
                listed.contains(name.as_str()),
                "{name} is not in the kind table"
            );
        }
    }
}

#[test]
fn valid_fixtures_load() {
    for (path, tasks) in [
        ("fixtures/plans/avp_diffusion_planner.json", 5),
        ("fixtures/plans/seed000_task_chain.json", 3),
    ] {
        match load_plan_file(Path::new(path)) {
            Ok(plan) => {
                assert_eq!(plan.tasks.len(), tasks, "{path}");
                assert_eq!(plan.source, path);
            }
            Err(e) => panic!("{path} should be valid:\n{e}"),
        }
    }
}

#[test]
fn cycle_error_names_every_member() {
    let errors = errors_of(&invalid("cycle_three_tasks.json"));
    let cycles: Vec<&PlanError> = errors
        .iter()
        .filter(|e| e.kind == PlanErrorKind::Cycle)
        .collect();
    assert_eq!(cycles.len(), 1, "{errors:#?}");
    let e = cycles[0];
    assert_eq!(e.kind, PlanErrorKind::Cycle);
    assert_eq!(e.field, "depends_on");
    assert!(e.message.starts_with("dependency cycle: "), "{}", e.message);
    for member in ["task_a", "task_b", "task_c"] {
        assert!(
            e.message.contains(member),
            "{member} missing from: {}",
            e.message
        );
    }
    // The chain closes on the task it starts from.
    let chain: Vec<&str> = e
        .message
        .trim_start_matches("dependency cycle: ")
        .split(" -> ")
        .collect();
    assert_eq!(chain.len(), 4, "{}", e.message);
    assert_eq!(chain.first(), chain.last(), "{}", e.message);
    assert_eq!(e.task.as_deref(), chain.first().copied());
}

#[test]
fn multiple_errors_are_all_reported() {
    use PlanErrorKind as K;
    let errors = errors_of(&invalid("multiple_errors.json"));
    let got: Vec<(K, Option<&str>, &str)> = errors
        .iter()
        .map(|e| (e.kind, e.task.as_deref(), e.field.as_str()))
        .collect();
    let want: Vec<(K, Option<&str>, &str)> = vec![
        (K::UnknownField, None, "owner"),
        (K::BadExecutionMode, None, "execution_mode"),
        (
            K::BadThreshold,
            Some("task_scholar"),
            "output_requirements.quality_threshold",
        ),
        (
            K::OutOfRange,
            Some("task_scholar"),
            "output_requirements.max_atoms",
        ),
        (
            K::BadJsonPath,
            Some("task_validator"),
            "data_references[0].path",
        ),
        (
            K::UnknownTable,
            Some("task_validator"),
            "data_references[1].table",
        ),
        (
            K::UnknownColumn,
            Some("task_validator"),
            "data_references[2].select[0]",
        ),
        (K::DuplicateTaskId, Some("task_scholar"), "tasks[3].task_id"),
        (
            K::MissingDependency,
            Some("task_validator"),
            "depends_on[1]",
        ),
        (
            K::RefNotUpstream,
            Some("task_critic"),
            "data_references[0].task_id",
        ),
    ];
    assert_eq!(got, want, "{errors:#?}");
    // Ten problems, each of a different kind.
    let kinds: BTreeSet<&str> = errors.iter().map(|e| e.kind.as_str()).collect();
    assert_eq!(kinds.len(), 10, "{kinds:?}");
}
