//! Unit tests of loading and parsing the config file.

use std::path::{Path, PathBuf};

use super::paths::config_dir_from;
use super::*;
use pretty_assertions::assert_eq;

fn parse(src: &str) -> Result<Config, ConfigError> {
    Config::parse(src, Some(Path::new("plexus.toml")))
}

fn message(src: &str) -> String {
    match parse(src) {
        Ok(config) => panic!("expected an error, got {config:?}"),
        Err(err) => err.to_string(),
    }
}

#[test]
fn empty_file_is_the_defaults() {
    let config = parse("").expect("valid");
    assert_eq!(config.ui.theme, "dark");
    assert!(config.keys.is_empty());
    assert!(config.other.is_empty());
    assert_eq!(config.path.as_deref(), Some(Path::new("plexus.toml")));
    assert_eq!(Config::default().ui, UiConfig::default());
}

#[test]
fn full_file() {
    let src = r#"
[ui]
theme = "light"

[keys]
quit = ["x", "ctrl-q"]
help = "f1"

[providers.openai]
kind = "openai"
base_url = "https://api.openai.com/v1"
model = "gpt-4o"
api_key_env = "OPENAI_API_KEY"
"#;
    let config = parse(src).expect("valid");
    assert_eq!(config.ui.theme, "light");
    assert_eq!(config.keys.entries.len(), 2);
    let help = &config.keys.entries[0];
    assert_eq!(help.action, "help");
    assert_eq!(help.keys, vec!["f1"]);
    assert_eq!(help.origin.line, Some(7));
    let providers = config.other.get("providers").and_then(|v| v.as_table());
    let openai = providers
        .and_then(|p| p.get("openai"))
        .and_then(|v| v.as_table());
    assert_eq!(
        openai.and_then(|t| t.get("model")).and_then(|v| v.as_str()),
        Some("gpt-4o")
    );
}

#[test]
fn syntax_error_names_file_and_line() {
    let msg = message("[ui]\ntheme = \"dark\nx = 1\n");
    assert!(msg.starts_with("plexus.toml:2: TOML syntax error"), "{msg}");
}

#[test]
fn unknown_ui_key_is_an_error() {
    let msg = message("[ui]\ntheme = \"dark\"\nthem = \"light\"\n");
    assert_eq!(
        msg,
        "plexus.toml:3: unknown key `them` in [ui] (known: theme)"
    );
}

#[test]
fn unknown_top_level_value_is_an_error() {
    let msg = message("theme = \"light\"\n");
    assert!(
        msg.starts_with("plexus.toml:1: unknown key `theme` in the top level"),
        "{msg}"
    );
}

#[test]
fn unknown_top_level_table_is_an_error() {
    let msg = message("[ui]\ntheme = \"dark\"\n[provders.local]\nkind = \"openai\"\n");
    assert!(
        msg.starts_with("plexus.toml:3: unknown key `provders` in the top level"),
        "{msg}"
    );
}

#[test]
fn a_wrong_type_in_a_profile_names_line_and_key() {
    let msg = message(
        "[providers.local]\nkind = \"openai\"\nbase_url = \"http://x\"\nmodel = \"m\"\nconcurrency = \"lots\"\n",
    );
    assert!(
        msg.starts_with("plexus.toml:5: `providers.local.concurrency`:"),
        "{msg}"
    );
}

#[test]
fn wrong_shapes() {
    assert!(message("ui = 3\n").contains("`ui`: must be a table"));
    assert!(message("[ui]\ntheme = 3\n").contains("plexus.toml:2: `ui.theme`: must be a string"));
    assert!(message("keys = []\n").contains("`keys`: must be a table"));
    let msg = message("[keys]\nquit = 3\n");
    assert!(
        msg.starts_with("plexus.toml:2: `keys.quit`: expected a key string"),
        "{msg}"
    );
    let msg = message("[keys]\nquit = [\"q\",\n  3]\n");
    assert!(msg.starts_with("plexus.toml:3: `keys.quit`"), "{msg}");
}

