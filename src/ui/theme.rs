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

use std::path::{Path, PathBuf};

use ratatui::style::{Color, Modifier, Style};
use toml::de::{DeTable, DeValue};
use toml::Spanned;

/// The names of the built-in themes; the first is the default.
pub const BUILTIN_NAMES: [&str; 3] = ["dark", "light", "high-contrast"];

const DARK_TOML: &str = include_str!("../../themes/dark.toml");
const LIGHT_TOML: &str = include_str!("../../themes/light.toml");
const HIGH_CONTRAST_TOML: &str = include_str!("../../themes/high-contrast.toml");

/// Colour roles that take a single colour.
const SINGLE_ROLES: [&str; 9] = [
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
const PAIR_ROLES: [&str; 2] = ["base", "selection"];

/// Every role a theme file may set, for error messages.
const KNOWN_ROLES: &str =
    "base, muted, accent, ok, warn, error, selection, border, border_focus, title, gauge_bg, agents";

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

impl Default for Theme {
    fn default() -> Self {
        Self::dark()
    }
}

impl Theme {
    /// The default theme.
    pub fn dark() -> Theme {
        Self::builtin("dark").unwrap_or_else(Self::plain)
    }

    /// A built-in theme by name (`dark`, `light`, `high-contrast`; case-insensitive).
    pub fn builtin(name: &str) -> Option<Theme> {
        let builtin = builtin_source(name)?;
        let parsed = parse_theme(builtin.src, Path::new(builtin.file)).ok()?;
        if parsed.extends.is_some() {
            return None;
        }
        parsed.overrides.complete(parsed.name.unwrap_or_default())
    }

    /// Loads a theme: `spec` is a built-in name, a name looked up as
    /// `<config_dir>/themes/<name>.toml`, or a path to a `.toml` file.
    pub fn load(spec: &str, config_dir: Option<&Path>) -> Result<Theme, ThemeError> {
        let spec = spec.trim();
        if let Some(theme) = Self::builtin(spec) {
            return Ok(theme);
        }
        let is_path = spec.ends_with(".toml")
            || spec.contains('/')
            || spec.contains(std::path::MAIN_SEPARATOR);
        if is_path {
            return Self::from_file(Path::new(spec));
        }
        if spec.is_empty() {
            return Err(ThemeError::UnknownTheme {
                name: spec.to_string(),
                looked: None,
            });
        }
        let looked = config_dir.map(|dir| dir.join("themes").join(format!("{spec}.toml")));
        match looked {
            Some(path) if path.is_file() => Self::from_file(&path),
            looked => Err(ThemeError::UnknownTheme {
                name: spec.to_string(),
                looked,
            }),
        }
    }

    /// Loads a user theme file.
    pub fn from_file(path: &Path) -> Result<Theme, ThemeError> {
        let src = std::fs::read_to_string(path).map_err(|source| {
            if source.kind() == std::io::ErrorKind::NotFound {
                ThemeError::Missing {
                    path: path.to_path_buf(),
                }
            } else {
                ThemeError::Read {
                    path: path.to_path_buf(),
                    source,
                }
            }
        })?;
        Self::from_toml(&src, path)
    }

    /// Parses a user theme; `path` names the file in errors. Roles it does not set come
    /// from the theme it `extends` (dark when it names none).
    pub fn from_toml(src: &str, path: &Path) -> Result<Theme, ThemeError> {
        let parsed = parse_theme(src, path)?;
        let base_name = parsed.extends.unwrap_or(BUILTIN_NAMES[0]);
        let mut theme = Self::builtin(base_name).unwrap_or_else(Self::plain);
        parsed.overrides.apply(&mut theme);
        theme.name = parsed.name.unwrap_or_else(|| {
            path.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default()
        });
        Ok(theme)
    }

    /// The terminal's own colours everywhere: the last resort if a built-in is broken.
    fn plain() -> Theme {
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

/// Loads a theme, falling back to dark: returns the theme and, when loading failed, the
/// warning to show.
pub fn load_or_fallback(spec: &str, config_dir: Option<&Path>) -> (Theme, Option<String>) {
    match Theme::load(spec, config_dir) {
        Ok(theme) => (theme, None),
        Err(err) => (Theme::dark(), Some(format!("{err}; using the dark theme"))),
    }
}

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

/// Why a theme could not be loaded. Every message names the file and the problem.
#[derive(Debug, thiserror::Error)]
pub enum ThemeError {
    /// Not a built-in theme and no such file in the config directory.
    #[error(
        "theme `{name}` not found: it is not a built-in theme (dark, light, high-contrast){}",
        looked_note(.looked)
    )]
    UnknownTheme {
        /// The name asked for.
        name: String,
        /// The file looked for in the config directory, if there is one.
        looked: Option<PathBuf>,
    },
    /// The theme file does not exist.
    #[error("theme file {} does not exist", .path.display())]
    Missing {
        /// The file.
        path: PathBuf,
    },
    /// The theme file could not be read.
    #[error("cannot read theme file {}: {source}", .path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not valid TOML.
    #[error("{}:{line}:{column}: TOML syntax error: {message}", .path.display())]
    Syntax {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What the parser says.
        message: String,
    },
    /// `[colors]` names a role that does not exist.
    #[error("{}:{line}: unknown colour role `{role}` (roles: {KNOWN_ROLES})", .path.display())]
    UnknownRole {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// The role as written (`base.fgg` for a pair).
        role: String,
    },
    /// A colour value does not parse.
    #[error(
        "{}:{line}: bad colour {value:?} for `{role}`: use \"#rrggbb\", a name such as \"red\" or \"darkgray\", or \"reset\"",
        .path.display()
    )]
    BadColor {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// The role (`agents[2]` for a list entry).
        role: String,
        /// The value as written.
        value: String,
    },
    /// `extends` names no built-in theme.
    #[error(
        "{}:{line}: unknown theme `{name}` in `extends` (built-in themes: dark, light, high-contrast)",
        .path.display()
    )]
    UnknownExtends {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// The name as written.
        name: String,
    },
    /// Anything else wrong with the file's shape.
    #[error("{}:{line}: {message}", .path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// What is wrong.
        message: String,
    },
}

