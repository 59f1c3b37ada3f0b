//! The built-in tools through the executor: workspace escapes refused, file searches,
//! line ranges, bound SQL values, the cache and the definitions given to the model.

use std::path::Path;

use plexus::run::tools::{ToolCache, ToolClock, ToolContext, ToolRegistry};
use serde_json::{json, Value};

use super::common::{assert_error, call, run};

/// A workspace with a few files, and a folder outside it.
struct Fixture {
    _dir: tempfile::TempDir,
    ws: std::path::PathBuf,
    outside: std::path::PathBuf,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().expect("tempdir");
    let ws = dir.path().join("ws");
    let outside = dir.path().join("outside");
    for d in [ws.join("docs/notes"), ws.join("src"), outside.clone()] {
        std::fs::create_dir_all(&d).expect("mkdir");
    }
    let write = |p: &Path, s: &str| std::fs::write(p, s).expect("write");
    write(&ws.join("README.md"), "# Title\nhello world\nbye\n");
    write(
        &ws.join("docs/plan.md"),
        "one\ntwo HELLO\nthree\nfour\nfive\n",
    );
    write(&ws.join("docs/notes/n.md"), "hello again\n");
    write(&ws.join("src/lib.rs"), "fn hello() {}\n");
    write(&ws.join("blob.bin"), "ab\0cd");
    write(&outside.join("secret.md"), "hello secret\n");
    Fixture {
        _dir: dir,
        ws,
        outside,
    }
}

pub async fn tool(
    ctx: &ToolContext,
    name: &str,
    args: Value,
) -> plexus::base::protocol::messages::ToolResultMessage {
    let reg = ToolRegistry::with_builtins();
    run(&call(name, args, None), ctx, &reg, None).await.0.result
}

#[tokio::test]
async fn file_reader_refuses_to_leave_the_workspace() {
    let f = fixture();
    let ctx = ToolContext::new(&f.ws);
    let secret = f.outside.join("secret.md");
    #[cfg(unix)]
    std::os::unix::fs::symlink(&secret, f.ws.join("link.md")).expect("symlink");
    let mut paths = vec![
        "../outside/secret.md".to_string(),
        "docs/../../outside/secret.md".to_string(),
        secret.display().to_string(),
        "/etc/passwd".to_string(),
    ];
    if cfg!(unix) {
        paths.push("link.md".into());
    }
    for p in paths {
        let r = tool(&ctx, "file_reader", json!({ "path": p })).await;
        assert_error(&r, "permission_denied", "PERMISSION_DENIED");
        assert!(!r.observation.contains("hello secret"));
    }
    let r = tool(&ctx, "file_reader", json!({"path": "/workspace/README.md"})).await;
    assert!(
        r.success && r.observation.contains("2 | hello world"),
        "{}",
        r.observation
    );
    let r = tool(&ctx, "file_reader", json!({"path": "missing.md"})).await;
    assert_error(&r, "not_found", "NOT_FOUND");
}

#[tokio::test]
async fn file_search_refuses_to_leave_the_workspace() {
    let f = fixture();
    let ctx = ToolContext::new(&f.ws);
    for p in ["../**", "../outside/*.md", "/etc/*", "docs/../../**/*.md"] {
        let r = tool(&ctx, "file_search", json!({ "pattern": p })).await;
        assert_error(&r, "permission_denied", "PERMISSION_DENIED");
    }
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(&f.outside, f.ws.join("out_dir")).expect("symlink");
        std::os::unix::fs::symlink(f.outside.join("secret.md"), f.ws.join("out.md"))
            .expect("symlink");
        let r = tool(
            &ctx,
            "file_search",
            json!({"pattern": "**/*.md", "text": "hello"}),
        )
        .await;
        assert!(r.success, "{}", r.observation);
        assert!(!r.observation.contains("secret"), "{}", r.observation);
        assert!(
            r.observation.contains("Ignored 2 links leading out"),
            "{}",
            r.observation
        );
        let r = tool(&ctx, "file_search", json!({"pattern": "out_dir/*.md"})).await;
        assert_error(&r, "permission_denied", "PERMISSION_DENIED");
    }
}

