//! The failure-tree browser (`plexus failures PATH`): the sample list, the problems
//! report, a sample's documents as tabs with the trace folded, the running token total,
//! marks and the handoff export — driven by actions and drawn through TestBackend.

use crate::common;

use common::screen::buffer_text;
use std::path::Path;

use plexus::data::failures::{open, DocKind, DocStatus};
use plexus::tui::app::input::InputKey;
use plexus::tui::app::keymap::Keymap;
use plexus::tui::app::Action;
use plexus::tui::tree_ui::{Browser, View};
use plexus::tui::ui::theme::Theme;
use ratatui::backend::TestBackend;
use ratatui::Terminal;

const FIXTURE: &str = "fixtures/failures/leave_application";

fn browser() -> Browser {
    let tree = open(Path::new(FIXTURE)).expect("fixture tree");
    Browser::new(tree, 40_000)
}

fn render(b: &mut Browser, w: u16, h: u16) -> String {
    let mut term = Terminal::new(TestBackend::new(w, h)).expect("terminal");
    let theme = Theme::dark();
    let keys = Keymap::default_keys();
    term.draw(|f| {
        let area = f.area();
        plexus::tui::tree_ui::draw::draw(f.buffer_mut(), area, b, &theme, &keys)
    })
    .expect("draw");
    buffer_text(term.backend().buffer())
}

fn select(b: &mut Browser, id: &str) {
    b.act(Action::Top);
    while b
        .selected_row()
        .map(|r| b.tree.samples[r as usize].id.to_string())
        != Some(id.into())
    {
        let before = b.selected;
        b.act(Action::Down);
        assert_ne!(before, b.selected, "{id} not in the list");
    }
}

#[test]
fn list_problems_and_detail_snapshots() {
    let mut b = browser();
    insta::assert_snapshot!("tree_list_80x24", render(&mut b, 80, 24));
    insta::assert_snapshot!("tree_list_200x60", render(&mut b, 200, 60));
    b.act(Action::ProblemsView);
    assert_eq!(b.view, View::Problems);
    // The title counts the failed samples, and what was evaluated apart from them.
    let s = render(&mut b, 80, 24);
    let n = b
        .report
        .as_ref()
        .and_then(|r| r.failed_samples)
        .expect("counted");
    assert!(s.contains(&format!("· {n} failed samples (")), "{s}");
    insta::assert_snapshot!("tree_problems_80x24", s);
    insta::assert_snapshot!("tree_problems_200x60", render(&mut b, 200, 60));
    b.act(Action::ProblemsView);
    select(&mut b, "BS_MT_002");
    b.act(Action::Open);
    b.serve_now();
    assert_eq!(b.view, View::Detail);
    insta::assert_snapshot!("tree_detail_80x24", render(&mut b, 80, 24));
    insta::assert_snapshot!("tree_detail_200x60", render(&mut b, 200, 60));
}

#[test]
fn damaged_documents_are_shown_with_their_reason_and_never_stop_the_browser() {
    let mut b = browser();
    let mut seen = std::collections::BTreeSet::new();
    for row in 0..b.tree.samples.len() as u32 {
        b.open_sample(row);
        b.serve_now();
        let d = b.detail.as_ref().expect("opened");
        for (i, doc) in d.docs.iter().enumerate() {
            if doc.status != DocStatus::Ok {
                seen.insert(doc.status.label());
                let mut d = d.clone();
                d.tab = i;
                let head = &d.lines()[0].0;
                assert!(head.contains(&doc.status.describe()), "{head}");
            }
        }
        // Every tab draws.
        for _ in 0..4 {
            b.act(Action::NextScreen);
            render(&mut b, 80, 24);
        }
        b.act(Action::Back);
    }
    for label in ["truncated", "broken", "missing", "partial"] {
        assert!(
            seen.contains(label),
            "the fixture's {label} document was not shown: {seen:?}"
        );
    }
}

#[test]
fn opened_documents_add_their_tokens_once_to_the_running_total() {
    let mut b = browser();
    assert_eq!(b.budget.total(), 0);
    b.open_sample(0);
    b.serve_now();
    let first: u64 = b
        .detail
        .as_ref()
        .expect("opened")
        .docs
        .iter()
        .map(|d| d.tokens)
        .sum();
    assert!(first > 0);
    assert_eq!(b.budget.total(), first);
    // Opening it again adds nothing; another sample adds its own.
    b.act(Action::Back);
    b.open_sample(0);
    b.serve_now();
    assert_eq!(b.budget.total(), first);
    b.open_sample(1);
    b.serve_now();
    let second: u64 = b
        .detail
        .as_ref()
        .expect("opened")
        .docs
        .iter()
        .map(|d| d.tokens)
        .sum();
    assert_eq!(b.budget.total(), first + second);
    // Each document's count is the tokenizer's count of its text.
    let d = b.detail.as_ref().expect("opened");
    let doc = &d.docs[DocKind::Sample.index()];
    if doc.status == DocStatus::Ok {
        let text = std::fs::read_to_string(&doc.path).expect("read");
        assert_eq!(doc.tokens, b.tree.options.counter.count(&text) as u64);
    }
    // The status line shows the total against the budget.
    let screen = render(&mut b, 200, 60);
    assert!(
        screen.contains(&format!("opened {}/40000 tokens", first + second)),
        "{screen}"
    );
}

