//! One attempt's verdict: errors from the provider, parsing, the quality gate and the
//! status of seed 001 §4.3; the retry chosen by seed 001 §8.2; the rows stored for
//! accepted atoms.

use super::parse::{parse_response, without_secret};
use super::response_json::AtomJson;
use super::run_ctx::RunCtx;
use crate::base::agents::AgentDef;
use crate::base::protocol::{Atom, ErrorCode, ErrorInfo, Grade, InvocationStatus, QualityCheck};
use crate::data::provider::call::Stopped;
use crate::data::provider::{ProviderError, ProviderOutput};
use crate::data::store::AtomRow;
use crate::model::event::AtomGrade;
use crate::model::gate::quality::{run_gate, AtomVerdict};
use crate::model::gate::status::decide_status;
use crate::model::plan::Task;

/// Per-attempt changes made by retries.
pub(super) struct Adjust {
    /// Grade the gate requires.
    pub threshold: Grade,
    /// Multiplier on the timeout.
    pub timeout_factor: f64,
    /// Multiplier on max_tokens.
    pub max_tokens_factor: f64,
    /// Added to the temperature.
    pub temperature_delta: f64,
    /// The previous attempt's error, told to the model.
    pub feedback: Option<String>,
}

impl Adjust {
    /// No adjustment yet.
    pub fn new(threshold: Grade) -> Adjust {
        Adjust {
            threshold,
            timeout_factor: 1.0,
            max_tokens_factor: 1.0,
            temperature_delta: 0.0,
            feedback: None,
        }
    }

    /// Changes the next attempt for a retry of `code` (seed 001 §8.2). A fault of the
    /// transport (`provider_fault`) is not the model's doing and is not told to it.
    pub fn for_retry(
        &mut self,
        ctx: &RunCtx,
        code: ErrorCode,
        errors: &[ErrorInfo],
        provider_fault: bool,
    ) {
        match code {
            ErrorCode::E002 if provider_fault => {}
            ErrorCode::E002 => self.feedback = errors.first().map(|e| e.message.clone()),
            ErrorCode::E003 => {
                self.threshold = self.threshold.lower();
                self.feedback = errors.first().map(|e| e.message.clone());
            }
            ErrorCode::E004 => self.timeout_factor *= ctx.config.retry.timeout_growth,
            ErrorCode::E005 => {
                self.max_tokens_factor *= ctx.config.retry.max_tokens_growth;
                self.temperature_delta += ctx.config.retry.temperature_step;
            }
            // A runaway answer: cooler sampling, and told why it was stopped.
            ErrorCode::E009 => {
                self.temperature_delta -= ctx.config.retry.temperature_step.abs();
                self.feedback = errors.first().map(|e| e.message.clone());
            }
            ErrorCode::E001 | ErrorCode::E006 | ErrorCode::E007 | ErrorCode::E008 => {}
        }
    }

    /// Applies a retry recorded in the log (a resumed task picks up where it stopped:
    /// the threshold it lowered, the timeout it grew, the feedback it gave).
    pub fn replay(&mut self, ctx: &RunCtx, r: &crate::model::event::RetryScheduled) {
        // As live: the code's numeric changes (E002 alone changes nothing but the
        // feedback), then the feedback the next attempt was given.
        self.for_retry(ctx, r.error_code, &[], true);
        self.feedback = r.feedback.clone();
    }
}

/// What one attempt came to.
pub(super) struct Verdict {
    /// Status by seed 001 §4.3.
    pub status: InvocationStatus,
    /// Errors, in the order found.
    pub errors: Vec<ErrorInfo>,
    /// `Some(retry_after)` when the provider failed transiently.
    pub transient_after: Option<Option<u64>>,
    /// The error came from the provider's transport, not from the model's text.
    pub provider_fault: bool,
    /// Parsed atoms.
    pub atoms: Vec<Atom>,
    /// Parsed summary.
    pub summary: String,
    /// The gate's quality_check.
    pub quality_check: QualityCheck,
    /// The gate's verdict per atom.
    pub verdicts: Vec<AtomVerdict>,
}

