//! Style helpers: what each colour role means when drawn (text, badges, borders, task
//! statuses and quality grades). The mapping is the same for every theme; only the
//! colours come from the theme's data file.

use ratatui::style::{Color, Modifier, Style};

use super::palette::Theme;

impl Theme {
    /// The whole screen: base text on the base background.
    pub fn style_base(&self) -> Style {
        Style::new().fg(self.base_fg).bg(self.base_bg)
    }

    /// Secondary text.
    pub fn muted(&self) -> Style {
        Style::new().fg(self.muted)
    }

    /// Active or selectable things.
    pub fn accent(&self) -> Style {
        Style::new().fg(self.accent)
    }

    /// Success.
    pub fn ok(&self) -> Style {
        Style::new().fg(self.ok)
    }

    /// Warnings.
    pub fn warn(&self) -> Style {
        Style::new().fg(self.warn)
    }

    /// Errors.
    pub fn error(&self) -> Style {
        Style::new().fg(self.error)
    }

    /// A badge: the screen's background colour on `c` (a status word on a bar, where
    /// the role colour as text would not stand out).
    pub fn badge(&self, c: Color) -> Style {
        Style::new()
            .fg(self.base_bg)
            .bg(c)
            .add_modifier(Modifier::BOLD)
    }

    /// The selected row.
    pub fn selected(&self) -> Style {
        Style::new().fg(self.selection_fg).bg(self.selection_bg)
    }

    /// A pane border, brighter when the pane has focus.
    pub fn border(&self, focused: bool) -> Style {
        Style::new().fg(if focused {
            self.border_focus
        } else {
            self.border
        })
    }

    /// Pane and screen titles.
    pub fn title(&self) -> Style {
        Style::new().fg(self.title).add_modifier(Modifier::BOLD)
    }

    /// A gauge: the filled part in the accent colour on the gauge background.
    pub fn gauge(&self) -> Style {
        Style::new().fg(self.accent).bg(self.gauge_bg)
    }

    /// The colour of the agent at `index` (cycled).
    pub fn agent(&self, index: usize) -> Color {
        match self.agents.len() {
            0 => self.base_fg,
            n => self.agents[index % n],
        }
    }

    /// The style of a task status (`pending`, `ready`, `running`, `success`, `partial`,
    /// `failed`, `timeout`, `blocked`, `cancelled`, and `lost` for a call cut off by a
    /// crash); anything else is plain text.
    pub fn status(&self, status: &str) -> Style {
        match status {
            "pending" | "cancelled" => self.muted(),
            "ready" => self.accent(),
            "running" => self.accent().add_modifier(Modifier::BOLD),
            "success" => self.ok(),
            "partial" | "timeout" | "lost" => self.warn(),
            "failed" => self.error(),
            "blocked" => self.error().add_modifier(Modifier::DIM),
            _ => Style::new().fg(self.base_fg),
        }
    }

    /// The style of a quality grade: A ok, B accent, C warn, D error, other muted.
    pub fn grade(&self, grade: char) -> Style {
        match grade.to_ascii_uppercase() {
            'A' => self.ok(),
            'B' => self.accent(),
            'C' => self.warn(),
            'D' => self.error(),
            _ => self.muted(),
        }
    }
}
