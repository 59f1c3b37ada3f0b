//! The marks of a rerun on the Eval screen: the file they are kept in, and the marks it
//! holds taken back when the screen opens (the file's format is the eval's own).

use std::path::PathBuf;

pub use crate::features::eval::marks::marks_line;
use crate::features::eval::marks::marks_path;

use super::model::EvalModel;
use super::state::EvalScreen;

/// The file the marks for a rerun are written to: beside the eval's failure tree.
pub fn marks_file(model: &EvalModel) -> PathBuf {
    marks_path(model.row.out_dir.as_deref(), &model.row.eval_id)
}

impl EvalScreen {
    /// Takes back the marks read from the marks file (`read`: its ids with their line
    /// numbers, or why it could not be read). An id that names no sample of this eval is
    /// not marked, and the screen says which line it was on.
    pub fn restore_marks(&mut self, read: Result<Vec<(usize, String)>, String>) {
        let ids = match read {
            Ok(ids) => ids,
            Err(e) => {
                self.say(format!("the marks file cannot be read: {e}"), true);
                return;
            }
        };
        let mut unknown = Vec::new();
        // The eval's ids, looked up once each (an eval may have 100,000 samples).
        let known: std::collections::HashSet<&str> =
            self.model.samples.iter().map(|s| s.id.as_str()).collect();
        for (line, id) in ids {
            if known.contains(id.as_str()) {
                self.marked.insert(id);
            } else {
                unknown.push(line.to_string());
            }
        }
        let file = marks_file(&self.model);
        if !unknown.is_empty() {
            self.say(
                format!(
                    "{}: line {} names no sample of this eval (not marked)",
                    file.display(),
                    unknown.join(", ")
                ),
                true,
            );
        } else if !self.marked.is_empty() {
            self.say(
                format!(
                    "{} marked, as {} keeps them",
                    self.marked.len(),
                    file.display()
                ),
                false,
            );
        }
    }
}
