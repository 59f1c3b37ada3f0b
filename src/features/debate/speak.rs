//! One agent's turn: ask the model (within the agent's time), check the reply, ask again
//! with the problems when it does not follow the protocol, and say how the turn ended.
//! Every model call is logged (`debate_reply`), so a rerun can answer from the log.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::check::{changes, check, set_changes, Checked};
use super::shared::{LastOutput, Session};
use super::stream::TurnStream;
use crate::base::protocol::debate::{AgentRole, PositionSummary};
use crate::base::protocol::debate_spec::MAX_OUTPUT_TOKENS;
use crate::base::protocol::debate_turn::{request, DebateTurn};
use crate::data::provider::http::redact::redact_serialized;
use crate::data::provider::{ProviderError, StoredProviderError};
use crate::data::store::{StoreError, WriteOp};
use crate::model::event::debate::{
    DebateErrorLogged, DebateOutput, DebateReply, DebateTurnStarted, TurnOutcome,
};
use crate::model::event::EngineEvent;
use crate::run::engine::emit::Scope;

/// How a turn ended, for the session.
#[derive(Debug, Clone)]
pub struct Spoken {
    /// Outcome.
    pub outcome: TurnOutcome,
    /// The output that stands for the agent this round (fresh or reused).
    pub output: Option<Value>,
    /// Its position.
    pub position: Option<PositionSummary>,
    /// The output is fresh (not reused).
    pub fresh: bool,
    /// Why the turn gave no valid output (as its `debate_error` says); `None` when it
    /// gave one, or was stopped.
    pub problem: Option<String>,
}

