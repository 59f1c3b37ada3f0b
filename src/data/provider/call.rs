//! The one way a model is called, whoever calls it (a plan's task, a step of a tool
//! loop, a debate turn, a judge, a summary, `plexus ping`): [`attempt`] makes one call
//! within its limits — the whole call's time, the time to the first byte, the answer's
//! token budget (the stream is cut there as it comes), a stream that repeats itself
//! stopped early (E009) — and [`call`] adds what a caller without retries of its own
//! needs: the provider's admission (its concurrency and rate limits) and the retry
//! policy of transient failures, with the server's `Retry-After`. Every `invoke` of a
//! provider is made here.

use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::retry::RetryPolicy;
use super::{ChunkSink, Provider, ProviderError, ProviderOutput};
use crate::base::protocol::AgentRequest;
use crate::base::tokens::TokenCounter;

/// The limits of one call.
#[derive(Debug, Clone)]
pub struct Limits {
    /// The whole call's time.
    pub timeout: Duration,
    /// Time to the answer's first byte (a local model reads a long prompt first);
    /// `None`: only the whole call's time.
    pub first_token: Option<Duration>,
    /// Most output tokens: the stream is cut past them (`None`: no cut here; the server
    /// is still told `max_tokens`).
    pub max_output_tokens: Option<u64>,
    /// Counts the streamed text for the cut.
    pub counter: TokenCounter,
    /// Whether a stream that repeats itself is stopped (a real model's; the simulated
    /// one never runs away, and its streams are not copied to be watched).
    pub runaway: bool,
}

impl Limits {
    /// The limits of a call on `provider` of `timeout` (see [`timeout_of`]) and an answer
    /// of at most `max_tokens`: the profile's first-token time, and a real model's
    /// stream watched.
    pub fn for_call(provider: &dyn Provider, timeout: Duration, max_tokens: u32) -> Limits {
        let real = !provider.is_simulated();
        Limits {
            timeout,
            first_token: provider.call_times().first_token,
            // The server is told max_tokens; a little over it (tokenizers differ) the
            // stream is cut here too, for a server that does not hold to it.
            max_output_tokens: real
                .then(|| u64::from(max_tokens) + u64::from(max_tokens) / 10 + 16),
            counter: TokenCounter::default(),
            runaway: real,
        }
    }
}

/// The time a call on `provider` may take: its profile's `timeout_s` when it sets one,
/// else `default` (the plan's, the debate's, the judge's).
pub fn timeout_of(provider: &dyn Provider, default: Duration) -> Duration {
    provider.call_times().timeout.unwrap_or(default)
}

/// The times a provider's profile sets for its calls (none: the caller's).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CallTimes {
    /// The whole call (`timeout_s`).
    pub timeout: Option<Duration>,
    /// To the first byte (`first_token_timeout_s`).
    pub first_token: Option<Duration>,
}

/// Why a call was stopped before its answer ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stopped {
    /// Past the whole call's time (`first_token`: no byte had come by the first-token
    /// limit).
    Timeout {
        /// The first byte never came in time.
        first_token: bool,
        /// The limit that passed.
        after: Duration,
    },
    /// The answer passed its token budget and was cut there.
    MaxTokens {
        /// Tokens counted when it was cut.
        tokens: u64,
    },
    /// The answer repeated itself and was stopped.
    Runaway {
        /// A piece of what it repeated.
        repeated: String,
        /// Characters streamed when it was stopped.
        chars: usize,
    },
}

/// What one call came to: the provider's answer or error, or why it was stopped (the
/// text that arrived went to the caller's sink either way).
pub type Outcome = Result<Result<ProviderOutput, ProviderError>, Stopped>;

/// Why a call was stopped, in words.
pub fn said(stopped: &Stopped) -> String {
    match stopped {
        Stopped::Timeout {
            first_token: false,
            after,
        } => format!("no complete answer within {:.1} s", after.as_secs_f64()),
        Stopped::Timeout {
            first_token: true,
            after,
        } => format!("no byte of an answer within {:.1} s", after.as_secs_f64()),
        Stopped::MaxTokens { tokens } => {
            format!("the answer passed its max_tokens and was cut at {tokens} tokens")
        }
        Stopped::Runaway { chars, .. } => {
            format!("the answer repeated itself and was stopped after {chars} characters")
        }
    }
}

/// Characters of the stream's tail looked at for repetition.
const RUNAWAY_WINDOW: usize = 2048;
/// Length of the pieces compared.
const SHINGLE: usize = 24;
/// Below this share of distinct pieces in the window, the stream repeats itself.
const RUNAWAY_DISTINCT: f64 = 0.25;
/// How often (in characters) the window is looked at again.
const RUNAWAY_EVERY: usize = 512;