fn looked_note(looked: &Option<PathBuf>) -> String {
    match looked {
        Some(path) => format!(" and {} does not exist", path.display()),
        None => String::new(),
    }
}

/// A built-in theme's canonical name, file name and source.
struct Builtin {
    name: &'static str,
    file: &'static str,
    src: &'static str,
}

fn builtin_source(name: &str) -> Option<Builtin> {
    let (name, file, src) = match name.trim().to_ascii_lowercase().as_str() {
        "dark" => ("dark", "themes/dark.toml", DARK_TOML),
        "light" => ("light", "themes/light.toml", LIGHT_TOML),
        "high-contrast" | "high_contrast" => (
            "high-contrast",
            "themes/high-contrast.toml",
            HIGH_CONTRAST_TOML,
        ),
        _ => return None,
    };
    Some(Builtin { name, file, src })
}

/// 1-based line and column of a byte offset.
fn line_col(src: &str, offset: usize) -> (usize, usize) {
    let before = src.get(..offset.min(src.len())).unwrap_or(src);
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    (line, column)
}

/// The roles a theme file sets.
#[derive(Debug, Default)]
struct Overrides {
    /// `(slot, colour)`, slots named like `base.fg` or `muted`.
    colors: Vec<(&'static str, Color)>,
    agents: Option<Vec<Color>>,
}

/// Every single-colour slot of a complete theme.
const ALL_SLOTS: [&str; 13] = [
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

fn slot_mut<'t>(theme: &'t mut Theme, slot: &str) -> Option<&'t mut Color> {
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

impl Overrides {
    fn apply(&self, theme: &mut Theme) {
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
    fn complete(&self, name: String) -> Option<Theme> {
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
    fn missing(&self) -> Vec<&'static str> {
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

/// A parsed theme file.
struct ParsedTheme {
    name: Option<String>,
    /// The canonical built-in name it extends.
    extends: Option<&'static str>,
    overrides: Overrides,
}

/// Walks a theme file with spans, so every error can name its line.
struct ThemeParser<'a> {
    src: &'a str,
    path: &'a Path,
}

impl ThemeParser<'_> {
    fn line(&self, span: std::ops::Range<usize>) -> usize {
        line_col(self.src, span.start).0
    }

    fn invalid(&self, span: std::ops::Range<usize>, message: String) -> ThemeError {
        ThemeError::Invalid {
            path: self.path.to_path_buf(),
            line: self.line(span),
            message,
        }
    }

    fn color(&self, role: &str, value: &Spanned<DeValue<'_>>) -> Result<Color, ThemeError> {
        let (parsed, written) = match value.get_ref() {
            DeValue::String(s) => (parse_color(s), s.to_string()),
            other => (None, format!("<{}>", other.type_str())),
        };
        parsed.ok_or_else(|| ThemeError::BadColor {
            path: self.path.to_path_buf(),
            line: self.line(value.span()),
            role: role.to_string(),
            value: written,
        })
    }

    fn unknown_role(&self, span: std::ops::Range<usize>, role: String) -> ThemeError {
        ThemeError::UnknownRole {
            path: self.path.to_path_buf(),
            line: self.line(span),
            role,
        }
    }

    fn parse(&self) -> Result<ParsedTheme, ThemeError> {
        let root = DeTable::parse(self.src).map_err(|err| {
            let (line, column) = line_col(self.src, err.span().map_or(0, |s| s.start));
            ThemeError::Syntax {
                path: self.path.to_path_buf(),
                line,
                column,
                message: err.message().to_string(),
            }
        })?;
        let mut parsed = ParsedTheme {
            name: None,
            extends: None,
            overrides: Overrides::default(),
        };
        for (key, value) in root.get_ref() {
            match key.get_ref().as_ref() {
                "name" => match value.get_ref() {
                    DeValue::String(s) => parsed.name = Some(s.to_string()),
                    _ => {
                        return Err(self.invalid(value.span(), "`name` must be a string".into()))
                    }
                },
                "extends" => {
                    let canonical = value
                        .get_ref()
                        .as_str()
                        .and_then(builtin_source)
                        .map(|builtin| builtin.name);
                    match canonical {
                        Some(name) => parsed.extends = Some(name),
                        None => {
                            return Err(ThemeError::UnknownExtends {
                                path: self.path.to_path_buf(),
                                line: self.line(value.span()),
                                name: value
                                    .get_ref()
                                    .as_str()
                                    .map_or_else(|| value.get_ref().type_str().into(), Into::into),
                            })
                        }
                    }
                }
                "colors" => match value.get_ref() {
                    DeValue::Table(colors) => self.colors(colors, &mut parsed.overrides)?,
                    _ => {
                        return Err(self.invalid(value.span(), "`colors` must be a table".into()))
                    }
                },
                other => {
                    return Err(self.invalid(
                        key.span(),
                        format!(
                            "unknown key `{other}` (a theme has `name`, `extends` and a [colors] table)"
                        ),
                    ))
                }
            }
        }
        Ok(parsed)
    }

    fn colors(&self, colors: &DeTable<'_>, out: &mut Overrides) -> Result<(), ThemeError> {
        for (key, value) in colors {
            let role = key.get_ref().as_ref();
            if let Some(&slot) = SINGLE_ROLES.iter().find(|&&r| r == role) {
                out.colors.push((slot, self.color(slot, value)?));
            } else if let Some(&pair) = PAIR_ROLES.iter().find(|&&r| r == role) {
                let DeValue::Table(parts) = value.get_ref() else {
                    return Err(self.invalid(
                        value.span(),
                        format!("`{pair}` takes a table: {pair} = {{ fg = \"…\", bg = \"…\" }}"),
                    ));
                };
                for (part_key, part_value) in parts {
                    let slot = match (pair, part_key.get_ref().as_ref()) {
                        ("base", "fg") => "base.fg",
                        ("base", "bg") => "base.bg",
                        ("selection", "fg") => "selection.fg",
                        ("selection", "bg") => "selection.bg",
                        (_, part) => {
                            return Err(self.unknown_role(part_key.span(), format!("{pair}.{part}")))
                        }
                    };
                    out.colors.push((slot, self.color(slot, part_value)?));
                }
            } else if role == "agents" {
                let DeValue::Array(items) = value.get_ref() else {
                    return Err(self.invalid(
                        value.span(),
                        "`agents` takes a list of colours: agents = [\"red\", \"#00ff00\"]".into(),
                    ));
                };
                if items.is_empty() {
                    return Err(
                        self.invalid(value.span(), "`agents` needs at least one colour".into())
                    );
                }
                let agents = items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| self.color(&format!("agents[{i}]"), item))
                    .collect::<Result<Vec<_>, _>>()?;
                out.agents = Some(agents);
            } else {
                return Err(self.unknown_role(key.span(), role.to_string()));
            }
        }
        Ok(())
    }
}

fn parse_theme(src: &str, path: &Path) -> Result<ParsedTheme, ThemeError> {
    ThemeParser { src, path }.parse()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn user(src: &str) -> Result<Theme, ThemeError> {
        Theme::from_toml(src, Path::new("mine.toml"))
    }

    fn message(src: &str) -> String {
        match user(src) {
            Ok(theme) => panic!("expected an error, got {theme:?}"),
            Err(err) => err.to_string(),
        }
    }

    #[test]
    fn every_builtin_parses_and_is_complete() {
        for name in BUILTIN_NAMES {
            let builtin = builtin_source(name).expect("listed built-in has a source");
            assert_eq!(builtin.name, name);
            let parsed = parse_theme(builtin.src, Path::new(builtin.file))
                .unwrap_or_else(|err| panic!("{name}: {err}"));
            assert!(parsed.extends.is_none(), "{name} must not extend");
            assert_eq!(parsed.overrides.missing(), Vec::<&str>::new(), "{name}");
            assert_eq!(parsed.name.as_deref(), Some(name));
            let theme = Theme::builtin(name).expect("complete");
            assert_eq!(theme.name, name);
            assert!(!theme.agents.is_empty());
        }
    }

    #[test]
    fn builtins_differ_and_dark_is_default() {
        let dark = Theme::dark();
        assert_eq!(dark.name, "dark");
        assert_eq!(Theme::default(), dark);
        assert_ne!(Theme::builtin("light"), Some(dark.clone()));
        assert_eq!(Theme::builtin("DARK"), Some(dark));
        assert!(Theme::builtin("high_contrast").is_some());
        assert!(Theme::builtin("nope").is_none());
    }

    #[test]
    fn user_theme_overrides_one_colour_and_keeps_the_rest() {
        let theme = user("[colors]\naccent = \"#ff0000\"\n").expect("valid");
        let dark = Theme::dark();
        assert_eq!(theme.accent, Color::Rgb(255, 0, 0));
        assert_eq!(theme.name, "mine");
        let mut expected = dark;
        expected.accent = Color::Rgb(255, 0, 0);
        expected.name = "mine".into();
        assert_eq!(theme, expected);
    }

    #[test]
    fn user_theme_extends_light_and_sets_half_a_pair() {
        let src = "name = \"paper\"\nextends = \"light\"\n[colors]\nbase.bg = \"reset\"\nagents = [\"red\", \"blue\"]\n";
        let theme = user(src).expect("valid");
        let light = Theme::builtin("light").expect("built-in");
        assert_eq!(theme.name, "paper");
        assert_eq!(theme.base_bg, Color::Reset);
        assert_eq!(theme.base_fg, light.base_fg);
        assert_eq!(theme.selection_bg, light.selection_bg);
        assert_eq!(theme.agents, vec![Color::Red, Color::Blue]);
        assert_eq!(theme.agent(0), Color::Red);
        assert_eq!(theme.agent(3), Color::Blue);
    }

    #[test]
    fn user_theme_extends_high_contrast_by_either_spelling() {
        for spelling in ["high-contrast", "High_Contrast"] {
            let theme = user(&format!("extends = \"{spelling}\"\n")).expect("valid");
            let base = Theme::builtin("high-contrast").expect("built-in");
            assert_eq!(
                Theme {
                    name: base.name.clone(),
                    ..theme
                },
                base
            );
        }
    }

    #[test]
    fn empty_user_theme_is_dark_renamed() {
        let theme = user("").expect("valid");
        assert_eq!(
            Theme {
                name: "dark".into(),
                ..theme
            },
            Theme::dark()
        );
    }

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

    #[test]
    fn error_missing_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("gone.toml");
        let err = Theme::load(&path.to_string_lossy(), None).expect_err("missing");
        assert!(matches!(err, ThemeError::Missing { .. }));
        let msg = err.to_string();
        assert!(
            msg.contains("gone.toml") && msg.contains("does not exist"),
            "{msg}"
        );
    }