/// Runs one turn of `turn.role`.
pub async fn speak(
    s: &Session,
    mut turn: DebateTurn,
    last: LastOutput,
) -> Result<Spoken, StoreError> {
    let role = turn.role.clone();
    let task: Arc<str> = turn.task_id().into();
    let agent: Arc<str> = role.as_str().into();
    s.emitter.write(WriteOp::AddTask {
        run_id: s.emitter.run_id().clone(),
        task_id: task.clone(),
        agent: agent.clone(),
    })?;
    let started = Instant::now();
    let timeout = Duration::from_millis(s.spec.agent_timeout_ms);
    let retry = crate::data::provider::retry::RetryPolicy::default().scaled(s.spec.retry_delay_div);
    let mut attempt = 0u32;
    // Transient failures (a rate limit, a 5xx) retried so far, apart from the tries an
    // output that does not follow the protocol gets.
    let mut transient = 0u32;
    let mut tries = 0u32;
    let mut problem: Option<String> = None;
    let (outcome, fresh, tokens) = loop {
        attempt += 1;
        let inv: Arc<str> = s.invocation_id(&role).await?.into();
        let scope = Scope {
            task_id: Some(task.clone()),
            invocation_id: Some(inv.clone()),
            agent: Some(agent.clone()),
        };
        s.emitter.emit(
            &scope,
            EngineEvent::DebateTurnStarted(DebateTurnStarted {
                round: turn.round,
                agent: role.clone(),
                attempt,
                closing: turn.closing,
            }),
        )?;
        let req = Arc::new(request(&turn, &inv, s.spec.agent_timeout_ms));
        let call_start = Instant::now();
        let mut sink = TurnStream::new(s, &scope);
        let limits = crate::data::provider::call::Limits::for_call(
            s.provider.as_ref(),
            timeout,
            req.constraints.max_tokens,
        );
        let result = {
            let call = crate::data::provider::call::admitted(
                s.provider.as_ref(),
                req.clone(),
                attempt,
                &mut sink,
                &limits,
            );
            tokio::select! {
                biased;
                _ = s.cancelled() => None,
                r = call => Some(r),
            }
        };
        let text = sink.finish();
        let tokens = s.counter.count(&text);
        let duration_ms = call_start.elapsed().as_millis() as u64;
        let mut reply = DebateReply {
            round: turn.round,
            agent: role.clone(),
            attempt,
            closing: turn.closing,
            text: text.clone(),
            output_tokens: tokens,
            duration_ms,
            timed_out: false,
            provider_error: None,
            problems: Vec::new(),
        };
        let Some(result) = result else {
            reply.provider_error = Some(StoredProviderError {
                kind: "cancelled".into(),
                message: "the session was stopped".into(),
                retry_after_ms: None,
            });
            s.emitter.emit(&scope, EngineEvent::DebateReply(reply))?;
            break (TurnOutcome::Cancelled, None, tokens);
        };
        let wait = crate::data::provider::call::transient_wait(&result, transient + 1, &retry);
        match result {
            Err(crate::data::provider::call::Stopped::Timeout { .. })
            | Ok(Err(ProviderError::Timeout(_))) => {
                reply.timed_out = true;
                s.emitter.emit(&scope, EngineEvent::DebateReply(reply))?;
                s.emitter.emit(
                    &scope,
                    EngineEvent::DebateError(DebateErrorLogged {
                        round: turn.round,
                        error: skip_agent_error("agent_timeout", &role, turn.round),
                        message: problem
                            .insert(format!(
                                "{role} gave no answer within {} s in round {}: skipped, {}",
                                s.spec.agent_timeout_ms as f64 / 1000.0,
                                turn.round,
                                if last.is_some() {
                                    "its previous output stands"
                                } else {
                                    "it has no earlier output"
                                }
                            ))
                            .clone(),
                    }),
                )?;
                break (TurnOutcome::TimedOut, None, tokens);
            }
            Ok(Err(e)) => {
                reply.provider_error = Some(StoredProviderError::from(&e));
                s.emitter.emit(&scope, EngineEvent::DebateReply(reply))?;
                // A transient failure is retried by the retry policy every model call
                // shares (as long as the server asks, else its backoff); anything else
                // (a 400, a refused key) would fail again and is not.
                if let Some(wait) = wait {
                    transient += 1;
                    let _waiting = crate::data::provider::meter::CallMeter::global()
                        .wait(crate::data::provider::call::call_label(&req), wait);
                    tokio::select! {
                        biased;
                        _ = s.cancelled() => {}
                        _ = tokio::time::sleep(wait) => {}
                    }
                    if s.is_cancelled() {
                        break (TurnOutcome::Cancelled, None, tokens);
                    }
                    continue;
                }
                s.emitter.emit(
                    &scope,
                    EngineEvent::DebateError(DebateErrorLogged {
                        round: turn.round,
                        error: skip_agent_error("agent_failed", &role, turn.round),
                        message: problem
                            .insert(format!(
                                "{role} failed {attempt} time(s) in round {}: {e}",
                                turn.round
                            ))
                            .clone(),
                    }),
                )?;
                break (TurnOutcome::Failed, None, tokens);
            }
            // An answer that ran away or past its tokens: told to the agent, like a reply
            // that does not follow the protocol.
            Err(stopped) => {
                let said = crate::data::provider::call::said(&stopped);
                reply.problems = vec![said.clone()];
                s.emitter.emit(&scope, EngineEvent::DebateReply(reply))?;
                tries += 1;
                if tries >= s.spec.output_tries {
                    s.emitter.emit(
                        &scope,
                        EngineEvent::DebateError(DebateErrorLogged {
                            round: turn.round,
                            error: json!({
                                "error": "invalid_output",
                                "agent": role.as_str(),
                                "round": turn.round,
                                "problems": [said],
                                "fallback": fallback_of(&role)
                            }),
                            message: problem
                                .insert(format!(
                                    "{role}'s output in round {} was refused {tries} time(s): {said}",
                                    turn.round
                                ))
                                .clone(),
                        }),
                    )?;
                    break (TurnOutcome::Invalid, None, tokens);
                }
                turn.problems = vec![said];
            }
            Ok(Ok(_)) => {
                let stamp = s.now_text();
                let checked = check(&role, turn.round, &text, tokens, MAX_OUTPUT_TOKENS, &stamp)
                    .and_then(|c| without_secret(s, c));
                // What a person reads passes the content check before it is shown.
                let checked = match checked {
                    Ok(c) => super::content::check_output(s, &scope, turn.round, c).await?,
                    Err(p) => Err(p),
                };
                match checked {
                    Ok(mut c) => {
                        let ch = changes(last.as_ref().map(|l| &l.1), &c.position);
                        set_changes(&mut c.output, &mut c.position, ch);
                        if role == AgentRole::Reporter {
                            crate::base::protocol::debate::fill_todo(&mut c.output);
                        }
                        s.emitter.emit(&scope, EngineEvent::DebateReply(reply))?;
                        break (TurnOutcome::Valid, Some((c.output, c.position)), tokens);
                    }
                    Err(problems) => {
                        // A problem may quote what the model wrote, decoded.
                        let problems: Vec<String> = match s.provider.secret_redactor() {
                            Some(r) => problems
                                .into_iter()
                                .map(|p| r.found_in(&p).unwrap_or(p))
                                .collect(),
                            None => problems,
                        };
                        reply.problems = problems.clone();
                        s.emitter.emit(&scope, EngineEvent::DebateReply(reply))?;
                        tries += 1;
                        if tries >= s.spec.output_tries {
                            s.emitter.emit(
                                &scope,
                                EngineEvent::DebateError(DebateErrorLogged {
                                    round: turn.round,
                                    error: json!({
                                        "error": "invalid_output",
                                        "agent": role.as_str(),
                                        "round": turn.round,
                                        "problems": problems,
                                        "fallback": fallback_of(&role)
                                    }),
                                    message: problem
                                        .insert(format!(
                                            "{role}'s output in round {} was refused {tries} time(s): {}",
                                            turn.round,
                                            problems.join("; ")
                                        ))
                                        .clone(),
                                }),
                            )?;
                            break (TurnOutcome::Invalid, None, tokens);
                        }
                        turn.problems = problems;
                    }
                }
            }
        }
    };
    let (output, position, is_fresh) = match fresh {
        Some((o, p)) => (Some(o), Some(p), true),
        None if outcome != TurnOutcome::Cancelled => match last {
            Some((o, p)) => (Some(o), Some(p), false),
            None => (None, None, false),
        },
        None => (None, None, false),
    };
    let scope = Scope {
        task_id: Some(task.clone()),
        invocation_id: None,
        agent: Some(agent.clone()),
    };
    s.emitter.emit(
        &scope,
        EngineEvent::DebateOutput(DebateOutput {
            round: turn.round,
            agent: role.clone(),
            outcome,
            attempts: attempt,
            closing: turn.closing,
            output: output.clone(),
            reused: output.is_some() && !is_fresh,
            output_tokens: tokens,
            duration_ms: started.elapsed().as_millis() as u64,
        }),
    )?;
    s.emitter.write(WriteOp::TaskState {
        run_id: s.emitter.run_id().clone(),
        task_id: task,
        status: outcome.task_status(),
        attempts: attempt,
        atoms: 0,
        error_code: None,
        final_invocation_id: None,
    })?;
    Ok(Spoken {
        outcome,
        output,
        position,
        fresh: is_fresh,
        problem: problem.filter(|_| outcome != TurnOutcome::Valid),
    })
}

