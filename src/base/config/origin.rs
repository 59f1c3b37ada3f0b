//! Where in the config something was written, for error messages.

use std::fmt;
use std::path::PathBuf;

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