/// The provider's outcome: finished, failed, or over time.
pub(super) type CallResult = crate::data::provider::call::Outcome;

/// What to add to an error about an answer the server cut at its token limit.
fn cut_note(out: &ProviderOutput) -> String {
    match out.finish_reason.as_deref() {
        Some("length" | "max_tokens") => {
            " (the answer was cut at its max_tokens: finish_reason `length`)".to_string()
        }
        _ => String::new(),
    }
}

/// The one atom of a task whose answer is plain text: the text as its content.
fn text_atom(task: &Task, answer: String) -> Atom {
    let mut atom = Atom {
        asset_id: format!("{}_TEXT", task.task_id),
        content: serde_json::json!({ "text": answer }),
        ..Atom::default()
    };
    atom.extra.insert("atom_type".into(), "text".into());
    atom
}

/// How long an attempt took, against the time it had.
#[derive(Debug, Clone, Copy)]
pub(super) struct Took {
    /// Wall time, in ms.
    pub elapsed_ms: u64,
    /// The timeout it ran under, in seconds.
    pub timeout_s: f64,
}

/// Seconds in words short and exact enough: `120`, `2.5`, `0.05`.
fn seconds(s: f64) -> String {
    if s >= 10.0 {
        format!("{s:.0}")
    } else if s >= 1.0 {
        format!("{s:.1}")
    } else {
        format!("{s:.2}")
    }
}

/// Judges one attempt: its outcome, the text it streamed, the assets its request listed
/// as existing (references to them are no fabrication).
pub(super) fn evaluate(
    ctx: &RunCtx,
    task: &Task,
    threshold: Grade,
    result: CallResult,
    text: &str,
    listed: &[String],
    took: Took,
) -> Verdict {
    let Took {
        elapsed_ms,
        timeout_s: effective_timeout,
    } = took;
    let provider_fault = matches!(result, Ok(Err(_)));
    let mut found = match result {
        Err(stopped) => Found::error(stopped_error(stopped, text, effective_timeout)),
        Ok(Err(e)) => provider_failed(e, text),
        Ok(Ok(out)) => read_answer(ctx, task, threshold, &out, text, listed),
    };
    without_secret_in_messages(&mut found.errors, ctx.provider.secret_redactor());
    let Found {
        errors,
        transient_after,
        atoms,
        summary,
        quality_check,
        verdicts,
    } = found;
    let status = if errors.iter().any(|e| e.error_code == ErrorCode::E004) {
        InvocationStatus::Timeout
    } else {
        decide_status(
            quality_check.atoms_generated,
            quality_check.avg_quality_score,
            &errors,
            elapsed_ms,
            effective_timeout,
        )
    };
    Verdict {
        status,
        errors,
        transient_after,
        provider_fault,
        atoms,
        summary,
        quality_check,
        verdicts,
    }
}

/// What the reading of an attempt's outcome found, before its status is decided.
#[derive(Default)]
struct Found {
    /// Errors, in the order found.
    errors: Vec<ErrorInfo>,
    /// `Some(retry_after)` when the provider failed transiently.
    transient_after: Option<Option<u64>>,
    atoms: Vec<Atom>,
    summary: String,
    quality_check: QualityCheck,
    verdicts: Vec<AtomVerdict>,
}

impl Found {
    /// Nothing found but errors.
    fn errors(errors: Vec<ErrorInfo>) -> Found {
        Found {
            errors,
            ..Found::default()
        }
    }

    /// Nothing found but one error.
    fn error(e: ErrorInfo) -> Found {
        Found::errors(vec![e])
    }
}

