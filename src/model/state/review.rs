//! Human review in the fold: a task that failed with a hallucination (E007) waits for a
//! person ([`super::TaskView::awaiting_review`], counted in
//! [`super::RunState::awaiting_review`]); a `review_accepted` makes it usable with the
//! status the decision gave, a `review_rejected` leaves it failed; either is kept as the
//! task's [`ReviewMark`] and written into its notes and output.

use std::sync::Arc;

use super::ops::{account_quality, marker, set_status, unaccount_quality};
use super::review_mark::ReviewMark;
use super::view::RunState;
use crate::model::event::{Envelope, ReviewAccepted, ReviewRejected};

/// Sets whether task `i` waits for review, keeping the run's count.
pub(super) fn set_awaiting(st: &mut RunState, i: usize, awaiting: bool) {
    if st.tasks[i].awaiting_review == awaiting {
        return;
    }
    Arc::make_mut(&mut st.tasks[i]).awaiting_review = awaiting;
    if awaiting {
        st.awaiting_review += 1;
    } else {
        st.awaiting_review = st.awaiting_review.saturating_sub(1);
    }
}

/// Folds a `review_accepted` for task `i`.
pub(super) fn accepted(st: &mut RunState, i: usize, env: &Envelope, r: &ReviewAccepted) {
    let prev = st.tasks[i].status;
    if prev.is_final() {
        unaccount_quality(st, i, prev);
    }
    let t = Arc::make_mut(&mut st.tasks[i]);
    t.atoms = r.atoms;
    t.review = Some(Box::new(ReviewMark {
        accepted: true,
        reviewer: Arc::from(r.reviewer.as_str()),
        at_ms: env.ts,
        invocation: env.invocation_id.clone(),
        text: r.note.clone(),
    }));
    set_awaiting(st, i, false);
    noted(st, i);
    set_status(st, i, r.status);
    account_quality(st, i, r.status);
}

/// Folds a `review_rejected` for task `i`.
pub(super) fn rejected(st: &mut RunState, i: usize, env: &Envelope, r: &ReviewRejected) {
    Arc::make_mut(&mut st.tasks[i]).review = Some(Box::new(ReviewMark {
        accepted: false,
        reviewer: Arc::from(r.reviewer.as_str()),
        at_ms: env.ts,
        invocation: env.invocation_id.clone(),
        text: Some(r.reason.clone()),
    }));
    set_awaiting(st, i, false);
    noted(st, i);
}

/// Notes task `i`'s review decision in its notes and output.
fn noted(st: &mut RunState, i: usize) {
    let Some(text) = st.tasks[i].review.as_ref().map(|r| r.describe()) else {
        return;
    };
    marker(st, i, &format!("── {text} ──"));
    super::slim::push(&mut Arc::make_mut(&mut st.tasks[i]).notes, text);
}
