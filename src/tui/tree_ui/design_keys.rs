//! Keys of the design view of an Init→Execute context: moving through its design files,
//! opening one (its tokens counted in the on-demand budget), scrolling it.

use super::reader::TreeRequest;
use super::state::Browser;
use crate::data::failures::{DesignFile, Doc, DocStatus};
use crate::tui::app::Action;

impl Browser {
    /// A key in the design view.
    pub(crate) fn design_action(&mut self, a: Action) {
        let files = self.tree.init.as_ref().map_or(0, |c| c.design.len());
        let page = self.page.max(1);
        if self.design.open.is_some() {
            let last = self.design.lines().len().saturating_sub(1);
            let top = &mut self.design.top;
            match a {
                Action::Up => *top = top.saturating_sub(1),
                Action::Down => *top = (*top + 1).min(last),
                Action::PageUp => *top = top.saturating_sub(page),
                Action::PageDown => *top = (*top + page).min(last),
                Action::Top => *top = 0,
                Action::Bottom => *top = last,
                Action::Back => self.design.open = None,
                _ => {}
            }
            return;
        }
        let last = files.saturating_sub(1);
        let sel = &mut self.design.selected;
        match a {
            Action::Up => *sel = sel.saturating_sub(1),
            Action::Down => *sel = (*sel + 1).min(last),
            Action::Top => *sel = 0,
            Action::Bottom => *sel = last,
            Action::Open => self.open_design(),
            _ => {}
        }
    }

    /// Asks for the selected design file to be opened.
    pub fn open_design(&mut self) {
        let Some(file) = self
            .tree
            .init
            .as_ref()
            .and_then(|c| c.design.get(self.design.selected))
            .cloned()
        else {
            self.say("no design file to open", true);
            return;
        };
        self.request = Some(TreeRequest::Design(file));
    }

    /// Shows design file `file`, read, and counts its tokens in the budget.
    pub(crate) fn design_opened(&mut self, file: &DesignFile, doc: Doc) {
        let before = self.budget.total();
        if doc.tokens > 0 {
            self.budget.open(&doc);
        }
        let text = format!(
            "{} opened: +{} tokens, {} of {} on-demand budget{}",
            file.role,
            self.budget.total() - before,
            self.budget.total(),
            self.budget.limit,
            if doc.status == DocStatus::Ok {
                String::new()
            } else {
                format!(" · {}", doc.status.describe())
            }
        );
        let warn = doc.status != DocStatus::Ok || self.budget.total() > self.budget.limit;
        self.say(text, warn);
        self.design.open = Some(doc);
        self.design.top = 0;
    }
}
