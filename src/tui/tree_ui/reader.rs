//! The tree browser's reads and writes, done on its reader thread: a sample's
//! documents, a design file, the handoff of marked samples. The browser asks with a
//! [`TreeRequest`] and gets a [`TreeAnswer`] back as a message.

use std::path::PathBuf;

use super::detail::Detail;
use crate::data::failures::{build_handoff, write_handoff, DesignFile, Doc, HandoffSpec, Tree};

/// What the browser asks its reader.
#[derive(Debug, Clone)]
pub enum TreeRequest {
    /// Open sample `row`; `tab` is the document tab to show (else the trace).
    Open {
        /// The sample's row in the tree.
        row: u32,
        /// The tab to keep.
        tab: Option<usize>,
    },
    /// Open a design file of an Init→Execute context.
    Design(DesignFile),
    /// Write the handoff of `rows` to `path`.
    Export {
        /// Where.
        path: PathBuf,
        /// The handoff's figures and notes (its reason set).
        spec: HandoffSpec,
        /// The samples handed off.
        rows: Vec<u32>,
    },
}

/// The reader's answer.
pub enum TreeAnswer {
    /// Sample `row` read (`None`: it is not in the tree), with the tab to keep.
    Opened(u32, Option<Box<Detail>>, Option<usize>),
    /// A design file read.
    Design(DesignFile, Doc),
    /// Something to say (a write done or refused): the text and whether it warns.
    Say(String, bool),
}

/// Answers one request over `tree`.
pub fn serve(tree: &Tree, req: TreeRequest) -> TreeAnswer {
    match req {
        TreeRequest::Open { row, tab } => {
            TreeAnswer::Opened(row, Detail::open(tree, row).map(Box::new), tab)
        }
        TreeRequest::Design(file) => {
            let doc = file.load(&tree.options);
            TreeAnswer::Design(file, doc)
        }
        TreeRequest::Export { path, spec, rows } => export(tree, &path, &spec, &rows),
    }
}

/// Builds and writes the handoff; says how big it is against the expected 2K–5K
/// tokens and which figures are unknown.
fn export(tree: &Tree, path: &std::path::Path, spec: &HandoffSpec, rows: &[u32]) -> TreeAnswer {
    let ctx = build_handoff(tree, rows, spec);
    match write_handoff(path, &ctx, &tree.options.counter) {
        Ok(check) => {
            let mut text = format!(
                "wrote {} · {} sample(s) · {} tokens",
                path.display(),
                rows.len(),
                check.tokens
            );
            for extra in check.warning.iter().chain(&spec.notes) {
                text.push_str(" · ");
                text.push_str(extra);
            }
            let warn = check.warning.is_some() || !spec.notes.is_empty();
            TreeAnswer::Say(text, warn)
        }
        Err(e) => TreeAnswer::Say(format!("cannot write {}: {e}", path.display()), true),
    }
}