/// The error of a call that was stopped (`text` is what had streamed, `timeout_s` the
/// time the call had).
fn stopped_error(stopped: Stopped, text: &str, timeout_s: f64) -> ErrorInfo {
    match stopped {
        Stopped::Timeout { first_token: false, .. } => ErrorInfo::new(
            ErrorCode::E004,
            format!(
                "no complete answer within {}s; {} bytes had streamed",
                seconds(timeout_s),
                text.len()
            ),
        ),
        Stopped::Timeout { first_token: true, after } => ErrorInfo::new(
            ErrorCode::E004,
            format!(
                "no byte of an answer within {:.1}s (the profile's first_token_timeout_s)",
                after.as_secs_f64()
            ),
        ),
        Stopped::Runaway { repeated, chars } => ErrorInfo::new(
            ErrorCode::E009,
            format!(
                "the answer repeated itself and was stopped after {chars} characters (it kept writing {:?})",
                crate::base::text::cut::cut_chars(&repeated, 60)
            ),
        ),
        Stopped::MaxTokens { tokens } => ErrorInfo::new(
            ErrorCode::E002,
            format!(
                "the answer passed its max_tokens and was cut at {tokens} tokens before it ended"
            ),
        ),
    }
}

/// What a provider's error comes to (`text` is what had streamed).
fn provider_failed(e: ProviderError, text: &str) -> Found {
    match e {
        ProviderError::Transient {
            message,
            retry_after_ms,
        } => Found {
            transient_after: Some(retry_after_ms),
            ..Found::error(ErrorInfo::new(ErrorCode::E001, message))
        },
        ProviderError::SourceNotFound(m) => Found::error(ErrorInfo::new(ErrorCode::E001, m)),
        ProviderError::Timeout(m) => Found::error(ErrorInfo::new(
            ErrorCode::E004,
            format!("{m}; {} bytes had streamed", text.len()),
        )),
        ProviderError::Malformed(m) => Found::error(ErrorInfo::new(ErrorCode::E002, m)),
        ProviderError::Permanent(m) => Found::error(ErrorInfo::new(ErrorCode::E008, m)),
    }
}

/// Reads a finished call's answer `text`: empty, plain text, or atoms parsed and graded.
fn read_answer(
    ctx: &RunCtx,
    task: &Task,
    threshold: Grade,
    out: &ProviderOutput,
    text: &str,
    listed: &[String],
) -> Found {
    if crate::base::text::reasoning::answer(text).trim().is_empty() {
        return Found::error(ErrorInfo::new(
            ErrorCode::E002,
            format!("the model returned an empty completion{}", cut_note(out)),
        ));
    }
    if task.options().text_output {
        let answer = crate::base::text::reasoning::answer(text)
            .trim()
            .to_string();
        return text_found(task, answer);
    }
    match parse_response(text, task.output_requirements.max_atoms)
        .and_then(|p| without_secret(p, ctx.provider.secret_redactor()))
    {
        Err(mut e) => {
            e.message.push_str(&cut_note(out));
            Found::error(e)
        }
        Ok(parsed) if parsed.atoms.is_empty() && !parsed.errors.is_empty() => {
            // The model says why it has no answer: that is the error, as its code
            // is handled (its E001 retried as E001).
            Found::errors(parsed.errors)
        }
        Ok(parsed) if parsed.atoms.is_empty() => {
            let mut e = ErrorInfo::new(
                ErrorCode::E003,
                "output.atoms: the answer holds no atom; give at least one",
            );
            e.extra.insert("field".into(), "output.atoms".into());
            Found::error(e)
        }
        Ok(parsed) => graded(ctx, task, threshold, parsed, listed),
    }
}

/// A plain answer's one atom. It is not graded by the gate (its checks are of atoms'
/// fields): what judges it is the eval's checks.
fn text_found(task: &Task, answer: String) -> Found {
    Found {
        atoms: vec![text_atom(task, answer)],
        quality_check: QualityCheck {
            atoms_generated: 1,
            avg_quality_score: 1.0,
            grades: crate::base::protocol::GradeCounts {
                a: 1,
                ..Default::default()
            },
            ..QualityCheck::default()
        },
        verdicts: vec![AtomVerdict {
            score: 1.0,
            grade: Grade::A,
            issues: Vec::new(),
            fabricated_refs: Vec::new(),
        }],
        ..Found::default()
    }
}

