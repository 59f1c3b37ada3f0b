//! Rendering: screens and panes drawn from `RunState` and `UiState`, themes, text safety.
//! Nothing here does I/O or touches the engine; widgets read state and draw.

pub mod atoms;
pub mod budget;
pub mod completions;
pub mod contrast;
pub mod dag;
pub mod debate;
pub mod failures;
pub mod fit;
pub mod help;
pub mod hints;
pub mod loop_fold;
pub mod loop_popup;
pub mod output;
pub mod overlay;
pub mod quality;
pub mod rank;
pub mod runs;
pub mod screen;
pub mod status;
pub mod text;
pub mod theme;

pub use screen::{draw, draw_buffer};
