//! Why a theme could not be loaded.

use std::path::PathBuf;

use super::roles::KNOWN_ROLES;

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
