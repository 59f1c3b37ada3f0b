//! Offline replay of a logged run: the same reducer and screens as a live run, fed from
//! the log. [`log::ReplayLog`] indexes the log and answers seeks from snapshots;
//! [`player::Player`] runs it on a thread of its own for the UI; [`marks::Marks`] holds
//! each event's time and the jump targets.

pub mod feed;
pub mod log;
pub mod marks;
pub mod player;
