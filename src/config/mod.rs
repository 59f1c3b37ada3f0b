//! Layered configuration (defaults → `plexus.toml` → flags) and the key overrides.
//!
//! ```toml
//! [ui]
//! theme = "dark"                # a built-in, a name in <config dir>/themes/, or a path
//!
//! [keys]                        # action = key or [keys]; replaces the action's defaults
//! quit = ["x", "ctrl-q"]
//! help = "f1"
//! ```
//!
//! Unknown keys inside `[ui]` and `[keys]` are errors; other top-level tables (such as
//! `[providers.*]`) are kept in [`Config::other`] for the layers that read them.

pub mod key;
pub mod keys;
mod numbers;

use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};

use toml::de::{DeTable, DeValue};
use toml::Spanned;

pub use key::Key;
pub use keys::{KeyOverride, KeymapOverrides};

use crate::ui::theme::{load_or_fallback, Theme};

/// The config file's name, in the working directory or the config directory.
pub const FILE_NAME: &str = "plexus.toml";

/// The whole configuration.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Config {
    /// `[ui]`.
    pub ui: UiConfig,
    /// `[keys]`, already checked: the keymap built from a loaded config cannot fail.
    pub keys: KeymapOverrides,
    /// The file it came from; `None` for the defaults.
    pub path: Option<PathBuf>,
    /// Top-level tables this module does not own (`[providers.*]`, …), verbatim.
    pub other: toml::Table,
}

/// The `[ui]` table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UiConfig {
    /// Theme: a built-in name, a name in `<config dir>/themes/`, or a path.
    pub theme: String,
}

impl Default for UiConfig {
    fn default() -> Self {
        UiConfig {
            theme: "dark".to_string(),
        }
    }
}

impl Config {
    /// Loads the configuration: `explicit` must exist; otherwise `./plexus.toml`, then
    /// `<config dir>/plexus.toml`, the first that exists; otherwise the defaults.
    pub fn load(explicit: Option<&Path>) -> Result<Config, ConfigError> {
        Self::load_from(explicit, Some(Path::new(".")), config_dir().as_deref())
    }

    /// [`Config::load`] with the working and config directories given (for tests).
    pub fn load_from(
        explicit: Option<&Path>,
        work_dir: Option<&Path>,
        config_dir: Option<&Path>,
    ) -> Result<Config, ConfigError> {
        if let Some(path) = explicit {
            return Self::from_file(path);
        }
        let candidates = [work_dir, config_dir]
            .into_iter()
            .flatten()
            .map(|dir| dir.join(FILE_NAME));
        for candidate in candidates {
            if candidate.is_file() {
                return Self::from_file(&candidate);
            }
        }
        Ok(Config::default())
    }

    /// Reads and parses one config file.
    pub fn from_file(path: &Path) -> Result<Config, ConfigError> {
        let src = std::fs::read_to_string(path).map_err(|source| {
            if source.kind() == std::io::ErrorKind::NotFound {
                ConfigError::Missing {
                    path: path.to_path_buf(),
                }
            } else {
                ConfigError::Read {
                    path: path.to_path_buf(),
                    source,
                }
            }
        })?;
        Self::parse(&src, Some(path))
    }

    /// Parses config text; `path` names the file in errors. The keymap overrides are
    /// checked here, so a bad key is reported when the file is loaded.
    pub fn parse(src: &str, path: Option<&Path>) -> Result<Config, ConfigError> {
        // A byte-order mark, as some editors write, is not part of the config.
        let src = src.strip_prefix('\u{feff}').unwrap_or(src);
        let parser = Parser { src, path };
        let root = DeTable::parse(src).map_err(|err| parser.syntax(&err))?;
        let mut config = Config {
            path: path.map(Path::to_path_buf),
            ..Config::default()
        };
        let mut other_names = Vec::new();
        for (key, value) in root.get_ref() {
            let name = key.get_ref().as_ref();
            match name {
                "ui" => config.ui = parser.ui(value)?,
                "keys" => config.keys = parser.keys(value)?,
                "providers" => {
                    parser.providers(value)?;
                    other_names.push(name.to_string());
                }
                _ => {
                    return Err(ConfigError::UnknownKey {
                        origin: parser.origin(key.span()),
                        table: "the top level".into(),
                        key: name.to_string(),
                        known: "known tables: [ui], [keys], [providers.NAME]".into(),
                    })
                }
            }
        }
        if !other_names.is_empty() {
            let mut all: toml::Table = toml::from_str(src).map_err(|err| parser.syntax(&err))?;
            for name in other_names {
                if let Some(value) = all.remove(&name) {
                    config.other.insert(name, value);
                }
            }
        }
        keys::check(&config.keys)?;
        Ok(config)
    }

