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
        "plexus.toml:3: unknown key `them` in [ui]; did you mean `theme`? (known: theme)"
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
        msg.starts_with(
            "plexus.toml:3: unknown key `provders` in the top level; did you mean `providers`?"
        ),
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
fn an_mcp_table_is_checked_key_by_key() {
    assert!(parse("[mcp.files]\ncommand = \"srv\"\nargs = [\"-v\"]\nenv = {A = \"1\"}\n").is_ok());
    assert!(message("[mcp.files]\nargs = []\n").contains("command"));
    let msg = message("[mcp.files]\ncommand = \"srv\"\nargs = [\"-v\", 3]\n");
    assert!(
        msg.contains("plexus.toml:3: `mcp.files.args`: must be a list of strings"),
        "{msg}"
    );
    let msg = message("[mcp.files]\ncommand = \"srv\"\ntimeout_s = 0\n");
    assert!(msg.contains("`mcp.files.timeout_s`"), "{msg}");
    assert!(message("[mcp.files]\ncommand = \"srv\"\nurl = \"http://x\"\n").contains("url"));
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

/// The JSON Schema of the config file, compiled.
fn schema_validator() -> jsonschema::Validator {
    let schema = config_schema();
    assert!(jsonschema::meta::is_valid(&schema), "not valid JSON Schema");
    jsonschema::validator_for(&schema).expect("the config schema compiles")
}

/// Whether the schema accepts TOML text `src` (false when it is not TOML).
fn schema_accepts(v: &jsonschema::Validator, src: &str) -> bool {
    let Ok(table) = toml::from_str::<toml::Table>(src) else {
        return false;
    };
    let value = serde_json::to_value(&table).expect("TOML as JSON");
    v.is_valid(&value)
}

/// The ```toml blocks of a Markdown file.
fn toml_blocks(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        match current.as_mut() {
            None if line.trim() == "```toml" => current = Some(String::new()),
            Some(_) if line.trim() == "```" => blocks.extend(current.take()),
            Some(block) => {
                block.push_str(line);
                block.push('\n');
            }
            None => {}
        }
    }
    blocks
}

#[test]
fn documented_configs_pass_the_schema_exactly_when_plexus_accepts_them() {
    let v = schema_validator();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut examples: Vec<String> = [
        "docs/providers.md",
        "docs/tui.md",
        "docs/mcp.md",
        "README.md",
    ]
    .iter()
    .flat_map(|doc| toml_blocks(&root.join(doc)))
    .collect();
    // The examples in the module docs.
    for file in ["src/base/config/mod.rs", "src/base/config/providers.rs"] {
        let text = std::fs::read_to_string(root.join(file)).expect("readable");
        let block: Vec<&str> = text
            .lines()
            .skip_while(|l| l.trim() != "//! ```toml")
            .skip(1)
            .take_while(|l| l.trim() != "//! ```")
            .map(|l| l.trim_start_matches("//!").strip_prefix(' ').unwrap_or(""))
            .collect();
        examples.push(block.join("\n"));
    }
    let mut accepted = 0;
    for src in &examples {
        let plexus = parse(src).is_ok();
        assert_eq!(
            schema_accepts(&v, src),
            plexus,
            "plexus accepts: {plexus}\n{src}"
        );
        accepted += usize::from(plexus);
    }
    assert!(
        accepted >= 5,
        "{accepted} of {} examples are configs",
        examples.len()
    );
}

