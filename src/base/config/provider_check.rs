//! Checks the `[providers.NAME]` tables when the config loads, so a typo stops every
//! command that reads the config, with its line.

use std::path::Path;

use toml::de::DeValue;
use toml::Spanned;

use super::error::ConfigError;
use super::origin::Origin;
use super::parse::Parser;
use super::providers::ProviderSettings;
use super::schema::{Layout, PROVIDERS};

impl Parser<'_> {
    /// Checks every `[providers.NAME]` table: fields known and well typed, values in
    /// range, so a typo stops every command that reads the config, with its line.
    pub(super) fn providers(&self, value: &Spanned<DeValue<'_>>) -> Result<(), ConfigError> {
        let DeValue::Table(table) = value.get_ref() else {
            return Err(self.bad_value(
                value.span(),
                "providers",
                "must be tables of profiles: [providers.NAME]",
            ));
        };
        self.provider_numbers(table)?;
        #[derive(serde::Deserialize)]
        struct Doc {
            #[serde(default)]
            providers: std::collections::BTreeMap<String, ProviderSettings>,
        }
        let doc: Doc = toml::from_str(self.src).map_err(|err| {
            let start = err.span().map_or(0, |s| s.start);
            let (line, _) = self.line_col(start);
            let key = self
                .src
                .lines()
                .nth(line - 1)
                .and_then(|l| l.split_once('='))
                .map(|(k, _)| k.trim().trim_matches('"').to_string());
            let profile = self
                .src
                .get(..start)
                .unwrap_or(self.src)
                .rmatch_indices("[providers.")
                .next()
                .and_then(|(i, _)| {
                    let rest = self.src.get(i + "[providers.".len()..)?;
                    rest.split(']')
                        .next()
                        .map(|n| n.trim().trim_matches('"').to_string())
                });
            let dotted = match (profile, key) {
                (Some(p), Some(k)) => format!("providers.{p}.{k}"),
                (Some(p), None) => format!("providers.{p}"),
                _ => "providers".to_string(),
            };
            ConfigError::BadValue {
                origin: Origin {
                    path: self.path.map(Path::to_path_buf),
                    line: Some(line),
                },
                key: dotted,
                message: crate::base::text::suggest::serde_message(err.message()),
            }
        })?;
        for (key, _) in table {
            let name = key.get_ref().as_ref();
            let dotted = format!("providers.{name}");
            if let Some(why) = crate::base::text::sanitize::invisible_name(name) {
                return Err(self.bad_value(key.span(), "providers", &why));
            }
            if let Layout::Tables { reserved, .. } = PROVIDERS.layout {
                if reserved.contains(&name) {
                    return Err(self.bad_value(
                        key.span(),
                        &dotted,
                        &format!("`{name}` is built in; give your profile another name"),
                    ));
                }
            }
            if let Some(p) = doc.providers.get(name) {
                p.check()
                    .map_err(|m| self.bad_value(key.span(), &dotted, &m))?;
            }
        }
        Ok(())
    }
}
