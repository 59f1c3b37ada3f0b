//! The Debate screen's own state: which round is shown, which tab has the focus (the
//! positions or the report) and how far each is scrolled. Its keys are in `debate_keys`.

use crate::model::state::debate::DebateState;

/// What the Debate screen's main area shows (at 80x24 one at a time; on a wide terminal
/// both, the focused one scrolling).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DebateTab {
    /// The selected round: positions, similarity, the host's decision.
    #[default]
    Positions,
    /// The reporter's final report.
    Report,
}

/// The Debate screen's own state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DebateView {
    /// The round picked by the person; `None` follows the latest round.
    pub round: Option<u32>,
    /// Focused tab.
    pub tab: DebateTab,
    /// First line of the positions shown.
    pub positions_top: usize,
    /// First line of the report shown.
    pub report_top: usize,
    /// Height of the scrolled text at the last frame (for paging).
    pub rows: usize,
}

impl DebateView {
    /// The round on screen: the one picked if the session has it, else the latest.
    pub fn selected(&self, d: &DebateState) -> Option<u32> {
        match self.round {
            Some(r) if d.round(r).is_some() => Some(r),
            _ => d.rounds.last().map(|r| r.round),
        }
    }
}
