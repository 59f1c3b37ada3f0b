//! File and db_query references: formats, sections, encodings, and security — `..`,
//! absolute paths and symlinks leaving the workspace are REF_PERMISSION_DENIED; hostile
//! db_query values run no injected SQL.

use std::time::Duration;

use plexus::base::protocol::refs::RefErrorCode;
use plexus::base::protocol::{DbQueryRef, FileRef};
use plexus::data::resolve::db::{build, resolve_db};
use plexus::data::resolve::file::{md_sections, resolve_file};
use plexus::data::store::{spawn_writer, PaperRow, WriteOp};
use serde_json::json;

fn file(path: &str) -> FileRef {
    serde_json::from_value(json!({"path": path})).expect("file ref")
}

fn code(r: Result<serde_json::Value, plexus::data::resolve::RefFailure>) -> RefErrorCode {
    match r {
        Ok(v) => panic!("expected a failure, got {v}"),
        Err(f) => f.code,
    }
}

/// A one-page PDF with the given text lines, its xref offsets computed.
fn pdf(lines: &[&str]) -> Vec<u8> {
    let mut content = String::from("BT /F1 12 Tf 72 720 Td 14 TL\n");
    for l in lines {
        content.push_str(&format!(
            "({}) Tj T*\n",
            l.replace('(', "\\(").replace(')', "\\)")
        ));
    }
    content.push_str("ET");
    let objs = [
        "<< /Type /Catalog /Pages 2 0 R >>".to_string(),
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_string(),
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>".to_string(),
        format!("<< /Length {} >>\nstream\n{}\nendstream", content.len(), content),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>".to_string(),
    ];
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (i, o) in objs.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n{}\nendobj\n", i + 1, o).as_bytes());
    }
    let xref = out.len();
    out.extend_from_slice(format!("xref\n0 {}\n0000000000 65535 f \n", objs.len() + 1).as_bytes());
    for off in offsets {
        out.extend_from_slice(format!("{off:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objs.len() + 1
        )
        .as_bytes(),
    );
    out
}

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let w = dir.path();
    std::fs::create_dir_all(w.join("papers")).expect("mkdir");
    std::fs::write(
        w.join("papers/transformer.md"),
        "# Attention\n\n## Abstract\nWe propose the Transformer.\n\n## Introduction\nRNNs are slow.\n\n### Detail\nmore\n\n## Methodology\nSelf-attention.\n",
    )
    .expect("md");
    std::fs::write(
        w.join("papers/meta.json"),
        r#"{"title": "Attention", "year": 2017}"#,
    )
    .expect("json");
    std::fs::write(w.join("papers/notes.txt"), "plain 文本\n").expect("txt");
    std::fs::write(w.join("papers/bad.json"), "{not json").expect("bad json");
    std::fs::write(w.join("papers/latin.txt"), [b'c', b'a', b'f', 0xE9]).expect("latin");
    std::fs::write(
        w.join("papers/paper.pdf"),
        pdf(&[
            "Abstract",
            "Diffusion planners denoise trajectories.",
            "1 Introduction",
            "Planning is hard.",
            "2 Method",
            "We sample.",
        ]),
    )
    .expect("pdf");
    std::fs::write(
        w.join("papers/broken.pdf"),
        b"%PDF-1.4\n1 0 obj << >> garbage",
    )
    .expect("broken pdf");
    dir
}

#[test]
fn md_json_txt_and_sections() {
    let dir = workspace();
    let root = dir.path();
    let v = resolve_file(root, &file("papers/notes.txt")).expect("txt");
    assert_eq!(v["text"], "plain 文本\n");
    let v = resolve_file(root, &file("papers/meta.json")).expect("json");
    assert_eq!(v["data"]["year"], 2017);
    let mut r = file("/workspace/papers/transformer.md");
    r.sections = Some(vec![
        "abstract".into(),
        "introduction".into(),
        "methodology".into(),
        "appendix".into(),
    ]);
    let v = resolve_file(root, &r).expect("md sections");
    assert_eq!(v["sections"]["Abstract"], "We propose the Transformer.");
    assert_eq!(
        v["sections"]["Introduction"], "RNNs are slow.\n\n### Detail\nmore",
        "subsections stay"
    );
    assert_eq!(v["sections"]["Methodology"], "Self-attention.");
    assert_eq!(v["missing_sections"], json!(["appendix"]));
    let mut r = file("papers/transformer.md");
    r.sections = Some(vec!["appendix".into()]);
    assert_eq!(code(resolve_file(root, &r)), RefErrorCode::RefNotFound);
}

