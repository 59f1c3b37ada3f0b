//! Reads shared strings straight from the snapshot's bytes: one allocation each,
//! where serde's own path for `Arc<str>` makes a `String`, a `Box<str>` and then the
//! `Arc` (a state of 100,000 tasks holds half a million of them).

use std::sync::Arc;

use serde::de::{Deserializer, Error, SeqAccess, Visitor};

struct One;

impl<'de> Visitor<'de> for One {
    type Value = Arc<str>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a string")
    }
    fn visit_str<E: Error>(self, v: &str) -> Result<Arc<str>, E> {
        Ok(Arc::from(v))
    }
    fn visit_bytes<E: Error>(self, v: &[u8]) -> Result<Arc<str>, E> {
        std::str::from_utf8(v)
            .map(Arc::from)
            .map_err(|_| E::custom("a string that is not UTF-8"))
    }
}

struct Seq;

impl<'de> Visitor<'de> for Seq {
    type Value = Box<[Arc<str>]>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a list of strings")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Box<[Arc<str>]>, A::Error> {
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1 << 16));
        while let Some(s) = seq.next_element_seed(OneSeed)? {
            out.push(s);
        }
        Ok(out.into_boxed_slice())
    }
}

struct OneSeed;

impl<'de> serde::de::DeserializeSeed<'de> for OneSeed {
    type Value = Arc<str>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Arc<str>, D::Error> {
        d.deserialize_str(One)
    }
}

struct Maybe;

impl<'de> Visitor<'de> for Maybe {
    type Value = Option<Arc<str>>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a string or nothing")
    }
    fn visit_none<E: Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_unit<E: Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(One).map(Some)
    }
}

/// One string.
pub fn one<'de, D: Deserializer<'de>>(d: D) -> Result<Arc<str>, D::Error> {
    d.deserialize_str(One)
}

/// A string or nothing.
pub fn maybe<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Arc<str>>, D::Error> {
    d.deserialize_option(Maybe)
}

/// A list of strings (held at its exact length).
pub fn list<'de, D: Deserializer<'de>>(d: D) -> Result<Box<[Arc<str>]>, D::Error> {
    d.deserialize_seq(Seq)
}
