//! Movement arithmetic shared by the screens: a scroll position or a list selection
//! after a movement action.

use super::action::Action;

/// A simple scroll position after a movement action (upper bound applied at draw time).
pub fn scroll_value(top: usize, action: Action, page: usize) -> usize {
    match action {
        Action::Up => top.saturating_sub(1),
        Action::Down => top + 1,
        Action::PageUp => top.saturating_sub(page.max(1)),
        Action::PageDown => top + page.max(1),
        Action::Top => 0,
        Action::Bottom => usize::MAX / 2,
        _ => top,
    }
}

/// The selection in a list of `len` rows after a movement action (`None` for others).
pub fn move_in_list(selected: usize, len: usize, action: Action, page: usize) -> Option<usize> {
    let last = len.saturating_sub(1);
    Some(match action {
        Action::Up => selected.saturating_sub(1),
        Action::Down => (selected + 1).min(last),
        Action::PageUp => selected.saturating_sub(page),
        Action::PageDown => (selected + page).min(last),
        Action::Top => 0,
        Action::Bottom => last,
        _ => return None,
    })
}