    #[test]
    fn error_unknown_name() {
        let dir = tempfile::tempdir().expect("tempdir");
        let msg = Theme::load("solarized", Some(dir.path()))
            .expect_err("unknown")
            .to_string();
        assert!(msg.contains("`solarized`"), "{msg}");
        assert!(msg.contains("solarized.toml does not exist"), "{msg}");
        let msg = Theme::load("solarized", None)
            .expect_err("unknown")
            .to_string();
        assert!(msg.contains("not a built-in theme"), "{msg}");
    }

    #[test]
    fn error_syntax_names_the_line() {
        let msg = message("name = \"x\"\n[colors]\naccent = \n");
        assert!(msg.starts_with("mine.toml:3:"), "{msg}");
        assert!(msg.contains("TOML syntax error"), "{msg}");
    }

    #[test]
    fn error_unknown_role() {
        let msg = message("[colors]\naccent = \"red\"\naccnet = \"red\"\n");
        assert_eq!(
            msg,
            format!("mine.toml:3: unknown colour role `accnet` (roles: {KNOWN_ROLES})")
        );
        let msg = message("[colors]\nbase = { fgg = \"red\" }\n");
        assert!(
            msg.contains("mine.toml:2: unknown colour role `base.fgg`"),
            "{msg}"
        );
    }

