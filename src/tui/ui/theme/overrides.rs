//! The roles one theme file sets, applied over a base theme.

use ratatui::style::Color;

use super::palette::{slot_mut, Theme};
use super::roles::ALL_SLOTS;

/// The roles a theme file sets.
#[derive(Debug, Default)]
pub(super) struct Overrides {
    /// `(slot, colour)`, slots named like `base.fg` or `muted`.
    pub(super) colors: Vec<(&'static str, Color)>,
    pub(super) agents: Option<Vec<Color>>,
}

impl Overrides {
    pub(super) fn apply(&self, theme: &mut Theme) {
        for &(slot, color) in &self.colors {
            if let Some(target) = slot_mut(theme, slot) {
                *target = color;
            }
        }
        if let Some(agents) = &self.agents {
            theme.agents.clone_from(agents);
        }
    }

    /// A theme from these roles alone, if they set every one.
    pub(super) fn complete(&self, name: String) -> Option<Theme> {
        let all_set = ALL_SLOTS
            .iter()
            .all(|slot| self.colors.iter().any(|(s, _)| s == slot));
        if !all_set || self.agents.is_none() {
            return None;
        }
        let mut theme = Theme::plain();
        self.apply(&mut theme);
        theme.name = name;
        Some(theme)
    }

    /// Roles a complete theme needs and these do not set.
    #[cfg(test)]
    pub(super) fn missing(&self) -> Vec<&'static str> {
        let mut missing: Vec<&'static str> = ALL_SLOTS
            .iter()
            .copied()
            .filter(|slot| !self.colors.iter().any(|(s, _)| s == slot))
            .collect();
        if self.agents.is_none() {
            missing.push("agents");
        }
        missing
    }
}