/// The checked output with the provider's key (when it has one) replaced in every string
/// decoded from the reply: a string the model wrote with JSON escapes (`\u0073k-…`)
/// decodes to the key in clear.
fn without_secret(s: &Session, c: Checked) -> Result<Checked, Vec<String>> {
    let Some(r) = s.provider.secret_redactor() else {
        return Ok(c);
    };
    let refused = |e: serde_json::Error| {
        vec![format!(
            "the output held the provider's key and does not read once it is removed: {e}"
        )]
    };
    Ok(Checked {
        output: redact_serialized(c.output, r).map_err(refused)?,
        position: redact_serialized(c.position, r).map_err(refused)?,
    })
}

/// Whether an agent answers through a model.
pub fn speaks(role: &AgentRole) -> bool {
    matches!(
        role,
        AgentRole::Planner | AgentRole::Critic | AgentRole::Reporter
    )
}

/// What stands for `role` when its turn gives no valid output (the `fallback` of its
/// error document).
fn fallback_of(role: &AgentRole) -> &'static str {
    if *role == AgentRole::Reporter {
        "none: the session ends without a report"
    } else {
        "use the previous round's output"
    }
}

/// The protocol's error document of a skipped turn (`kind`: `agent_timeout`,
/// `agent_failed`) of `role` in `round`.
fn skip_agent_error(kind: &str, role: &AgentRole, round: u32) -> Value {
    json!({
        "error": kind,
        "agent": role.as_str(),
        "round": round,
        "action": "skip_agent",
        "fallback": fallback_of(role)
    })
}