/// `md_sections` for `names`: the sections found (heading, text) and the names missing.
fn sections(text: &str, names: &[&str]) -> (Vec<(String, String)>, Vec<String>) {
    let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    md_sections(text, &names)
}

/// A document whose `Setup` section holds a code block fenced with `fence` that has a
/// `#` line in it, followed by a `Next` section.
fn fenced_doc(fence: &str) -> String {
    format!(
        "# Setup\nRun this:\n{fence}sh\n# Not a heading\nmake\n{fence}\nAfter the fence.\n# Next\nother\n"
    )
}

#[test]
fn md_hash_lines_in_backtick_fences_are_not_headings() {
    let (found, missing) = sections(&fenced_doc("```"), &["setup", "not a heading"]);
    assert_eq!(
        found,
        vec![(
            "Setup".to_string(),
            "Run this:\n```sh\n# Not a heading\nmake\n```\nAfter the fence.".to_string()
        )],
        "the fenced `#` line neither ends the section nor starts one"
    );
    assert_eq!(missing, vec!["not a heading".to_string()]);
}

#[test]
fn md_hash_lines_in_tilde_fences_are_not_headings() {
    let (found, missing) = sections(&fenced_doc("~~~"), &["setup", "not a heading"]);
    assert_eq!(
        found,
        vec![(
            "Setup".to_string(),
            "Run this:\n~~~sh\n# Not a heading\nmake\n~~~\nAfter the fence.".to_string()
        )],
        "the fenced `#` line neither ends the section nor starts one"
    );
    assert_eq!(missing, vec!["not a heading".to_string()]);
}

#[test]
fn md_real_heading_after_a_fence_ends_the_section() {
    // A level-1 `#` line in the fence would end this level-2 section if it counted; the
    // `###` heading after the fence stays inside, the `##` one ends it.
    let doc = "## Method\n```\n# Not a heading\n```\n### Detail\nmore\n## Results\nnumbers\n";
    let (found, missing) = sections(doc, &["method", "results"]);
    assert_eq!(
        found,
        vec![
            (
                "Method".to_string(),
                "```\n# Not a heading\n```\n### Detail\nmore".to_string()
            ),
            ("Results".to_string(), "numbers".to_string()),
        ]
    );
    assert!(missing.is_empty(), "{missing:?}");
}

#[test]
fn pdf_text_and_named_sections() {
    let dir = workspace();
    let mut r = file("papers/paper.pdf");
    let v = resolve_file(dir.path(), &r).expect("pdf");
    let text = v["text"].as_str().expect("text");
    assert!(
        text.contains("Diffusion planners denoise trajectories."),
        "{text}"
    );
    r.sections = Some(vec!["abstract".into(), "introduction".into()]);
    let v = resolve_file(dir.path(), &r).expect("pdf sections");
    let s = v["sections"].as_object().expect("sections");
    let abs = s
        .iter()
        .find(|(k, _)| k.to_lowercase().contains("abstract"))
        .map(|(_, v)| v.as_str().unwrap_or(""));
    assert_eq!(abs, Some("Diffusion planners denoise trajectories."), "{v}");
    let intro = s
        .iter()
        .find(|(k, _)| k.to_lowercase().contains("introduction"))
        .map(|(_, v)| v.as_str().unwrap_or(""));
    assert_eq!(intro, Some("Planning is hard."), "{v}");
    assert_eq!(
        code(resolve_file(dir.path(), &file("papers/broken.pdf"))),
        RefErrorCode::RefFormatError
    );
    assert_eq!(
        code(resolve_file(dir.path(), &{
            let mut r = file("papers/notes.txt");
            r.format = Some("pdf".into());
            r
        })),
        RefErrorCode::RefFormatError
    );
}