#[test]
fn a_long_trace_is_folded_around_its_key_turns_and_unfolds() {
    let mut b = browser();
    let row = (0..b.tree.samples.len() as u32)
        .find(|&r| {
            b.open_sample(r);
            b.serve_now();
            b.detail
                .as_ref()
                .and_then(|d| d.folding.as_ref())
                .is_some_and(|f| f.hidden() > 0)
        })
        .expect("a folded trace in the fixture");
    let d = b.detail.as_mut().expect("opened");
    assert_eq!(d.sample, row);
    let hidden = d.folding.as_ref().expect("folding").hidden();
    // z opens everything, z again folds back.
    b.act(Action::UnfoldAll);
    assert_eq!(
        b.detail
            .as_ref()
            .expect("d")
            .folding
            .as_ref()
            .expect("f")
            .hidden(),
        0
    );
    b.act(Action::UnfoldAll);
    assert_eq!(
        b.detail
            .as_ref()
            .expect("d")
            .folding
            .as_ref()
            .expect("f")
            .hidden(),
        hidden
    );
    // Enter on a fold opens that run of turns only.
    let d = b.detail.as_mut().expect("opened");
    let fold_line = d
        .lines()
        .iter()
        .position(|(_, f)| f.is_some())
        .expect("a fold");
    d.cursor = fold_line;
    b.act(Action::Open);
    b.serve_now();
    let d = b.detail.as_ref().expect("opened");
    let after = d.folding.as_ref().expect("folding").hidden();
    assert!(after < hidden, "{after} < {hidden}");
    // The key turns stay visible, with why.
    assert!(
        d.lines().iter().any(|(l, _)| l.contains("◀")),
        "no key turn marked"
    );
}

#[test]
fn filters_search_and_n_move_through_the_samples() {
    let mut b = browser();
    let all = b.rows.len();
    b.act(Action::FilterGrade);
    let ty = b.filter.failure_type.clone().expect("a failure type");
    assert!(b.rows.len() < all);
    assert!(b
        .rows
        .iter()
        .all(|&r| b.tree.samples[r as usize].failure_type.as_deref() == Some(ty.as_str())));
    b.act(Action::ClearFilters);
    b.act(Action::Search);
    for c in "BS_MT_01".chars() {
        b.input_key(InputKey::Char(c));
    }
    assert!(b.rows.len() >= 2 && b.rows.len() < all, "{}", b.rows.len());
    b.input_key(InputKey::Esc);
    assert_eq!(b.rows.len(), all);
    b.act(Action::Top);
    b.act(Action::NextFailure);
    b.serve_now();
    assert_eq!(b.selected, 1);
    b.act(Action::PrevFailure);
    b.serve_now();
    b.act(Action::PrevFailure);
    b.serve_now();
    assert_eq!(b.selected, all - 1);
}

#[test]
fn two_marked_samples_export_as_a_handoff_with_their_index_entries_and_a_size_check() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut b = browser();
    select(&mut b, "BS_MT_001");
    b.act(Action::ViewContext);
    select(&mut b, "BS_MT_003");
    b.act(Action::ViewContext);
    assert_eq!(b.marked.len(), 2);
    let out = tmp.path().join("handoff.json");
    b.act(Action::ExportHandoff);
    // The prompt offers a default path; replace it.
    while b.input.as_ref().is_some_and(|(_, t)| !t.is_empty()) {
        b.input_key(InputKey::Backspace);
    }
    for c in out.to_string_lossy().chars() {
        b.input_key(InputKey::Char(c));
    }
    b.input_key(InputKey::Enter);
    b.serve_now();
    // Then why: what the person types is the trigger reason.
    assert!(b.input.is_some(), "the reason is asked");
    while b.input.as_ref().is_some_and(|(_, t)| !t.is_empty()) {
        b.input_key(InputKey::Backspace);
    }
    for c in "两个典型case需要Init复核".chars() {
        b.input_key(InputKey::Char(c));
    }
    b.input_key(InputKey::Enter);
    b.serve_now();
    let (text, _) = b.flash.clone().expect("said");
    assert!(
        text.starts_with(&format!("wrote {}", out.display())),
        "{text}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).expect("written")).expect("json");
    let ids: Vec<&str> = v["failure_samples_index"]
        .as_array()
        .expect("index")
        .iter()
        .map(|e| e["sample_id"].as_str().expect("id"))
        .collect();
    assert_eq!(ids, vec!["BS_MT_001", "BS_MT_003"]);
    assert_eq!(v["trigger_reason"], "两个典型case需要Init复核");
    assert!(v.get("iteration_summary").is_some());
    // The file opens as a tree again.
    let again = open(&out).expect("the handoff opens");
    assert_eq!(again.samples.len(), 2);
}
