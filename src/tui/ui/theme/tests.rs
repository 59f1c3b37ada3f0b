//! Unit tests of theme parsing, loading and the style helpers.

use std::path::Path;

use ratatui::style::{Color, Modifier, Style};

use super::builtin::builtin_source;
use super::parse::parse_theme;
use super::roles::KNOWN_ROLES;
use super::*;
use crate::base::config::Config;
use pretty_assertions::assert_eq;

fn user(src: &str) -> Result<Theme, ThemeError> {
    Theme::from_toml(src, Path::new("mine.toml"))
}

fn message(src: &str) -> String {
    match user(src) {
        Ok(theme) => panic!("expected an error, got {theme:?}"),
        Err(err) => err.to_string(),
    }
}

#[test]
fn every_builtin_parses_and_is_complete() {
    for name in BUILTIN_NAMES {
        let builtin = builtin_source(name).expect("listed built-in has a source");
        assert_eq!(builtin.name, name);
        let parsed = parse_theme(builtin.src, Path::new(builtin.file))
            .unwrap_or_else(|err| panic!("{name}: {err}"));
        assert!(parsed.extends.is_none(), "{name} must not extend");
        assert_eq!(parsed.overrides.missing(), Vec::<&str>::new(), "{name}");
        assert_eq!(parsed.name.as_deref(), Some(name));
        let theme = Theme::builtin(name).expect("complete");
        assert_eq!(theme.name, name);
        assert!(!theme.agents.is_empty());
    }
}

#[test]
fn builtins_differ_and_dark_is_default() {
    let dark = Theme::dark();
    assert_eq!(dark.name, "dark");
    assert_eq!(Theme::default(), dark);
    assert_ne!(Theme::builtin("light"), Some(dark.clone()));
    assert_eq!(Theme::builtin("DARK"), Some(dark));
    assert!(Theme::builtin("high_contrast").is_some());
    assert!(Theme::builtin("nope").is_none());
}

#[test]
fn user_theme_overrides_one_colour_and_keeps_the_rest() {
    let theme = user("[colors]\naccent = \"#ff0000\"\n").expect("valid");
    let dark = Theme::dark();
    assert_eq!(theme.accent, Color::Rgb(255, 0, 0));
    assert_eq!(theme.name, "mine");
    let mut expected = dark;
    expected.accent = Color::Rgb(255, 0, 0);
    expected.name = "mine".into();
    assert_eq!(theme, expected);
}

#[test]
fn user_theme_extends_light_and_sets_half_a_pair() {
    let src = "name = \"paper\"\nextends = \"light\"\n[colors]\nbase.bg = \"reset\"\nagents = [\"red\", \"blue\"]\n";
    let theme = user(src).expect("valid");
    let light = Theme::builtin("light").expect("built-in");
    assert_eq!(theme.name, "paper");
    assert_eq!(theme.base_bg, Color::Reset);
    assert_eq!(theme.base_fg, light.base_fg);
    assert_eq!(theme.selection_bg, light.selection_bg);
    assert_eq!(theme.agents, vec![Color::Red, Color::Blue]);
    assert_eq!(theme.agent(0), Color::Red);
    assert_eq!(theme.agent(3), Color::Blue);
}

#[test]
fn user_theme_extends_high_contrast_by_either_spelling() {
    for spelling in ["high-contrast", "High_Contrast"] {
        let theme = user(&format!("extends = \"{spelling}\"\n")).expect("valid");
        let base = Theme::builtin("high-contrast").expect("built-in");
        assert_eq!(
            Theme {
                name: base.name.clone(),
                ..theme
            },
            base
        );
    }
}

#[test]
fn empty_user_theme_is_dark_renamed() {
    let theme = user("").expect("valid");
    assert_eq!(
        Theme {
            name: "dark".into(),
            ..theme
        },
        Theme::dark()
    );
}

#[test]
fn error_missing_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("gone.toml");
    let err = Theme::load(&path.to_string_lossy(), None).expect_err("missing");
    assert!(matches!(err, ThemeError::Missing { .. }));
    let msg = err.to_string();
    assert!(
        msg.contains("gone.toml") && msg.contains("does not exist"),
        "{msg}"
    );
}

#[test]
fn error_unknown_name() {
    let dir = tempfile::tempdir().expect("tempdir");
    let msg = Theme::load("solarized", Some(dir.path()))
        .expect_err("unknown")
        .to_string();
    assert!(msg.contains("`solarized`"), "{msg}");
    assert!(msg.contains("solarized.toml does not exist"), "{msg}");
    let msg = Theme::load("solarized", None)
        .expect_err("unknown")
        .to_string();
    assert!(msg.contains("not a built-in theme"), "{msg}");
}

#[test]
fn error_syntax_names_the_line() {
    let msg = message("name = \"x\"\n[colors]\naccent = \n");
    assert!(msg.starts_with("mine.toml:3:"), "{msg}");
    assert!(msg.contains("TOML syntax error"), "{msg}");
}

#[test]
fn error_unknown_role() {
    let msg = message("[colors]\naccent = \"red\"\naccnet = \"red\"\n");
    assert_eq!(
        msg,
        format!("mine.toml:3: unknown colour role `accnet` (roles: {KNOWN_ROLES})")
    );
    let msg = message("[colors]\nbase = { fgg = \"red\" }\n");
    assert!(
        msg.contains("mine.toml:2: unknown colour role `base.fgg`"),
        "{msg}"
    );
}

