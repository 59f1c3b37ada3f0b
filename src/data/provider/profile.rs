//! Provider profiles: built from the `[providers.NAME]` tables the config reads (and
//! checks when it loads), and the API key each one reads from the environment or a key file.
//!
//! ```toml
//! [providers.openai]
//! kind = "openai"                      # openai | anthropic | simulated
//! base_url = "https://api.openai.com/v1"
//! model = "gpt-4o-mini"
//! api_key_env = "OPENAI_API_KEY"       # or api_key_file = "~/.config/plexus/openai.key"
//! headers = { "OpenAI-Organization" = "org-123" }
//! concurrency = 64                     # calls in flight through this profile
//! rate_limit_rpm = 500                 # token bucket: requests per minute
//! embedding_model = "text-embedding-3-small"  # debate similarity through /embeddings
//! moderation_model = "omni-moderation-latest"  # debate outputs through /moderations
//! ```
//!
//! The key itself is never part of a profile: it is read when a provider is built and
//! lives only inside the HTTP client.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::base::config::providers::ProviderSettings;

pub use crate::base::config::providers::ProviderKind;

/// A usable provider profile: one `[providers.NAME]` table with its name filled in.
/// Its values are the table's own ([`ProviderSettings`], read through `Deref`): one
/// definition, read, checked and published as JSON Schema from the config.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderProfile {
    /// The table's name (filled in from the key, not written in the table).
    pub name: String,
    /// The table's values.
    pub settings: ProviderSettings,
}

impl std::ops::Deref for ProviderProfile {
    type Target = ProviderSettings;

    fn deref(&self) -> &ProviderSettings {
        &self.settings
    }
}

impl std::ops::DerefMut for ProviderProfile {
    fn deref_mut(&mut self) -> &mut ProviderSettings {
        &mut self.settings
    }
}

/// A profile that cannot be used, naming the file and the table.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{origin}: [providers.{profile}]: {message}")]
pub struct ProfileError {
    /// Config file, or `config` for defaults.
    pub origin: String,
    /// Profile name.
    pub profile: String,
    /// What is wrong.
    pub message: String,
}

/// Where the key comes from, for display (never the key itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeySource {
    /// No key configured (local servers).
    None,
    /// `$NAME`, set or not.
    Env {
        /// Variable.
        name: String,
        /// Whether it is set and non-empty.
        set: bool,
    },
    /// A key file, readable or not.
    File {
        /// Path.
        path: PathBuf,
        /// Whether it can be read.
        readable: bool,
    },
}

impl fmt::Display for KeySource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeySource::None => f.write_str("no key"),
            KeySource::Env { name, set: true } => write!(f, "${name} (set)"),
            KeySource::Env { name, set: false } => write!(f, "${name} (NOT SET)"),
            KeySource::File {
                path,
                readable: true,
            } => write!(f, "{} (readable)", path.display()),
            KeySource::File {
                path,
                readable: false,
            } => write!(f, "{} (NOT READABLE)", path.display()),
        }
    }
}

/// An API key: printed as `[redacted]` by Debug and Display.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// The key text, for the one header that carries it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey([redacted])")
    }
}

impl ProviderProfile {
    /// The simulated provider as a profile (the default when none is chosen).
    pub fn simulated() -> ProviderProfile {
        ProviderProfile::from_settings(
            "simulated",
            ProviderSettings {
                model: "simulated".into(),
                ..ProviderSettings::new(ProviderKind::Simulated)
            },
        )
    }

    /// The profile a `[providers.NAME]` table describes, as written (not checked).
    pub fn from_settings(name: &str, settings: ProviderSettings) -> ProviderProfile {
        ProviderProfile {
            name: name.to_string(),
            settings,
        }
    }

    /// `kind:model@name`, as shown in run lists.
    pub fn label(&self) -> String {
        if self.kind == ProviderKind::Simulated {
            return "simulated".into();
        }
        format!("{}:{}@{}", self.kind.as_str(), self.model, self.name)
    }