#[test]
fn mistakes_in_a_config_are_refused_by_the_schema_and_by_plexus() {
    let v = schema_validator();
    let openai = "[providers.p]\nkind = \"openai\"\nbase_url = \"http://x\"\nmodel = \"m\"\n";
    let refused = [
        "[provders.p]\nkind = \"openai\"\n".to_string(),
        "theme = \"dark\"\n".into(),
        "[ui]\nthem = \"dark\"\n".into(),
        "[ui]\ntheme = 3\n".into(),
        "[review]\nreviewer = \"  \"\n".into(),
        "[keys]\nquitt = \"x\"\n".into(),
        "[keys]\nquit = []\n".into(),
        "[keys]\nquit = 3\n".into(),
        format!("{openai}concurrency = 0\n"),
        format!("{openai}concurrency = 2.5\n"),
        format!("{openai}thinking_budget = 5\n"),
        format!("{openai}api_kye_env = \"K\"\n"),
        format!("{openai}stream = \"yes\"\n"),
        format!("{openai}max_tokens_param = \"tokens\"\n"),
        format!("{openai}api_key_env = \"K\"\napi_key_file = \"k\"\n"),
        format!("{openai}embedding_base_url = \"http://e\"\n"),
        format!("{openai}embedding_base_url = \"ftp://e\"\nembedding_model = \"e\"\n"),
        format!("{openai}headers = {{ x = 1 }}\n"),
        "[providers.p]\nkind = \"gemini\"\n".into(),
        "[providers.p]\nkind = \"openai\"\nmodel = \"m\"\n".into(),
        "[providers.p]\nkind = \"openai\"\nbase_url = \"ftp://x\"\nmodel = \"m\"\n".into(),
        "[providers.p]\nkind = \"openai\"\nbase_url = \"http://x\"\nmodel = \" \"\n".into(),
        "[providers.p]\nbase_url = \"http://x\"\nmodel = \"m\"\n".into(),
        "[providers.simulated]\nkind = \"simulated\"\n".into(),
    ];
    for src in &refused {
        assert!(parse(src).is_err(), "plexus accepts:\n{src}");
        assert!(!schema_accepts(&v, src), "the schema accepts:\n{src}");
    }
    let accepted = [
        String::new(),
        "[keys]\nPage-Down = [\"J\"]\n".into(),
        "[providers.sim]\nkind = \"simulated\"\n".into(),
        format!("{openai}thinking_budget = 0\nrate_limit_rpm = 0\nidle_timeout_s = 0.5\n"),
        format!("{openai}embedding_model = \"e\"\nembedding_base_url = \"https://e/v1\"\n"),
        format!("{openai}headers = {{ x-team = \"a\" }}\nstream = false\n"),
    ];
    for src in &accepted {
        if let Err(e) = parse(src) {
            panic!("plexus refuses: {e}\n{src}");
        }
        assert!(schema_accepts(&v, src), "the schema refuses:\n{src}");
    }
}

#[test]
fn the_declared_profile_keys_are_the_fields_plexus_reads() {
    // serde lists the fields it knows when it meets an unknown one.
    let err = toml::from_str::<ProviderSettings>("kind = \"openai\"\nnope = 1\n")
        .expect_err("an unknown field");
    let message = err.message().to_string();
    let listed = message.split("expected one of ").nth(1).unwrap_or_default();
    let serde_fields: Vec<&str> = listed.split(", ").map(|f| f.trim_matches('`')).collect();
    let declared: Vec<&str> = schema::PROVIDERS.keys().iter().map(|k| k.name).collect();
    assert_eq!(declared, serde_fields);
}

#[test]
fn the_declared_defaults_are_the_ones_plexus_uses() {
    use serde_json::json;
    let p: ProviderSettings = toml::from_str("kind = \"openai\"\n").expect("a profile");
    for key in schema::PROVIDERS.keys() {
        let Some(d) = &key.default else { continue };
        let used = match key.name {
            "concurrency" => json!(p.concurrency),
            "rate_limit_rpm" => json!(p.rate_limit_rpm),
            "stream" => json!(p.stream),
            "connect_timeout_s" => json!(p.connect_timeout_s),
            "idle_timeout_s" => json!(p.idle_timeout_s),
            "max_response_bytes" => json!(p.max_response_bytes),
            "max_tokens_param" => json!(p.max_tokens_param),
            "anthropic_version" => json!(p.anthropic_version),
            "thinking_budget" => json!(p.thinking_budget),
            "structured_output" => json!(p.structured_output.as_str()),
            other => panic!("a default for `{other}` that this test does not know"),
        };
        assert_eq!(json_schema::default(d), used, "{}", key.name);
    }
    let theme = schema::UI.key("theme").and_then(|k| k.default.as_ref());
    assert!(matches!(theme, Some(schema::Default::Str(t)) if *t == UiConfig::default().theme));
}

#[test]
fn a_profile_or_price_name_with_an_invisible_character_is_refused() {
    for text in [
        "[providers.\"lo\\u001b[2Jcal\"]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:1/v1\"\nmodel = \"m\"\n",
        "[prices.\"gpt\\u202e4\"]\ninput = 1\n",
    ] {
        let msg = message(text);
        assert!(msg.contains("invisible character"), "{msg}");
    }
}
