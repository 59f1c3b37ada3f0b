//! Every text colour of every built-in theme stands out from what it is drawn on: at
//! least 4.5:1 (WCAG AA), named terminal colours taken at xterm's defaults.

use plexus::tui::ui::contrast::{contrast, text_pairs, MIN_TEXT_CONTRAST};
use plexus::tui::ui::theme::Theme;

#[test]
fn every_text_role_of_every_built_in_theme_has_a_contrast_of_at_least_4_5() {
    let mut bad = Vec::new();
    for name in ["dark", "light", "high-contrast"] {
        let t = Theme::builtin(name).expect(name);
        for (role, fg, bg) in text_pairs(&t) {
            let c = contrast(fg, bg).unwrap_or_else(|| panic!("{name} {role}: no colour"));
            if c < MIN_TEXT_CONTRAST {
                bad.push(format!("{name}: {role} {fg:?} on {bg:?} is {c:.2}:1"));
            }
        }
    }
    assert!(bad.is_empty(), "below 4.5:1:\n{}", bad.join("\n"));
}

#[test]
fn the_contrast_formula_matches_known_pairs() {
    use ratatui::style::Color;
    let c = contrast(Color::Rgb(0, 0, 0), Color::Rgb(255, 255, 255)).expect("rgb");
    assert!((c - 21.0).abs() < 1e-9);
    let same = contrast(Color::Rgb(80, 80, 80), Color::Rgb(80, 80, 80)).expect("rgb");
    assert!((same - 1.0).abs() < 1e-9);
    // #767676 on white is the classic AA threshold: 4.54:1.
    let grey = contrast(Color::Rgb(0x76, 0x76, 0x76), Color::White).expect("rgb");
    assert!((grey - 4.54).abs() < 0.01, "{grey}");
}

/// The pair list above is kept by hand; this checks it against what is drawn. Every
/// screen of the recorded demo run is rendered with each built-in theme, and every cell
/// that holds a letter or digit must stand out from its own background. Borders, gauges
/// and other drawing glyphs are not text and are left out.
#[test]
fn every_drawn_letter_of_every_screen_has_a_contrast_of_at_least_4_5() {
    use plexus::model::event::Envelope;
    use plexus::model::state::{reduce, RunState};
    use plexus::tui::app::keymap::Keymap;
    use plexus::tui::app::{Screen, UiState};
    use ratatui::backend::TestBackend;
    use ratatui::style::Color;
    use ratatui::Terminal;

    let mut run = RunState::new();
    for line in include_str!("../../fixtures/runs/demo.jsonl").lines() {
        let env: Envelope = serde_json::from_str(line).expect("fixture line");
        reduce(&mut run, &env);
    }
    let keys = Keymap::default_keys();
    let mut bad = std::collections::BTreeSet::new();
    for name in ["dark", "light", "high-contrast"] {
        let t = Theme::builtin(name).expect(name);
        for screen in Screen::ALL {
            let mut ui = UiState::new(true);
            ui.screen = screen;
            let mut term = Terminal::new(TestBackend::new(120, 40)).expect("terminal");
            term.draw(|f| plexus::tui::ui::draw(f, &run, &mut ui, &t, &keys))
                .expect("draw");
            for cell in term.backend().buffer().content() {
                if !cell.symbol().chars().any(char::is_alphanumeric) {
                    continue;
                }
                let fg = if cell.fg == Color::Reset {
                    t.base_fg
                } else {
                    cell.fg
                };
                let bg = if cell.bg == Color::Reset {
                    t.base_bg
                } else {
                    cell.bg
                };
                let c = contrast(fg, bg).unwrap_or_else(|| panic!("{name}: no colour"));
                if c < MIN_TEXT_CONTRAST {
                    let roles: Vec<String> = text_pairs(&t)
                        .into_iter()
                        .filter(|(_, f, _)| *f == fg)
                        .map(|(role, _, _)| role)
                        .collect();
                    let role = if roles.is_empty() {
                        "?".to_string()
                    } else {
                        roles.join("/")
                    };
                    bad.insert(format!(
                        "{name} {screen:?}: {role} {fg:?} on {bg:?} is {c:.2}:1"
                    ));
                }
            }
        }
    }
    assert!(
        bad.is_empty(),
        "drawn below 4.5:1:\n{}",
        bad.into_iter().collect::<Vec<_>>().join("\n")
    );
}
