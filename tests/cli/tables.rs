//! The human tables line up by display width: with Chinese (double-width) task ids,
//! agent names, plan ids and profile names, and with long profile names, every row's
//! columns start at the same terminal column as the header's — in `runs`, `show`,
//! `providers`, the review queue and the headless summary.

use crate::common;

use std::collections::HashMap;
use std::path::Path;

use common::bin::{output, plexus, run_fast, Out};
use plexus::cli::launch::{start, Globals, RunConfig};
use plexus::data::provider::{Fault, SimConfig};
use plexus::model::event::RunStatus;
use plexus::model::plan::parse_plan;
use unicode_width::UnicodeWidthStr;
use Edge::{L, R};

/// A plan whose ids and agent names are partly Chinese, partly long ASCII.
fn plan() -> String {
    serde_json::json!({
        "plan_id": "计划_表格对齐",
        "execution_mode": "Deep_Internalization",
        "agents": {
            "学者": {"system_prompt": "你是学者。", "atom_type": "claim"},
            "Very_Long_Agent_Name_For_Tables": {"system_prompt": "You read.", "atom_type": "claim"}
        },
        "tasks": [
            {"task_id": "调研_论文甲", "agent": "学者", "instruction": "读论文。"},
            {"task_id": "plain_ascii_task", "agent": "Very_Long_Agent_Name_For_Tables", "instruction": "Read."},
            {"task_id": "汇总", "agent": "学者", "instruction": "汇总。", "depends_on": ["调研_论文甲"]}
        ]
    })
    .to_string()
}

/// Display column where each of `cells` starts in `line`, looked for left to right.
fn starts(line: &str, cells: &[&str]) -> Vec<usize> {
    let mut from = 0;
    cells
        .iter()
        .map(|c| {
            let at = from
                + line[from..]
                    .find(c)
                    .unwrap_or_else(|| panic!("{c:?} not in {line:?} after byte {from}"));
            from = at + c.len();
            line[..at].width()
        })
        .collect()
}

/// The one line of `text` that starts with `first` (after leading spaces).
fn line_of<'a>(text: &'a str, first: &str) -> &'a str {
    let found: Vec<&str> = text
        .lines()
        .filter(|l| l.trim_start().starts_with(first))
        .collect();
    assert_eq!(found.len(), 1, "one line starting {first:?} in:\n{text}");
    found[0]
}

/// Where a column's cells line up: their first or their last display column.
#[derive(Clone, Copy)]
enum Edge {
    /// Left-aligned (text).
    L,
    /// Right-aligned (numbers).
    R,
}

/// The edge of each of `cells` in `line` (found left to right): the display column
/// where it starts (`L`) or just after it (`R`).
fn edges(line: &str, cells: &[&str], how: &[Edge]) -> Vec<usize> {
    starts(line, cells)
        .into_iter()
        .zip(cells.iter().zip(how))
        .map(|(s, (c, e))| match e {
            Edge::L => s,
            Edge::R => s + c.width(),
        })
        .collect()
}

/// Asserts that every row's cells (given in column order; a column may be left out of
/// all of them) have their edges where the header's names do.
fn aligned(text: &str, header: &[(&str, Edge)], rows: &[Vec<&str>]) {
    let names: Vec<&str> = header.iter().map(|h| h.0).collect();
    let how: Vec<Edge> = header.iter().map(|h| h.1).collect();
    let want = edges(line_of(text, names[0]), &names, &how);
    for cells in rows {
        let line = line_of(text, cells[0]);
        assert_eq!(
            edges(line, cells, &how),
            want,
            "columns of {line:?}:\n{text}"
        );
    }
}

fn ok(o: Out, what: &str) -> Out {
    assert_eq!(o.code, Some(0), "{what}: {}\n{}", o.stdout, o.stderr);
    o
}