    #[test]
    fn error_bad_colour_names_role_and_value() {
        let msg = message("[colors]\n\nwarn = \"orange-ish\"\n");
        assert!(
            msg.starts_with("mine.toml:3: bad colour \"orange-ish\" for `warn`"),
            "{msg}"
        );
        let msg = message("[colors]\nagents = [\"red\", \"#12\"]\n");
        assert!(msg.contains("bad colour \"#12\" for `agents[1]`"), "{msg}");
        let msg = message("[colors]\nselection = { bg = 7 }\n");
        assert!(
            msg.contains("bad colour \"<integer>\" for `selection.bg`"),
            "{msg}"
        );
    }

    #[test]
    fn error_unknown_extends() {
        let msg = message("extends = \"solarized\"\n");
        assert!(
            msg.starts_with("mine.toml:1: unknown theme `solarized` in `extends`"),
            "{msg}"
        );
    }

    #[test]
    fn error_shapes() {
        assert!(message("colour = 1\n").contains("unknown key `colour`"));
        assert!(message("colors = 1\n").contains("`colors` must be a table"));
        assert!(message("[colors]\nbase = \"red\"\n").contains("`base` takes a table"));
        assert!(message("[colors]\nagents = []\n").contains("at least one colour"));
        assert!(message("[colors]\nagents = \"red\"\n").contains("list of colours"));
        assert!(message("name = 3\n").contains("`name` must be a string"));
    }

