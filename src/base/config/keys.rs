//! The `[keys]` table as read from the config file (overrides: an action's name and key
//! strings, with where they were written), the default bindings table they override,
//! and the check run when the file is loaded. Resolving keys to actions is the keymap's
//! job (`crate::tui::app::keymap`).
//!
//! An override replaces every default key of its action. A key an override takes from
//! another action's defaults moves to the overriding action; two overrides that bind the
//! same key are an error.

use std::collections::HashMap;

pub use super::default_keys::{action_names, defaults, DEFAULTS};
use super::key::Key;
use super::{ConfigError, Origin};

/// One `[keys]` entry: an action name and the keys that replace its defaults.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyOverride {
    /// The action as written (`quit`, `page_down`).
    pub action: String,
    /// The key strings as written.
    pub keys: Vec<String>,
    /// Where it was written, for errors.
    pub origin: Origin,
}

/// The `[keys]` table: overrides checked by [`Keymap::with_overrides`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeymapOverrides {
    /// The entries in file order.
    pub entries: Vec<KeyOverride>,
}

impl KeymapOverrides {
    /// Adds an override with no file position (for flags and tests).
    pub fn set(&mut self, action: &str, keys: &[&str]) {
        self.entries.push(KeyOverride {
            action: action.to_string(),
            keys: keys.iter().map(|k| k.to_string()).collect(),
            origin: Origin::default(),
        });
    }

    /// Whether there are no overrides.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// One override after [`check`]: the action's name as the defaults table spells it,
/// its keys (parsed, duplicates folded) and where it was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedOverride<'a> {
    /// The action's name (`page_down`).
    pub action: &'static str,
    /// Its keys.
    pub keys: Vec<Key>,
    /// Where it was written.
    pub origin: &'a Origin,
}

/// Checks `[keys]` overrides: an unknown action, a bad key, an empty key list, or two
/// overrides binding one key is an error naming them. A later entry for the same action
/// wins.
pub fn check(overrides: &KeymapOverrides) -> Result<Vec<CheckedOverride<'_>>, ConfigError> {
    let names = action_names();
    let mut replaced: Vec<CheckedOverride<'_>> = Vec::new();
    for entry in &overrides.entries {
        let name = entry.action.trim().to_ascii_lowercase().replace('-', "_");
        let action = names.iter().copied().find(|n| *n == name).ok_or_else(|| {
            ConfigError::UnknownAction {
                origin: entry.origin.clone(),
                action: entry.action.clone(),
            }
        })?;
        if entry.keys.is_empty() {
            return Err(ConfigError::BadValue {
                origin: entry.origin.clone(),
                key: format!("keys.{}", entry.action),
                message: "list at least one key".into(),
            });
        }
        let mut keys = Vec::with_capacity(entry.keys.len());
        for written in &entry.keys {
            let key = Key::parse(written).map_err(|reason| ConfigError::BadKey {
                origin: entry.origin.clone(),
                action: entry.action.clone(),
                key: written.clone(),
                reason,
            })?;
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
        replaced.retain(|c| c.action != action);
        replaced.push(CheckedOverride {
            action,
            keys,
            origin: &entry.origin,
        });
    }

    // Overridden keys must not collide with each other.
    let mut taken: HashMap<Key, &'static str> = HashMap::new();
    for c in &replaced {
        for key in &c.keys {
            if let Some(&first) = taken.get(key) {
                return Err(ConfigError::Conflict {
                    origin: c.origin.clone(),
                    key: key.to_string(),
                    first,
                    second: c.action,
                });
            }
            taken.insert(*key, c.action);
        }
    }
    Ok(replaced)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_default_parses() {
        for (action, keys) in defaults() {
            for k in &keys {
                assert!(Key::parse(k).is_ok(), "{action:?}: {k}");
            }
        }
    }

    #[test]
    fn every_default_row_has_a_key() {
        for (action, keys) in defaults() {
            assert!(!keys.is_empty(), "{action} has no default key");
        }
    }
}