/// Whether the tail of `text` repeats itself: among its last [`RUNAWAY_WINDOW`]
/// characters, the pieces of [`SHINGLE`] characters are mostly the same few. Returns a
/// piece of what repeats.
pub fn repeating(text: &str) -> Option<String> {
    let start = text
        .char_indices()
        .rev()
        .nth(RUNAWAY_WINDOW - 1)
        .map(|(i, _)| i)?;
    let tail: Vec<char> = text[start..].chars().collect();
    let mut seen = std::collections::HashSet::new();
    let total = tail.len() - SHINGLE + 1;
    for w in tail.windows(SHINGLE) {
        seen.insert(w);
    }
    ((seen.len() as f64) < RUNAWAY_DISTINCT * total as f64)
        .then(|| tail[tail.len() - 80..].iter().collect())
}

/// What the guard saw go by, shared with the call that waits for a reason to stop.
#[derive(Default)]
struct Watch {
    /// A byte of the answer came.
    first: AtomicBool,
    /// 0: go on; 1: over its tokens; 2: runaway.
    stop: AtomicU8,
    wake: tokio::sync::Notify,
}

/// The caller's sink, watched: the first byte, the token budget, repetition.
struct Guard<'a> {
    inner: &'a mut dyn ChunkSink,
    watch: Arc<Watch>,
    /// The stream's tail (a few windows), for the repetition check.
    text: String,
    /// Characters streamed so far.
    chars: usize,
    /// `chars` when the tail was last looked at.
    checked: usize,
    tokens: u64,
    limits: &'a Limits,
    runaway: Option<String>,
    /// The call on the process's meter, when its streamed tokens are counted there.
    metered: Option<&'a super::meter::Entry>,
}

impl Guard<'_> {
    /// A byte of the answer came: the first-token clock stops.
    fn answering(&self) {
        if !self.watch.first.swap(true, Ordering::Relaxed) {
            self.watch.wake.notify_one();
        }
    }
}

impl ChunkSink for Guard<'_> {
    fn progress(&mut self) {
        self.answering();
        self.inner.progress();
    }

    fn chunk(&mut self, text: &str) {
        if self.watch.stop.load(Ordering::Relaxed) != 0 {
            return;
        }
        self.answering();
        self.inner.chunk(text);
        let counted = (self.limits.max_output_tokens.is_some() || self.metered.is_some())
            .then(|| self.limits.counter.count(text));
        if let (Some(n), Some(entry)) = (counted, self.metered) {
            entry.streamed(n);
        }
        if let (Some(max), Some(n)) = (self.limits.max_output_tokens, counted) {
            self.tokens += n;
            if self.tokens > max {
                self.watch.stop.store(1, Ordering::Relaxed);
                self.watch.wake.notify_one();
                return;
            }
        }
        if !self.limits.runaway {
            return;
        }
        self.text.push_str(text);
        self.chars += text.chars().count();
        if self.chars >= self.checked + RUNAWAY_EVERY {
            self.checked = self.chars;
            // Only the tail is looked at: the text kept stays about two windows long.
            if self.text.len() > 8 * RUNAWAY_WINDOW {
                let keep = self
                    .text
                    .char_indices()
                    .rev()
                    .nth(RUNAWAY_WINDOW)
                    .map_or(0, |(i, _)| i);
                self.text.drain(..keep);
            }
            if let Some(r) = repeating(&self.text) {
                self.runaway = Some(r);
                self.watch.stop.store(2, Ordering::Relaxed);
                self.watch.wake.notify_one();
            }
        }
    }
}

/// Resolves when the guard asks the call to stop, or the first byte is late.
async fn stop_asked(watch: &Watch, first_token: Option<Duration>) -> Option<Duration> {
    let first_by = first_token.map(|d| tokio::time::Instant::now() + d);
    loop {
        if watch.stop.load(Ordering::Relaxed) != 0 {
            return None;
        }
        let late = async {
            match first_by {
                Some(t) if !watch.first.load(Ordering::Relaxed) => {
                    tokio::time::sleep_until(t).await
                }
                _ => std::future::pending().await,
            }
        };
        tokio::select! {
            () = watch.wake.notified() => {}
            () = late => {
                if !watch.first.load(Ordering::Relaxed) {
                    return first_token;
                }
            }
        }
    }
}

