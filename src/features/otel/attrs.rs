//! Small helpers that build OTLP attribute values, span events and statuses, and the
//! deterministic trace and span ids a run's spans get.

use opentelemetry_proto::tonic::common::v1::{any_value, AnyValue, ArrayValue, KeyValue};
use opentelemetry_proto::tonic::trace::v1::{span, status, Span, Status};
use sha2::{Digest, Sha256};

/// A string attribute.
pub fn s(key: &str, value: impl Into<String>) -> KeyValue {
    kv(key, any_value::Value::StringValue(value.into()))
}

/// An integer attribute.
pub fn i(key: &str, value: impl TryInto<i64>) -> KeyValue {
    kv(
        key,
        any_value::Value::IntValue(value.try_into().unwrap_or(i64::MAX)),
    )
}

/// A floating-point attribute.
pub fn f(key: &str, value: f64) -> KeyValue {
    kv(key, any_value::Value::DoubleValue(value))
}

/// A boolean attribute.
pub fn b(key: &str, value: bool) -> KeyValue {
    kv(key, any_value::Value::BoolValue(value))
}

/// A string-array attribute.
pub fn list(key: &str, values: impl IntoIterator<Item = String>) -> KeyValue {
    let values = values
        .into_iter()
        .map(|v| AnyValue {
            value: Some(any_value::Value::StringValue(v)),
        })
        .collect();
    kv(key, any_value::Value::ArrayValue(ArrayValue { values }))
}

fn kv(key: &str, value: any_value::Value) -> KeyValue {
    KeyValue {
        key: key.to_string(),
        value: Some(AnyValue { value: Some(value) }),
        ..KeyValue::default()
    }
}

/// Sets `attr` on `span`, replacing an attribute of the same key.
pub fn set(span: &mut Span, attr: KeyValue) {
    match span.attributes.iter_mut().find(|a| a.key == attr.key) {
        Some(a) => *a = attr,
        None => span.attributes.push(attr),
    }
}

/// The string value of attribute `key` of `span` ("" when it has none).
pub fn attr_str(span: &Span, key: &str) -> String {
    span.attributes
        .iter()
        .find(|a| a.key == key)
        .and_then(|a| a.value.as_ref())
        .and_then(|v| match &v.value {
            Some(any_value::Value::StringValue(s)) => Some(s.clone()),
            _ => None,
        })
        .unwrap_or_default()
}

/// Adds a span event at `ts_ms`.
pub fn event(span: &mut Span, name: &str, ts_ms: i64, attributes: Vec<KeyValue>) {
    span.events.push(span::Event {
        time_unix_nano: nanos(ts_ms),
        name: name.to_string(),
        attributes,
        dropped_attributes_count: 0,
    });
}

/// An OK status.
pub fn ok() -> Option<Status> {
    Some(Status {
        message: String::new(),
        code: status::StatusCode::Ok as i32,
    })
}

/// An error status with its message.
pub fn error(message: impl Into<String>) -> Option<Status> {
    Some(Status {
        message: message.into(),
        code: status::StatusCode::Error as i32,
    })
}

/// Milliseconds since the Unix epoch as nanoseconds (0 before the epoch).
pub fn nanos(ts_ms: i64) -> u64 {
    u64::try_from(ts_ms).unwrap_or(0).saturating_mul(1_000_000)
}

/// The trace id of run `run`: the first 16 bytes of the SHA-256 of its id.
pub fn trace_id(run: &str) -> Vec<u8> {
    digest(&[run])[..16].to_vec()
}

/// A span id derived from the run and the parts naming the span (never all zeros).
pub fn span_id(run: &str, parts: &[&str]) -> Vec<u8> {
    let mut all = Vec::with_capacity(parts.len() + 1);
    all.push(run);
    all.extend_from_slice(parts);
    let d = digest(&all);
    let mut id = d[..8].to_vec();
    if id.iter().all(|b| *b == 0) {
        id[7] = 1;
    }
    id
}

fn digest(parts: &[&str]) -> [u8; 32] {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p.as_bytes());
        h.update([0u8]);
    }
    h.finalize().into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_stable_and_distinct() {
        assert_eq!(trace_id("R1"), trace_id("R1"));
        assert_ne!(trace_id("R1"), trace_id("R2"));
        assert_eq!(trace_id("R1").len(), 16);
        assert_eq!(span_id("R1", &["task", "T", "1"]).len(), 8);
        assert_ne!(
            span_id("R1", &["task", "T", "1"]),
            span_id("R1", &["task", "T1", ""])
        );
    }
}
