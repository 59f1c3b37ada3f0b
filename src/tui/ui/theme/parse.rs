//! Parsing a theme file with spans, so every error names its line.

use std::path::Path;

use ratatui::style::Color;
use toml::de::{DeTable, DeValue};
use toml::Spanned;

use super::builtin::builtin_source;
use super::color::parse_color;
use super::error::ThemeError;
use super::overrides::Overrides;
use super::roles::{PAIR_ROLES, SINGLE_ROLES};

/// 1-based line and column of a byte offset.
fn line_col(src: &str, offset: usize) -> (usize, usize) {
    let before = src.get(..offset.min(src.len())).unwrap_or(src);
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    (line, column)
}

/// A parsed theme file.
pub(super) struct ParsedTheme {
    pub(super) name: Option<String>,
    /// The canonical built-in name it extends.
    pub(super) extends: Option<&'static str>,
    pub(super) overrides: Overrides,
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
                "extends" => parsed.extends = Some(self.extends(value)?),
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

    /// The canonical name of the built-in theme `extends` names.
    fn extends(&self, value: &Spanned<DeValue<'_>>) -> Result<&'static str, ThemeError> {
        let canonical = value
            .get_ref()
            .as_str()
            .and_then(builtin_source)
            .map(|builtin| builtin.name);
        canonical.ok_or_else(|| ThemeError::UnknownExtends {
            path: self.path.to_path_buf(),
            line: self.line(value.span()),
            name: value
                .get_ref()
                .as_str()
                .map_or_else(|| value.get_ref().type_str().into(), Into::into),
        })
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

pub(super) fn parse_theme(src: &str, path: &Path) -> Result<ParsedTheme, ThemeError> {
    ThemeParser { src, path }.parse()
}