/// One call of `provider` within `limits`; the caller holds the provider's admission.
pub async fn attempt(
    provider: &dyn Provider,
    request: Arc<AgentRequest>,
    attempt: u32,
    sink: &mut dyn ChunkSink,
    limits: &Limits,
) -> Outcome {
    let meter = super::meter::CallMeter::global();
    let entry = meter.start(call_label(&request));
    let watch = Arc::new(Watch::default());
    let mut guard = Guard {
        inner: sink,
        watch: watch.clone(),
        text: String::new(),
        chars: 0,
        checked: 0,
        tokens: 0,
        limits,
        runaway: None,
        metered: meter.watched().then_some(&entry),
    };
    let result = {
        let call = provider.invoke(request, attempt, &mut guard);
        tokio::select! {
            r = tokio::time::timeout(limits.timeout, call) => match r {
                Ok(r) => Ok(r),
                Err(_) => Err(Stopped::Timeout {
                    first_token: false,
                    after: limits.timeout,
                }),
            },
            late = stop_asked(&watch, limits.first_token) => match late {
                Some(after) => Err(Stopped::Timeout { first_token: true, after }),
                None => Err(Stopped::MaxTokens { tokens: 0 }),
            },
        }
    };
    if let Ok(Ok(out)) = &result {
        entry.answered(out.usage.is_some());
    }
    match result {
        Err(Stopped::MaxTokens { .. }) if guard.runaway.is_some() => Err(Stopped::Runaway {
            repeated: guard.runaway.take().unwrap_or_default(),
            chars: guard.chars,
        }),
        Err(Stopped::MaxTokens { .. }) => Err(Stopped::MaxTokens {
            tokens: guard.tokens,
        }),
        other => other,
    }
}

/// Who a call is for, as the status line names it: the task (or session) and agent.
pub fn call_label(request: &AgentRequest) -> String {
    match (request.task_id.is_empty(), request.agent.is_empty()) {
        (false, false) => format!("{} ({})", request.task_id, request.agent),
        (false, true) => request.task_id.clone(),
        _ => request.agent.clone(),
    }
}

/// [`attempt`] once the provider admits the call (its concurrency and rate limits); the
/// admission is held for the call.
pub async fn admitted(
    provider: &dyn Provider,
    request: Arc<AgentRequest>,
    n: u32,
    sink: &mut dyn ChunkSink,
    limits: &Limits,
) -> Outcome {
    let _slot = provider.admit().await;
    attempt(provider, request, n, sink, limits).await
}

/// The wait before transient retry `n` (1-based) after `outcome` under `policy`, when
/// the outcome is a transient failure and a retry is left: as long as the server asked
/// (`Retry-After`), else the policy's backoff.
pub fn transient_wait(outcome: &Outcome, n: u32, policy: &RetryPolicy) -> Option<Duration> {
    let Ok(Err(ProviderError::Transient { retry_after_ms, .. })) = outcome else {
        return None;
    };
    policy
        .transient_delay(n, *retry_after_ms, fastrand::f64())
        .map(Duration::from_millis)
}

/// A call with the provider's admission and the retry policy of transient failures (a
/// rate limit, a 5xx, a cut connection), waiting as long as the server asks: for callers
/// without retries of their own (a debate turn, a judge). Returns the last outcome and
/// the attempts made. `cancelled` stops the waits between tries.
pub async fn call(
    provider: &dyn Provider,
    request: Arc<AgentRequest>,
    sink: &mut dyn ChunkSink,
    limits: &Limits,
    policy: &RetryPolicy,
) -> (Outcome, u32) {
    let mut n = 0u32;
    loop {
        n += 1;
        let outcome = admitted(provider, request.clone(), n, sink, limits).await;
        match transient_wait(&outcome, n, policy) {
            Some(wait) => {
                tracing::info!("transient failure; retry {n} in {wait:?}");
                let _waiting = super::meter::CallMeter::global().wait(call_label(&request), wait);
                tokio::time::sleep(wait).await;
            }
            None => return (outcome, n),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stream_saying_the_same_thing_again_is_caught_and_varied_text_is_not() {
        let atom = r#"{"asset_id":"VAULT_05","content":{"note":"<note>"},"provenance":{"paper_location":"Section 3.2"}},"#;
        assert!(repeating(&atom.repeat(40)).is_some());
        assert!(repeating(&"all work and no play ".repeat(200)).is_some());
        let varied: String = (0..400)
            .map(|i| format!("word{i} is followed by number {} ", i * 7919 % 1000))
            .collect();
        assert!(repeating(&varied).is_none());
        assert!(repeating("short").is_none());
    }
}
