//! Comparing text and numbers the way checks do: normalising text, reading a number.

use serde_json::Value;

use super::spec::Normalize;

/// `s` with each normalisation applied in order.
pub fn normalized(s: &str, how: &[Normalize]) -> String {
    let mut out = s.to_string();
    for n in how {
        out = match n {
            Normalize::Trim => out.trim().to_string(),
            Normalize::Lowercase => out.to_lowercase(),
            Normalize::CollapseWhitespace => out.split_whitespace().collect::<Vec<_>>().join(" "),
            Normalize::StripPunctuation => {
                out.chars().filter(|c| !c.is_ascii_punctuation()).collect()
            }
        };
    }
    out
}

/// A value as the text checks compare: a string as it is, anything else as JSON.
pub fn as_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A number from a value: a JSON number, or a string that is one number (thousands
/// separators and surrounding spaces allowed).
pub fn as_number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => {
            let t: String = s.trim().chars().filter(|&c| c != ',' && c != '_').collect();
            t.parse::<f64>().ok().filter(|x| x.is_finite())
        }
        _ => None,
    }
}
