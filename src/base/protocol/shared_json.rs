//! JSON text rendered once and shared by many requests (the answer format every task
//! of one shape shows): written as it is, read from any JSON value.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// JSON text rendered once and shared by many requests: written as it is, read from
/// any JSON value.
#[derive(Debug, Clone)]
pub struct SharedJson(pub std::sync::Arc<serde_json::value::RawValue>);

impl SharedJson {
    /// `v` rendered as compact JSON.
    pub fn of(v: &Value) -> SharedJson {
        let raw = serde_json::value::to_raw_value(v)
            .unwrap_or_else(|_| serde_json::value::RawValue::NULL.to_owned());
        SharedJson(raw.into())
    }

    /// The JSON text.
    pub fn get(&self) -> &str {
        self.0.get()
    }
}

impl PartialEq for SharedJson {
    fn eq(&self, other: &SharedJson) -> bool {
        self.get() == other.get()
    }
}

impl Serialize for SharedJson {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl<'de> Deserialize<'de> for SharedJson {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<SharedJson, D::Error> {
        // Through a value: a raw value cannot be read beside a flattened map.
        Value::deserialize(d).map(|v| SharedJson::of(&v))
    }
}
