//! The colour roles a theme file may set, as the parser and error messages name them.

/// Colour roles that take a single colour.
pub(super) const SINGLE_ROLES: [&str; 9] = [
    "muted",
    "accent",
    "ok",
    "warn",
    "error",
    "border",
    "border_focus",
    "title",
    "gauge_bg",
];

/// Colour roles that take a `{ fg, bg }` pair.
pub(super) const PAIR_ROLES: [&str; 2] = ["base", "selection"];

/// Every role a theme file may set, for error messages.
pub(super) const KNOWN_ROLES: &str =
    "base, muted, accent, ok, warn, error, selection, border, border_focus, title, gauge_bg, agents";

/// Every single-colour slot of a complete theme.
pub(super) const ALL_SLOTS: [&str; 13] = [
    "base.fg",
    "base.bg",
    "muted",
    "accent",
    "ok",
    "warn",
    "error",
    "selection.fg",
    "selection.bg",
    "border",
    "border_focus",
    "title",
    "gauge_bg",
];
