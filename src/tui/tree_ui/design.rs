//! An Init→Execute context in the browser: its requirement and design files listed;
//! `Enter` opens the selected file (its text shown, its tokens counted once against
//! the on-demand budget), `Esc` goes back to the list.

use super::detail::json_folded;
use crate::data::failures::Doc;

/// The design files' list and the one opened.
#[derive(Debug, Clone, Default)]
pub struct DesignView {
    /// Selected design file.
    pub selected: usize,
    /// The file opened, when one is.
    pub open: Option<Doc>,
    /// First line of the opened file shown.
    pub top: usize,
}

impl DesignView {
    /// The lines of the opened file: where it is, its status, size and tokens, then its
    /// text (JSON pretty-printed).
    pub fn lines(&self) -> Vec<String> {
        let Some(doc) = &self.open else {
            return Vec::new();
        };
        let mut out = vec![
            format!(
                "{} · {} · {} bytes · {} tokens",
                crate::data::failures::layout::slash(&doc.path),
                doc.status.describe(),
                doc.bytes,
                doc.tokens
            ),
            String::new(),
        ];
        match (&doc.value, &doc.text) {
            (Some(v), _) => {
                let mut text = String::new();
                json_folded(v, 0, usize::MAX, &mut text);
                out.extend(text.lines().map(str::to_string));
            }
            (None, Some(t)) => out.extend(t.lines().map(str::to_string)),
            (None, None) => out.push("nothing to show".into()),
        }
        out
    }
}
