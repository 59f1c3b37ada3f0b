//! Contrast of the themes' colours (WCAG 2: relative luminance of sRGB, ratio from 1 to
//! 21). Named terminal colours are taken at xterm's default palette.

use ratatui::style::Color;

use super::theme::Theme;

/// The least contrast text must have against its background (WCAG AA).
pub const MIN_TEXT_CONTRAST: f64 = 4.5;

/// The RGB of a colour: named and indexed colours at xterm's defaults; `None` for
/// `reset` (the terminal's own colour).
pub fn rgb(c: Color) -> Option<(u8, u8, u8)> {
    const XTERM: [(u8, u8, u8); 16] = [
        (0, 0, 0),
        (205, 0, 0),
        (0, 205, 0),
        (205, 205, 0),
        (0, 0, 238),
        (205, 0, 205),
        (0, 205, 205),
        (229, 229, 229),
        (127, 127, 127),
        (255, 0, 0),
        (0, 255, 0),
        (255, 255, 0),
        (92, 92, 255),
        (255, 0, 255),
        (0, 255, 255),
        (255, 255, 255),
    ];
    let idx = |i: usize| Some(XTERM[i]);
    match c {
        Color::Reset => None,
        Color::Rgb(r, g, b) => Some((r, g, b)),
        Color::Black => idx(0),
        Color::Red => idx(1),
        Color::Green => idx(2),
        Color::Yellow => idx(3),
        Color::Blue => idx(4),
        Color::Magenta => idx(5),
        Color::Cyan => idx(6),
        Color::Gray => idx(7),
        Color::DarkGray => idx(8),
        Color::LightRed => idx(9),
        Color::LightGreen => idx(10),
        Color::LightYellow => idx(11),
        Color::LightBlue => idx(12),
        Color::LightMagenta => idx(13),
        Color::LightCyan => idx(14),
        Color::White => idx(15),
        Color::Indexed(i) if i < 16 => idx(usize::from(i)),
        Color::Indexed(i) if i >= 232 => {
            let v = 8 + (i - 232) * 10;
            Some((v, v, v))
        }
        Color::Indexed(i) => {
            let i = i - 16;
            let step = |v: u8| if v == 0 { 0 } else { 55 + v * 40 };
            Some((step(i / 36), step((i / 6) % 6), step(i % 6)))
        }
    }
}

fn luminance((r, g, b): (u8, u8, u8)) -> f64 {
    let f = |c: u8| {
        let c = f64::from(c) / 255.0;
        if c <= 0.03928 {
            c / 12.92
        } else {
            ((c + 0.055) / 1.055).powf(2.4)
        }
    };
    0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b)
}

/// The contrast ratio of two colours; `None` when either is the terminal's own.
pub fn contrast(a: Color, b: Color) -> Option<f64> {
    let (la, lb) = (luminance(rgb(a)?), luminance(rgb(b)?));
    let (hi, lo) = if la > lb { (la, lb) } else { (lb, la) };
    Some((hi + 0.05) / (lo + 0.05))
}

/// Every pair of text colour and background a theme draws: each text role on the
/// screen's background, the selected row, and the status badges (the screen's
/// background on a role colour).
pub fn text_pairs(t: &Theme) -> Vec<(String, Color, Color)> {
    let mut out: Vec<(String, Color, Color)> = [
        ("base", t.base_fg),
        ("muted", t.muted),
        ("accent", t.accent),
        ("ok", t.ok),
        ("warn", t.warn),
        ("error", t.error),
        ("title", t.title),
    ]
    .into_iter()
    .map(|(n, c)| (n.to_string(), c, t.base_bg))
    .collect();
    for (i, &c) in t.agents.iter().enumerate() {
        out.push((format!("agents[{i}]"), c, t.base_bg));
    }
    out.push(("selection".into(), t.selection_fg, t.selection_bg));
    for (n, c) in [("ok", t.ok), ("warn", t.warn), ("error", t.error)] {
        out.push((format!("{n} badge"), t.base_bg, c));
    }
    out
}