#[test]
fn show_runs_and_the_summary_line_up_with_chinese_ids_and_agent_names() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("plan.json"), plan()).expect("plan");
    let db = dir.path().join("t.db");
    let cli = |args: &[&str]| output(plexus(dir.path()).arg("--db").arg(&db).args(args));
    let run = ok(run_fast(dir.path(), &db, "plan.json"), "run");

    // The summary's tokens per agent: names under the title, numbers under theirs.
    let tokens = &run.stdout[run.stdout.find("tokens per agent").expect("summary")..];
    let tokens = &tokens[..tokens.find("\n\n").unwrap_or(tokens.len())];
    let numbers = |name: &str| -> Vec<String> {
        let l = line_of(tokens, name);
        l.trim_start()[name.len()..]
            .split_whitespace()
            .map(String::from)
            .collect()
    };
    let header = ["invocations", "prompt", "output"];
    let want = edges(line_of(tokens, "tokens per agent"), &header, &[R, R, R]);
    for name in ["学者", "Very_Long_Agent_Name_For_Tables"] {
        let line = line_of(tokens, name);
        assert!(line.starts_with(&format!("  {name}")), "{tokens}");
        let n = numbers(name);
        let cells: Vec<&str> = n.iter().map(String::as_str).collect();
        assert_eq!(edges(line, &cells, &[R, R, R]), want, "{line:?}:\n{tokens}");
    }

    let show = ok(cli(&["show", "latest"]), "show").stdout;
    aligned(
        &show,
        &[("TASK", L), ("AGENT", L), ("STATUS", L), ("ATTEMPTS", R)],
        &[
            vec!["调研_论文甲", "学者", "success", "1"],
            vec![
                "plain_ascii_task",
                "Very_Long_Agent_Name_For_Tables",
                "success",
                "1",
            ],
            vec!["汇总", "学者", "success", "1"],
        ],
    );
    let per_agent = &show[show.find("\nAGENT").expect("tokens per agent")..];
    let per_agent = &per_agent[..per_agent.find("\n\n").unwrap_or(per_agent.len())];
    let numbers = |name: &str| -> Vec<String> {
        line_of(per_agent, name)[name.len()..]
            .split_whitespace()
            .map(String::from)
            .collect()
    };
    let (a, b) = (numbers("学者"), numbers("Very_Long_Agent_Name_For_Tables"));
    aligned(
        per_agent,
        &[
            ("AGENT", L),
            ("INVOCATIONS", R),
            ("PROMPT TOK", R),
            ("OUTPUT TOK", R),
        ],
        &[
            vec!["学者", &a[0], &a[1], &a[2]],
            vec!["Very_Long_Agent_Name_For_Tables", &b[0], &b[1], &b[2]],
        ],
    );

    let runs = ok(cli(&["runs"]), "runs").stdout;
    let row: Vec<&str> = runs
        .lines()
        .nth(1)
        .expect("a run row")
        .split_whitespace()
        .collect();
    assert_eq!(row.len(), 9, "{runs}");
    assert_eq!(row[6], "—", "no price: the cost is unknown, not 0: {runs}");
    assert_eq!(
        (row[1], row[2], row[3]),
        ("succeeded", "计划_表格对齐", "3")
    );
    aligned(
        &runs,
        &[
            ("RUN", L),
            ("STATUS", L),
            ("PLAN", L),
            ("TASKS", R),
            ("EVENTS", R),
            ("ATOMS", R),
            ("COST", R),
            ("CREATED", L),
            ("PROVIDER", L),
        ],
        &[row],
    );
}

#[test]
fn providers_line_up_with_chinese_and_long_profile_names() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("plexus.toml"),
        r#"
[providers."本地模型"]
kind = "openai"
base_url = "http://127.0.0.1:9/v1"
model = "通义千问-7b"
concurrency = 3

[providers.a_rather_long_profile_name_for_the_team]
kind = "anthropic"
base_url = "http://127.0.0.1:9"
model = "claude"
rate_limit_rpm = 60
"#,
    )
    .expect("config");
    let o = ok(
        output(
            plexus(dir.path())
                .args(["--config", "plexus.toml", "providers"])
                .env_remove("PLEXUS_CONFIG"),
        ),
        "providers",
    );
    aligned(
        &o.stdout,
        &[
            ("NAME", L),
            ("KIND", L),
            ("MODEL", L),
            ("BASE_URL", L),
            ("KEY", L),
            ("CONC", R),
            ("RPM", R),
        ],
        &[
            vec![
                "本地模型",
                "openai",
                "通义千问-7b",
                "http://127.0.0.1:9/v1",
                "no key",
                "3",
                "-",
            ],
            vec![
                "a_rather_long_profile_name_for_the_team",
                "anthropic",
                "claude",
                "http://127.0.0.1:9",
                "no key",
                "256",
                "60",
            ],
            vec![
                "simulated",
                "simulated",
                "simulated",
                "(built in, offline)",
                "no key",
                "256",
                "-",
            ],
        ],
    );
}

fn globals(db: &Path) -> Globals {
    Globals {
        db: db.to_path_buf(),
        seed: None,
        concurrency: None,
        max_cost: None,
        headless: true,
        provider: None,
        config: None,
        loaded: None,
        otlp: None,
    }
}

#[tokio::test]
async fn the_review_queue_lines_up_with_chinese_task_ids() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("r.db");
    let mut queued = Vec::new();
    for task in ["甲任务", "B"] {
        let config = RunConfig {
            engine: common::test_config(),
            simulated: SimConfig {
                script: HashMap::from([(task.to_string(), vec![Fault::Hallucination])]),
                ..common::quick_sim()
            },
            provider: "simulated".into(),
            replay: None,
        };
        let json = common::one_task_plan("").replace("\"A\"", &format!("\"{task}\""));
        let plan = parse_plan(&json, "test plan").expect("plan");
        let s = start(&globals(&db), plan, config, None, false).expect("start");
        let run = s.run_id.clone();
        assert_eq!(s.finish().await.expect("ends"), RunStatus::AwaitingReview);
        queued.push((run, task));
    }
    let o = ok(
        output(plexus(dir.path()).arg("--db").arg(&db).arg("review")),
        "review",
    );
    let rows: Vec<Vec<&str>> = queued
        .iter()
        .map(|(run, task)| {
            let cells: Vec<&str> = line_of(&o.stdout, run).split_whitespace().collect();
            assert_eq!((cells.len(), cells[1]), (9, *task), "{}", o.stdout);
            cells
        })
        .collect();
    aligned(
        &o.stdout,
        &[
            ("RUN", L),
            ("TASK", L),
            ("AGENT", L),
            ("INVOCATION", L),
            ("TRY", R),
            ("FABRICATED", L),
            ("ATOMS", R),
            ("SCORE", R),
            ("STATE", L),
        ],
        &rows,
    );
}