    #[test]
    fn load_finds_builtins_config_dir_and_paths() {
        let dir = tempfile::tempdir().expect("tempdir");
        let themes = dir.path().join("themes");
        std::fs::create_dir_all(&themes).expect("mkdir");
        std::fs::write(themes.join("ocean.toml"), "[colors]\nok = \"blue\"\n").expect("write");
        let ocean = Theme::load("ocean", Some(dir.path())).expect("config dir theme");
        assert_eq!(ocean.ok, Color::Blue);
        assert_eq!(ocean.name, "ocean");
        let by_path = themes.join("ocean.toml");
        let again = Theme::load(&by_path.to_string_lossy(), None).expect("path");
        assert_eq!(again, ocean);
        assert_eq!(Theme::load("light", None).expect("builtin").name, "light");
        // A built-in name wins over a file of the same name.
        std::fs::write(themes.join("dark.toml"), "[colors]\nok = \"blue\"\n").expect("write");
        assert_eq!(
            Theme::load("dark", Some(dir.path())).expect("dark"),
            Theme::dark()
        );
    }

    #[test]
    fn load_or_fallback_warns() {
        let (theme, warning) = load_or_fallback("light", None);
        assert_eq!(theme.name, "light");
        assert_eq!(warning, None);
        let (theme, warning) = load_or_fallback("/nonexistent/x.toml", None);
        assert_eq!(theme, Theme::dark());
        let warning = warning.expect("a warning");
        assert!(warning.contains("x.toml") && warning.contains("using the dark theme"));
    }

    #[test]
    fn statuses_and_grades() {
        let t = Theme::dark();
        assert_eq!(t.status("pending"), t.muted());
        assert_eq!(t.status("ready"), t.accent());
        assert_eq!(t.status("running"), t.accent().add_modifier(Modifier::BOLD));
        assert_eq!(t.status("success"), t.ok());
        assert_eq!(t.status("partial"), t.warn());
        assert_eq!(t.status("failed"), t.error());
        assert_eq!(t.status("timeout"), t.warn());
        assert_eq!(t.status("blocked").fg, Some(t.error));
        assert_eq!(t.status("cancelled"), t.muted());
        assert_eq!(t.status("???"), Style::new().fg(t.base_fg));
        assert_eq!(t.grade('A'), t.ok());
        assert_eq!(t.grade('b'), t.accent());
        assert_eq!(t.grade('C'), t.warn());
        assert_eq!(t.grade('D'), t.error());
        assert_eq!(t.grade('?'), t.muted());
    }

    #[test]
    fn style_helpers() {
        let t = Theme::dark();
        assert_eq!(t.style_base().bg, Some(t.base_bg));
        assert_eq!(t.selected().bg, Some(t.selection_bg));
        assert_eq!(t.border(true).fg, Some(t.border_focus));
        assert_eq!(t.border(false).fg, Some(t.border));
        assert!(t.title().add_modifier.contains(Modifier::BOLD));
        assert_eq!(t.gauge().bg, Some(t.gauge_bg));
        let empty = Theme {
            agents: Vec::new(),
            ..Theme::dark()
        };
        assert_eq!(empty.agent(5), empty.base_fg);
        let n = t.agents.len();
        assert_eq!(t.agent(n + 1), t.agent(1));
    }
}
