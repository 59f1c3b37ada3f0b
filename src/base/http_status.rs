//! The reason phrase of an HTTP status, one wording wherever plexus prints one: the
//! standard phrase, `Overloaded` for 529 (Anthropic's overload status), and a plain
//! phrase by class for any other code the standard does not name.

/// The reason phrase of `code`.
pub fn reason(code: u16) -> &'static str {
    if code == 529 {
        return "Overloaded";
    }
    if let Some(r) = hyper::StatusCode::from_u16(code)
        .ok()
        .and_then(|s| s.canonical_reason())
    {
        return r;
    }
    match code / 100 {
        1 => "Informational",
        2 => "Success",
        3 => "Redirection",
        4 => "Client Error",
        5 => "Server Error",
        _ => "Unknown Status",
    }
}

/// `CODE Reason`, as in a status line or an error message.
pub fn status_text(code: u16) -> String {
    format!("{code} {}", reason(code))
}

/// `response` with its status line's reason phrase set to [`reason`] (hyper would write
/// `<none>` for a code it does not know).
pub fn with_reason<B>(mut response: hyper::Response<B>) -> hyper::Response<B> {
    let phrase =
        hyper::ext::ReasonPhrase::from_static(reason(response.status().as_u16()).as_bytes());
    response.extensions_mut().insert(phrase);
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_codes_read_their_standard_phrase_and_529_reads_overloaded() {
        assert_eq!(reason(200), "OK");
        assert_eq!(reason(503), "Service Unavailable");
        assert_eq!(reason(421), "Misdirected Request");
        assert_eq!(reason(529), "Overloaded");
        assert_eq!(status_text(529), "529 Overloaded");
    }

    #[test]
    fn unknown_codes_read_a_plain_phrase_by_class() {
        for (code, want) in [
            (299, "Success"),
            (499, "Client Error"),
            (530, "Server Error"),
            (599, "Server Error"),
            (999, "Unknown Status"),
        ] {
            assert_eq!(reason(code), want, "{code}");
            assert!(!reason(code).contains('<'));
        }
    }

    #[test]
    fn a_response_carries_the_phrase_for_hyper_to_write() {
        let mut r = hyper::Response::new(());
        *r.status_mut() = hyper::StatusCode::from_u16(529).expect("a valid code");
        let r = with_reason(r);
        let phrase = r
            .extensions()
            .get::<hyper::ext::ReasonPhrase>()
            .expect("the phrase");
        assert_eq!(phrase.as_bytes(), b"Overloaded");
    }
}