    /// The theme `[ui] theme` names, or dark with a warning to show when it cannot load.
    pub fn theme(&self) -> (Theme, Option<String>) {
        load_or_fallback(&self.ui.theme, config_dir().as_deref())
    }
}

/// The per-user config directory: `$XDG_CONFIG_HOME/plexus`, else `~/.config/plexus`.
/// Themes are looked up in its `themes/` folder.
pub fn config_dir() -> Option<PathBuf> {
    config_dir_from(
        std::env::var_os("XDG_CONFIG_HOME"),
        std::env::var_os("HOME").or_else(|| std::env::var_os("USERPROFILE")),
    )
}

fn config_dir_from(xdg: Option<OsString>, home: Option<OsString>) -> Option<PathBuf> {
    let xdg = xdg.map(PathBuf::from).filter(|p| p.is_absolute());
    if let Some(xdg) = xdg {
        return Some(xdg.join("plexus"));
    }
    home.filter(|h| !h.is_empty())
        .map(|home| PathBuf::from(home).join(".config").join("plexus"))
}

/// Where in the config something was written: file and line when known.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Origin {
    /// The config file.
    pub path: Option<PathBuf>,
    /// 1-based line.
    pub line: Option<usize>,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.path, self.line) {
            (Some(path), Some(line)) => write!(f, "{}:{line}", path.display()),
            (Some(path), None) => write!(f, "{}", path.display()),
            (None, Some(line)) => write!(f, "config line {line}"),
            (None, None) => f.write_str("config"),
        }
    }
}

/// Why the configuration could not be loaded. Messages name the file, line and key.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// An explicitly named config file does not exist.
    #[error("config file {} does not exist", .path.display())]
    Missing {
        /// The file.
        path: PathBuf,
    },
    /// The config file could not be read.
    #[error("cannot read config file {}: {source}", .path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// Not valid TOML.
    #[error("{origin}: TOML syntax error (column {column}): {message}")]
    Syntax {
        /// File and line.
        origin: Origin,
        /// 1-based column.
        column: usize,
        /// What the parser says.
        message: String,
    },
    /// A key this layer does not know.
    #[error("{origin}: unknown key `{key}` in {table} ({known})")]
    UnknownKey {
        /// File and line.
        origin: Origin,
        /// The table, like `[ui]`.
        table: String,
        /// The key as written.
        key: String,
        /// What is allowed there.
        known: String,
    },
    /// A value of the wrong shape.
    #[error("{origin}: `{key}`: {message}")]
    BadValue {
        /// File and line.
        origin: Origin,
        /// The dotted key, like `ui.theme`.
        key: String,
        /// What is wrong.
        message: String,
    },
    /// `[keys]` names an action that does not exist.
    #[error(
        "{origin}: unknown action `{action}` in [keys] (actions: {})",
        action_names()
    )]
    UnknownAction {
        /// File and line.
        origin: Origin,
        /// The action as written.
        action: String,
    },
    /// A key string that does not parse.
    #[error("{origin}: bad key `{key}` for action `{action}`: {reason}")]
    BadKey {
        /// File and line.
        origin: Origin,
        /// The action as written.
        action: String,
        /// The key as written.
        key: String,
        /// What is wrong with it.
        reason: String,
    },
    /// Two overrides bind the same key.
    #[error("{origin}: key `{key}` is bound to both `{first}` and `{second}`")]
    Conflict {
        /// File and line of the second binding.
        origin: Origin,
        /// The key.
        key: String,
        /// The action bound first.
        first: &'static str,
        /// The action bound second.
        second: &'static str,
    },
}

fn action_names() -> String {
    keys::action_names().join(", ")
}

/// Walks the config with spans, so errors can name lines.
struct Parser<'a> {
    src: &'a str,
    path: Option<&'a Path>,
}

