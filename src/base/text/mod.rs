//! Text safety and layout with no screen attached: sanitizing untrusted text for a
//! terminal, display widths and wrapping, and cutting text at whole words or graphemes;
//! the built-in text embedding. Every layer may use it; it imports nothing of plexus.

pub mod blocks;
pub mod cut;
pub mod embed;
pub mod reasoning;
pub mod sanitize;
pub mod suggest;
pub mod summary;
pub mod utf8;
pub mod wrap;
