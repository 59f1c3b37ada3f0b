//! Serializes a field as JSON text inside the binary form: for the protocol's own types
//! (context plans, tool loops, a debate), whose JSON leaves fields out and so needs a
//! self-describing form.

use serde::de::{DeserializeOwned, Error, Visitor};
use serde::{Deserializer, Serialize, Serializer};

/// Writes `v` as a JSON string.
pub fn serialize<T: Serialize, S: Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
    let text = serde_json::to_string(v).map_err(serde::ser::Error::custom)?;
    s.serialize_str(&text)
}

/// Reads a JSON string back (parsed where it lies in the snapshot's bytes: no copy).
pub fn deserialize<'de, T: DeserializeOwned, D: Deserializer<'de>>(d: D) -> Result<T, D::Error> {
    d.deserialize_str(JsonText(std::marker::PhantomData))
}

struct JsonText<T>(std::marker::PhantomData<T>);

impl<'de, T: DeserializeOwned> Visitor<'de> for JsonText<T> {
    type Value = T;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("JSON text")
    }
    fn visit_str<E: Error>(self, v: &str) -> Result<T, E> {
        serde_json::from_str(v).map_err(E::custom)
    }
    fn visit_bytes<E: Error>(self, v: &[u8]) -> Result<T, E> {
        serde_json::from_slice(v).map_err(E::custom)
    }
}