#[tokio::test]
async fn file_search_lists_paths_and_lines() {
    let f = fixture();
    let ctx = ToolContext::new(&f.ws);
    let r = tool(&ctx, "file_search", json!({"pattern": "**/*.md"})).await;
    assert!(
        r.observation
            .starts_with("Found 3 files matching `**/*.md`."),
        "{}",
        r.observation
    );
    assert!(
        r.observation
            .ends_with("\nREADME.md\ndocs/plan.md\ndocs/notes/n.md"),
        "{}",
        r.observation
    );
    let r = tool(&ctx, "file_search", json!({"pattern": "*.md"})).await;
    assert!(
        r.observation.ends_with("files matching `*.md`.\nREADME.md"),
        "{}",
        r.observation
    );
    let r = tool(
        &ctx,
        "file_search",
        json!({"pattern": "docs/**/*.md", "text": "hello", "case_sensitive": false}),
    )
    .await;
    assert!(
        r.observation
            .contains("\ndocs/plan.md:2: two HELLO\ndocs/notes/n.md:1: hello again"),
        "{}",
        r.observation
    );
    let r = tool(
        &ctx,
        "file_search",
        json!({"pattern": "**/*", "text": "h.l+o\\(", "regex": true}),
    )
    .await;
    assert!(
        r.observation.contains("src/lib.rs:1: fn hello() {}"),
        "{}",
        r.observation
    );
    assert!(r.observation.contains("1 binary"), "{}", r.observation);
    let r = tool(
        &ctx,
        "file_search",
        json!({"pattern": "**/*.md", "max_results": 2}),
    )
    .await;
    assert!(
        r.observation
            .contains("stopped early (reached the limit of 2 results)"),
        "{}",
        r.observation
    );
    let r = tool(
        &ctx,
        "file_search",
        json!({"pattern": "**/*", "text": "(", "regex": true}),
    )
    .await;
    assert_error(&r, "validation_error", "INVALID_ARGUMENTS");
    let r = tool(&ctx, "file_search", json!({"pattern": "nowhere/*.md"})).await;
    assert!(
        r.observation.starts_with("No files match"),
        "{}",
        r.observation
    );
}

#[tokio::test]
async fn file_reader_reads_line_ranges() {
    let f = fixture();
    let ctx = ToolContext::new(&f.ws);
    let r = tool(
        &ctx,
        "file_reader",
        json!({"path": "docs/plan.md", "start_line": 2, "end_line": 4}),
    )
    .await;
    assert_eq!(
        r.observation,
        "Read lines 2–4 of `docs/plan.md` (5 lines, 20 characters shown).\n2 | two HELLO\n3 | three\n4 | four"
    );
    let r = tool(
        &ctx,
        "file_reader",
        json!({"path": "docs/plan.md", "start_line": 5, "end_line": 50}),
    )
    .await;
    assert!(r.observation.ends_with("\n5 | five"), "{}", r.observation);
    let r = tool(
        &ctx,
        "file_reader",
        json!({"path": "docs/plan.md", "start_line": 6}),
    )
    .await;
    assert_error(&r, "validation_error", "INVALID_ARGUMENTS");
    assert!(r.observation.contains("which has 5 lines"));
    let r = tool(
        &ctx,
        "file_reader",
        json!({"path": "docs/plan.md", "start_line": 3, "end_line": 2}),
    )
    .await;
    assert_error(&r, "validation_error", "INVALID_ARGUMENTS");
    let r = tool(&ctx, "file_reader", json!({"path": "blob.bin"})).await;
    assert_error(&r, "validation_error", "BINARY_FILE");
    let big = std::fs::File::create(f.ws.join("big.txt")).expect("create");
    big.set_len(11 << 20).expect("sparse file");
    let r = tool(&ctx, "file_reader", json!({"path": "big.txt"})).await;
    assert_error(&r, "validation_error", "FILE_TOO_LARGE");
    let r = tool(&ctx, "file_reader", json!({"path": "docs"})).await;
    assert_error(&r, "validation_error", "INVALID_ARGUMENTS");
}

fn atoms_db(dir: &Path) -> std::path::PathBuf {
    let db = dir.join("plexus.db");
    let conn = plexus::data::store::open_connection(&db).expect("db");
    let rows = [
        (
            "a1",
            "r1",
            "t1",
            "scholar",
            "concept",
            "A",
            0.9,
            r#"{"text": "it's a quote"}"#,
            "2024-01-01T00:00:01Z",
        ),
        (
            "a2",
            "r1",
            "t2",
            "critic",
            "method",
            "B",
            0.7,
            r#"{"text": "plain"}"#,
            "2024-01-01T00:00:02Z",
        ),
        (
            "a3",
            "r2",
            "t1",
            "scholar",
            "concept",
            "A",
            0.95,
            r#"{"text": "other run"}"#,
            "2024-01-01T00:00:03Z",
        ),
    ];
    for (id, run, task, agent, kind, grade, score, content, at) in rows {
        conn.execute(
            "INSERT INTO knowledge_atoms (atom_id, run_id, task_id, agent, atom_type, grade, score, content, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            rusqlite::params![id, run, task, agent, kind, grade, score, content, at],
        )
        .expect("insert");
    }
    db
}

