//! Why the configuration could not be loaded.

use std::path::PathBuf;

use super::origin::Origin;

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
    #[error(
        "{origin}: unknown key `{key}` in {table}{} ({known})",
        near_key(key, known)
    )]
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
        "{origin}: unknown action `{action}` in [keys]{} (actions: {})",
        crate::base::text::suggest::did_you_mean(action, super::default_keys::action_names()),
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

/// `; did you mean `NAME`?` for an unknown `key` among the names `known` lists
/// (`known: a, b` or `known tables: [ui], [providers.NAME]`).
fn near_key(key: &str, known: &str) -> String {
    let list = known.split_once(':').map_or(known, |(_, l)| l);
    let names = list.split(',').map(|n| {
        let n = n.trim().trim_start_matches('[').trim_end_matches(']');
        n.split('.').next().unwrap_or(n)
    });
    crate::base::text::suggest::did_you_mean(key, names)
}

fn action_names() -> String {
    super::default_keys::action_names().join(", ")
}
