//! Themes: semantic colour roles (`base`, `muted`, `accent`, `ok`, `warn`, `error`,
//! selection, borders, one colour per agent), the built-in themes embedded from
//! `themes/*.toml`, and user theme files that list only what they change.
//!
//! A theme file:
//!
//! ```toml
//! name = "mine"
//! extends = "dark"            # optional: dark (default), light or high-contrast
//! [colors]
//! accent = "#ff9e64"          # "#rrggbb", a name such as "red" or "darkgray", or "reset"
//! base = { bg = "reset" }     # pairs take fg and/or bg
//! agents = ["red", "green"]   # one per agent, cycled
//! ```
//!
//! The palettes live in `themes/*.toml` (data, embedded in the binary); the code here
//! only parses, checks and looks them up.

mod builtin;
mod color;
mod error;
mod load;
mod overrides;
mod palette;
mod parse;
mod roles;
mod styles;

pub use builtin::BUILTIN_NAMES;
pub use color::parse_color;
pub use error::ThemeError;
pub use load::load_or_fallback;
pub use palette::Theme;

#[cfg(test)]
mod tests;