fn atom_count(db: &Path) -> i64 {
    let conn = rusqlite::Connection::open(db).expect("open");
    conn.query_row("SELECT COUNT(*) FROM knowledge_atoms", [], |r| r.get(0))
        .expect("table still there")
}

#[tokio::test]
async fn atom_query_binds_every_value() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = atoms_db(dir.path());
    let ctx = ToolContext::new(dir.path()).with_db(&db);
    let r = tool(&ctx, "atom_query", json!({"run_id": "r1"})).await;
    assert!(
        r.observation
            .starts_with("Found 2 atoms for run_id=r1 (showing 2, newest first)."),
        "{}",
        r.observation
    );
    assert!(
        r.observation
            .contains("\n- a2 [B 0.70] critic/method task t2: {\"text\":\"plain\"}"),
        "{}",
        r.observation
    );
    let r = tool(
        &ctx,
        "atom_query",
        json!({"grade": "a", "agent": "scholar", "limit": 1}),
    )
    .await;
    assert!(
        r.observation.contains("Found 2 atoms") && r.observation.contains("showing 1"),
        "{}",
        r.observation
    );
    assert!(
        r.observation.contains("- a3 "),
        "newest first: {}",
        r.observation
    );
    let r = tool(&ctx, "atom_query", json!({"text": "IT'S A"})).await;
    assert!(
        r.observation.starts_with("Found 1 atoms") && r.observation.contains("- a1 "),
        "{}",
        r.observation
    );
    for evil in [
        "r1'; DROP TABLE knowledge_atoms; --",
        "r1' OR '1'='1",
        "\"; DELETE FROM knowledge_atoms; --",
    ] {
        for field in ["run_id", "text", "agent"] {
            let r = tool(&ctx, "atom_query", json!({ field: evil })).await;
            assert!(r.success, "{}", r.observation);
            assert!(
                r.observation.starts_with("No atoms"),
                "{field}={evil}: {}",
                r.observation
            );
        }
    }
    assert_eq!(atom_count(&db), 3);
    let r = tool(&ctx, "atom_query", json!({"min_score": 0.8, "limit": 500})).await;
    assert_error(&r, "validation_error", "INVALID_ARGUMENTS");
}

#[tokio::test]
async fn atom_query_without_a_database() {
    let dir = tempfile::tempdir().expect("tempdir");
    let r = tool(&ToolContext::new(dir.path()), "atom_query", json!({})).await;
    assert_error(&r, "not_found", "NO_DATABASE");
    assert!(r.observation.contains("no database"));
    let ctx = ToolContext::new(dir.path()).with_db(dir.path().join("none.db"));
    let r = tool(&ctx, "atom_query", json!({})).await;
    assert_error(&r, "not_found", "NOT_FOUND");
    assert!(!dir.path().join("none.db").exists(), "nothing is created");
}

#[tokio::test]
async fn builtin_cache_rules() {
    let f = fixture();
    let ctx = ToolContext::new(&f.ws)
        .with_clock(ToolClock::Fixed("2024-03-10T07:00:00Z".parse().expect("t")));
    let reg = ToolRegistry::with_builtins();
    let cache = ToolCache::default();
    let twice = |name: &'static str, args: Value| {
        let (reg, cache, ctx) = (&reg, &cache, &ctx);
        async move {
            let a = run(&call(name, args.clone(), None), ctx, reg, Some(cache))
                .await
                .0;
            let b = run(&call(name, args, None), ctx, reg, Some(cache)).await.0;
            assert!(!a.cached);
            b.cached
        }
    };
    assert!(twice("file_reader", json!({"path": "README.md"})).await);
    assert!(twice("file_search", json!({"pattern": "**/*.md"})).await);
    assert!(
        twice(
            "calculate_date",
            json!({"base_date": "2024-01-01", "days": 3})
        )
        .await
    );
    assert!(
        !twice("calculate_date", json!({"days": 3})).await,
        "today changes"
    );
    assert!(
        !twice("get_now", json!({})).await,
        "get_now is never cached"
    );
    assert_eq!(cache.len(), 3);
}

#[test]
fn definitions_for_the_model() {
    let defs = ToolRegistry::with_builtins().definitions();
    let names: Vec<&str> = defs.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "atom_query",
            "calculate_date",
            "file_reader",
            "file_search",
            "get_now"
        ]
    );
    for d in &defs {
        assert_eq!(d.input_schema["type"], "object", "{}", d.name);
        assert!(d.input_schema["properties"].is_object(), "{}", d.name);
        assert!(!d.description.is_empty());
    }
    let reader = defs
        .iter()
        .find(|d| d.name == "file_reader")
        .expect("reader");
    assert_eq!(reader.input_schema["required"], json!(["path"]));
    let v = serde_json::to_value(&defs[0]).expect("json");
    assert!(v.get("input_schema").is_some());
}
