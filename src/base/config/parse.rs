//! The file format: walks `plexus.toml` with spans, so errors can name lines.

use std::path::Path;

use toml::de::DeValue;
use toml::Spanned;

use super::error::ConfigError;
use super::keys::{KeyOverride, KeymapOverrides};
use super::origin::Origin;
use super::schema::{Section, REVIEW, UI};
use super::settings::UiConfig;

/// Walks the config with spans, so errors can name lines.
pub(super) struct Parser<'a> {
    pub(super) src: &'a str,
    pub(super) path: Option<&'a Path>,
}

impl Parser<'_> {
    pub(super) fn line_col(&self, offset: usize) -> (usize, usize) {
        let before = self
            .src
            .get(..offset.min(self.src.len()))
            .unwrap_or(self.src);
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        (line, before[line_start..].chars().count() + 1)
    }

    pub(super) fn origin(&self, span: std::ops::Range<usize>) -> Origin {
        Origin {
            path: self.path.map(Path::to_path_buf),
            line: Some(self.line_col(span.start).0),
        }
    }

    pub(super) fn syntax(&self, err: &toml::de::Error) -> ConfigError {
        let (line, column) = self.line_col(err.span().map_or(0, |s| s.start));
        ConfigError::Syntax {
            origin: Origin {
                path: self.path.map(Path::to_path_buf),
                line: Some(line),
            },
            column,
            message: err.message().to_string(),
        }
    }

    pub(super) fn bad_value(
        &self,
        span: std::ops::Range<usize>,
        key: &str,
        message: &str,
    ) -> ConfigError {
        ConfigError::BadValue {
            origin: self.origin(span),
            key: key.to_string(),
            message: message.to_string(),
        }
    }

    /// An unknown key of `section`, with the keys it knows.
    fn unknown(&self, section: &Section, key: &Spanned<std::borrow::Cow<'_, str>>) -> ConfigError {
        ConfigError::UnknownKey {
            origin: self.origin(key.span()),
            table: section.header(),
            key: key.get_ref().to_string(),
            known: section.known(),
        }
    }

    pub(super) fn ui(&self, value: &Spanned<DeValue<'_>>) -> Result<UiConfig, ConfigError> {
        let DeValue::Table(table) = value.get_ref() else {
            return Err(self.bad_value(value.span(), "ui", "must be a table: [ui]"));
        };
        let mut ui = UiConfig::default();
        for (key, value) in table {
            let name = key.get_ref().as_ref();
            match UI.key(name).map(|k| k.name) {
                Some("theme") => match value.get_ref() {
                    DeValue::String(s) => ui.theme = s.to_string(),
                    _ => {
                        return Err(self.bad_value(
                            value.span(),
                            "ui.theme",
                            "must be a string: a theme name or a path",
                        ))
                    }
                },
                _ => return Err(self.unknown(&UI, key)),
            }
        }
        Ok(ui)
    }

    /// The `[review]` table: `reviewer`, a non-empty name.
    pub(super) fn review(
        &self,
        value: &Spanned<DeValue<'_>>,
    ) -> Result<Option<String>, ConfigError> {
        let DeValue::Table(table) = value.get_ref() else {
            return Err(self.bad_value(value.span(), "review", "must be a table: [review]"));
        };
        let mut reviewer = None;
        for (key, value) in table {
            let name = key.get_ref().as_ref();
            match REVIEW.key(name).map(|k| k.name) {
                Some("reviewer") => match value.get_ref() {
                    DeValue::String(s) if !s.trim().is_empty() => {
                        reviewer = Some(s.trim().to_string())
                    }
                    _ => {
                        return Err(self.bad_value(
                            value.span(),
                            "review.reviewer",
                            "must be a non-empty string: the name decisions are recorded under",
                        ))
                    }
                },
                _ => return Err(self.unknown(&REVIEW, key)),
            }
        }
        Ok(reviewer)
    }

    pub(super) fn keys(
        &self,
        value: &Spanned<DeValue<'_>>,
    ) -> Result<KeymapOverrides, ConfigError> {
        let DeValue::Table(table) = value.get_ref() else {
            return Err(self.bad_value(value.span(), "keys", "must be a table: [keys]"));
        };
        let mut overrides = KeymapOverrides::default();
        for (key, value) in table {
            let action = key.get_ref().as_ref();
            let dotted = format!("keys.{action}");
            let expected =
                "expected a key string or a list of key strings, like [\"q\", \"ctrl-c\"]";
            let keys = match value.get_ref() {
                DeValue::String(s) => vec![s.to_string()],
                DeValue::Array(items) => items
                    .iter()
                    .map(|item| match item.get_ref() {
                        DeValue::String(s) => Ok(s.to_string()),
                        _ => Err(self.bad_value(item.span(), &dotted, expected)),
                    })
                    .collect::<Result<Vec<_>, _>>()?,
                _ => return Err(self.bad_value(value.span(), &dotted, expected)),
            };
            overrides.entries.push(KeyOverride {
                action: action.to_string(),
                keys,
                origin: self.origin(key.span()),
            });
        }
        Ok(overrides)
    }
}