/// Runs the quality gate over parsed atoms (references to `listed` assets are no
/// fabrication): the answer's own errors, then a hallucination, then a low average.
fn graded(
    ctx: &RunCtx,
    task: &Task,
    threshold: Grade,
    parsed: super::parse::ParsedOutput,
    listed: &[String],
) -> Found {
    let mut errors: Vec<ErrorInfo> = parsed.errors.to_vec();
    let required = &task.output_requirements.required_fields;
    let known = ctx
        .known_assets
        .read()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let known = crate::model::gate::known::WithListed {
        known: &*known,
        listed,
    };
    let g = run_gate(&parsed.atoms, required, &known, &ctx.config.quality);
    if g.fabricated_refs > 0 && g.fabricated_refs >= ctx.config.quality.hallucination_refs {
        errors.push(ErrorInfo::new(
            ErrorCode::E007,
            format!(
                "{} reference(s) to assets that do not exist; flagged for human review",
                g.fabricated_refs
            ),
        ));
    }
    if !parsed.atoms.is_empty() {
        let avg_grade = ctx.config.quality.grade(g.quality_check.avg_quality_score);
        if !avg_grade.meets(threshold) {
            errors.push(ErrorInfo::new(
                ErrorCode::E005,
                format!(
                    "average score {:.2} is grade {avg_grade}, below the threshold {threshold}",
                    g.quality_check.avg_quality_score
                ),
            ));
        }
    }
    let mut quality_check = g.quality_check;
    quality_check.issues.extend(parsed.issues.iter().cloned());
    Found {
        errors,
        transient_after: None,
        atoms: parsed.atoms,
        summary: parsed.summary,
        quality_check,
        verdicts: g.verdicts,
    }
}

impl Verdict {
    /// The grades event's entries.
    pub fn atom_grades(&self, agent: &AgentDef) -> Vec<AtomGrade> {
        self.atoms
            .iter()
            .zip(&self.verdicts)
            .map(|(a, v)| AtomGrade {
                asset_id: a.asset_id.clone(),
                atom_type: a
                    .atom_type()
                    .map(str::to_string)
                    .unwrap_or_else(|| agent.atom_type.clone()),
                grade: v.grade,
                score: v.score,
                confidence: a.confidence(),
                issues: v.issues.len() as u32,
            })
            .collect()
    }

    /// Rows for `knowledge_atoms`, `quality_records` and `relations`.
    /// `json` holds the atoms' nested objects as the stored response has them.
    pub(super) fn atom_rows(
        &self,
        task: &Task,
        agent: &AgentDef,
        invocation_id: &str,
        json: Vec<AtomJson>,
    ) -> Vec<AtomRow> {
        debug_assert_eq!(self.atoms.len(), json.len(), "one JSON per atom");
        self.atoms
            .iter()
            .zip(&self.verdicts)
            .zip(json)
            .map(|((a, v), j)| AtomRow {
                atom_id: a.asset_id.clone(),
                task_id: task.task_id.clone(),
                invocation_id: invocation_id.to_string(),
                agent: task.agent.to_string(),
                atom_type: a
                    .atom_type()
                    .map(str::to_string)
                    .unwrap_or_else(|| agent.atom_type.clone()),
                category: a.category.clone(),
                data_status: a.data_status.clone(),
                paper_id: a.provenance.paper_id.clone(),
                content: String::from(Box::<str>::from(j.content)),
                confidence: a.confidence(),
                grade: v.grade.as_str().to_string(),
                score: v.score,
                provenance: String::from(Box::<str>::from(j.provenance)),
                delta_audit: String::from(Box::<str>::from(j.delta_audit)),
                metadata: String::from(Box::<str>::from(j.metadata)),
                issues: serde_json::to_string(&v.issues).unwrap_or_default(),
                relations: a
                    .delta_audit
                    .existing_assets
                    .iter()
                    .flatten()
                    .filter(|r| !v.fabricated_refs.contains(r))
                    .cloned()
                    .collect(),
                contradiction: a.delta_audit.contradiction_marked.unwrap_or(false),
            })
            .collect()
    }
}

