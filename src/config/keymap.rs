//! The keymap: key strings (`q`, `G`, `ctrl-c`, `shift-tab`, `pagedown`, `f1`, …), the
//! default bindings, `[keys]` overrides from the config file, and the lookup from a
//! crossterm key event to an [`Action`].
//!
//! An override replaces every default key of its action. A key an override takes from
//! another action's defaults moves to the overriding action; two overrides that bind the
//! same key are an error.

use std::collections::HashMap;
use std::fmt;

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::{ConfigError, Origin};
use crate::app::action::Action;

/// The default bindings, in the order the help overlay lists an action's keys.
const DEFAULT_BINDINGS: &[(Action, &[&str])] = &[
    (Action::Quit, &["q", "ctrl-c"]),
    (Action::Confirm, &["y"]),
    (Action::Back, &["esc"]),
    (Action::NextScreen, &["tab"]),
    (Action::PrevScreen, &["shift-tab"]),
    (Action::ScreenRun, &["1"]),
    (Action::ScreenAtoms, &["2"]),
    (Action::ScreenRuns, &["3"]),
    (Action::ScreenFailures, &["4"]),
    (Action::Up, &["k", "up"]),
    (Action::Down, &["j", "down"]),
    (Action::Left, &["h", "left"]),
    (Action::Right, &["l", "right"]),
    (Action::PageUp, &["pageup", "ctrl-u"]),
    (Action::PageDown, &["pagedown", "ctrl-d"]),
    (Action::Top, &["g", "home"]),
    (Action::Bottom, &["G", "end"]),
    (Action::Open, &["enter"]),
    (Action::FocusNext, &["w"]),
    (Action::ViewRaw, &["o"]),
    (Action::ViewAtoms, &["a"]),
    (Action::ViewRequest, &["e"]),
    (Action::ViewIssues, &["i"]),
    (Action::ViewContext, &["m"]),
    (Action::TogglePause, &["space", "p"]),
    (Action::Cancel, &["c"]),
    (Action::Retry, &["r"]),
    (Action::Help, &["?"]),
    (Action::CommandLine, &[":"]),
    (Action::Messages, &["M"]),
    (Action::Search, &["/"]),
    (Action::Sort, &["s"]),
    (Action::SortReverse, &["S"]),
    (Action::FilterGrade, &["f"]),
    (Action::FilterAgent, &["A"]),
    (Action::FilterType, &["t"]),
    (Action::FilterRun, &["R"]),
    (Action::FilterTime, &["T"]),
    (Action::ClearFilters, &["x"]),
    (Action::Compare, &["d"]),
    (Action::ReviewQueue, &["v"]),
    (Action::ReviewAccept, &["Y"]),
    (Action::ReviewReject, &["X"]),
    (Action::ExportHandoff, &["E"]),
    (Action::ProblemsView, &["P"]),
    (Action::UnfoldAll, &["z"]),
    (Action::PrevAttempt, &["["]),
    (Action::NextAttempt, &["]"]),
    (Action::Follow, &["F"]),
    (Action::NextRunning, &["u"]),
    (Action::NextBlocked, &["b"]),
    (Action::LayerPageLeft, &["H"]),
    (Action::LayerPageRight, &["L"]),
    (Action::NextFailure, &["n"]),
    (Action::PrevFailure, &["N"]),
    (Action::ReplayStepBack, &[","]),
    (Action::ReplayStepForward, &["."]),
    (Action::ReplayPrevStart, &["{"]),
    (Action::ReplayNextStart, &["}"]),
    (Action::ReplayPrevFailure, &["("]),
    (Action::ReplayNextFailure, &[")"]),
    (Action::ReplaySlower, &["-"]),
    (Action::ReplayFaster, &["+", "="]),
    (Action::ReplayStart, &["<"]),
    (Action::ReplayEnd, &[">"]),
    (Action::ReplaySeek, &["#"]),
];

/// The modifiers a binding can use; others (hyper, meta) are ignored.
const USED_MODIFIERS: KeyModifiers = KeyModifiers::SHIFT
    .union(KeyModifiers::CONTROL)
    .union(KeyModifiers::ALT)
    .union(KeyModifiers::SUPER);

/// A key with its modifiers, normalised so that a binding and an event compare equal:
/// a character carries its own shift (`G`, never `shift-g`), and shift-tab is `BackTab`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Key {
    /// The key.
    pub code: KeyCode,
    /// Ctrl, alt, super; shift only for non-character keys (`shift-up`).
    pub modifiers: KeyModifiers,
}