#[test]
fn encodings_and_format_errors() {
    let dir = workspace();
    let root = dir.path();
    assert_eq!(
        code(resolve_file(root, &file("papers/latin.txt"))),
        RefErrorCode::RefFormatError,
        "not UTF-8"
    );
    let mut r = file("papers/latin.txt");
    r.encoding = Some("latin-1".into());
    assert_eq!(resolve_file(root, &r).expect("latin-1")["text"], "café");
    r.encoding = Some("ebcdic".into());
    assert_eq!(code(resolve_file(root, &r)), RefErrorCode::RefFormatError);
    assert_eq!(
        code(resolve_file(root, &file("papers/bad.json"))),
        RefErrorCode::RefFormatError
    );
    let mut r = file("papers/notes.txt");
    r.format = Some("docx".into());
    assert_eq!(code(resolve_file(root, &r)), RefErrorCode::RefFormatError);
    assert_eq!(
        code(resolve_file(root, &file("papers/missing.md"))),
        RefErrorCode::RefNotFound
    );
    assert_eq!(
        code(resolve_file(root, &file("papers"))),
        RefErrorCode::RefFormatError,
        "a directory"
    );
}

#[test]
fn paths_that_leave_the_workspace_are_denied() {
    let dir = workspace();
    let root = dir.path();
    let outside = tempfile::tempdir().expect("outside");
    std::fs::write(outside.path().join("secret.txt"), "secret").expect("secret");
    for p in [
        "../secret.txt",
        "papers/../../secret.txt",
        "papers/../notes.txt",
        "/etc/passwd",
        outside.path().join("secret.txt").to_str().expect("utf8"),
        "/workspace/../etc/passwd",
    ] {
        assert_eq!(
            code(resolve_file(root, &file(p))),
            RefErrorCode::RefPermissionDenied,
            "{p}"
        );
    }
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(
            outside.path().join("secret.txt"),
            root.join("papers/link.txt"),
        )
        .expect("symlink");
        assert_eq!(
            code(resolve_file(root, &file("papers/link.txt"))),
            RefErrorCode::RefPermissionDenied
        );
        std::os::unix::fs::symlink(outside.path(), root.join("out")).expect("dir symlink");
        assert_eq!(
            code(resolve_file(root, &file("out/secret.txt"))),
            RefErrorCode::RefPermissionDenied
        );
        std::os::unix::fs::symlink("/nonexistent/x", root.join("papers/dangling.txt"))
            .expect("dangling");
        assert_eq!(
            code(resolve_file(root, &file("papers/dangling.txt"))),
            RefErrorCode::RefPermissionDenied
        );
        // A symlink that stays inside is fine.
        std::os::unix::fs::symlink(
            root.join("papers/notes.txt"),
            root.join("papers/inside.txt"),
        )
        .expect("inside");
        assert_eq!(
            resolve_file(root, &file("papers/inside.txt")).expect("inside")["text"],
            "plain 文本\n"
        );
    }
}

fn db() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("t.db");
    let (writer, thread) = spawn_writer(&path, None).expect("writer");
    let papers = (0..50)
        .map(|i| PaperRow {
            paper_id: format!("paper_{i:03}"),
            title: format!("Paper {i}"),
            authors: None,
            year: Some(2000 + i),
            domain: Some(
                if i % 2 == 0 {
                    "deep_learning"
                } else {
                    "robotics"
                }
                .into(),
            ),
            abstract_text: None,
        })
        .collect();
    let assets = (0..200)
        .map(|i| {
            (
                format!("ATOM_{i:03}"),
                if i % 3 == 0 { "claim" } else { "evidence" }.to_string(),
                Some("deep_learning".to_string()),
                Some(format!("paper_{:03}", i % 50)),
                json!({"text": format!("atom {i}")}).to_string(),
            )
        })
        .collect();
    writer
        .send(WriteOp::Import { papers, assets })
        .expect("import");
    writer.flush().expect("flush");
    drop(writer);
    thread.join().expect("writer thread");
    (dir, path)
}

fn query(v: serde_json::Value) -> DbQueryRef {
    serde_json::from_value(v).expect("db ref")
}