/// A message may quote what the model wrote, decoded (`\u0073k-…` is the key in
/// clear): the key goes from every message as from the atoms.
fn without_secret_in_messages(
    errors: &mut [ErrorInfo],
    redactor: Option<&crate::data::provider::http::redact::TextRedactor>,
) {
    let Some(r) = redactor else { return };
    for e in errors {
        if let Some(clean) = r.found_in(&e.message) {
            e.message = clean;
        }
    }
}

/// Picks the retry for this attempt's errors: `(code, delay_ms, adjustment)`.
pub(super) fn next_retry(
    ctx: &RunCtx,
    errors: &[ErrorInfo],
    transient_after: Option<Option<u64>>,
    retries: &mut rustc_hash::FxHashMap<&'static str, u32>,
    task_id: &str,
    attempt: u32,
) -> Option<(ErrorCode, u64, String)> {
    let policy = &ctx.config.retry;
    if errors.iter().any(|e| !e.recoverable) {
        return None;
    }
    let first = errors.first()?;
    let code = first.error_code;
    if let Some(retry_after) = transient_after {
        let n = retries.entry("transient").or_insert(0);
        *n += 1;
        let d = policy.transient_delay(*n, retry_after, jitter_unit(ctx, task_id, attempt))?;
        return Some((
            code,
            d,
            format!(
                "{}: backoff retry {n} of {}",
                crate::model::event::TRANSIENT_NOTE,
                policy.transient.max_retries
            ),
        ));
    }
    let key = code.as_str();
    let n = retries.entry(key).or_insert(0);
    *n += 1;
    let delay = policy.delay_for(code, *n)?;
    let max = policy.rule(code).map(|r| r.max_retries).unwrap_or(0);
    let note = match code {
        ErrorCode::E001 => format!("source unreachable: retry {n} of {max}"),
        ErrorCode::E002 => format!("parse error added to the prompt: retry {n} of {max}"),
        ErrorCode::E003 => format!("quality threshold lowered one grade: retry {n} of {max}"),
        ErrorCode::E004 => format!("timeout ×{}: retry {n} of {max}", policy.timeout_growth),
        ErrorCode::E005 => format!(
            "max_tokens ×{}, temperature {:+}: retry {n} of {max}",
            policy.max_tokens_growth, policy.temperature_step
        ),
        ErrorCode::E009 => format!(
            "runaway answer: temperature {:+}: retry {n} of {max}",
            -policy.temperature_step.abs()
        ),
        _ => return None,
    };
    Some((code, delay, note))
}

/// The random number in [0, 1) that jitters a transient retry's delay. The simulated
/// provider's runs repeat for a seed, so its jitter comes from the seed; against a real
/// API it comes from this process's own random source, so separate processes retrying
/// one rate-limited API spread out instead of coming back in lockstep.
pub(super) fn jitter_unit(ctx: &RunCtx, task_id: &str, attempt: u32) -> f64 {
    if ctx.provider.is_simulated() {
        fastrand::Rng::with_seed(ctx.config.seed ^ (attempt as u64) ^ fxhash(task_id)).f64()
    } else {
        fastrand::f64()
    }
}

fn fxhash(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod secret_tests {
    use super::*;
    use crate::data::provider::http::redact::TextRedactor;

    #[test]
    fn a_parse_error_quoting_a_key_the_model_escaped_loses_the_key() {
        let key = "sk-test-0123456789abcdef";
        let escaped: String = key.encode_utf16().map(|u| format!("\\u{u:04x}")).collect();
        let text = format!(
            r#"{{"output": {{"atoms": [{{"asset_id": "a1", "content": {{"x": 1}}, "metadata": "{escaped}"}}], "summary": "s"}}}}"#
        );
        assert!(!text.contains(key), "the text holds the key only escaped");
        let err = crate::run::engine::parse::parse_response(&text, None).expect_err("invalid");
        let mut errors = vec![err];
        assert!(errors[0].message.contains(key), "{}", errors[0].message);
        without_secret_in_messages(&mut errors, Some(&TextRedactor::new(Some(key))));
        assert!(!errors[0].message.contains(key), "{}", errors[0].message);
        assert!(
            errors[0].message.contains("[redacted]"),
            "{}",
            errors[0].message
        );
    }
}