    /// Where the key comes from.
    pub fn key_source(&self) -> KeySource {
        if let Some(name) = &self.api_key_env {
            let set = std::env::var(name).map(|v| !v.trim().is_empty()) == Ok(true);
            return KeySource::Env {
                name: name.clone(),
                set,
            };
        }
        if let Some(path) = &self.api_key_file {
            let path = expand_home(path);
            let readable = std::fs::File::open(&path).is_ok();
            return KeySource::File { path, readable };
        }
        KeySource::None
    }

    /// Reads the key: `Ok(None)` when the profile names no key source.
    pub fn api_key(&self) -> Result<Option<ApiKey>, ProfileError> {
        let err = |message: String| ProfileError {
            origin: "key".into(),
            profile: self.name.clone(),
            message,
        };
        if let Some(name) = &self.api_key_env {
            return match std::env::var(name) {
                Ok(v) if !v.trim().is_empty() => Ok(Some(ApiKey(v.trim().to_string()))),
                _ => Err(err(format!(
                    "the API key variable ${name} is not set (export it, or use api_key_file)"
                ))),
            };
        }
        if let Some(path) = &self.api_key_file {
            let path = expand_home(path);
            let text = std::fs::read_to_string(&path)
                .map_err(|e| err(format!("cannot read the key file {}: {e}", path.display())))?;
            let key = text.lines().next().unwrap_or("").trim().to_string();
            if key.is_empty() {
                return Err(err(format!("the key file {} is empty", path.display())));
            }
            return Ok(Some(ApiKey(key)));
        }
        Ok(None)
    }

    /// Checks the values serde cannot: required fields, ranges, header syntax.
    pub fn check(&self) -> Result<(), String> {
        self.settings.check()
    }
}

fn expand_home(path: &Path) -> PathBuf {
    if let Ok(rest) = path.strip_prefix("~") {
        if let Some(home) = std::env::var_os("HOME") {
            return PathBuf::from(home).join(rest);
        }
    }
    path.to_path_buf()
}

/// Every profile of a config, by name (sorted).
pub fn profiles(
    config: &crate::base::config::Config,
) -> Result<Vec<ProviderProfile>, ProfileError> {
    let origin = config
        .path
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "config".into());
    let Some(table) = config.other.get("providers") else {
        return Ok(Vec::new());
    };
    let Some(table) = table.as_table() else {
        return Err(ProfileError {
            origin,
            profile: "*".into(),
            message: "`providers` must be a table of profiles".into(),
        });
    };
    let mut out = Vec::new();
    for (name, value) in table {
        let fail = |message: String| ProfileError {
            origin: origin.clone(),
            profile: name.clone(),
            message,
        };
        if name == "simulated" {
            return Err(fail(
                "`simulated` is built in; give your profile another name".into(),
            ));
        }
        let settings: ProviderSettings = value
            .clone()
            .try_into()
            .map_err(|e: toml::de::Error| fail(e.message().to_string()))?;
        let mut p = ProviderProfile::from_settings(name, settings);
        p.base_url = p.base_url.trim().trim_end_matches('/').to_string();
        p.check().map_err(fail)?;
        out.push(p);
    }
    Ok(out)
}