impl Key {
    /// A normalised key.
    pub fn new(code: KeyCode, modifiers: KeyModifiers) -> Key {
        let mut modifiers = modifiers & USED_MODIFIERS;
        let shift = modifiers.contains(KeyModifiers::SHIFT);
        let code = match code {
            KeyCode::Char(c) => {
                modifiers.remove(KeyModifiers::SHIFT);
                KeyCode::Char(if shift { to_upper(c) } else { c })
            }
            KeyCode::Tab if shift => {
                modifiers.remove(KeyModifiers::SHIFT);
                KeyCode::BackTab
            }
            KeyCode::BackTab => {
                modifiers.remove(KeyModifiers::SHIFT);
                KeyCode::BackTab
            }
            other => other,
        };
        Key { code, modifiers }
    }

    /// The key of a press or repeat event; `None` for a release.
    pub fn from_event(event: &KeyEvent) -> Option<Key> {
        match event.kind {
            KeyEventKind::Release => None,
            KeyEventKind::Press | KeyEventKind::Repeat => {
                Some(Key::new(event.code, event.modifiers))
            }
        }
    }

    /// Parses a key string: `q`, `Q` (shift implied), `?`, `space`, `enter`, `esc`, `tab`,
    /// `shift-tab`/`backtab`, arrows, `pageup`/`pgup`, `home`, `end`, `f1`–`f24`,
    /// `backspace`, `delete`, `insert`, with `ctrl-`, `alt-`, `shift-`, `super-` prefixes
    /// (`+` works too). Names are case-insensitive; with ctrl or alt a letter's case is
    /// ignored (`Ctrl-C` is `ctrl-c`; write `ctrl-shift-c` for the shifted one). The error
    /// says what is wrong.
    pub fn parse(s: &str) -> Result<Key, String> {
        let s = s.trim();
        if s.is_empty() {
            return Err("the key is empty".into());
        }
        let mut modifiers = KeyModifiers::NONE;
        let mut rest = s;
        while let Some(pos) = rest.find(['-', '+']) {
            if pos == 0 {
                break;
            }
            let Some(modifier) = parse_modifier(&rest[..pos]) else {
                break;
            };
            let tail = &rest[pos + 1..];
            if tail.is_empty() {
                return Err(format!("nothing follows `{rest}`"));
            }
            modifiers |= modifier;
            rest = tail;
        }
        let mut chars = rest.chars();
        let code = match (chars.next(), chars.next()) {
            (Some(c), None) => {
                let shift = modifiers.contains(KeyModifiers::SHIFT);
                let ctrl_or_alt = modifiers.intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
                if shift && !c.is_alphabetic() {
                    return Err(format!(
                        "shift with `{c}` is ambiguous: write the character it types instead"
                    ));
                }
                if c.is_uppercase() && !shift {
                    if ctrl_or_alt {
                        KeyCode::Char(to_lower(c))
                    } else {
                        KeyCode::Char(c)
                    }
                } else {
                    KeyCode::Char(c)
                }
            }
            _ => named_key(rest)?,
        };
        Ok(Key::new(code, modifiers))
    }

    /// How the help overlay shows the key: `ctrl-c`, `G`, `↑`, `PgDn`, `shift-tab`.
    pub fn label(&self) -> String {
        let name = match self.code {
            KeyCode::Up => "↑".to_string(),
            KeyCode::Down => "↓".to_string(),
            KeyCode::Left => "←".to_string(),
            KeyCode::Right => "→".to_string(),
            KeyCode::PageUp => "PgUp".to_string(),
            KeyCode::PageDown => "PgDn".to_string(),
            KeyCode::Home => "Home".to_string(),
            KeyCode::End => "End".to_string(),
            KeyCode::Enter => "Enter".to_string(),
            KeyCode::Esc => "Esc".to_string(),
            KeyCode::Tab => "Tab".to_string(),
            KeyCode::BackTab => "shift-Tab".to_string(),
            KeyCode::Char(' ') => "Space".to_string(),
            KeyCode::F(n) => format!("F{n}"),
            _ => return self.to_string(),
        };
        format!("{}{name}", modifier_prefix(self.modifiers))
    }
}