#[test]
fn error_bad_colour_names_role_and_value() {
    let msg = message("[colors]\n\nwarn = \"orange-ish\"\n");
    assert!(
        msg.starts_with("mine.toml:3: bad colour \"orange-ish\" for `warn`"),
        "{msg}"
    );
    let msg = message("[colors]\nagents = [\"red\", \"#12\"]\n");
    assert!(msg.contains("bad colour \"#12\" for `agents[1]`"), "{msg}");
    let msg = message("[colors]\nselection = { bg = 7 }\n");
    assert!(
        msg.contains("bad colour \"<integer>\" for `selection.bg`"),
        "{msg}"
    );
}

#[test]
fn error_unknown_extends() {
    let msg = message("extends = \"solarized\"\n");
    assert!(
        msg.starts_with("mine.toml:1: unknown theme `solarized` in `extends`"),
        "{msg}"
    );
}

#[test]
fn error_shapes() {
    assert!(message("colour = 1\n").contains("unknown key `colour`"));
    assert!(message("colors = 1\n").contains("`colors` must be a table"));
    assert!(message("[colors]\nbase = \"red\"\n").contains("`base` takes a table"));
    assert!(message("[colors]\nagents = []\n").contains("at least one colour"));
    assert!(message("[colors]\nagents = \"red\"\n").contains("list of colours"));
    assert!(message("name = 3\n").contains("`name` must be a string"));
}

#[test]
fn load_finds_builtins_config_dir_and_paths() {
    let dir = tempfile::tempdir().expect("tempdir");
    let themes = dir.path().join("themes");
    std::fs::create_dir_all(&themes).expect("mkdir");
    std::fs::write(themes.join("ocean.toml"), "[colors]\nok = \"blue\"\n").expect("write");
    let ocean = Theme::load("ocean", Some(dir.path())).expect("config dir theme");
    assert_eq!(ocean.ok, Color::Blue);
    assert_eq!(ocean.name, "ocean");
    let by_path = themes.join("ocean.toml");
    let again = Theme::load(&by_path.to_string_lossy(), None).expect("path");
    assert_eq!(again, ocean);
    assert_eq!(Theme::load("light", None).expect("builtin").name, "light");
    // A built-in name wins over a file of the same name.
    std::fs::write(themes.join("dark.toml"), "[colors]\nok = \"blue\"\n").expect("write");
    assert_eq!(
        Theme::load("dark", Some(dir.path())).expect("dark"),
        Theme::dark()
    );
}

#[test]
fn load_or_fallback_warns() {
    let (theme, warning) = load_or_fallback("light", None);
    assert_eq!(theme.name, "light");
    assert_eq!(warning, None);
    let (theme, warning) = load_or_fallback("/nonexistent/x.toml", None);
    assert_eq!(theme, Theme::dark());
    let warning = warning.expect("a warning");
    assert!(warning.contains("x.toml") && warning.contains("using the dark theme"));
}

#[test]
fn statuses_and_grades() {
    let t = Theme::dark();
    assert_eq!(t.status("pending"), t.muted());
    assert_eq!(t.status("ready"), t.accent());
    assert_eq!(t.status("running"), t.accent().add_modifier(Modifier::BOLD));
    assert_eq!(t.status("success"), t.ok());
    assert_eq!(t.status("partial"), t.warn());
    assert_eq!(t.status("failed"), t.error());
    assert_eq!(t.status("timeout"), t.warn());
    assert_eq!(t.status("blocked").fg, Some(t.error));
    assert_eq!(t.status("cancelled"), t.muted());
    assert_eq!(t.status("???"), Style::new().fg(t.base_fg));
    assert_eq!(t.grade('A'), t.ok());
    assert_eq!(t.grade('b'), t.accent());
    assert_eq!(t.grade('C'), t.warn());
    assert_eq!(t.grade('D'), t.error());
    assert_eq!(t.grade('?'), t.muted());
}

#[test]
fn style_helpers() {
    let t = Theme::dark();
    assert_eq!(t.style_base().bg, Some(t.base_bg));
    assert_eq!(t.selected().bg, Some(t.selection_bg));
    assert_eq!(t.border(true).fg, Some(t.border_focus));
    assert_eq!(t.border(false).fg, Some(t.border));
    assert!(t.title().add_modifier.contains(Modifier::BOLD));
    assert_eq!(t.gauge().bg, Some(t.gauge_bg));
    let empty = Theme {
        agents: Vec::new(),
        ..Theme::dark()
    };
    assert_eq!(empty.agent(5), empty.base_fg);
    let n = t.agents.len();
    assert_eq!(t.agent(n + 1), t.agent(1));
}

#[test]
fn theme_from_config_falls_back_with_a_warning() {
    let config = Config::parse(
        "[ui]\ntheme = \"/nonexistent/theme.toml\"\n",
        Some(Path::new("plexus.toml")),
    )
    .expect("valid");
    let (theme, warning) = load_or_fallback(&config.ui.theme, None);
    assert_eq!(theme, Theme::dark());
    assert!(warning.is_some_and(|w| w.contains("theme.toml")));
    let (theme, warning) = load_or_fallback(&Config::default().ui.theme, None);
    assert_eq!(theme.name, "dark");
    assert_eq!(warning, None);
}
