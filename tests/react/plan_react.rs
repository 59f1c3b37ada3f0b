//! The tool-using fields of a plan: a task's `tools`, `skills`, `max_steps` and
//! `token_budget`, an agent's `tools` and `skills` as its default; bad values are
//! refused naming the field.

use plexus::model::plan::{load_plan_file, parse_plan};

#[test]
fn the_fixture_gives_each_task_its_tools_and_skills() {
    let plan = load_plan_file(std::path::Path::new("fixtures/plans/react_tools.json"))
        .expect("the fixture is valid");
    let lookup = plan.react_for(&plan.tasks[0]).expect("tools");
    // The agent's defaults.
    assert_eq!(lookup.tools, ["file_search", "file_reader", "get_now"]);
    assert_eq!(lookup.skills, ["literature-review"]);
    assert_eq!(
        lookup.max_steps,
        plexus::model::plan::react::DEFAULT_MAX_STEPS
    );
    // The task's own lists win, an empty list included.
    let schedule = plan.react_for(&plan.tasks[1]).expect("tools");
    assert_eq!(schedule.tools, ["calculate_date", "atom_query"]);
    assert!(schedule.skills.is_empty());
    assert_eq!(schedule.max_steps, 6);
}

#[test]
fn a_task_without_tools_or_skills_runs_no_loop() {
    let plan = load_plan_file(std::path::Path::new(
        "fixtures/plans/avp_diffusion_planner.json",
    ))
    .expect("valid");
    assert!(plan.tasks.iter().all(|t| plan.react_for(t).is_none()));
}

fn errors(task_extra: &str, agent_extra: &str) -> String {
    let text = format!(
        r#"{{"plan_id": "P", "execution_mode": "Quick_Assessment",
            "agents": {{"R": {{ {agent_extra} }} }},
            "tasks": [{{"task_id": "T", "agent": "R", "instruction": "x" {task_extra} }}]}}"#
    );
    match parse_plan(&text, "p.json") {
        Ok(_) => String::new(),
        Err(e) => e.to_string(),
    }
}

#[test]
fn bad_tool_fields_are_refused_naming_the_field() {
    assert_eq!(errors(r#", "tools": ["get_now"]"#, ""), "");
    let e = errors(r#", "tools": ["get_now", "rm_rf"]"#, "");
    assert!(
        e.contains("tools[1]") && e.contains("unknown tool `rm_rf`"),
        "{e}"
    );
    let e = errors(r#", "skills": ["../etc"]"#, "");
    assert!(
        e.contains("skills[0]") && e.contains("plain folder name"),
        "{e}"
    );
    let e = errors(r#", "tools": "get_now""#, "");
    assert!(e.contains("tools"), "{e}");
    let e = errors(r#", "tools": ["get_now"], "max_steps": 0"#, "");
    assert!(
        e.contains("max_steps") && e.contains("from 1 to 100"),
        "{e}"
    );
    let e = errors(r#", "max_steps": 101"#, "");
    assert!(e.contains("max_steps"), "{e}");
    let e = errors(r#", "token_budget": 0"#, "");
    assert!(e.contains("token_budget"), "{e}");
    let e = errors("", r#""tools": ["teleport"]"#);
    assert!(
        e.contains("agents.R.tools[0]") && e.contains("teleport"),
        "{e}"
    );
    let e = errors("", r#""skills": ["a/b"]"#);
    assert!(e.contains("agents.R.skills[0]"), "{e}");
}
