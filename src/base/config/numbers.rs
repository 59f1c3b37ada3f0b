//! The numbers of the config file checked against the ranges its declaration gives them
//! ([`super::schema`], from [`crate::base::ranges`]), each error naming the line and the key.

use toml::de::{DeTable, DeValue};
use toml::Spanned;

use super::error::ConfigError;
use super::parse::Parser;
use super::schema::{Kind, PROVIDERS};
use crate::base::ranges::NumRange;

impl Parser<'_> {
    /// Checks every number of every profile of `[providers]`.
    pub(super) fn provider_numbers(&self, profiles: &DeTable<'_>) -> Result<(), ConfigError> {
        for (name, profile) in profiles {
            let DeValue::Table(fields) = profile.get_ref() else {
                continue;
            };
            for (key, value) in fields {
                let field = key.get_ref().as_ref();
                if let Some(Kind::Num(range)) = PROVIDERS.key(field).map(|k| &k.kind) {
                    let dotted = format!("providers.{}.{field}", name.get_ref());
                    self.number(value, &dotted, range)?;
                }
            }
        }
        Ok(())
    }

    /// Checks one number against its range.
    pub(super) fn number(
        &self,
        value: &Spanned<DeValue<'_>>,
        key: &str,
        range: &NumRange,
    ) -> Result<(), ConfigError> {
        let (v, shown) = match value.get_ref() {
            DeValue::Integer(i) => (
                i64::from_str_radix(i.as_str(), i.radix()).map_or(f64::NAN, |n| n as f64),
                i.to_string(),
            ),
            DeValue::Float(f) if !range.whole => (
                f.as_str().parse().unwrap_or(f64::NAN),
                f.as_str().to_string(),
            ),
            other => {
                let what = if range.whole {
                    "a whole number"
                } else {
                    "a number"
                };
                let kind = other.type_str();
                let article = if kind.starts_with(['a', 'e', 'i', 'o', 'u']) {
                    "an"
                } else {
                    "a"
                };
                return Err(self.bad_value(
                    value.span(),
                    key,
                    &format!("must be {what} {}, not {article} {kind}", range.describe()),
                ));
            }
        };
        range
            .check(v, &shown)
            .map_err(|m| self.bad_value(value.span(), key, &m))
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::base::config::Config;

    const PROFILE: &str =
        "[providers.local]\nkind = \"openai\"\nbase_url = \"http://x\"\nmodel = \"m\"\n";

    fn message(src: &str) -> String {
        match Config::parse(src, Some(Path::new("plexus.toml"))) {
            Ok(config) => panic!("expected an error, got {config:?}"),
            Err(err) => err.to_string(),
        }
    }

    #[test]
    fn numbers_out_of_range_name_the_line_the_key_and_the_range() {
        let cases = [
            (
                "idle_timeout_s = 1e300",
                "`providers.local.idle_timeout_s`: 1e300 is out of range (from 0.1 to 86400 seconds)",
            ),
            (
                "connect_timeout_s = nan",
                "`providers.local.connect_timeout_s`: nan is out of range",
            ),
            (
                "connect_timeout_s = -inf",
                "`providers.local.connect_timeout_s`: -inf is out of range",
            ),
            (
                "concurrency = 9223372036854775807",
                "`providers.local.concurrency`: 9223372036854775807 is out of range (from 1 to 100000 calls)",
            ),
            (
                "concurrency = 2.5",
                "`providers.local.concurrency`: must be a whole number from 1 to 100000 calls, not a float",
            ),
            (
                "rate_burst = 0",
                "`providers.local.rate_burst`: 0 is out of range (from 1 to 1000000 requests)",
            ),
            (
                "thinking_budget = 5",
                "`providers.local.thinking_budget`: 5 is out of range (0 (off), or from 1024 to 1000000 tokens)",
            ),
            (
                "max_response_bytes = 0x10",
                "`providers.local.max_response_bytes`: 0x10 is out of range",
            ),
        ];
        for (line, want) in cases {
            let msg = message(&format!("{PROFILE}{line}\n"));
            assert!(msg.starts_with("plexus.toml:5: "), "{line}: {msg}");
            assert!(msg.contains(want), "{line}: {msg}");
        }
        for fine in [
            "thinking_budget = 0",
            "idle_timeout_s = 0.5",
            "rate_limit_rpm = 0",
        ] {
            let src = format!("{PROFILE}{fine}\n");
            assert!(Config::parse(&src, None).is_ok(), "{fine}");
        }
    }

    #[test]
    fn a_duplicate_key_names_its_line_and_a_byte_order_mark_is_skipped() {
        let msg = message("[ui]\ntheme = \"dark\"\ntheme = \"light\"\n");
        assert!(msg.starts_with("plexus.toml:3: "), "{msg}");
        assert!(msg.contains("duplicate key"), "{msg}");
        let msg = message(&format!("{PROFILE}concurrency = 4\nconcurrency = 5\n"));
        assert!(msg.starts_with("plexus.toml:6: "), "{msg}");
        let config =
            Config::parse("\u{feff}[ui]\ntheme = \"light\"\n", None).expect("a BOM is skipped");
        assert_eq!(config.ui.theme, "light");
        let msg = message("\u{feff}[ui]\n\nthem = 1\n");
        assert!(
            msg.starts_with("plexus.toml:3: unknown key `them`"),
            "{msg}"
        );
    }
}