/// The parseable form: `ctrl-c`, `G`, `up`, `pagedown`, `shift-tab`, `space`.
impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&modifier_prefix(self.modifiers))?;
        match self.code {
            KeyCode::Char(' ') => f.write_str("space"),
            KeyCode::Char(c) => write!(f, "{c}"),
            KeyCode::F(n) => write!(f, "f{n}"),
            KeyCode::Enter => f.write_str("enter"),
            KeyCode::Esc => f.write_str("esc"),
            KeyCode::Tab => f.write_str("tab"),
            KeyCode::BackTab => f.write_str("shift-tab"),
            KeyCode::Backspace => f.write_str("backspace"),
            KeyCode::Delete => f.write_str("delete"),
            KeyCode::Insert => f.write_str("insert"),
            KeyCode::Up => f.write_str("up"),
            KeyCode::Down => f.write_str("down"),
            KeyCode::Left => f.write_str("left"),
            KeyCode::Right => f.write_str("right"),
            KeyCode::PageUp => f.write_str("pageup"),
            KeyCode::PageDown => f.write_str("pagedown"),
            KeyCode::Home => f.write_str("home"),
            KeyCode::End => f.write_str("end"),
            other => write!(f, "{}", format!("{other:?}").to_lowercase()),
        }
    }
}

fn modifier_prefix(modifiers: KeyModifiers) -> String {
    let mut prefix = String::new();
    for (flag, name) in [
        (KeyModifiers::CONTROL, "ctrl-"),
        (KeyModifiers::ALT, "alt-"),
        (KeyModifiers::SUPER, "super-"),
        (KeyModifiers::SHIFT, "shift-"),
    ] {
        if modifiers.contains(flag) {
            prefix.push_str(name);
        }
    }
    prefix
}

fn parse_modifier(name: &str) -> Option<KeyModifiers> {
    Some(match name.to_ascii_lowercase().as_str() {
        "ctrl" | "control" => KeyModifiers::CONTROL,
        "alt" | "meta" | "option" | "opt" => KeyModifiers::ALT,
        "shift" => KeyModifiers::SHIFT,
        "super" | "cmd" | "command" | "win" => KeyModifiers::SUPER,
        _ => return None,
    })
}

fn named_key(name: &str) -> Result<KeyCode, String> {
    let normal: String = name
        .chars()
        .filter(|c| !matches!(c, '-' | '_' | ' '))
        .map(|c| c.to_ascii_lowercase())
        .collect();
    Ok(match normal.as_str() {
        "space" | "spc" => KeyCode::Char(' '),
        "enter" | "return" | "ret" | "cr" => KeyCode::Enter,
        "esc" | "escape" => KeyCode::Esc,
        "tab" => KeyCode::Tab,
        "backtab" => KeyCode::BackTab,
        "backspace" | "bs" => KeyCode::Backspace,
        "delete" | "del" => KeyCode::Delete,
        "insert" | "ins" => KeyCode::Insert,
        "up" => KeyCode::Up,
        "down" => KeyCode::Down,
        "left" => KeyCode::Left,
        "right" => KeyCode::Right,
        "pageup" | "pgup" => KeyCode::PageUp,
        "pagedown" | "pgdn" | "pgdown" => KeyCode::PageDown,
        "home" => KeyCode::Home,
        "end" => KeyCode::End,
        f if f.starts_with('f') && f.len() > 1 && f[1..].bytes().all(|b| b.is_ascii_digit()) => {
            match f[1..].parse::<u8>() {
                Ok(n @ 1..=24) => KeyCode::F(n),
                _ => return Err(format!("no function key `{name}` (f1 to f24)")),
            }
        }
        _ => return Err(format!("unknown key name `{name}`")),
    })
}

fn to_upper(c: char) -> char {
    let mut upper = c.to_uppercase();
    match (upper.next(), upper.next()) {
        (Some(u), None) => u,
        _ => c,
    }
}

