//! Colour values as theme files write them.

use ratatui::style::Color;

/// Parses a colour: `"#rrggbb"`, `"#rgb"`, a name (`"red"`, `"darkgray"`, `"light-cyan"`,
/// case-insensitive), an ANSI index `"0"`–`"255"`, or `"reset"` (the terminal's own).
pub fn parse_color(s: &str) -> Option<Color> {
    let s = s.trim();
    if let Some(hex) = s.strip_prefix('#') {
        if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        let channel = |i: usize, len: usize| u8::from_str_radix(hex.get(i..i + len)?, 16).ok();
        return match hex.len() {
            6 => Some(Color::Rgb(channel(0, 2)?, channel(2, 2)?, channel(4, 2)?)),
            3 => {
                let expand = |v: u8| v * 17;
                Some(Color::Rgb(
                    expand(channel(0, 1)?),
                    expand(channel(1, 1)?),
                    expand(channel(2, 1)?),
                ))
            }
            _ => None,
        };
    }
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        return s.parse::<u8>().ok().map(Color::Indexed);
    }
    let name: String = s
        .chars()
        .filter(|c| !matches!(c, '-' | '_' | ' '))
        .map(|c| c.to_ascii_lowercase())
        .collect();
    Some(match name.as_str() {
        "reset" => Color::Reset,
        "black" => Color::Black,
        "red" => Color::Red,
        "green" => Color::Green,
        "yellow" => Color::Yellow,
        "blue" => Color::Blue,
        "magenta" => Color::Magenta,
        "cyan" => Color::Cyan,
        "gray" | "grey" => Color::Gray,
        "darkgray" | "darkgrey" => Color::DarkGray,
        "lightred" => Color::LightRed,
        "lightgreen" => Color::LightGreen,
        "lightyellow" => Color::LightYellow,
        "lightblue" => Color::LightBlue,
        "lightmagenta" => Color::LightMagenta,
        "lightcyan" => Color::LightCyan,
        "white" => Color::White,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn colours_parse() {
        assert_eq!(parse_color("#1a2B3c"), Some(Color::Rgb(0x1a, 0x2b, 0x3c)));
        assert_eq!(parse_color("#fff"), Some(Color::Rgb(255, 255, 255)));
        assert_eq!(parse_color("red"), Some(Color::Red));
        assert_eq!(parse_color("DarkGray"), Some(Color::DarkGray));
        assert_eq!(parse_color("dark_grey"), Some(Color::DarkGray));
        assert_eq!(parse_color("light-cyan"), Some(Color::LightCyan));
        assert_eq!(parse_color("reset"), Some(Color::Reset));
        assert_eq!(parse_color("208"), Some(Color::Indexed(208)));
        for bad in [
            "", "#", "#12345", "#12345g", "#ééé", "256", "purple", "-1", "#+1+2+3",
        ] {
            assert_eq!(parse_color(bad), None, "{bad:?}");
        }
    }
}
