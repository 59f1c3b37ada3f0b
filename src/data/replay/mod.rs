//! Offline replay of a logged run: the same reducer and screens as a live run, fed from
//! the log. [`log::ReplayLog`] indexes the log and answers seeks from snapshots;
//! [`player::Player`] runs it on a thread of its own for the UI; [`marks::Marks`] holds
//! each event's time and the jump targets; [`stored`] opens a run at any event from the
//! snapshots stored in the database.

pub mod feed;
pub mod log;
pub mod marks;
pub mod player;
pub mod stored;
