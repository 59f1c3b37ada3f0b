//! Ranks of the status bar's parts (see [`super::fit::Part::rank`]): the higher stays longer.

/// What is being typed: never left out.
pub const TYPED: u8 = 255;
/// The run's state (or that no run is open).
pub const STATE: u8 = 100;
/// The prompt's label while typing.
pub const PROMPT: u8 = 95;
/// The next step a run waiting for a person needs (`4 v review`).
pub const NEXT_STEP: u8 = 92;
/// The tasks counted by outcome.
pub const COUNTS: u8 = 90;
/// The calls in flight and the slowest one.
pub const CALLS: u8 = 69;
/// The latest message (in place of the keys; cut at a word when the room is short).
pub const MESSAGE: u8 = 86;
/// `? help`.
pub const HELP: u8 = 85;
/// A replay's position.
pub const POSITION: u8 = 84;
/// `q quit` and a replay's `space` key.
pub const QUIT: u8 = 83;
/// The run's clock.
pub const CLOCK: u8 = 75;
/// The run id from 100 columns (narrower, the title bar shows it: [`RUN_ID_NARROW`]).
pub const RUN_ID: u8 = 72;
/// The provider (from 100 columns).
pub const PROVIDER: u8 = 71;
/// Any other key.
pub const KEY: u8 = 70;
/// The run id under 100 columns.
pub const RUN_ID_NARROW: u8 = 40;
