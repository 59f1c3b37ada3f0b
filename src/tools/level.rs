//! The output level of a call (seed 003 priority chain).

use crate::protocol::messages::OutputLevel;

/// Context window usage above which every result is brief.
pub const BRIEF_ABOVE_USAGE: f64 = 0.8;

/// The output level of a call, seed 003's priority: 1) the level the agent asked for,
/// 2) the tool's default, 3) the global default; then 4) the dynamic adjustment: when
/// the context window is more than 80% full (`context_usage > 0.8`, strictly; exactly
/// 0.8 keeps the chosen level) the level is brief.
///
/// The adjustment applies over every choice, an explicit level included: a nearly full
/// window cannot take a full dump whoever asked for it, and a brief observation still
/// tells the agent what was found. A usage that is not a number (NaN) adjusts nothing.
pub fn effective_level(
    explicit: Option<OutputLevel>,
    tool_default: Option<OutputLevel>,
    global_default: OutputLevel,
    context_usage: f64,
) -> OutputLevel {
    if context_usage > BRIEF_ABOVE_USAGE {
        return OutputLevel::Brief;
    }
    explicit.or(tool_default).unwrap_or(global_default)
}

/// The level as written in metrics (`brief`, `standard`, `full`).
pub fn level_name(level: OutputLevel) -> &'static str {
    match level {
        OutputLevel::Brief => "brief",
        OutputLevel::Standard => "standard",
        OutputLevel::Full => "full",
    }
}
