//! The keys that work now, as parts of the status bar: each with a rank, so that on a
//! narrow terminal the keys that matter most (`? help`, `q quit`) stay and the others go
//! whole from the right. A key that must show first gets a higher rank and goes first.

use super::fit::Part;
use super::rank;
use crate::model::event::{RunStatus, TaskStatus};
use crate::model::state::RunState;
use crate::tui::app::ui_state::Overlay;
use crate::tui::app::{Screen, UiState};

fn key(text: &str, rank: u8) -> Part {
    Part::new(text, rank)
}

/// The keys that work now, in the order shown: an open popup's own, else the screen's.
pub fn hints(run: &RunState, ui: &UiState) -> Vec<Part> {
    if let Some(o) = &ui.overlay {
        // The evidence of an answer decided or retried already has nothing to decide.
        let decidable = crate::tui::app::review_keys::selected(ui).is_none_or(|i| i.waits());
        return popup_hints(o, decidable);
    }
    let help = key("? help", rank::HELP);
    let quit = key("q quit", rank::QUIT);
    if let Some(t) = &ui.replay {
        // The space key's word says what it does now: pause a replay that plays.
        let space = if t.playing {
            "space pause"
        } else {
            "space play"
        };
        let mut out = vec![help, key(space, rank::QUIT)];
        out.extend(
            [
                ", . step",
                "{ } starts",
                "( ) failures",
                "- + speed",
                "# seek",
                "< > ends",
            ]
            .map(|k| key(k, rank::KEY)),
        );
        return out;
    }
    let mut out = vec![help, quit];
    let others: Vec<&str> = if run.debate.is_some() && ui.screen == Screen::Run {
        let mut v = vec!["← → round", "w report", "↑ ↓ scroll"];
        if run.is_live() && ui.engine_attached && !ui.read_only {
            v.push("c stop");
        }
        v
    } else if no_run(run, ui) {
        // No run open: the keys that open one.
        match ui.screen {
            Screen::Failures => vec!["3 runs"],
            _ => vec!["4 failures"],
        }
    } else if ui.read_only || !ui.engine_attached {
        vec!["n N failed", "4 failures"]
    } else if run.is_live() {
        let pause = if run.status == Some(RunStatus::Paused) {
            "space resume"
        } else {
            "space pause"
        };
        vec![pause, "c cancel", "r retry"]
    } else {
        let mut v = Vec::new();
        if run.count(TaskStatus::Failed) + run.count(TaskStatus::Timeout) > 0 {
            v.push("r retry");
        }
        v
    };
    out.extend(others.into_iter().map(|k| key(k, rank::KEY)));
    // A run that waits for a person: the next step goes first and stays longest.
    if run.awaiting_review > 0 && !run.is_live() && run.debate.is_none() {
        out.insert(0, key("4 v review", rank::NEXT_STEP));
    }
    out
}

/// The keys of an open popup (the screen's keys do not reach the screen under it);
/// `decidable`: the review item on screen waits for a decision.
fn popup_hints(o: &Overlay, decidable: bool) -> Vec<Part> {
    let own: &[&str] = match o {
        Overlay::Confirm(_) => return vec![key("y yes", rank::QUIT), key("n no", rank::QUIT)],
        // The decision the evidence is opened for goes first and stays longest.
        Overlay::Evidence { .. } => {
            let mut out = Vec::new();
            if decidable {
                out.push(key("Y accept", rank::NEXT_STEP));
                out.push(key("X reject", rank::NEXT_STEP));
            }
            out.extend([key("esc close", rank::HELP), key("q quit", rank::QUIT)]);
            out.push(key("↑ ↓ scroll", rank::KEY));
            return out;
        }
        Overlay::Attempt(_) => &["o e a i view", "[ ] attempt", "n N row", "enter find"],
        Overlay::LoopStep(_) => &["← → step", "C conversation", "↑ ↓ scroll"],
        Overlay::Conversation(_) => &["↑ ↓ move", "enter open step"],
        Overlay::Help { .. } | Overlay::Text { .. } | Overlay::AtomDetail { .. } => {
            &["↑ ↓ scroll", "g G ends"]
        }
    };
    let mut out = vec![key("esc close", rank::HELP), key("q quit", rank::QUIT)];
    out.extend(own.iter().map(|k| key(k, rank::KEY)));
    out
}

/// Whether no run is open: the database is browsed, nothing runs or starts.
pub fn no_run(run: &RunState, ui: &UiState) -> bool {
    run.run_id.is_empty() && run.tasks.is_empty() && !ui.engine_attached && ui.replay.is_none()
}
