//! Tables of the config file without a reader of their own, checked key by key from
//! their declaration in [`super::schema`] when the file loads: unknown keys, types,
//! names, ranges, required keys and the rules between keys, each error naming the line.

use toml::de::{DeTable, DeValue};
use toml::Spanned;

use super::error::ConfigError;
use super::parse::Parser;
use super::schema::{Key, Kind, Layout, Rule, Section};

impl Parser<'_> {
    /// Checks the top-level table `section` against its declaration.
    pub(super) fn declared(
        &self,
        section: &Section,
        value: &Spanned<DeValue<'_>>,
    ) -> Result<(), ConfigError> {
        let DeValue::Table(table) = value.get_ref() else {
            return Err(self.bad_value(
                value.span(),
                section.name,
                &format!("must be a table: {}", section.header()),
            ));
        };
        match &section.layout {
            Layout::Table(keys) => self.declared_keys(
                section.name,
                &section.header(),
                keys,
                &[],
                value.span(),
                table,
            ),
            Layout::Tables {
                keys,
                rules,
                reserved,
            } => {
                for (name, inner) in table {
                    let name = name.get_ref().as_ref();
                    let dotted = format!("{}.{name}", section.name);
                    if let Some(why) = crate::base::text::sanitize::invisible_name(name) {
                        return Err(self.bad_value(inner.span(), section.name, &why));
                    }
                    if reserved.contains(&name) {
                        return Err(self.bad_value(
                            inner.span(),
                            &dotted,
                            &format!("`{name}` is reserved; give the table another name"),
                        ));
                    }
                    let DeValue::Table(fields) = inner.get_ref() else {
                        return Err(self.bad_value(
                            inner.span(),
                            &dotted,
                            &format!("must be a table: [{dotted}]"),
                        ));
                    };
                    let header = format!("[{dotted}]");
                    self.declared_keys(&dotted, &header, keys, rules, inner.span(), fields)?;
                }
                Ok(())
            }
            Layout::Keymap => self.keys(value).map(drop),
        }
    }

    /// Checks the keys of one table (`dotted` names it in errors, `header` as written).
    fn declared_keys(
        &self,
        dotted: &str,
        header: &str,
        keys: &[Key],
        rules: &[Rule],
        span: std::ops::Range<usize>,
        table: &DeTable<'_>,
    ) -> Result<(), ConfigError> {
        for (key, value) in table {
            let name = key.get_ref().as_ref();
            let Some(k) = keys.iter().find(|k| k.name == name) else {
                let names: Vec<&str> = keys.iter().map(|k| k.name).collect();
                return Err(ConfigError::UnknownKey {
                    origin: self.origin(key.span()),
                    table: header.to_string(),
                    key: name.to_string(),
                    known: format!("known: {}", names.join(", ")),
                });
            };
            self.declared_value(&format!("{dotted}.{name}"), &k.kind, value)?;
        }
        let has = |name: &str| table.iter().any(|(k, _)| k.get_ref().as_ref() == name);
        let string = |name: &str| {
            table.iter().find_map(|(k, v)| match v.get_ref() {
                DeValue::String(s) if k.get_ref().as_ref() == name => Some(s.to_string()),
                _ => None,
            })
        };
        let mut required: Vec<&str> = keys.iter().filter(|k| k.required).map(|k| k.name).collect();
        for rule in rules {
            match rule {
                Rule::Unless {
                    key,
                    value,
                    required: also,
                } if string(key).as_deref() != Some(value) => required.extend(also.iter()),
                Rule::Unless { .. } => {}
                Rule::Exclusive(a, b) if has(a) && has(b) => {
                    return Err(self.bad_value(
                        span,
                        dotted,
                        &format!("give `{a}` or `{b}`, not both"),
                    ))
                }
                Rule::Needs(a, b) if has(a) && !has(b) => {
                    return Err(self.bad_value(span, dotted, &format!("`{a}` needs `{b}`")))
                }
                Rule::Exclusive(..) | Rule::Needs(..) => {}
            }
        }
        match required.into_iter().find(|name| !has(name)) {
            Some(name) => Err(self.bad_value(span, dotted, &format!("`{name}` is required"))),
            None => Ok(()),
        }
    }

    /// Checks one value against its kind.
    fn declared_value(
        &self,
        key: &str,
        kind: &Kind,
        value: &Spanned<DeValue<'_>>,
    ) -> Result<(), ConfigError> {
        let fits = match (kind, value.get_ref()) {
            (Kind::Num(range), _) => return self.number(value, key, range),
            (Kind::Bool, DeValue::Boolean(_)) | (Kind::Str, DeValue::String(_)) => true,
            (Kind::Text, DeValue::String(s)) => !s.trim().is_empty(),
            (Kind::Url, DeValue::String(s)) => is_url(s),
            (Kind::OneOf(names), DeValue::String(s)) => names.contains(&s.as_ref()),
            (Kind::StrTable, DeValue::Table(t)) => t
                .iter()
                .all(|(_, v)| matches!(v.get_ref(), DeValue::String(_))),
            (Kind::StrList, DeValue::Array(a)) => {
                a.iter().all(|v| matches!(v.get_ref(), DeValue::String(_)))
            }
            _ => false,
        };
        if fits {
            Ok(())
        } else {
            Err(self.bad_value(value.span(), key, &format!("must be {}", expected(kind))))
        }
    }
}