#[test]
fn a_query_on_one_runs_log_reads_that_run_only() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("log.db");
    let (writer, thread) = spawn_writer(&path, None).expect("writer");
    for seq in 1..=40u64 {
        for run in ["R-one", "R-two", "R-three"] {
            let env = plexus::model::event::Envelope {
                run_id: std::sync::Arc::from(run),
                seq,
                ts: seq as i64,
                task_id: None,
                invocation_id: None,
                agent: None,
                event: plexus::model::event::EngineEvent::TaskReady(plexus::model::event::Empty {}),
            };
            writer
                .send(WriteOp::Event(std::sync::Arc::new(env)))
                .expect("event");
        }
    }
    writer.flush().expect("flush");
    drop(writer);
    thread.join().expect("writer thread");
    let q = query(json!({"table": "execution_logs",
        "conditions": [{"field": "run_id", "operator": "eq", "value": "R-two"}],
        "select": ["run_id", "seq"], "order_by": {"field": "seq", "direction": "asc"}}));
    let (sql, _) = build(&q).expect("sql");
    assert!(sql.contains("event_id BETWEEN"), "{sql}");
    let v = resolve_db(&path, &q, Duration::from_secs(5)).expect("query");
    let rows = v["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 40);
    assert!(rows.iter().all(|r| r["run_id"] == "R-two"));
    assert_eq!(rows[39]["seq"], 40);
}

