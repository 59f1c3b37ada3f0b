//! How large a handoff context is, against what the protocol expects (2K–5K tokens for
//! the Execute→Init one).

/// The seed's lower expectation for a context's size, tokens.
pub const EXPECTED_MIN_TOKENS: u64 = 2_000;
/// The seed's upper expectation for a context's size, tokens.
pub const EXPECTED_MAX_TOKENS: u64 = 5_000;

/// How a context's size compares with the seed's 2K–5K expectation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SizeVerdict {
    /// Below 2K: fine, but little to go on.
    Under,
    /// 2K–5K.
    Ok,
    /// Above 5K: the context is meant to stay light.
    Over,
}

/// A context's size and what to say about it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SizeCheck {
    /// Tokens of the context as written (pretty JSON).
    pub tokens: u64,
    /// Compared with 2K–5K.
    pub verdict: SizeVerdict,
    /// A warning for a person when not [`SizeVerdict::Ok`].
    pub warning: Option<String>,
}

/// The verdict for a context of `tokens` with `samples` index entries.
pub fn size_of_tokens(tokens: u64, samples: usize) -> SizeCheck {
    let (verdict, warning) = if tokens < EXPECTED_MIN_TOKENS {
        (
            SizeVerdict::Under,
            Some(format!(
                "the context is {tokens} tokens, under the {EXPECTED_MIN_TOKENS}–{EXPECTED_MAX_TOKENS} the protocol expects: {samples} sample(s) may be too few to show the problem"
            )),
        )
    } else if tokens > EXPECTED_MAX_TOKENS {
        (
            SizeVerdict::Over,
            Some(format!(
                "the context is {tokens} tokens, over the {EXPECTED_MIN_TOKENS}–{EXPECTED_MAX_TOKENS} the protocol expects: choose fewer than {samples} samples (typical cases) and let the Init agent load the rest from the report"
            )),
        )
    } else {
        (SizeVerdict::Ok, None)
    };
    SizeCheck {
        tokens,
        verdict,
        warning,
    }
}