#[test]
fn keymap_errors_name_file_line_action_and_key() {
    let msg = message("[keys]\n\nqiut = \"q\"\n");
    assert!(
        msg.starts_with("plexus.toml:3: unknown action `qiut` in [keys]"),
        "{msg}"
    );
    assert!(msg.contains("quit, confirm"), "{msg}");
    let msg = message("[keys]\nquit = [\"q\", \"ctrl-\"]\n");
    assert!(
        msg.starts_with("plexus.toml:2: bad key `ctrl-` for action `quit`"),
        "{msg}"
    );
    let msg = message("[keys]\nhelp = \"f1\"\nsearch = \"F1\"\n");
    assert!(msg.contains("key `f1` is bound to both"), "{msg}");
    assert!(msg.contains("`help`") && msg.contains("`search`"), "{msg}");
    let msg = message("[keys]\nquit = []\n");
    assert!(
        msg.contains("plexus.toml:2: `keys.quit`: list at least one key"),
        "{msg}"
    );
}

#[test]
fn load_order() {
    let work = tempfile::tempdir().expect("tempdir");
    let conf = tempfile::tempdir().expect("tempdir");
    // Nothing anywhere: defaults.
    let config = Config::load_from(None, Some(work.path()), Some(conf.path())).expect("ok");
    assert_eq!(config, Config::default());
    // The config dir.
    std::fs::write(conf.path().join(FILE_NAME), "[ui]\ntheme = \"light\"\n").expect("write");
    let config = Config::load_from(None, Some(work.path()), Some(conf.path())).expect("ok");
    assert_eq!(config.ui.theme, "light");
    assert_eq!(config.path, Some(conf.path().join(FILE_NAME)));
    // The working directory wins.
    std::fs::write(
        work.path().join(FILE_NAME),
        "[ui]\ntheme = \"high-contrast\"\n",
    )
    .expect("write");
    let config = Config::load_from(None, Some(work.path()), Some(conf.path())).expect("ok");
    assert_eq!(config.ui.theme, "high-contrast");
    // An explicit file wins over both.
    let explicit = work.path().join("other.toml");
    std::fs::write(&explicit, "").expect("write");
    let config =
        Config::load_from(Some(&explicit), Some(work.path()), Some(conf.path())).expect("ok");
    assert_eq!(config.ui.theme, "dark");
    assert_eq!(config.path, Some(explicit));
}

#[test]
fn explicit_path_must_exist() {
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = dir.path().join("nope.toml");
    let err = Config::load_from(Some(&missing), None, None).expect_err("missing");
    assert!(matches!(err, ConfigError::Missing { .. }));
    let msg = err.to_string();
    assert!(
        msg.contains("nope.toml") && msg.contains("does not exist"),
        "{msg}"
    );
}

#[test]
fn errors_from_a_file_name_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join(FILE_NAME);
    std::fs::write(&path, "[ui]\ncolour = 1\n").expect("write");
    let msg = Config::from_file(&path).expect_err("bad").to_string();
    assert!(msg.starts_with(&format!("{}:2:", path.display())), "{msg}");
}

#[test]
fn config_dir_prefers_xdg() {
    let abs = std::env::temp_dir();
    assert_eq!(
        config_dir_from(Some(abs.clone().into_os_string()), Some("/home/u".into())),
        Some(abs.join("plexus"))
    );
    assert_eq!(
        config_dir_from(Some("relative".into()), Some("/home/u".into())),
        Some(PathBuf::from("/home/u/.config/plexus"))
    );
    assert_eq!(
        config_dir_from(Some("".into()), Some("/home/u".into())),
        Some(PathBuf::from("/home/u/.config/plexus"))
    );
    assert_eq!(config_dir_from(None, None), None);
    assert_eq!(config_dir_from(None, Some("".into())), None);
}

#[test]
fn origin_display() {
    let o = Origin {
        path: Some("a.toml".into()),
        line: Some(3),
    };
    assert_eq!(o.to_string(), "a.toml:3");
    assert_eq!(Origin::default().to_string(), "config");
    assert_eq!(
        Origin {
            path: None,
            line: Some(2)
        }
        .to_string(),
        "config line 2"
    );
}