#[test]
fn db_query_with_conditions_select_order_and_limit() {
    let (_d, path) = db();
    let q = query(json!({"table": "knowledge_atoms",
        "conditions": [{"field": "paper_id", "operator": "eq", "value": "paper_001"},
                       {"field": "atom_type", "operator": "in", "value": ["claim", "evidence"]}],
        "select": ["atom_id", "atom_type", "content"],
        "order_by": {"field": "atom_id", "direction": "desc"}, "limit": 3}));
    let v = resolve_db(&path, &q, Duration::from_secs(5)).expect("query");
    let rows = v["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[0]["atom_id"], "ATOM_151");
    assert_eq!(
        rows[0]["content"]["text"], "atom 151",
        "JSON columns come back as JSON"
    );
    assert_eq!(rows[0].as_object().map(|o| o.len()), Some(3));
    let q = query(
        json!({"table": "papers", "conditions": [{"field": "year", "operator": "gte", "value": 2045},
        {"field": "title", "operator": "contains", "value": "4"}]}),
    );
    let v = resolve_db(&path, &q, Duration::from_secs(5)).expect("query");
    let ids: Vec<&str> = v["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .filter_map(|r| r["paper_id"].as_str())
        .collect();
    assert_eq!(
        ids,
        vec![
            "paper_045",
            "paper_046",
            "paper_047",
            "paper_048",
            "paper_049"
        ]
        .into_iter()
        .filter(|p| p.contains('4'))
        .collect::<Vec<_>>()
    );
}

#[test]
fn hostile_values_run_no_injected_sql() {
    let (_d, path) = db();
    let hostile = [
        "'; DROP TABLE papers; --",
        "x' OR 1=1 --",
        "\" OR \"\"=\"",
        "paper_001'; DELETE FROM knowledge_atoms WHERE '1'='1",
        "1; ATTACH DATABASE '/tmp/x' AS x",
    ];
    for h in hostile {
        let q = query(json!({"table": "knowledge_atoms",
            "conditions": [{"field": "paper_id", "operator": "eq", "value": h}]}));
        let (sql, _) = build(&q).expect("builds");
        assert!(!sql.contains(h), "the value is not in the SQL: {sql}");
        let v = resolve_db(&path, &q, Duration::from_secs(5)).expect("runs");
        assert_eq!(
            v["rows"].as_array().map(Vec::len),
            Some(0),
            "{h}: matches nothing"
        );
        let q = query(
            json!({"table": "papers", "conditions": [{"field": "title", "operator": "in", "value": [h, "Paper 1"]}]}),
        );
        assert_eq!(
            resolve_db(&path, &q, Duration::from_secs(5)).expect("in")["rows"]
                .as_array()
                .map(Vec::len),
            Some(1)
        );
    }
    // Everything is still there.
    let all = query(json!({"table": "knowledge_atoms", "limit": 1000}));
    assert_eq!(
        resolve_db(&path, &all, Duration::from_secs(5)).expect("all")["rows"]
            .as_array()
            .map(Vec::len),
        Some(200)
    );
    let papers = query(json!({"table": "papers"}));
    assert_eq!(
        resolve_db(&path, &papers, Duration::from_secs(5)).expect("papers")["rows"]
            .as_array()
            .map(Vec::len),
        Some(50)
    );
    // Names are never taken from the reference.
    for q in [
        json!({"table": "sqlite_master"}),
        json!({"table": "papers; DROP TABLE papers"}),
        json!({"table": "runs"}),
        json!({"table": "papers", "select": ["title", "1; DROP TABLE papers"]}),
        json!({"table": "papers", "conditions": [{"field": "year OR 1=1", "operator": "eq", "value": 1}]}),
        json!({"table": "papers", "order_by": {"field": "(SELECT 1)", "direction": "asc"}}),
    ] {
        let q = query(q);
        assert_eq!(
            code(resolve_db(&path, &q, Duration::from_secs(5))),
            RefErrorCode::RefPermissionDenied,
            "{q:?}"
        );
    }
    let q = query(
        json!({"table": "papers", "order_by": {"field": "year", "direction": "desc; DROP TABLE papers"}}),
    );
    assert_eq!(
        code(resolve_db(&path, &q, Duration::from_secs(5))),
        RefErrorCode::RefFormatError
    );
    let q = query(
        json!({"table": "papers", "conditions": [{"field": "year", "operator": "eq", "value": {"$gt": 1}}]}),
    );
    assert_eq!(
        code(resolve_db(&path, &q, Duration::from_secs(5))),
        RefErrorCode::RefFormatError
    );
}

#[test]
fn a_slow_query_times_out() {
    let (_d, path) = db();
    let q = query(
        json!({"table": "knowledge_atoms", "order_by": {"field": "content", "direction": "desc"}, "limit": 1000}),
    );
    assert_eq!(
        code(resolve_db(&path, &q, Duration::ZERO)),
        RefErrorCode::RefTimeout
    );
}

/// An absolute path inside the workspace names a file in it (it was refused as outside
/// the workspace); one that leaves it by `..` is still denied, and one to a file that is
/// not there is not found.
#[test]
fn an_absolute_path_inside_the_workspace_is_read() {
    let dir = workspace();
    let root = dir.path();
    let real = root.canonicalize().expect("canonical");
    for base in [root.to_path_buf(), real.clone()] {
        let p = base.join("papers/notes.txt");
        let v = resolve_file(root, &file(p.to_str().expect("utf8"))).expect("inside");
        assert_eq!(v["text"], "plain 文本\n", "{}", p.display());
    }
    let escape = format!("{}/papers/../../x.txt", real.display());
    assert_eq!(
        code(resolve_file(root, &file(&escape))),
        RefErrorCode::RefPermissionDenied,
        "{escape}"
    );
    let missing = real.join("papers/none.txt");
    assert_eq!(
        code(resolve_file(root, &file(missing.to_str().expect("utf8")))),
        RefErrorCode::RefNotFound
    );
}

/// A section asked for by its numbered title (`1 Introduction`, as the PDF prints it)
/// is found, as its plain name is (the numbered one was reported missing).
#[test]
fn a_numbered_pdf_heading_is_found_by_its_numbered_title() {
    let dir = workspace();
    let mut r = file("papers/paper.pdf");
    r.sections = Some(vec!["1 Introduction".into(), "2 Method".into()]);
    let v = resolve_file(dir.path(), &r).expect("pdf sections");
    let s = v["sections"].as_object().expect("sections");
    let text = |name: &str| {
        s.iter()
            .find(|(k, _)| k.contains(name))
            .map(|(_, v)| v.as_str().unwrap_or("").to_string())
    };
    assert_eq!(
        text("Introduction").as_deref(),
        Some("Planning is hard."),
        "{v}"
    );
    assert_eq!(text("Method").as_deref(), Some("We sample."), "{v}");
    assert!(
        v.get("missing_sections")
            .is_none_or(|m| m.as_array().is_some_and(Vec::is_empty)),
        "{v}"
    );
}
