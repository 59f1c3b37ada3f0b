//! `plexus show` reports the metrics of each tool-using loop (its conversation id, time,
//! the model's tokens in and out, tool calls per tool with success rate and retries)
//! and the same across the run: a section for a person, the numbers in `--json`.

use crate::common;
use crate::react_run::{run_offline, workspace};

use common::bin::{output, plexus};
use serde_json::Value;

/// `v[key]` as a number (an integer or a float).
fn num(v: &Value, key: &str) -> f64 {
    v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} is not a number in {v}"))
}

/// The per-tool rows of `stats` as `(tool, calls, successes, retries)`.
fn rows(stats: &Value) -> Vec<(String, u64, u64, u64)> {
    stats
        .as_array()
        .expect("tool_stats")
        .iter()
        .map(|s| {
            (
                s["tool_name"].as_str().unwrap_or_default().to_string(),
                s["calls"].as_u64().unwrap_or_default(),
                s["successes"].as_u64().unwrap_or_default(),
                s["retries"].as_u64().unwrap_or_default(),
            )
        })
        .collect()
}

#[test]
fn show_reports_each_loop_and_every_tool_across_the_run() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    workspace(dir);
    run_offline(dir, "m.db", "plan.json");
    let show = output(plexus(dir).args(["--db", "m.db", "show", "latest", "--json"]));
    assert_eq!(show.code, Some(0), "{}", show.stderr);
    let v: Value = serde_json::from_str(&show.stdout).expect("show --json");
    let loops = v["tool_loops"].as_array().expect("tool_loops");
    assert_eq!(loops.len(), 2, "{v:#}");
    let mut all_calls = 0;
    let mut all_in = 0;
    for l in loops {
        // The conversation is the invocation the loop ran in.
        let id = l["conversation_id"].as_str().expect("conversation_id");
        assert!(id.starts_with("INV_"), "{l:#}");
        assert_eq!(l["invocation_id"], id);
        // The model's tokens, in and out apart, make up the total.
        let (i, o) = (num(l, "input_tokens"), num(l, "output_tokens"));
        assert!(i > 0.0 && o > 0.0, "{l:#}");
        assert_eq!(i + o, num(l, "total_tokens"), "{l:#}");
        assert!(num(l, "duration_ms") >= 0.0, "{l:#}");
        // The calls added up, in all and per tool.
        let calls = l["tool_calls"].as_array().expect("tool_calls");
        let totals = &l["tool_totals"];
        assert_eq!(num(totals, "calls") as usize, calls.len(), "{l:#}");
        let ok = calls.iter().filter(|c| c["success"] == true).count();
        assert_eq!(num(totals, "successes") as usize, ok, "{l:#}");
        let rate = ok as f64 / calls.len() as f64;
        assert!((num(totals, "success_rate") - rate).abs() < 1e-9, "{l:#}");
        let per_tool = rows(&l["tool_stats"]);
        let counted: u64 = per_tool.iter().map(|r| r.1).sum();
        assert_eq!(counted as usize, calls.len(), "{l:#}");
        all_calls += calls.len();
        all_in += i as u64;
    }
    // The lookup's loop: two skills activated, the way back refused (an error).
    let lookup = &loops[0];
    assert_eq!(lookup["task_id"], "TASK_LOOKUP_01");
    let activations = rows(&lookup["tool_stats"])
        .into_iter()
        .find(|r| r.0 == "activate_skill")
        .expect("activate_skill");
    assert_eq!((activations.1, activations.2), (3, 2), "{lookup:#}");
    // Across the run: the loops added up, per tool too.
    let run = &v["tool_metrics"];
    assert_eq!(run["loops"], 2, "{run:#}");
    assert_eq!(num(&run["tool_totals"], "calls") as usize, all_calls);
    assert_eq!(num(run, "input_tokens") as u64, all_in, "{run:#}");
    let tools: Vec<String> = rows(&run["tool_stats"]).into_iter().map(|r| r.0).collect();
    for want in [
        "activate_skill",
        "atom_query",
        "calculate_date",
        "file_search",
    ] {
        assert!(tools.iter().any(|t| t == want), "{want}: {run:#}");
    }
    // The section for a person says the same, within 80 columns.
    let text = output(plexus(dir).args(["--db", "m.db", "show", "latest"]));
    assert_eq!(text.code, Some(0), "{}", text.stderr);
    let out = &text.stdout;
    let conv = lookup["conversation_id"].as_str().unwrap_or_default();
    for want in [
        "tool-using loops (2)".to_string(),
        format!("  TASK_LOOKUP_01 · conversation {conv}"),
        format!("    ended     answer after {} steps", lookup["steps"]),
        format!(
            "    tokens    {} in, {} out, {} in all",
            lookup["input_tokens"], lookup["output_tokens"], lookup["total_tokens"]
        ),
        format!(
            "    tools     {} calls, 86% succeeded, 0 retries, 0 cached",
            lookup["tool_calls"].as_array().map_or(0, Vec::len)
        ),
        "    refused   ".to_string(),
        "TOOL".to_string(),
        "tools across the run (2 loops)".to_string(),
    ] {
        assert!(out.contains(&want), "`{want}` missing:\n{out}");
    }
    let row = out
        .lines()
        .find(|l| l.starts_with("    activate_skill "))
        .expect("the lookup's activate_skill row");
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(cells[..4], ["activate_skill", "3", "67%", "0"], "{row}");
    let section = out
        .lines()
        .skip_while(|l| !l.starts_with("tool-using loops"))
        .take_while(|l| !l.starts_with("events by kind"));
    for line in section {
        assert!(line.chars().count() <= 80, "wider than 80: {line}");
    }
}
