//! Plan validation against the fixtures: every invalid plan in `fixtures/plans/invalid/`
//! fails with exactly the errors listed in its `.expected` file (one `PlanError` Display
//! line each, in order), and the valid plans load.
//!
//! Paths are relative to the crate root, where cargo runs integration tests, so the
//! `file` part of each error is `fixtures/plans/invalid/<name>.json`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use plexus::model::plan::{load_plan_file, parse_plan, PlanError, PlanErrorKind, PlanErrors};

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

/// Parses plan text that must be invalid and returns its errors.
fn text_errors(text: &str) -> Vec<PlanError> {
    match parse_plan(text, "p.json") {
        Ok(plan) => panic!("should be invalid but loaded ({} tasks)", plan.tasks.len()),
        Err(PlanErrors(errors)) => errors,
    }
}

/// `(task, field, kind)` of each error.
fn places(errors: &[PlanError]) -> Vec<(Option<&str>, &str, PlanErrorKind)> {
    errors
        .iter()
        .map(|e| (e.task.as_deref(), e.field.as_str(), e.kind))
        .collect()
}

#[test]
fn an_agent_change_applies_to_tasks_naming_the_agent_by_any_spelling() {
    use plexus::run::engine::request::constraints_for;
    // The change keyed by each spelling; the tasks name the agent by every other one.
    for key in [
        "Scholar_Internalizer",
        "scholar",
        "SCHOLAR",
        "Scholar",
        "scholar_internalizer",
    ] {
        let text = serde_json::json!({
            "plan_id": "P", "execution_mode": "Deep_Internalization",
            "agents": {key: {"max_tokens": 12345, "timeout_seconds": 77, "temperature": 0.55,
                             "system_prompt": "You are the custom scholar.",
                             "max_input_tokens": 54321}},
            "tasks": [
                {"task_id": "A", "agent": "scholar", "instruction": "x"},
                {"task_id": "B", "agent": "Scholar", "instruction": "x"},
                {"task_id": "C", "agent": "SCHOLAR", "instruction": "x"},
                {"task_id": "D", "agent": "Scholar_Internalizer", "instruction": "x"}]
        })
        .to_string();
        let plan = parse_plan(&text, "p.json").unwrap_or_else(|e| panic!("{key}: {e}"));
        assert_eq!(plan.agents.len(), 1, "{key}: {:?}", plan.agents.keys());
        for task in &plan.tasks {
            assert_eq!(&*task.agent, "Scholar_Internalizer", "{key}");
            // What the engine reads for the request and the context budget.
            let def = &plan.agents[&*task.agent];
            assert_eq!(def.system_prompt, "You are the custom scholar.", "{key}");
            assert_eq!(def.max_input_tokens, 54321, "{key}");
            assert_eq!(def.short_name, "SCHOLAR", "{key}");
            let c = constraints_for(def, plan.execution_mode, &task.options().constraints, 0.1);
            // Deep_Internalization: max_tokens ×1.5, timeout ×2, temperature as given.
            assert_eq!(c.max_tokens, 18518, "{key}");
            assert_eq!(c.timeout_seconds, 154.0, "{key}");
            assert_eq!(c.temperature, 0.55, "{key}");
        }
    }
}

#[test]
fn user_defined_agents_follow_the_same_name_rule() {
    let text = r#"{"plan_id": "P", "execution_mode": "Quick_Assessment",
        "agents": {"Summariser": {"system_prompt": "You summarise.", "max_tokens": 900},
                   "Bare": {}},
        "tasks": [{"task_id": "A", "agent": "summariser", "instruction": "x"},
                  {"task_id": "B", "agent": "SUMMARISER", "instruction": "x"},
                  {"task_id": "C", "agent": "Bare", "instruction": "x"}]}"#;
    let plan = parse_plan(text, "p.json").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(&*plan.tasks[0].agent, "Summariser");
    assert_eq!(&*plan.tasks[1].agent, "Summariser");
    assert_eq!(plan.agents["Summariser"].max_tokens, 900);
    assert_eq!(plan.agents["Bare"].max_tokens, 8000);
}

