//! Finding and loading a theme: built-in names, names in the config directory, paths.

use std::path::Path;

use super::builtin::{builtin_source, BUILTIN_NAMES};
use super::error::ThemeError;
use super::palette::Theme;
use super::parse::parse_theme;

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
}

/// Loads a theme, falling back to dark: returns the theme and, when loading failed, the
/// warning to show.
pub fn load_or_fallback(spec: &str, config_dir: Option<&Path>) -> (Theme, Option<String>) {
    match Theme::load(spec, config_dir) {
        Ok(theme) => (theme, None),
        Err(err) => (Theme::dark(), Some(format!("{err}; using the dark theme"))),
    }
}