fn to_lower(c: char) -> char {
    let mut lower = c.to_lowercase();
    match (lower.next(), lower.next()) {
        (Some(l), None) => l,
        _ => c,
    }
}

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
        // Parse every override; a later entry for the same action wins.
        let mut replaced: Vec<(Action, Vec<Key>, &Origin)> = Vec::new();
        for entry in &overrides.entries {
            let name = entry.action.trim().to_ascii_lowercase().replace('-', "_");
            let action = Action::from_name(&name).ok_or_else(|| ConfigError::UnknownAction {
                origin: entry.origin.clone(),
                action: entry.action.clone(),
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
            replaced.retain(|(a, _, _)| *a != action);
            replaced.push((action, keys, &entry.origin));
        }

        // Overridden keys must not collide with each other.
        let mut taken: HashMap<Key, Action> = HashMap::new();
        for (action, keys, origin) in &replaced {
            for key in keys {
                if let Some(&first) = taken.get(key) {
                    return Err(ConfigError::Conflict {
                        origin: (*origin).clone(),
                        key: key.to_string(),
                        first: first.name(),
                        second: action.name(),
                    });
                }
                taken.insert(*key, *action);
            }
        }

        let mut keymap = Keymap {
            by_key: HashMap::new(),
            by_action: HashMap::new(),
        };
        // Defaults of untouched actions, minus keys an override took.
        for (action, keys) in default_keys() {
            if replaced.iter().any(|(a, _, _)| *a == action) {
                continue;
            }
            let keys = keys
                .into_iter()
                .filter(|k| !taken.contains_key(k))
                .collect();
            keymap.bind(action, keys);
        }
        for (action, keys, _) in replaced {
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

/// The parsed default bindings.
fn default_keys() -> impl Iterator<Item = (Action, Vec<Key>)> {
    DEFAULT_BINDINGS.iter().map(|&(action, keys)| {
        let keys = keys.iter().filter_map(|k| Key::parse(k).ok()).collect();
        (action, keys)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
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
    fn every_default_parses() {
        for (action, keys) in DEFAULT_BINDINGS {
            for k in *keys {
                assert!(Key::parse(k).is_ok(), "{action:?}: {k}");
            }
        }
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
    fn key_strings_parse() {
        let k = |code, modifiers| Key::new(code, modifiers);
        let none = KeyModifiers::NONE;
        assert_eq!(key("q"), k(KeyCode::Char('q'), none));
        assert_eq!(key("Q"), k(KeyCode::Char('Q'), none));
        assert_eq!(key("shift-q"), key("Q"));
        assert_eq!(key("ctrl-c"), k(KeyCode::Char('c'), KeyModifiers::CONTROL));
        assert_eq!(key("Ctrl-C"), key("ctrl-c"));
        assert_eq!(key("CTRL+c"), key("ctrl-c"));
        assert_eq!(
            key("ctrl-shift-c"),
            k(KeyCode::Char('C'), KeyModifiers::CONTROL)
        );
        assert_eq!(key("alt-x"), k(KeyCode::Char('x'), KeyModifiers::ALT));
        assert_eq!(
            key("ctrl-alt-x"),
            k(
                KeyCode::Char('x'),
                KeyModifiers::CONTROL | KeyModifiers::ALT
            )
        );
        assert_eq!(key("space"), k(KeyCode::Char(' '), none));
        assert_eq!(key("SPACE"), key("space"));
        assert_eq!(key("Enter"), k(KeyCode::Enter, none));
        assert_eq!(key("return"), key("enter"));
        assert_eq!(key("Esc"), k(KeyCode::Esc, none));
        assert_eq!(key("escape"), key("esc"));
        assert_eq!(key("PageUp"), k(KeyCode::PageUp, none));
        assert_eq!(key("page-down"), k(KeyCode::PageDown, none));
        assert_eq!(key("pgdn"), key("pagedown"));
        assert_eq!(key("home"), k(KeyCode::Home, none));
        assert_eq!(key("END"), k(KeyCode::End, none));
        assert_eq!(key("f1"), k(KeyCode::F(1), none));
        assert_eq!(key("F12"), k(KeyCode::F(12), none));
        assert_eq!(key("shift-up"), k(KeyCode::Up, KeyModifiers::SHIFT));
        assert_eq!(key("?"), k(KeyCode::Char('?'), none));
        assert_eq!(key("/"), k(KeyCode::Char('/'), none));
        assert_eq!(key("-"), k(KeyCode::Char('-'), none));
        assert_eq!(key("+"), k(KeyCode::Char('+'), none));
        assert_eq!(key("ctrl--"), k(KeyCode::Char('-'), KeyModifiers::CONTROL));
        assert_eq!(key(" j "), key("j"));
        assert_eq!(key("é"), k(KeyCode::Char('é'), none));
    }

    #[test]
    fn bad_key_strings_say_why() {
        for (s, why) in [
            ("", "empty"),
            ("ctrl-", "nothing follows"),
            ("ctrl-foo", "unknown key name `foo`"),
            ("hyper-x", "unknown key name `hyper-x`"),
            ("f0", "no function key"),
            ("f99", "no function key"),
            ("shift-1", "ambiguous"),
            ("qq", "unknown key name"),
        ] {
            let err = Key::parse(s).expect_err(s);
            assert!(err.contains(why), "{s:?}: {err}");
        }
    }

    #[test]
    fn display_round_trips() {
        for s in [
            "q",
            "G",
            "ctrl-c",
            "ctrl-C",
            "alt-x",
            "space",
            "enter",
            "esc",
            "tab",
            "shift-tab",
            "up",
            "pagedown",
            "home",
            "end",
            "f5",
            "shift-up",
            "backspace",
            "delete",
            "?",
        ] {
            let k = key(s);
            assert_eq!(key(&k.to_string()), k, "{s}");
        }
        assert_eq!(key("Ctrl-Shift-X").to_string(), "ctrl-X");
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
}
