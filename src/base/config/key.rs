//! Key strings (`q`, `G`, `ctrl-c`, `shift-tab`, `pagedown`, `f1`, …): parsing them,
//! showing them, and the normalised key a binding and a terminal event share.

use std::fmt;

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

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

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn key(s: &str) -> Key {
        Key::parse(s).unwrap_or_else(|e| panic!("{s:?}: {e}"))
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
}
