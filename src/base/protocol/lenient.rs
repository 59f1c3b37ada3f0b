//! Numbers as models write them: a number, or a string holding one (`"0.9"`, `" 3 "`);
//! a confidence also as a percentage written with its sign (`"80%"`).
//! Used with `#[serde(deserialize_with)]` on the fields a model fills; what is written
//! back is always a number.

use serde::de::{Deserializer, Error};
use serde::Deserialize;

/// A number or a string of one, as JSON gives it.
#[derive(Deserialize)]
#[serde(untagged)]
enum NumberOrText {
    Number(f64),
    Text(String),
}

/// The number a model's text holds (`" 0.9 "`), finite; with `percent`, a trailing `%`
/// makes it a fraction (`"80%"` is 0.8).
pub fn number_in(text: &str, percent: bool) -> Option<f64> {
    let t = text.trim();
    let (digits, scale) = match t.strip_suffix('%').filter(|_| percent) {
        Some(p) => (p.trim(), 100.0),
        None => (t, 1.0),
    };
    digits
        .parse::<f64>()
        .ok()
        .filter(|n| n.is_finite())
        .map(|n| n / scale)
}

fn number<'de, D: Deserializer<'de>>(d: D, percent: bool) -> Result<f64, D::Error> {
    match NumberOrText::deserialize(d)? {
        NumberOrText::Number(n) => Ok(n),
        NumberOrText::Text(s) => number_in(&s, percent)
            .ok_or_else(|| D::Error::custom(format!("expected a number, found {s:?}"))),
    }
}

/// An `f64`, from a number or a string of one.
pub fn f64<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    number(d, false)
}

/// A confidence in [0, 1], from a number or a string of one; a string with a percent
/// sign (`"80%"`) is read as its fraction. A bare number is kept as written (`80` is
/// refused by the check: the protocol's scale is 0 to 1, and `2` may be of any scale).
pub fn confidence<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    number(d, true)
}

/// A `u32`, from a whole number or a string of one.
pub fn u32<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    let n = number(d, false)?;
    if n.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(&n) {
        Ok(n as u32)
    } else {
        Err(D::Error::custom(format!(
            "expected a whole number, found {n}"
        )))
    }
}

#[cfg(test)]
mod tests {
    #[derive(serde::Deserialize, Debug)]
    struct T {
        #[serde(deserialize_with = "super::f64")]
        c: f64,
        #[serde(deserialize_with = "super::u32")]
        r: u32,
    }

    #[test]
    fn numbers_and_strings_of_numbers_are_read_and_other_text_is_refused() {
        let t: T = serde_json::from_str(r#"{"c": "0.85", "r": " 2 "}"#).expect("strings");
        assert_eq!((t.c, t.r), (0.85, 2));
        let t: T = serde_json::from_str(r#"{"c": 0.5, "r": 3}"#).expect("numbers");
        assert_eq!((t.c, t.r), (0.5, 3));
        let e = serde_json::from_str::<T>(r#"{"c": "high", "r": 1}"#).expect_err("text");
        assert!(
            e.to_string().contains("expected a number, found \"high\""),
            "{e}"
        );
        assert!(serde_json::from_str::<T>(r#"{"c": 1, "r": 1.5}"#).is_err());
    }

    #[derive(serde::Deserialize, Debug)]
    struct C {
        #[serde(deserialize_with = "super::confidence")]
        c: f64,
    }

    #[test]
    fn a_confidence_is_read_as_a_fraction_or_a_percentage_with_its_sign() {
        let read = |j: &str| serde_json::from_str::<C>(j).map(|c| c.c);
        assert_eq!(read(r#"{"c": 0.8}"#).expect("fraction"), 0.8);
        assert_eq!(read(r#"{"c": "80%"}"#).expect("percent"), 0.8);
        assert_eq!(read(r#"{"c": " 5 % "}"#).expect("percent"), 0.05);
        assert_eq!(read(r#"{"c": " 0.25 "}"#).expect("text"), 0.25);
        // A bare number stays as written, for the check to refuse what is over 1.
        assert_eq!(read(r#"{"c": 80}"#).expect("kept"), 80.0);
        assert_eq!(read(r#"{"c": -0.5}"#).expect("kept"), -0.5);
        assert!(read(r#"{"c": "sure"}"#).is_err());
        assert!(read(r#"{"c": "%"}"#).is_err());
    }
}