#[test]
fn two_entries_for_one_agent_and_unused_unknown_entries_are_refused() {
    use PlanErrorKind as K;
    let text = r#"{"plan_id": "P", "execution_mode": "Quick_Assessment",
        "agents": {"Scholar_Internalizer": {"max_tokens": 100}, "scholar": {"max_tokens": 200},
                   "Helper": {}, "helper": {},
                   "Scholar_Internaliser": {"max_tokens": 300}},
        "tasks": [{"task_id": "A", "agent": "scholar", "instruction": "x"},
                  {"task_id": "B", "agent": "HELPER", "instruction": "x"}]}"#;
    let errors = text_errors(text);
    assert_eq!(
        places(&errors),
        vec![
            (None, "agents.helper", K::DuplicateAgent),
            (None, "agents.scholar", K::DuplicateAgent),
            (None, "agents.Scholar_Internaliser", K::UnknownAgent),
        ],
        "{errors:#?}"
    );
    assert!(
        errors[1].message.contains("`agents.Scholar_Internalizer`")
            && errors[1].message.contains("Scholar_Internalizer"),
        "{}",
        errors[1].message
    );
    assert!(
        errors[2]
            .message
            .contains("not a built-in agent and no task uses it"),
        "{}",
        errors[2].message
    );
}

#[test]
fn every_number_has_a_range_checked_at_its_path() {
    use PlanErrorKind as K;
    // Each of these passed validation before (1e300 then panicked a worker).
    let text = r#"{"plan_id": "P", "execution_mode": "Quick_Assessment",
        "agents": {"Scholar_Internalizer": {"timeout_seconds": 1e300, "max_input_tokens": 0}},
        "tasks": [
          {"task_id": "A", "agent": "scholar", "instruction": "x",
           "constraints": {"timeout_seconds": 1e300, "max_tokens": 5000000, "temperature": 2.5}},
          {"task_id": "B", "agent": "scholar", "instruction": "x",
           "constraints": {"timeout_seconds": 1e-9},
           "output_requirements": {"max_atoms": 100000},
           "max_steps": 101, "token_budget": 0, "tools": ["get_now"]},
          {"task_id": "C", "agent": "scholar", "instruction": "x",
           "data_references": [{"ref_type": "db_query", "table": "papers", "limit": 5000}],
           "transfer_config": {"priority_filter": [1, 9], "inline_preview_count": -1,
                               "batch_config": {"enabled": true, "batch_size_tokens": 30000,
                                                "overlap_tokens": 0, "max_batches": 0,
                                                "aggregation_strategy": "merge",
                                                "batch_priority": "chronological"}},
           "fallback_config": {"strategy": "retry", "retry_count": 1000,
                               "retry_delay_ms": 1e20}}]}"#;
    let errors = text_errors(text);
    let want: Vec<(Option<&str>, &str, K)> = vec![
        (
            None,
            "agents.Scholar_Internalizer.max_input_tokens",
            K::OutOfRange,
        ),
        (
            None,
            "agents.Scholar_Internalizer.timeout_seconds",
            K::OutOfRange,
        ),
        (Some("A"), "constraints.max_tokens", K::OutOfRange),
        (Some("A"), "constraints.temperature", K::OutOfRange),
        (Some("A"), "constraints.timeout_seconds", K::OutOfRange),
        (Some("B"), "output_requirements.max_atoms", K::OutOfRange),
        (Some("B"), "constraints.timeout_seconds", K::OutOfRange),
        (Some("B"), "max_steps", K::OutOfRange),
        (Some("B"), "token_budget", K::OutOfRange),
        (Some("C"), "data_references[0].limit", K::OutOfRange),
        (
            Some("C"),
            "transfer_config.batch_config.max_batches",
            K::OutOfRange,
        ),
        (
            Some("C"),
            "transfer_config.inline_preview_count",
            K::OutOfRange,
        ),
        (
            Some("C"),
            "transfer_config.priority_filter[1]",
            K::OutOfRange,
        ),
        (Some("C"), "fallback_config.retry_count", K::OutOfRange),
        (Some("C"), "fallback_config.retry_delay_ms", K::OutOfRange),
    ];
    assert_eq!(places(&errors), want, "{errors:#?}");
    let shown: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert!(
        shown.contains(
            &"p.json: task `A`: field `constraints.timeout_seconds`: 1e300 is out of range (from 0.1 to 86400 seconds)"
                .to_string()
        ),
        "{shown:#?}"
    );
    assert!(
        shown.iter().any(|s| s.contains("1e-9 is out of range")),
        "{shown:#?}"
    );
}

