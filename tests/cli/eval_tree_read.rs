//! The failure tree `plexus eval` writes, read back by the reader `plexus failures DIR`
//! uses: every document is whole (none `partial`), the trace shows each epoch's tasks and
//! answer, and a failed sample's checks are found in its evaluation's epochs.

use std::path::{Path, PathBuf};

use plexus::data::failures::{self, parse_trace, DocKind, DocStatus};

use crate::common::bin::output;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The fixture eval scored into `dir/tree`, two epochs a sample.
fn scored_eval(dir: &Path) {
    for f in ["arith.eval.json", "answer_plan.json", "arith.jsonl"] {
        std::fs::copy(root().join("fixtures/eval").join(f), dir.join(f)).expect("copy fixture");
    }
    let o = output(crate::common::bin::plexus(dir).args([
        "--db",
        "e.db",
        "eval",
        "arith.eval.json",
        "--out",
        "tree",
        "--epochs",
        "2",
        "--chunk-ms",
        "0",
        "--first-chunk-ms",
        "0",
    ]));
    assert!(
        matches!(o.code, Some(0) | Some(1)),
        "eval: {:?}\n{}",
        o.code,
        o.stderr
    );
}

#[test]
fn the_tree_an_eval_writes_reads_whole_with_its_epochs_shown() {
    let dir = tempfile::tempdir().expect("tempdir");
    scored_eval(dir.path());
    let it = dir.path().join("tree/execution_outputs/iteration_1");
    let tree = failures::open(&it).expect("the eval's tree opens");
    assert!(!tree.samples.is_empty(), "no sample in {}", it.display());
    let mut attributions = 0;
    for s in &tree.samples {
        let docs = tree.load_all(s);
        for (kind, doc) in DocKind::ALL.iter().zip(&docs) {
            if *kind == DocKind::Attribution && doc.status == DocStatus::Missing {
                continue; // a passed sample has none
            }
            assert_eq!(
                doc.status,
                DocStatus::Ok,
                "{} of {}: {}",
                kind.as_str(),
                s.id,
                doc.status.describe()
            );
        }
        attributions += usize::from(docs[DocKind::Attribution.index()].status == DocStatus::Ok);
        let trace = docs[DocKind::Trace.index()].value.as_ref().expect("trace");
        let c = parse_trace(trace);
        assert!(c.notes.is_empty(), "{}: {:?}", s.id, c.notes);
        let answers = c.turns.iter().filter(|t| t.role == "answer").count();
        assert_eq!(answers, 2, "{}: one answer an epoch: {:?}", s.id, c.turns);
        assert!(c.turns.iter().any(|t| t.role == "task"), "{}", s.id);
    }
    assert!(attributions > 0, "the fixture eval has failed samples");
    // A failed sample's failed checks, as the handoff reads them, come from its epochs.
    let failed = tree
        .samples
        .iter()
        .find(|s| tree.load(s, DocKind::Attribution).status == DocStatus::Ok)
        .expect("a failed sample");
    let facts = failures::facts::sample_facts(&tree, failed);
    assert!(
        facts.conversation_turns.is_some_and(|n| n >= 2),
        "{facts:?}"
    );
}
