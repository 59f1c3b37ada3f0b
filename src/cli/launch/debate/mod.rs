//! Debate sessions as runs: starting one (its run row, writer and engine), running it
//! without the UI, and the comparer of its positions.

pub mod comparer;
pub mod headless;
pub mod start;

pub use self::comparer::{comparer_again, comparer_for, moderator_again, moderator_for};
pub use self::headless::{headless, report_text};
pub use self::start::{now_data, plan_source, start_debate};
