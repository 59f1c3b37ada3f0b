//! `plexus mcp list` and `plexus mcp call` on the test server: tools listed with their
//! schemas (descriptions sanitized on the terminal), calls answered, an error result
//! exits 1, a call past its timeout is cancelled (the server sees it), and the server
//! gets only the environment its table names.

use std::path::Path;

use libtest_mimic::{Failed, Trial};
use serde_json::Value;

use crate::common::bin::{output, plexus, Out};
use crate::server::{MARK_ENV, SERVER_ENV};

/// The tests of this file.
pub fn tests() -> Vec<Trial> {
    vec![
        Trial::test(
            "list_shows_every_tool_with_its_schema_sanitized",
            list_shows_tools,
        ),
        Trial::test("a_call_answers_and_an_error_result_exits_1", calls_answer),
        Trial::test(
            "a_call_past_its_timeout_is_cancelled_at_the_server",
            hang_cancelled,
        ),
        Trial::test("a_server_gets_only_the_environment_it_is_given", env_only),
        Trial::test("a_server_that_cannot_start_is_a_clear_error", cannot_start),
    ]
}

/// A config with the test server as `[mcp.test]` (`timeout_s` given), in `dir`.
fn config(dir: &Path, timeout_s: f64) -> std::path::PathBuf {
    let me = std::env::current_exe().expect("the test binary");
    let mark = dir.join("mark");
    let text = format!(
        "[mcp.test]\ncommand = {:?}\ntimeout_s = {timeout_s}\nenv = {{ {SERVER_ENV} = \"1\", {MARK_ENV} = {:?} }}\n",
        me.display().to_string(),
        mark.display().to_string()
    );
    let path = dir.join("plexus.toml");
    std::fs::write(&path, text).expect("config");
    path
}

fn mcp(dir: &Path, timeout_s: f64, args: &[&str]) -> Out {
    let cfg = config(dir, timeout_s);
    output(
        plexus(dir)
            .env("PLEXUS_CONFIG", cfg)
            .env("PLEXUS_TEST_SECRET_KEY", "sk-do-not-pass")
            .arg("mcp")
            .args(args),
    )
}

fn check(ok: bool, what: String) -> Result<(), Failed> {
    if ok {
        Ok(())
    } else {
        Err(what.into())
    }
}

fn list_shows_tools() -> Result<(), Failed> {
    let tmp = tempfile::tempdir()?;
    let out = mcp(tmp.path(), 10.0, &["list", "--json"]);
    check(out.code == Some(0), format!("{out:?}"))?;
    let listed: Value = serde_json::from_str(&out.stdout)?;
    let tools: Vec<&str> = listed[0]["tools"]
        .as_array()
        .map(|t| t.iter().filter_map(|t| t["name"].as_str()).collect())
        .unwrap_or_default();
    check(
        tools == ["echo", "fail", "hang", "env", "loud"],
        format!("{tools:?}"),
    )?;
    let echo = &listed[0]["tools"][0]["input_schema"]["properties"]["text"]["type"];
    check(echo == "string", format!("{listed:#}"))?;
    // On the terminal no escape sequence of a description gets through.
    let text = mcp(tmp.path(), 10.0, &["list"]);
    check(text.code == Some(0), format!("{text:?}"))?;
    check(
        text.stdout.contains("loud") && text.stdout.contains("red"),
        text.stdout.clone(),
    )?;
    check(
        !text.stdout.contains('\u{1b}') && !text.stdout.contains('\u{7}'),
        format!("{:?}", text.stdout),
    )
}

fn calls_answer() -> Result<(), Failed> {
    let tmp = tempfile::tempdir()?;
    let out = mcp(
        tmp.path(),
        10.0,
        &[
            "call",
            "test",
            "echo",
            "--args",
            r#"{"text": "hello there"}"#,
        ],
    );
    check(
        out.code == Some(0) && out.stdout.trim() == "hello there",
        format!("{out:?}"),
    )?;
    let out = mcp(tmp.path(), 10.0, &["call", "test", "fail"]);
    check(out.code == Some(1), format!("{out:?}"))?;
    check(
        out.stdout.contains("answered an error") && out.stdout.contains("the disk is on fire"),
        format!("{out:?}"),
    )?;
    let out = mcp(tmp.path(), 10.0, &["call", "test", "echo", "--args", "[1]"]);
    check(
        out.code != Some(0) && out.stderr.contains("JSON object"),
        format!("{out:?}"),
    )?;
    let out = mcp(tmp.path(), 10.0, &["call", "nope", "echo"]);
    check(
        out.code != Some(0) && out.stderr.contains("servers: test"),
        format!("{out:?}"),
    )
}

fn hang_cancelled() -> Result<(), Failed> {
    let tmp = tempfile::tempdir()?;
    let out = mcp(tmp.path(), 1.0, &["call", "test", "hang"]);
    check(out.code != Some(0), format!("{out:?}"))?;
    check(
        out.stderr.contains("took longer than 1 s (cancelled)"),
        format!("{out:?}"),
    )?;
    // The server was told: it wrote its mark (give it a moment to).
    let mark = tmp.path().join("mark");
    for _ in 0..50 {
        if mark.exists() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    check(
        std::fs::read_to_string(&mark).unwrap_or_default() == "cancelled",
        "no cancellation reached the server".into(),
    )
}

fn env_only() -> Result<(), Failed> {
    let tmp = tempfile::tempdir()?;
    let out = mcp(tmp.path(), 10.0, &["call", "test", "env"]);
    check(out.code == Some(0), format!("{out:?}"))?;
    let names: Vec<&str> = out.stdout.trim().split(',').collect();
    check(
        !names.contains(&"PLEXUS_TEST_SECRET_KEY") && !names.contains(&"PLEXUS_CONFIG"),
        format!("{names:?}"),
    )?;
    check(
        names.contains(&SERVER_ENV) && names.contains(&MARK_ENV),
        format!("{names:?}"),
    )?;
    let allowed = ["PATH", "HOME", "LANG", "TMPDIR", SERVER_ENV, MARK_ENV];
    check(
        names.iter().all(|n| allowed.contains(n)),
        format!("{names:?}"),
    )
}

fn cannot_start() -> Result<(), Failed> {
    let tmp = tempfile::tempdir()?;
    std::fs::write(
        tmp.path().join("bad.toml"),
        "[mcp.gone]\ncommand = \"/nonexistent/server\"\n",
    )?;
    let out = output(
        plexus(tmp.path())
            .env("PLEXUS_CONFIG", tmp.path().join("bad.toml"))
            .args(["mcp", "list"]),
    );
    check(out.code == Some(1), format!("{out:?}"))?;
    check(
        out.stdout.contains("cannot start `/nonexistent/server`"),
        format!("{out:?}"),
    )
}
