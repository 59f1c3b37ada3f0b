//! Every text colour of every built-in theme stands out from what it is drawn on: at
//! least 4.5:1 (WCAG AA), named terminal colours taken at xterm's defaults.

use plexus::ui::contrast::{contrast, text_pairs, MIN_TEXT_CONTRAST};
use plexus::ui::theme::Theme;

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
