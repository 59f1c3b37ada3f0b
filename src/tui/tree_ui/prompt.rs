//! The browser's input line: the search as it is typed, and the handoff's two prompts —
//! where to write it, then why (the trigger reason, offered as the rule that fired
//! when one did; what the person leaves there is what the file says).

use std::path::PathBuf;

use super::reader::TreeRequest;
use super::state::{Browser, Prompt};
use crate::data::failures::{fired_rule, HandoffSpec};
use crate::tui::app::input::InputKey;

impl Browser {
    /// A key while the input line is open.
    pub fn input_key(&mut self, k: InputKey) {
        let Some((what, mut text)) = self.input.take() else {
            return;
        };
        match k {
            InputKey::Char(c) if !c.is_control() => text.push(c),
            InputKey::Char(_) | InputKey::Tab => {}
            InputKey::Backspace => {
                text.pop();
            }
            InputKey::Clear => text.clear(),
            InputKey::Esc => {
                match what {
                    Prompt::Search => {
                        self.filter.search.clear();
                        self.refresh();
                    }
                    Prompt::ExportReason => {
                        self.pending_export = None;
                        self.say("the handoff was not written", false);
                    }
                    Prompt::ExportPath => {}
                }
                return;
            }
            InputKey::Enter => {
                match what {
                    Prompt::ExportPath => self.ask_reason(PathBuf::from(text.trim())),
                    Prompt::ExportReason => self.finish_export(&text),
                    Prompt::Search => {}
                }
                return;
            }
        }
        if what == Prompt::Search {
            self.filter.search = text.clone();
            self.selected = 0;
            self.refresh();
        }
        self.input = Some((what, text));
    }

    /// The rows handed off: the marked samples, else the selected one.
    fn export_rows(&self) -> Vec<u32> {
        if self.marked.is_empty() {
            self.selected_row().into_iter().collect()
        } else {
            self.marked.iter().copied().collect()
        }
    }

    /// After the path: reads the handoff's figures and asks why it is written, offering
    /// the rule that fired (see [`fired_rule`]) when one did, else nothing.
    fn ask_reason(&mut self, path: PathBuf) {
        if self.export_rows().is_empty() {
            self.say("nothing to export: mark samples with m", true);
            return;
        }
        let spec = HandoffSpec::for_tree(&self.tree, self.report.as_ref(), &path, None);
        let rule = self
            .report
            .as_ref()
            .and_then(|r| fired_rule(r, spec.iteration_summary.total_samples));
        self.pending_export = Some((path, spec));
        self.input = Some((Prompt::ExportReason, rule.unwrap_or_default()));
    }

    fn finish_export(&mut self, reason: &str) {
        let Some((path, spec)) = self.pending_export.take() else {
            return;
        };
        self.write(path, spec, reason);
    }

    /// Writes the handoff of the marked samples (the selected one when none is marked)
    /// to `path` with `reason` as its trigger reason (`null` when blank), and says how
    /// big it is against the expected 2K–5K tokens and which figures are unknown.
    pub fn export(&mut self, path: PathBuf, reason: &str) {
        if self.export_rows().is_empty() {
            self.say("nothing to export: mark samples with m", true);
            return;
        }
        let spec = HandoffSpec::for_tree(&self.tree, self.report.as_ref(), &path, None);
        self.write(path, spec, reason);
    }

    /// Asks for the handoff to be written with `reason` as its trigger reason.
    fn write(&mut self, path: PathBuf, mut spec: HandoffSpec, reason: &str) {
        let rows = self.export_rows();
        let reason = reason.trim();
        spec.trigger_reason = (!reason.is_empty()).then(|| reason.to_string());
        self.request = Some(TreeRequest::Export { path, spec, rows });
    }
}