/// The profile called `name`; `simulated` is always there.
pub fn find(
    config: &crate::base::config::Config,
    name: &str,
) -> Result<ProviderProfile, ProfileError> {
    if name == "simulated" {
        return Ok(ProviderProfile::simulated());
    }
    let all = profiles(config)?;
    let known: Vec<String> = std::iter::once("simulated".to_string())
        .chain(all.iter().map(|p| p.name.clone()))
        .collect();
    all.into_iter()
        .find(|p| p.name == name)
        .ok_or_else(|| ProfileError {
            origin: config
                .path
                .as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_else(|| "config".into()),
            profile: name.into(),
            message: format!("no such profile (known: {})", known.join(", ")),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::config::Config;

    fn cfg(src: &str) -> Config {
        Config::parse(src, Some(Path::new("plexus.toml"))).expect("should succeed")
    }

    #[test]
    fn profiles_parse_with_defaults_and_names() {
        let c = cfg(r#"
[providers.local]
kind = "openai"
base_url = "http://127.0.0.1:8000/v1/"
model = "qwen"
[providers.claude]
kind = "anthropic"
base_url = "https://api.anthropic.com"
model = "claude-sonnet-4-5"
api_key_env = "ANTHROPIC_API_KEY"
rate_limit_rpm = 50
"#);
        let all = profiles(&c).expect("should succeed");
        assert_eq!(all.len(), 2);
        let local = find(&c, "local").expect("should succeed");
        assert_eq!(local.base_url, "http://127.0.0.1:8000/v1");
        assert_eq!(local.concurrency, 256);
        assert!(local.stream);
        assert_eq!(local.key_source(), KeySource::None);
        assert_eq!(
            find(&c, "claude").expect("should succeed").rate_limit_rpm,
            50
        );
        assert_eq!(
            find(&c, "simulated").expect("should succeed").kind,
            ProviderKind::Simulated
        );
    }

    #[test]
    fn bad_profiles_name_file_profile_and_field() {
        let cases = [
            ("kind = \"openai\"\nmodel = \"m\"", "`base_url` is required"),
            (
                "kind = \"openai\"\nbase_url = \"ftp://x\"\nmodel = \"m\"",
                "must start with http",
            ),
            ("kind = \"gemini\"", "unknown variant"),
            (
                "kind = \"openai\"\nbase_url = \"http://x\"\nmodel = \"m\"\napi_kye_env = \"K\"",
                "unknown field",
            ),
            (
                "kind = \"openai\"\nbase_url = \"http://x\"\nmodel = \"m\"\nconcurrency = 0",
                "concurrency",
            ),
            (
                "kind = \"openai\"\nbase_url = \"http://x\"\nmodel = \"m\"\nheaders = { \"bad header\" = \"v\" }",
                "valid HTTP header name",
            ),
        ];
        // Refused when the config loads: file, line, the profile's key, the problem.
        for (body, want) in cases {
            let src = format!("[ui]\ntheme = \"dark\"\n[providers.p]\n{body}\n");
            let e = Config::parse(&src, Some(Path::new("plexus.toml")))
                .expect_err("should fail")
                .to_string();
            assert!(e.starts_with("plexus.toml:"), "{e}");
            let line: usize = e["plexus.toml:".len()..]
                .split(':')
                .next()
                .and_then(|n| n.parse().ok())
                .unwrap_or(0);
            assert!((3..=8).contains(&line), "{e}: line {line}");
            assert!(e.contains("`providers.p"), "{e}");
            assert!(e.contains(want), "{e} should mention {want}");
        }
        let c = cfg("");
        let e = find(&c, "nope").expect_err("should fail").to_string();
        assert!(e.contains("no such profile (known: simulated)"), "{e}");
    }

    #[test]
    fn keys_come_from_env_or_file_and_never_print() {
        let dir = tempfile::tempdir().expect("should succeed");
        let file = dir.path().join("k");
        std::fs::write(&file, "sk-file-123\n").expect("should succeed");
        let mut p = ProviderProfile::simulated();
        p.name = "p".into();
        p.api_key_file = Some(file.clone());
        let key = p
            .api_key()
            .expect("should succeed")
            .expect("should succeed");
        assert_eq!(key.expose(), "sk-file-123");
        assert!(!format!("{key:?}").contains("sk-file"));
        p.api_key_file = Some(dir.path().join("missing"));
        assert!(p
            .api_key()
            .expect_err("should fail")
            .message
            .contains("cannot read"));
        p.api_key_file = None;
        p.api_key_env = Some("PLEXUS_TEST_SURELY_UNSET_KEY".into());
        let e = p.api_key().expect_err("should fail").to_string();
        assert!(
            e.contains("$PLEXUS_TEST_SURELY_UNSET_KEY is not set"),
            "{e}"
        );
    }
}