#[test]
fn every_range_is_in_the_docs() {
    let check = |doc: &str, ranges: &[plexus::base::ranges::NumRange]| {
        let text = std::fs::read_to_string(doc).unwrap_or_else(|e| panic!("{doc}: {e}"));
        for r in ranges {
            let name = format!("`{}`", r.field);
            let (min, max) = (format!("| {} |", r.min), format!("| {} |", r.max));
            assert!(
                text.lines()
                    .any(|l| l.contains(&name) && l.contains(&min) && l.contains(&max)),
                "{doc} has no table row `| {name} | {} | {} |`",
                r.min,
                r.max
            );
        }
    };
    check("docs/plans.md", plexus::base::ranges::PLAN);
    check("docs/providers.md", plexus::base::ranges::CONFIG);
}

#[test]
fn duplicate_keys_are_refused_with_their_line_and_path() {
    use PlanErrorKind as K;
    let text = "{\"plan_id\": \"P\", \"execution_mode\": \"Quick_Assessment\",\n\
        \"tasks\": [{\"task_id\": \"A\", \"agent\": \"scholar\", \"instruction\": \"x\"},\n\
        {\"task_id\": \"B\", \"agent\": \"scholar\", \"instruction\": \"x\",\n\
         \"constraints\": {\"max_tokens\": 100,\n\
                          \"max_tokens\": 200}}],\n\
        \"plan_id\": \"Q\"}";
    let errors = text_errors(text);
    assert_eq!(
        places(&errors),
        vec![
            (None, "tasks[1].constraints.max_tokens", K::DuplicateKey),
            (None, "plan_id", K::DuplicateKey),
        ],
        "{errors:#?}"
    );
    assert_eq!(
        errors[0].message,
        "key `max_tokens` is written twice in the same object, at lines 4 and 5; keep one"
    );
    assert!(
        errors[1].message.contains("lines 1 and 6"),
        "{}",
        errors[1].message
    );
    let errors = text_errors(r#"{"plan_id": "P", "plan_id": "P", "tasks": []}"#);
    assert_eq!(
        errors[0].to_string(),
        "p.json: field `plan_id`: key `plan_id` is written twice in the same object, on line 1; keep one"
    );
}

#[test]
fn a_byte_order_mark_is_skipped() {
    let text = std::fs::read_to_string("fixtures/plans/seed000_task_chain.json").expect("fixture");
    let plan = parse_plan(&format!("\u{feff}{text}"), "p.json").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(plan.tasks.len(), 3);
    // The snapshot stored with a run is the plan without the mark.
    assert!(plan.json.starts_with('{'));
}

#[test]
fn every_type_error_is_reported_at_once_at_its_own_path() {
    use PlanErrorKind as K;
    let text = r#"{"plan_id": "P", "execution_mode": "Quick_Assessment",
        "agents": {"Scholar_Internalizer": {"temperature": true, "max_tokens": 5.5}},
        "tasks": [
          {"task_id": "A", "agent": "scholar", "instruction": "x",
           "constraints": {"max_tokens": "lots", "temperature": "warm", "timeout": 3}},
          {"task_id": "B", "agent": "scholar", "instruction": "x", "depends_on": 5,
           "output_requirements": {"required_fields": ["a", 7]},
           "context": {"paper_info": {"title": 3}},
           "transfer_config": {"mode": "everything"},
           "data_references": [{"ref_type": "file"}, {"ref_type": "web", "url": "u"},
                               {"ref_type": "db_query", "table": "papers", "limit": "ten"}],
           "fallback_config": {"strategy": "retry", "retry_count": "3"}}]}"#;
    let errors = text_errors(text);
    let want: Vec<(Option<&str>, &str, K)> = vec![
        (
            None,
            "agents.Scholar_Internalizer.max_tokens",
            K::OutOfRange,
        ),
        (None, "agents.Scholar_Internalizer.temperature", K::Shape),
        (Some("A"), "constraints.max_tokens", K::Shape),
        (Some("A"), "constraints.temperature", K::Shape),
        (Some("A"), "constraints.timeout", K::UnknownField),
        (Some("B"), "context.paper_info.title", K::Shape),
        (Some("B"), "depends_on", K::Shape),
        (Some("B"), "data_references[0].path", K::Shape),
        (Some("B"), "data_references[1].ref_type", K::Shape),
        (Some("B"), "data_references[2].limit", K::Shape),
        (Some("B"), "transfer_config.mode", K::Shape),
        (Some("B"), "fallback_config.retry_count", K::Shape),
        (
            Some("B"),
            "output_requirements.required_fields[1]",
            K::Shape,
        ),
    ];
    assert_eq!(places(&errors), want, "{errors:#?}");
    assert_eq!(
        errors[2].message,
        "must be a whole number from 1 to 1000000 tokens, not a string"
    );
    assert_eq!(
        errors[6].message,
        "must be an array of strings, not a number"
    );
}

