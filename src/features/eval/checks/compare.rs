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
            Normalize::LastNumber => last_number(&out),
        };
    }
    out
}

/// The last number in `s`, written plainly: thousands separators gone, a whole number
/// without its `.0`; empty when `s` holds none.
fn last_number(s: &str) -> String {
    static NUMBER: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = NUMBER.get_or_init(|| {
        regex::Regex::new(r"-?\d(?:[\d,]*\d)?(?:\.\d+)?").expect("the number pattern")
    });
    let Some(m) = re.find_iter(s).last() else {
        return String::new();
    };
    let plain: String = m.as_str().chars().filter(|&c| c != ',').collect();
    match plain.parse::<f64>() {
        Ok(x) if x.fract() == 0.0 && x.abs() < 1e15 => format!("{}", x as i64),
        Ok(x) => format!("{x}"),
        Err(_) => plain,
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_number_is_read_plainly() {
        let n = |s: &str| normalized(s, &[Normalize::LastNumber]);
        assert_eq!(n("2 + 2 = 4."), "4");
        assert_eq!(n("The answer is 1,024"), "1024");
        assert_eq!(n("about 4.0"), "4");
        assert_eq!(n("-3.5 degrees"), "-3.5");
        assert_eq!(n("no number"), "");
    }
}
