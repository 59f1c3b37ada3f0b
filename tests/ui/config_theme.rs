//! Config, keymap and themes through the public API, with files on disk.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use plexus::base::config::{Config, ConfigError, FILE_NAME};
use plexus::tui::app::action::Action;
use plexus::tui::app::keymap::ConfigKeymap;
use plexus::tui::ui::theme::{load_or_fallback, Theme};
use ratatui::style::Color;

#[test]
fn a_config_dir_with_a_user_theme_and_key_overrides() {
    let dir = tempfile::tempdir().expect("tempdir");
    let themes = dir.path().join("themes");
    std::fs::create_dir_all(&themes).expect("mkdir");
    std::fs::write(
        themes.join("dusk.toml"),
        "name = \"dusk\"\nextends = \"light\"\n[colors]\naccent = \"#ff8800\"\n",
    )
    .expect("write theme");
    let config_path = dir.path().join(FILE_NAME);
    std::fs::write(
        &config_path,
        "[ui]\ntheme = \"dusk\"\n\n[keys]\nquit = [\"x\", \"ctrl-q\"]\n\n[providers.local]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:1/v1\"\nmodel = \"m\"\n",
    )
    .expect("write config");

    let config = Config::load(Some(&config_path)).expect("valid config");
    assert_eq!(config.ui.theme, "dusk");
    assert!(config.other.contains_key("providers"));

    let theme = Theme::load(&config.ui.theme, Some(dir.path())).expect("user theme");
    let light = Theme::builtin("light").expect("built-in");
    assert_eq!(theme.name, "dusk");
    assert_eq!(theme.accent, Color::Rgb(0xff, 0x88, 0x00));
    assert_eq!(theme.base_bg, light.base_bg);

    let keymap = config.keymap().expect("checked");
    let x = KeyEvent::new(KeyCode::Char('x'), KeyModifiers::NONE);
    let q = KeyEvent::new(KeyCode::Char('q'), KeyModifiers::NONE);
    assert_eq!(keymap.lookup(&x), Some(Action::Quit));
    assert_eq!(keymap.lookup(&q), None);
}

#[test]
fn a_broken_theme_falls_back_to_dark_with_a_message() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("broken.toml");
    std::fs::write(&path, "[colors]\nerror = \"blood\"\n").expect("write");
    let (theme, warning) = load_or_fallback(&path.to_string_lossy(), None);
    assert_eq!(theme, Theme::dark());
    let warning = warning.expect("a warning");
    assert!(warning.contains("broken.toml:2"), "{warning}");
    assert!(
        warning.contains("\"blood\"") && warning.contains("`error`"),
        "{warning}"
    );
}

#[test]
fn a_bad_config_names_file_line_and_key() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join(FILE_NAME);
    std::fs::write(&path, "[keys]\nquit = \"ctrl-\"\n").expect("write");
    let err = Config::load(Some(&path)).expect_err("bad key");
    assert!(matches!(err, ConfigError::BadKey { .. }));
    let msg = err.to_string();
    assert!(msg.starts_with(&format!("{}:2:", path.display())), "{msg}");
    assert!(msg.contains("`ctrl-`") && msg.contains("`quit`"), "{msg}");
}
