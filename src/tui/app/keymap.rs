//! The keymap: the lookup from a crossterm key event to an [`Action`], built from the
//! default bindings table (`src/base/config/default_keys.txt`) with the config file's `[keys]`
//! overrides applied, and each action's keys for the help overlay.

use std::collections::{HashMap, HashSet};

use crossterm::event::KeyEvent;

use super::action::Action;
use crate::base::config::{keys, Config, ConfigError, Key, KeymapOverrides};

/// Keys to actions, and each action's keys for the help overlay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Keymap {
    by_key: HashMap<Key, Action>,
    by_action: HashMap<Action, Vec<Key>>,
}

impl Default for Keymap {
    fn default() -> Self {
        Self::default_keys()
    }
}

impl Keymap {
    /// The default bindings.
    pub fn default_keys() -> Keymap {
        let mut keymap = Keymap {
            by_key: HashMap::new(),
            by_action: HashMap::new(),
        };
        for (action, keys) in default_keys() {
            keymap.bind(action, keys);
        }
        keymap
    }

    /// The defaults with `[keys]` overrides applied. An unknown action, a bad key, an
    /// empty key list, or two overrides binding one key is an error naming them.
    pub fn with_overrides(overrides: &KeymapOverrides) -> Result<Keymap, ConfigError> {
        let replaced: Vec<(Action, Vec<Key>)> = keys::check(overrides)?
            .into_iter()
            .filter_map(|c| Some((Action::from_name(c.action)?, c.keys)))
            .collect();
        let taken: HashSet<Key> = replaced
            .iter()
            .flat_map(|(_, keys)| keys.iter().copied())
            .collect();

        let mut keymap = Keymap {
            by_key: HashMap::new(),
            by_action: HashMap::new(),
        };
        // Defaults of untouched actions, minus keys an override took.
        for (action, keys) in default_keys() {
            if replaced.iter().any(|(a, _)| *a == action) {
                continue;
            }
            let keys = keys.into_iter().filter(|k| !taken.contains(k)).collect();
            keymap.bind(action, keys);
        }
        for (action, keys) in replaced {
            keymap.bind(action, keys);
        }
        Ok(keymap)
    }

    fn bind(&mut self, action: Action, keys: Vec<Key>) {
        for &key in &keys {
            self.by_key.insert(key, action);
        }
        self.by_action.insert(action, keys);
    }

    /// The action of a key event; `None` for releases and unbound keys.
    pub fn lookup(&self, event: &KeyEvent) -> Option<Action> {
        self.by_key.get(&Key::from_event(event)?).copied()
    }

    /// The action bound to a key.
    pub fn action_for(&self, key: Key) -> Option<Action> {
        self.by_key.get(&key).copied()
    }

    /// The keys of an action as the help overlay shows them (`q`, `ctrl-c`, `↓`).
    pub fn keys_for(&self, action: Action) -> Vec<String> {
        self.by_action
            .get(&action)
            .map(|keys| keys.iter().map(Key::label).collect())
            .unwrap_or_default()
    }

    /// Actions left without any key (an override took their only keys).
    pub fn unbound(&self) -> Vec<Action> {
        Action::ALL
            .iter()
            .copied()
            .filter(|a| self.by_action.get(a).is_none_or(Vec::is_empty))
            .collect()
    }
}

/// The keymap of a loaded config: the defaults with its `[keys]` applied.
pub trait ConfigKeymap {
    /// The keymap; cannot fail on a config that loaded (its `[keys]` were checked).
    fn keymap(&self) -> Result<Keymap, ConfigError>;
}

impl ConfigKeymap for Config {
    fn keymap(&self) -> Result<Keymap, ConfigError> {
        Keymap::with_overrides(&self.keys)
    }
}

