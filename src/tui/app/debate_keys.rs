//! The Debate screen's half of `update`: moving between rounds, switching tabs and
//! scrolling. Pure: actions in, UI state changed; stopping the session goes through the
//! ordinary cancel question.

use super::action::Action;
use super::debate::DebateTab;
use super::nav::scroll_value;
use super::ui_state::UiState;
use crate::model::state::debate::DebateState;

/// Applies an action on the Debate screen; returns false when it means nothing here
/// (the caller then treats it as on any screen).
pub fn keys(ui: &mut UiState, d: &DebateState, action: Action) -> bool {
    let v = &mut ui.debate;
    match action {
        Action::Left | Action::Right => {
            let Some(cur) = v.selected(d) else {
                ui.flash("no round has started yet", false);
                return true;
            };
            let i = d.rounds.iter().position(|r| r.round == cur).unwrap_or(0);
            let j = if action == Action::Left {
                i.checked_sub(1)
            } else {
                Some(i + 1).filter(|&j| j < d.rounds.len())
            };
            match j {
                Some(j) => {
                    // The last round again: follow new rounds as they come.
                    v.round = (j + 1 < d.rounds.len()).then(|| d.rounds[j].round);
                    v.positions_top = 0;
                }
                None if action == Action::Left => ui.flash("this is the first round", false),
                None => ui.flash("this is the latest round", false),
            }
        }
        Action::FocusNext | Action::Open => {
            v.tab = match v.tab {
                DebateTab::Positions => DebateTab::Report,
                DebateTab::Report => DebateTab::Positions,
            };
        }
        Action::Up
        | Action::Down
        | Action::PageUp
        | Action::PageDown
        | Action::Top
        | Action::Bottom => {
            let page = v.rows.max(1);
            let top = match v.tab {
                DebateTab::Positions => &mut v.positions_top,
                DebateTab::Report => &mut v.report_top,
            };
            *top = scroll_value(*top, action, page);
        }
        Action::TogglePause | Action::Retry => {
            ui.flash("a debate cannot pause or retry: c stops it", true);
        }
        _ => return false,
    }
    true
}

/// Esc on the Debate screen: from the report back to the positions; false when there
/// is nothing to leave.
pub fn back(ui: &mut UiState) -> bool {
    if ui.debate.tab == DebateTab::Report {
        ui.debate.tab = DebateTab::Positions;
        true
    } else {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::event::debate::PositionsCompared;
    use crate::model::event::{EngineEvent, Envelope};

    fn session(rounds: u32) -> DebateState {
        let mut d = DebateState::new();
        for r in 1..=rounds {
            d.apply(&Envelope {
                run_id: "R".into(),
                seq: u64::from(r),
                ts: 0,
                task_id: None,
                invocation_id: None,
                agent: None,
                event: EngineEvent::PositionsCompared(PositionsCompared {
                    round: r,
                    agents: vec![],
                    similarity_matrix: vec![],
                    mean_similarity: 0.5,
                    most_different_pair: [0, 1],
                    most_different_similarity: 0.5,
                    self_similarity: Default::default(),
                    method: "embedding".into(),
                    embedder: "builtin".into(),
                    embedded: 2,
                    cached: 0,
                    duration_us: 1,
                }),
            });
        }
        d
    }

    #[test]
    fn left_and_right_move_between_rounds_and_the_last_follows() {
        let d = session(3);
        let mut ui = UiState::new(true);
        assert_eq!(ui.debate.selected(&d), Some(3));
        assert!(keys(&mut ui, &d, Action::Left));
        assert_eq!(
            (ui.debate.round, ui.debate.selected(&d)),
            (Some(2), Some(2))
        );
        keys(&mut ui, &d, Action::Left);
        keys(&mut ui, &d, Action::Left);
        assert_eq!(ui.debate.selected(&d), Some(1));
        keys(&mut ui, &d, Action::Right);
        keys(&mut ui, &d, Action::Right);
        assert_eq!((ui.debate.round, ui.debate.selected(&d)), (None, Some(3)));
        // No rounds: nothing to select, no panic.
        let empty = DebateState::new();
        assert!(keys(&mut ui, &empty, Action::Right));
        assert_eq!(ui.debate.selected(&empty), None);
    }

    #[test]
    fn focus_switches_tabs_and_scroll_moves_the_focused_one() {
        let d = session(1);
        let mut ui = UiState::new(true);
        keys(&mut ui, &d, Action::Down);
        assert_eq!((ui.debate.positions_top, ui.debate.report_top), (1, 0));
        keys(&mut ui, &d, Action::FocusNext);
        assert_eq!(ui.debate.tab, DebateTab::Report);
        keys(&mut ui, &d, Action::Down);
        keys(&mut ui, &d, Action::Down);
        assert_eq!((ui.debate.positions_top, ui.debate.report_top), (1, 2));
        assert!(back(&mut ui));
        assert_eq!(ui.debate.tab, DebateTab::Positions);
        assert!(!back(&mut ui));
        assert!(!keys(&mut ui, &d, Action::Sort));
    }
}
