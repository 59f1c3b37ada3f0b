//! The `Theme` value: one colour per semantic role, and the plain fallback theme.

use ratatui::style::Color;

/// A colour theme. Draw code uses the helper methods, which name what a colour means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Theme {
    /// The theme's name.
    pub name: String,
    /// Ordinary text.
    pub base_fg: Color,
    /// The background of the whole screen.
    pub base_bg: Color,
    /// Secondary text: hints, pending items, timestamps.
    pub muted: Color,
    /// What is active or selectable: running tasks, keys, links.
    pub accent: Color,
    /// Success, grade A.
    pub ok: Color,
    /// Partial results, timeouts, grade C.
    pub warn: Color,
    /// Failures, grade D.
    pub error: Color,
    /// Text of the selected row.
    pub selection_fg: Color,
    /// Background of the selected row.
    pub selection_bg: Color,
    /// Borders of unfocused panes.
    pub border: Color,
    /// Border of the focused pane.
    pub border_focus: Color,
    /// Pane and screen titles.
    pub title: Color,
    /// The empty part of a gauge.
    pub gauge_bg: Color,
    /// One colour per agent, cycled; never empty in a loaded theme.
    pub agents: Vec<Color>,
}

impl Theme {
    /// The terminal's own colours everywhere: the last resort if a built-in is broken.
    pub(super) fn plain() -> Theme {
        Theme {
            name: "plain".to_string(),
            base_fg: Color::Reset,
            base_bg: Color::Reset,
            muted: Color::Reset,
            accent: Color::Reset,
            ok: Color::Reset,
            warn: Color::Reset,
            error: Color::Reset,
            selection_fg: Color::Reset,
            selection_bg: Color::Reset,
            border: Color::Reset,
            border_focus: Color::Reset,
            title: Color::Reset,
            gauge_bg: Color::Reset,
            agents: vec![Color::Reset],
        }
    }
}

pub(super) fn slot_mut<'t>(theme: &'t mut Theme, slot: &str) -> Option<&'t mut Color> {
    Some(match slot {
        "base.fg" => &mut theme.base_fg,
        "base.bg" => &mut theme.base_bg,
        "muted" => &mut theme.muted,
        "accent" => &mut theme.accent,
        "ok" => &mut theme.ok,
        "warn" => &mut theme.warn,
        "error" => &mut theme.error,
        "selection.fg" => &mut theme.selection_fg,
        "selection.bg" => &mut theme.selection_bg,
        "border" => &mut theme.border,
        "border_focus" => &mut theme.border_focus,
        "title" => &mut theme.title,
        "gauge_bg" => &mut theme.gauge_bg,
        _ => return None,
    })
}