/// The parsed default bindings.
fn default_keys() -> impl Iterator<Item = (Action, Vec<Key>)> {
    keys::defaults().filter_map(|(name, keys)| {
        let action = Action::from_name(name)?;
        let keys = keys.iter().filter_map(|k| Key::parse(k).ok()).collect();
        Some((action, keys))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::{KeyCode, KeyEventKind, KeyModifiers};
    use pretty_assertions::assert_eq;

    fn key(s: &str) -> Key {
        Key::parse(s).unwrap_or_else(|e| panic!("{s:?}: {e}"))
    }

    fn press(code: KeyCode, modifiers: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, modifiers)
    }

    fn ch(c: char) -> KeyEvent {
        press(KeyCode::Char(c), KeyModifiers::NONE)
    }

    #[test]
    fn every_action_has_a_default_key() {
        let keymap = Keymap::default_keys();
        for &action in Action::ALL {
            assert!(
                !keymap.keys_for(action).is_empty(),
                "{} has no default key",
                action.name()
            );
        }
        assert_eq!(keymap.unbound(), Vec::<Action>::new());
    }

    #[test]
    fn defaults_bind_no_key_twice() {
        let mut seen: HashMap<Key, Action> = HashMap::new();
        for (action, keys) in default_keys() {
            for k in keys {
                if let Some(other) = seen.insert(k, action) {
                    panic!("{k} is bound to {other:?} and {action:?}");
                }
            }
        }
    }

    #[test]
    fn default_lookups() {
        let km = Keymap::default_keys();
        assert_eq!(km.lookup(&ch('q')), Some(Action::Quit));
        assert_eq!(
            km.lookup(&press(KeyCode::Char('c'), KeyModifiers::CONTROL)),
            Some(Action::Quit)
        );
        assert_eq!(km.lookup(&ch('c')), Some(Action::Cancel));
        assert_eq!(km.lookup(&ch('j')), Some(Action::Down));
        assert_eq!(
            km.lookup(&press(KeyCode::Down, KeyModifiers::NONE)),
            Some(Action::Down)
        );
        assert_eq!(km.lookup(&ch(' ')), Some(Action::TogglePause));
        assert_eq!(km.lookup(&ch('?')), Some(Action::Help));
        assert_eq!(km.lookup(&ch('/')), Some(Action::Search));
        assert_eq!(km.lookup(&ch('1')), Some(Action::ScreenRun));
        assert_eq!(km.lookup(&ch('3')), Some(Action::ScreenRuns));
        assert_eq!(
            km.lookup(&press(KeyCode::Enter, KeyModifiers::NONE)),
            Some(Action::Open)
        );
        assert_eq!(
            km.lookup(&press(KeyCode::Esc, KeyModifiers::NONE)),
            Some(Action::Back)
        );
        assert_eq!(
            km.lookup(&press(KeyCode::Tab, KeyModifiers::NONE)),
            Some(Action::NextScreen)
        );
        assert_eq!(
            km.lookup(&press(KeyCode::PageDown, KeyModifiers::NONE)),
            Some(Action::PageDown)
        );
        assert_eq!(
            km.lookup(&press(KeyCode::Char('d'), KeyModifiers::CONTROL)),
            Some(Action::PageDown)
        );
        assert_eq!(km.lookup(&ch('Z')), None);
        assert_eq!(
            km.lookup(&press(KeyCode::Char('q'), KeyModifiers::ALT)),
            None
        );
    }

    #[test]
    fn uppercase_matches_with_or_without_shift() {
        let km = Keymap::default_keys();
        assert_eq!(km.lookup(&ch('G')), Some(Action::Bottom));
        assert_eq!(
            km.lookup(&press(KeyCode::Char('G'), KeyModifiers::SHIFT)),
            Some(Action::Bottom)
        );
        assert_eq!(
            km.lookup(&press(KeyCode::Char('g'), KeyModifiers::SHIFT)),
            Some(Action::Bottom)
        );
        assert_eq!(km.lookup(&ch('g')), Some(Action::Top));
        assert_eq!(
            km.lookup(&press(KeyCode::Char('S'), KeyModifiers::SHIFT)),
            Some(Action::SortReverse)
        );
        assert_eq!(km.lookup(&ch('A')), Some(Action::FilterAgent));
        // Shifted symbols arrive with SHIFT on some terminals.
        assert_eq!(
            km.lookup(&press(KeyCode::Char('?'), KeyModifiers::SHIFT)),
            Some(Action::Help)
        );
    }

    #[test]
    fn backtab_matches_shift_tab() {
        let km = Keymap::default_keys();
        for event in [
            press(KeyCode::BackTab, KeyModifiers::NONE),
            press(KeyCode::BackTab, KeyModifiers::SHIFT),
            press(KeyCode::Tab, KeyModifiers::SHIFT),
        ] {
            assert_eq!(km.lookup(&event), Some(Action::PrevScreen), "{event:?}");
        }
        assert_eq!(key("backtab"), key("shift-tab"));
        assert_eq!(key("Shift+Tab"), key("shift-tab"));
    }

    #[test]
    fn releases_are_ignored_and_repeats_count() {
        let km = Keymap::default_keys();
        let mut event = ch('j');
        event.kind = KeyEventKind::Release;
        assert_eq!(km.lookup(&event), None);
        event.kind = KeyEventKind::Repeat;
        assert_eq!(km.lookup(&event), Some(Action::Down));
    }

    #[test]
    fn unused_modifiers_are_ignored() {
        let km = Keymap::default_keys();
        let event = press(KeyCode::Char('j'), KeyModifiers::HYPER | KeyModifiers::META);
        assert_eq!(km.lookup(&event), Some(Action::Down));
    }

    #[test]
    fn labels_for_help() {
        let km = Keymap::default_keys();
        assert_eq!(km.keys_for(Action::Down), vec!["j", "↓"]);
        assert_eq!(km.keys_for(Action::Quit), vec!["q", "ctrl-c"]);
        assert_eq!(km.keys_for(Action::PageUp), vec!["PgUp", "ctrl-u"]);
        assert_eq!(km.keys_for(Action::PrevScreen), vec!["shift-Tab"]);
        assert_eq!(km.keys_for(Action::TogglePause), vec!["Space", "p"]);
        assert_eq!(km.keys_for(Action::Bottom), vec!["G", "End"]);
    }

    #[test]
    fn override_replaces_defaults() {
        let mut o = KeymapOverrides::default();
        o.set("quit", &["x", "ctrl-q"]);
        let km = Keymap::with_overrides(&o).expect("valid");
        assert_eq!(km.lookup(&ch('x')), Some(Action::Quit));
        assert_eq!(
            km.lookup(&press(KeyCode::Char('q'), KeyModifiers::CONTROL)),
            Some(Action::Quit)
        );
        // The old keys are gone.
        assert_eq!(km.lookup(&ch('q')), None);
        assert_eq!(
            km.lookup(&press(KeyCode::Char('c'), KeyModifiers::CONTROL)),
            None
        );
        // `x` was clear_filters' only key: it moved to quit.
        assert_eq!(km.keys_for(Action::ClearFilters), Vec::<String>::new());
        assert_eq!(km.unbound(), vec![Action::ClearFilters]);
        assert_eq!(km.keys_for(Action::Quit), vec!["x", "ctrl-q"]);
    }

    #[test]
    fn override_names_are_forgiving_and_duplicates_fold() {
        let mut o = KeymapOverrides::default();
        o.set("Page-Down", &["n", "N", "n"]);
        let km = Keymap::with_overrides(&o).expect("valid");
        assert_eq!(km.keys_for(Action::PageDown), vec!["n", "N"]);
    }

    #[test]
    fn override_errors_name_action_and_key() {
        let mut o = KeymapOverrides::default();
        o.set("qiut", &["x"]);
        let msg = Keymap::with_overrides(&o).expect_err("unknown").to_string();
        assert!(msg.contains("unknown action `qiut`"), "{msg}");

        let mut o = KeymapOverrides::default();
        o.set("quit", &["x", "ctrl-nope"]);
        let msg = Keymap::with_overrides(&o).expect_err("bad key").to_string();
        assert!(
            msg.contains("`ctrl-nope`") && msg.contains("`quit`"),
            "{msg}"
        );

        let mut o = KeymapOverrides::default();
        o.set("quit", &[]);
        let msg = Keymap::with_overrides(&o).expect_err("empty").to_string();
        assert!(
            msg.contains("keys.quit") && msg.contains("at least one key"),
            "{msg}"
        );
    }

    #[test]
    fn two_overrides_on_one_key_conflict() {
        let mut o = KeymapOverrides::default();
        o.set("help", &["f1"]);
        o.set("search", &["F1"]);
        let err = Keymap::with_overrides(&o).expect_err("conflict");
        let msg = err.to_string();
        assert!(
            msg.contains("`f1`") && msg.contains("`help`") && msg.contains("`search`"),
            "{msg}"
        );
    }

    #[test]
    fn no_overrides_is_the_default() {
        let km = Keymap::with_overrides(&KeymapOverrides::default()).expect("valid");
        assert_eq!(km, Keymap::default_keys());
        assert_eq!(Keymap::default(), km);
    }

    #[test]
    fn the_defaults_table_names_every_action_once_in_order() {
        let names = keys::action_names();
        let actions: Vec<&str> = Action::ALL.iter().map(|a| a.name()).collect();
        assert_eq!(names, actions);
    }

    #[test]
    fn a_config_files_overrides_apply() {
        let src = "[keys]\nhelp = \"f1\"\nquit = [\"x\", \"ctrl-q\"]\n";
        let config = Config::parse(src, None).expect("valid");
        let keymap = config.keymap().expect("checked at load");
        assert_eq!(keymap.keys_for(Action::Quit), vec!["x", "ctrl-q"]);
        assert_eq!(keymap.keys_for(Action::Help), vec!["F1"]);
    }
}