/// Whether `s` is an `http://` or `https://` URL.
pub(super) fn is_url(s: &str) -> bool {
    let s = s.trim();
    s.starts_with("http://") || s.starts_with("https://")
}

/// What a kind wants, in words.
fn expected(kind: &Kind) -> String {
    match kind {
        Kind::Str => "a string".into(),
        Kind::Text => "a non-empty string".into(),
        Kind::Url => "a string starting with http:// or https://".into(),
        Kind::Bool => "true or false".into(),
        Kind::Num(r) => format!("a number {}", r.describe()),
        Kind::OneOf(names) => format!("one of {}", names.join(", ")),
        Kind::StrTable => "a table of strings".into(),
        Kind::StrList => "a list of strings".into(),
    }
}

#[cfg(test)]
mod tests {
    use toml::de::DeTable;

    use super::*;
    use crate::base::config::schema::Default;
    use crate::base::ranges::NumRange;

    const PRICE: NumRange = NumRange {
        field: "price",
        min: 0.0,
        max: 1e6,
        whole: false,
        unit: "USD per million tokens",
        zero_is_off: false,
    };

    /// A table declared the way a new one would be: one entry, no reader of its own.
    const PRICES: Section = Section {
        name: "prices",
        layout: Layout::Tables {
            keys: &[
                Key {
                    name: "input",
                    kind: Kind::Num(&PRICE),
                    required: true,
                    default: None,
                    doc: "",
                },
                Key {
                    name: "cached_input",
                    kind: Kind::Num(&PRICE),
                    required: false,
                    default: Some(Default::Num(0.0)),
                    doc: "",
                },
            ],
            rules: &[],
            reserved: &[],
        },
        doc: "",
    };

    fn check(src: &str) -> Result<(), String> {
        let parser = Parser {
            src,
            path: Some(std::path::Path::new("plexus.toml")),
        };
        let root = DeTable::parse(src).map_err(|e| e.to_string())?;
        for (_, value) in root.get_ref() {
            parser.declared(&PRICES, value).map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    #[test]
    fn a_declared_table_is_checked_key_by_key_with_lines() {
        assert_eq!(
            check("[prices.\"gpt-x\"]\ninput = 2.5\ncached_input = 0.5\n"),
            Ok(())
        );
        let e = check("[prices.m]\ninput = 1\n\ninptu = 2\n").expect_err("unknown key");
        assert!(
            e.starts_with(
                "plexus.toml:4: unknown key `inptu` in [prices.m]; did you mean `input`? (known: input, cached_input)"
            ),
            "{e}"
        );
        let e = check("[prices.m]\ninput = -1\n").expect_err("out of range");
        assert!(
            e.starts_with("plexus.toml:2: `prices.m.input`: -1 is out of range"),
            "{e}"
        );
        let e = check("[prices.m]\ninput = \"cheap\"\n").expect_err("a string");
        assert!(e.contains("`prices.m.input`: must be a number"), "{e}");
        let e = check("[prices.m]\ncached_input = 1\n").expect_err("required");
        assert!(e.contains("`prices.m`: `input` is required"), "{e}");
        let e = check("prices = 3\n").expect_err("not a table");
        assert!(e.contains("must be a table: [prices.NAME]"), "{e}");
    }
}
