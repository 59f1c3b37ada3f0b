//! Loading the configuration: which file, and turning its text into a [`Config`].

use std::path::Path;

use toml::de::DeTable;

use super::error::ConfigError;
use super::parse::Parser;
use super::paths::{config_dir, FILE_NAME};
use super::settings::Config;

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
        let src = crate::base::text::utf8::read_text(path).map_err(|e| match e {
            crate::base::text::utf8::ReadTextError::Io(source)
                if source.kind() == std::io::ErrorKind::NotFound =>
            {
                ConfigError::Missing {
                    path: path.to_path_buf(),
                }
            }
            crate::base::text::utf8::ReadTextError::Io(source) => ConfigError::Read {
                path: path.to_path_buf(),
                source,
            },
            crate::base::text::utf8::ReadTextError::NotUtf8(e) => ConfigError::Read {
                path: path.to_path_buf(),
                source: std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string()),
            },
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
            let Some(section) = super::schema::section(name) else {
                return Err(ConfigError::UnknownKey {
                    origin: parser.origin(key.span()),
                    table: "the top level".into(),
                    key: name.to_string(),
                    known: super::schema::known_tables(),
                });
            };
            match section.name {
                "ui" => config.ui = parser.ui(value)?,
                "keys" => config.keys = parser.keys(value)?,
                "review" => config.reviewer = parser.review(value)?,
                "providers" => {
                    parser.providers(value)?;
                    other_names.push(name.to_string());
                }
                // A table without a reader of its own: checked from its declaration,
                // kept for the layers that read it.
                _ => {
                    parser.declared(section, value)?;
                    other_names.push(name.to_string());
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
        super::keys::check(&config.keys)?;
        Ok(config)
    }
}