#[test]
fn an_atom_type_with_an_invisible_character_is_refused_at_its_path() {
    let text = r#"{"plan_id": "P", "agents": {"Helper": {"atom_type": "Note\u0007"}}, "tasks": [
        {"task_id": "A", "agent": "Helper", "instruction": "go",
         "output_requirements": {"atom_type": "Cl\u202eaim"}}]}"#;
    let errors = text_errors(text);
    let at = places(&errors);
    assert!(
        at.contains(&(
            Some("A"),
            "output_requirements.atom_type",
            PlanErrorKind::BadId
        )),
        "{errors:?}"
    );
    assert!(
        at.contains(&(None, "agents.Helper.atom_type", PlanErrorKind::BadId)),
        "{errors:?}"
    );
}

/// A batch setting outside its list is refused at its place (`avg` validated and then
/// failed the task when its batches were combined; `batch_priority` was read nowhere,
/// so `importance` validated and did nothing).
#[test]
fn batch_settings_come_from_their_lists() {
    let text = r#"{"plan_id": "P", "tasks": [
          {"task_id": "C", "agent": "scholar", "instruction": "x",
           "data_references": [{"ref_type": "db_query", "table": "papers", "limit": 5}],
           "transfer_config": {"batch_config": {"enabled": true, "batch_size_tokens": 30000,
                                                "overlap_tokens": 0, "max_batches": 3,
                                                "aggregation_strategy": "avg",
                                                "batch_priority": "importance"}}}]}"#;
    let errors = text_errors(text);
    let fields: Vec<&str> = errors.iter().map(|e| e.field.as_str()).collect();
    assert_eq!(
        fields,
        vec![
            "transfer_config.batch_config.aggregation_strategy",
            "transfer_config.batch_config.batch_priority"
        ],
        "{errors:?}"
    );
    let text = errors
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        text.contains("`avg` is not one of merge, vote, latest, weighted"),
        "{text}"
    );
    assert!(
        text.contains("`importance` is not one of chronological"),
        "{text}"
    );
    assert!(
        errors.iter().all(|e| e.task.as_deref() == Some("C")),
        "{text}"
    );
}

/// A `summary_config` is checked where it stands: a ratio over 1 and a misspelt key are
/// refused with their place (it was an unknown key of `transfer_config`).
#[test]
fn a_summary_config_is_checked_at_its_place() {
    use PlanErrorKind as K;
    let text = r#"{"plan_id": "P", "tasks": [
          {"task_id": "C", "agent": "scholar", "instruction": "x",
           "transfer_config": {"summary_strategy": "bullets",
                               "summary_config": {"max_length": 300, "summary_ratio": 2,
                                                  "preserve_field": ["asset_id"]}}}]}"#;
    let errors = text_errors(text);
    let got = places(&errors);
    assert_eq!(got.len(), 3, "{errors:?}");
    for want in [
        (Some("C"), "transfer_config.summary_strategy", K::Shape),
        (
            Some("C"),
            "transfer_config.summary_config.summary_ratio",
            K::OutOfRange,
        ),
        (
            Some("C"),
            "transfer_config.summary_config.preserve_field",
            K::UnknownField,
        ),
    ] {
        assert!(got.contains(&want), "{want:?} in {errors:?}");
    }
    let ok = r#"{"plan_id": "P", "tasks": [
          {"task_id": "C", "agent": "scholar", "instruction": "x",
           "transfer_config": {"summary_config": {"max_length": 300, "summary_ratio": 0.1,
                                                  "preserve_fields": ["asset_id"],
                                                  "summarize_fields": ["content"]}}}]}"#;
    assert!(parse_plan(ok, "p.json").is_ok());
}