impl Parser<'_> {
    fn line_col(&self, offset: usize) -> (usize, usize) {
        let before = self
            .src
            .get(..offset.min(self.src.len()))
            .unwrap_or(self.src);
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        (line, before[line_start..].chars().count() + 1)
    }

    fn origin(&self, span: std::ops::Range<usize>) -> Origin {
        Origin {
            path: self.path.map(Path::to_path_buf),
            line: Some(self.line_col(span.start).0),
        }
    }

    fn syntax(&self, err: &toml::de::Error) -> ConfigError {
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

    fn bad_value(&self, span: std::ops::Range<usize>, key: &str, message: &str) -> ConfigError {
        ConfigError::BadValue {
            origin: self.origin(span),
            key: key.to_string(),
            message: message.to_string(),
        }
    }

    fn ui(&self, value: &Spanned<DeValue<'_>>) -> Result<UiConfig, ConfigError> {
        let DeValue::Table(table) = value.get_ref() else {
            return Err(self.bad_value(value.span(), "ui", "must be a table: [ui]"));
        };
        let mut ui = UiConfig::default();
        for (key, value) in table {
            match key.get_ref().as_ref() {
                "theme" => match value.get_ref() {
                    DeValue::String(s) => ui.theme = s.to_string(),
                    _ => {
                        return Err(self.bad_value(
                            value.span(),
                            "ui.theme",
                            "must be a string: a theme name or a path",
                        ))
                    }
                },
                other => {
                    return Err(ConfigError::UnknownKey {
                        origin: self.origin(key.span()),
                        table: "[ui]".into(),
                        key: other.to_string(),
                        known: "known: theme".into(),
                    })
                }
            }
        }
        Ok(ui)
    }

    /// Checks every `[providers.NAME]` table: fields known and well typed, values in
    /// range, so a typo stops every command that reads the config, with its line.
    fn providers(&self, value: &Spanned<DeValue<'_>>) -> Result<(), ConfigError> {
        let DeValue::Table(table) = value.get_ref() else {
            return Err(self.bad_value(
                value.span(),
                "providers",
                "must be tables of profiles: [providers.NAME]",
            ));
        };
        self.provider_numbers(table)?;
        #[derive(serde::Deserialize)]
        struct Doc {
            #[serde(default)]
            providers:
                std::collections::BTreeMap<String, crate::provider::profile::ProviderProfile>,
        }
        let doc: Doc = toml::from_str(self.src).map_err(|err| {
            let start = err.span().map_or(0, |s| s.start);
            let (line, _) = self.line_col(start);
            let key = self
                .src
                .lines()
                .nth(line - 1)
                .and_then(|l| l.split_once('='))
                .map(|(k, _)| k.trim().trim_matches('"').to_string());
            let profile = self
                .src
                .get(..start)
                .unwrap_or(self.src)
                .rmatch_indices("[providers.")
                .next()
                .and_then(|(i, _)| {
                    let rest = self.src.get(i + "[providers.".len()..)?;
                    rest.split(']')
                        .next()
                        .map(|n| n.trim().trim_matches('"').to_string())
                });
            let dotted = match (profile, key) {
                (Some(p), Some(k)) => format!("providers.{p}.{k}"),
                (Some(p), None) => format!("providers.{p}"),
                _ => "providers".to_string(),
            };
            ConfigError::BadValue {
                origin: Origin {
                    path: self.path.map(Path::to_path_buf),
                    line: Some(line),
                },
                key: dotted,
                message: err.message().to_string(),
            }
        })?;
        for (key, _) in table {
            let name = key.get_ref().as_ref();
            let dotted = format!("providers.{name}");
            if name == "simulated" {
                return Err(self.bad_value(
                    key.span(),
                    &dotted,
                    "`simulated` is built in; give your profile another name",
                ));
            }
            if let Some(p) = doc.providers.get(name) {
                p.check()
                    .map_err(|m| self.bad_value(key.span(), &dotted, &m))?;
            }
        }
        Ok(())
    }

    fn keys(&self, value: &Spanned<DeValue<'_>>) -> Result<KeymapOverrides, ConfigError> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn parse(src: &str) -> Result<Config, ConfigError> {
        Config::parse(src, Some(Path::new("plexus.toml")))
    }

    fn message(src: &str) -> String {
        match parse(src) {
            Ok(config) => panic!("expected an error, got {config:?}"),
            Err(err) => err.to_string(),
        }
    }

    #[test]
    fn empty_file_is_the_defaults() {
        let config = parse("").expect("valid");
        assert_eq!(config.ui.theme, "dark");
        assert!(config.keys.is_empty());
        assert!(config.other.is_empty());
        assert_eq!(config.path.as_deref(), Some(Path::new("plexus.toml")));
        assert_eq!(Config::default().ui, UiConfig::default());
    }

    #[test]
    fn full_file() {
        let src = r#"
[ui]
theme = "light"

[keys]
quit = ["x", "ctrl-q"]
help = "f1"

[providers.openai]
kind = "openai"
base_url = "https://api.openai.com/v1"
model = "gpt-4o"
api_key_env = "OPENAI_API_KEY"
"#;
        let config = parse(src).expect("valid");
        assert_eq!(config.ui.theme, "light");
        assert_eq!(config.keys.entries.len(), 2);
        let help = &config.keys.entries[0];
        assert_eq!(help.action, "help");
        assert_eq!(help.keys, vec!["f1"]);
        assert_eq!(help.origin.line, Some(7));
        let providers = config.other.get("providers").and_then(|v| v.as_table());
        let openai = providers
            .and_then(|p| p.get("openai"))
            .and_then(|v| v.as_table());
        assert_eq!(
            openai.and_then(|t| t.get("model")).and_then(|v| v.as_str()),
            Some("gpt-4o")
        );
    }

    #[test]
    fn syntax_error_names_file_and_line() {
        let msg = message("[ui]\ntheme = \"dark\nx = 1\n");
        assert!(msg.starts_with("plexus.toml:2: TOML syntax error"), "{msg}");
    }

    #[test]
    fn unknown_ui_key_is_an_error() {
        let msg = message("[ui]\ntheme = \"dark\"\nthem = \"light\"\n");
        assert_eq!(
            msg,
            "plexus.toml:3: unknown key `them` in [ui] (known: theme)"
        );
    }

    #[test]
    fn unknown_top_level_value_is_an_error() {
        let msg = message("theme = \"light\"\n");
        assert!(
            msg.starts_with("plexus.toml:1: unknown key `theme` in the top level"),
            "{msg}"
        );
    }

    #[test]
    fn unknown_top_level_table_is_an_error() {
        let msg = message("[ui]\ntheme = \"dark\"\n[provders.local]\nkind = \"openai\"\n");
        assert!(
            msg.starts_with("plexus.toml:3: unknown key `provders` in the top level"),
            "{msg}"
        );
    }

    #[test]
    fn a_wrong_type_in_a_profile_names_line_and_key() {
        let msg = message(
            "[providers.local]\nkind = \"openai\"\nbase_url = \"http://x\"\nmodel = \"m\"\nconcurrency = \"lots\"\n",
        );
        assert!(
            msg.starts_with("plexus.toml:5: `providers.local.concurrency`:"),
            "{msg}"
        );
    }

    #[test]
    fn wrong_shapes() {
        assert!(message("ui = 3\n").contains("`ui`: must be a table"));
        assert!(
            message("[ui]\ntheme = 3\n").contains("plexus.toml:2: `ui.theme`: must be a string")
        );
        assert!(message("keys = []\n").contains("`keys`: must be a table"));
        let msg = message("[keys]\nquit = 3\n");
        assert!(
            msg.starts_with("plexus.toml:2: `keys.quit`: expected a key string"),
            "{msg}"
        );
        let msg = message("[keys]\nquit = [\"q\",\n  3]\n");
        assert!(msg.starts_with("plexus.toml:3: `keys.quit`"), "{msg}");
    }

    #[test]
    fn keymap_errors_name_file_line_action_and_key() {
        let msg = message("[keys]\n\nqiut = \"q\"\n");
        assert!(
            msg.starts_with("plexus.toml:3: unknown action `qiut` in [keys]"),
            "{msg}"
        );
        assert!(msg.contains("quit, confirm"), "{msg}");
        let msg = message("[keys]\nquit = [\"q\", \"ctrl-\"]\n");
        assert!(
            msg.starts_with("plexus.toml:2: bad key `ctrl-` for action `quit`"),
            "{msg}"
        );
        let msg = message("[keys]\nhelp = \"f1\"\nsearch = \"F1\"\n");
        assert!(msg.contains("key `f1` is bound to both"), "{msg}");
        assert!(msg.contains("`help`") && msg.contains("`search`"), "{msg}");
        let msg = message("[keys]\nquit = []\n");
        assert!(
            msg.contains("plexus.toml:2: `keys.quit`: list at least one key"),
            "{msg}"
        );
    }

    #[test]
    fn load_order() {
        let work = tempfile::tempdir().expect("tempdir");
        let conf = tempfile::tempdir().expect("tempdir");
        // Nothing anywhere: defaults.
        let config = Config::load_from(None, Some(work.path()), Some(conf.path())).expect("ok");
        assert_eq!(config, Config::default());
        // The config dir.
        std::fs::write(conf.path().join(FILE_NAME), "[ui]\ntheme = \"light\"\n").expect("write");
        let config = Config::load_from(None, Some(work.path()), Some(conf.path())).expect("ok");
        assert_eq!(config.ui.theme, "light");
        assert_eq!(config.path, Some(conf.path().join(FILE_NAME)));
        // The working directory wins.
        std::fs::write(
            work.path().join(FILE_NAME),
            "[ui]\ntheme = \"high-contrast\"\n",
        )
        .expect("write");
        let config = Config::load_from(None, Some(work.path()), Some(conf.path())).expect("ok");
        assert_eq!(config.ui.theme, "high-contrast");
        // An explicit file wins over both.
        let explicit = work.path().join("other.toml");
        std::fs::write(&explicit, "").expect("write");
        let config =
            Config::load_from(Some(&explicit), Some(work.path()), Some(conf.path())).expect("ok");
        assert_eq!(config.ui.theme, "dark");
        assert_eq!(config.path, Some(explicit));
    }

    #[test]
    fn explicit_path_must_exist() {
        let dir = tempfile::tempdir().expect("tempdir");
        let missing = dir.path().join("nope.toml");
        let err = Config::load_from(Some(&missing), None, None).expect_err("missing");
        assert!(matches!(err, ConfigError::Missing { .. }));
        let msg = err.to_string();
        assert!(
            msg.contains("nope.toml") && msg.contains("does not exist"),
            "{msg}"
        );
    }

    #[test]
    fn errors_from_a_file_name_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join(FILE_NAME);
        std::fs::write(&path, "[ui]\ncolour = 1\n").expect("write");
        let msg = Config::from_file(&path).expect_err("bad").to_string();
        assert!(msg.starts_with(&format!("{}:2:", path.display())), "{msg}");
    }

    #[test]
    fn config_dir_prefers_xdg() {
        let abs = std::env::temp_dir();
        assert_eq!(
            config_dir_from(Some(abs.clone().into_os_string()), Some("/home/u".into())),
            Some(abs.join("plexus"))
        );
        assert_eq!(
            config_dir_from(Some("relative".into()), Some("/home/u".into())),
            Some(PathBuf::from("/home/u/.config/plexus"))
        );
        assert_eq!(
            config_dir_from(Some("".into()), Some("/home/u".into())),
            Some(PathBuf::from("/home/u/.config/plexus"))
        );
        assert_eq!(config_dir_from(None, None), None);
        assert_eq!(config_dir_from(None, Some("".into())), None);
    }

    #[test]
    fn origin_display() {
        let o = Origin {
            path: Some("a.toml".into()),
            line: Some(3),
        };
        assert_eq!(o.to_string(), "a.toml:3");
        assert_eq!(Origin::default().to_string(), "config");
        assert_eq!(
            Origin {
                path: None,
                line: Some(2)
            }
            .to_string(),
            "config line 2"
        );
    }

    #[test]
    fn theme_from_config_falls_back_with_a_warning() {
        let config = parse("[ui]\ntheme = \"/nonexistent/theme.toml\"\n").expect("valid");
        let (theme, warning) = config.theme();
        assert_eq!(theme, Theme::dark());
        assert!(warning.is_some_and(|w| w.contains("theme.toml")));
        let (theme, warning) = Config::default().theme();
        assert_eq!(theme.name, "dark");
        assert_eq!(warning, None);
    }
}
