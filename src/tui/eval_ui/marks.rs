//! The marks file of a rerun: where the Eval screen writes it, and how an id is
//! written as a line of it.

use std::path::PathBuf;

use super::model::EvalModel;

/// The file the marks for a rerun are written to: beside the eval's failure tree.
pub fn marks_file(model: &EvalModel) -> PathBuf {
    PathBuf::from(model.row.out_dir.as_deref().unwrap_or("."))
        .join(format!("rerun_{}.txt", model.row.eval_id))
}

/// An id as a line of the marks file: as it is, or as a JSON string when it would
/// not read back so (a `#` or `"` first, spaces around it, a line break).
pub fn marks_line(id: &str) -> String {
    let plain = !id.is_empty()
        && id.trim() == id
        && !id.starts_with(['#', '"'])
        && !id.contains(['\n', '\r']);
    if plain {
        format!("{id}\n")
    } else {
        format!("{}\n", serde_json::Value::String(id.to_string()))
    }
}
