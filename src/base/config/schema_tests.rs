//! The published schema and the provider settings type are one definition: the
//! `[providers.NAME]` keys are exactly the fields serde reads, the keys it requires are the
//! ones without a default, and each default the schema publishes is the value serde
//! fills in when the key is left out.

use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;

use super::providers::ProviderSettings;
use super::schema::{section, Default};

/// A deserializer that only records the field names of the struct asked for.
struct FieldNames<'a>(&'a mut &'static [&'static str]);

impl<'de> Deserializer<'de> for FieldNames<'_> {
    type Error = de::value::Error;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
        Err(de::Error::custom("not a struct"))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Self::Error> {
        *self.0 = fields;
        Err(de::Error::custom("names taken"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
        byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map enum
        identifier ignored_any
    }
}

/// The field names serde reads into `T`.
fn fields_of<'de, T: Deserialize<'de>>() -> Vec<&'static str> {
    let mut names: &'static [&'static str] = &[];
    let _ = T::deserialize(FieldNames(&mut names));
    let mut v = names.to_vec();
    v.sort_unstable();
    v
}

/// The keys the schema lists for section `name`, sorted.
fn schema_keys(name: &str) -> Vec<&'static str> {
    let s = section(name).expect("section");
    let mut v: Vec<&str> = s.keys().iter().map(|k| k.name).collect();
    v.sort_unstable();
    v
}

/// A default as the file writes it.
fn toml_of(d: &Default) -> String {
    match d {
        Default::Str(s) => format!("{s:?}"),
        Default::Int(i) => i.to_string(),
        Default::Num(n) => format!("{n:?}"),
        Default::Bool(b) => b.to_string(),
    }
}

/// Each key of section `name` with a published default: the table `minimal` with that
/// key written as the default reads as `minimal` alone.
fn defaults_agree<T>(name: &str, minimal: &str)
where
    T: for<'de> Deserialize<'de> + PartialEq + std::fmt::Debug,
{
    let bare: T = toml::from_str(minimal).expect("minimal table");
    for key in section(name).expect("section").keys() {
        let Some(d) = &key.default else { continue };
        let written = format!("{minimal}\n{} = {}\n", key.name, toml_of(d));
        let with: T = toml::from_str(&written)
            .unwrap_or_else(|e| panic!("[{name}] {} = its default: {e}", key.name));
        assert_eq!(
            with, bare,
            "[{name}] {}: the schema's default is not serde's",
            key.name
        );
    }
}

#[test]
fn the_provider_table_in_the_schema_is_the_settings_type() {
    assert_eq!(schema_keys("providers"), fields_of::<ProviderSettings>());
    defaults_agree::<ProviderSettings>("providers", "kind = \"openai\"");
    // The one key without a default is the one the schema requires.
    let required: Vec<&str> = section("providers")
        .expect("section")
        .keys()
        .iter()
        .filter(|k| k.required)
        .map(|k| k.name)
        .collect();
    assert_eq!(required, ["kind"]);
    assert!(toml::from_str::<ProviderSettings>("model = \"m\"").is_err());
}

#[test]
fn the_field_reader_reads_field_names_and_can_fail() {
    #[derive(Deserialize)]
    #[allow(dead_code)]
    struct Two {
        b: u8,
        a: u8,
    }
    assert_eq!(fields_of::<Two>(), ["a", "b"]);
    assert_ne!(schema_keys("providers"), fields_of::<Two>());
}
