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
use crate::base::protocol::invocation::AgentRequest;
use crate::data::provider::call::{self, Outcome, Stopped};
use crate::data::provider::http::redact::redact_serialized;
use crate::data::provider::meter::CallMeter;
use crate::data::provider::retry::RetryPolicy;
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

/// What a turn came to: its outcome, the fresh output and position (when valid), and the
/// tokens of the last reply.
type Ended = (TurnOutcome, Option<(Value, PositionSummary)>, u64);

/// Runs one turn of `turn.role`.
pub async fn speak(s: &Session, turn: DebateTurn, last: LastOutput) -> Result<Spoken, StoreError> {
    let mut t = Turn::new(s, turn, last);
    s.emitter.write(WriteOp::AddTask {
        run_id: s.emitter.run_id().clone(),
        task_id: t.task.clone(),
        agent: t.agent.clone(),
    })?;
    let started = Instant::now();
    let ended = loop {
        if let Some(ended) = t.attempt_once().await? {
            break ended;
        }
    };
    t.finish(started, ended)
}

/// One turn in progress: what it asks, and what its tries came to so far.
struct Turn<'a> {
    /// The session.
    s: &'a Session,
    /// The request's material (its `problems` are the last try's).
    turn: DebateTurn,
    /// The agent's last valid output.
    last: LastOutput,
    /// The agent.
    role: AgentRole,
    /// The turn's task id.
    task: Arc<str>,
    /// The agent's short name.
    agent: Arc<str>,
    /// The agent's time per call.
    timeout: Duration,
    /// The retry policy of transient failures.
    retry: RetryPolicy,
    /// Tries made, from 1.
    attempt: u32,
    /// Transient failures (a rate limit, a 5xx) retried so far, apart from the tries an
    /// output that does not follow the protocol gets.
    transient: u32,
    /// Outputs refused so far.
    tries: u32,
    /// The message of the turn's last `debate_error`.
    problem: Option<String>,
}

impl<'a> Turn<'a> {
    /// A turn of `turn.role` before its first try.
    fn new(s: &'a Session, turn: DebateTurn, last: LastOutput) -> Turn<'a> {
        let role = turn.role.clone();
        let task: Arc<str> = turn.task_id().into();
        let agent: Arc<str> = role.as_str().into();
        Turn {
            s,
            turn,
            last,
            role,
            task,
            agent,
            timeout: Duration::from_millis(s.spec.agent_timeout_ms),
            retry: RetryPolicy::default().scaled(s.spec.retry_delay_div),
            attempt: 0,
            transient: 0,
            tries: 0,
            problem: None,
        }
    }

    /// One try: a call to the model, its reply logged, and either how the turn ended or
    /// `None` to try again.
    async fn attempt_once(&mut self) -> Result<Option<Ended>, StoreError> {
        self.attempt += 1;
        let inv: Arc<str> = self.s.invocation_id(&self.role).await?.into();
        let scope = Scope {
            task_id: Some(self.task.clone()),
            invocation_id: Some(inv.clone()),
            agent: Some(self.agent.clone()),
        };
        self.s.emitter.emit(
            &scope,
            EngineEvent::DebateTurnStarted(DebateTurnStarted {
                round: self.turn.round,
                agent: self.role.clone(),
                attempt: self.attempt,
                closing: self.turn.closing,
            }),
        )?;
        let req = Arc::new(request(&self.turn, &inv, self.s.spec.agent_timeout_ms));
        let call_start = Instant::now();
        let (result, text) = self.call(&scope, &req).await;
        let tokens = self.s.counter.count(&text);
        let duration_ms = call_start.elapsed().as_millis() as u64;
        let mut reply = self.reply(text.clone(), tokens, duration_ms);
        let Some(result) = result else {
            reply.provider_error = Some(StoredProviderError {
                kind: "cancelled".into(),
                message: "the session was stopped".into(),
                retry_after_ms: None,
            });
            self.s
                .emitter
                .emit(&scope, EngineEvent::DebateReply(reply))?;
            return Ok(Some((TurnOutcome::Cancelled, None, tokens)));
        };
        let wait = call::transient_wait(&result, self.transient + 1, &self.retry);
        match result {
            Err(Stopped::Timeout { .. }) | Ok(Err(ProviderError::Timeout(_))) => {
                self.timed_out(&scope, reply, tokens).map(Some)
            }
            Ok(Err(e)) => {
                self.provider_failed(&scope, reply, e, wait, &req, tokens)
                    .await
            }
            // An answer that ran away or past its tokens: told to the agent, like a reply
            // that does not follow the protocol.
            Err(stopped) => self.refused(&scope, reply, vec![call::said(&stopped)], tokens),
            Ok(Ok(_)) => self.answered(&scope, reply, &text, tokens).await,
        }
    }

    /// The model's call (within the agent's time, admitted by the provider), streamed to
    /// the turn's sink; `None` when the session was stopped first. Returns the text that
    /// came either way.
    async fn call(&self, scope: &Scope, req: &Arc<AgentRequest>) -> (Option<Outcome>, String) {
        let mut sink = TurnStream::new(self.s, scope);
        let limits = call::Limits::for_call(
            self.s.provider.as_ref(),
            self.timeout,
            req.constraints.max_tokens,
        );
        let result = {
            let call = call::admitted(
                self.s.provider.as_ref(),
                req.clone(),
                self.attempt,
                &mut sink,
                &limits,
            );
            tokio::select! {
                biased;
                _ = self.s.cancelled() => None,
                r = call => Some(r),
            }
        };
        (result, sink.finish())
    }

    /// The log of this try's reply, before what it came to is known.
    fn reply(&self, text: String, tokens: u64, duration_ms: u64) -> DebateReply {
        DebateReply {
            round: self.turn.round,
            agent: self.role.clone(),
            attempt: self.attempt,
            closing: self.turn.closing,
            text,
            output_tokens: tokens,
            duration_ms,
            timed_out: false,
            provider_error: None,
            problems: Vec::new(),
        }
    }

    /// Logs `error` as the turn's `debate_error`, its `message` kept as the turn's problem.
    fn log_error(
        &mut self,
        scope: &Scope,
        error: Value,
        message: String,
    ) -> Result<(), StoreError> {
        let message = self.problem.insert(message).clone();
        self.s.emitter.emit(
            scope,
            EngineEvent::DebateError(DebateErrorLogged {
                round: self.turn.round,
                error,
                message,
            }),
        )
    }

    /// The call ran out of the agent's time: the turn is skipped.
    fn timed_out(
        &mut self,
        scope: &Scope,
        mut reply: DebateReply,
        tokens: u64,
    ) -> Result<Ended, StoreError> {
        reply.timed_out = true;
        self.s
            .emitter
            .emit(scope, EngineEvent::DebateReply(reply))?;
        let role = &self.role;
        let message = format!(
            "{role} gave no answer within {} s in round {}: skipped, {}",
            self.s.spec.agent_timeout_ms as f64 / 1000.0,
            self.turn.round,
            if self.last.is_some() {
                "its previous output stands"
            } else {
                "it has no earlier output"
            }
        );
        let error = skip_agent_error("agent_timeout", role, self.turn.round);
        self.log_error(scope, error, message)?;
        Ok((TurnOutcome::TimedOut, None, tokens))
    }

    /// The provider failed: a transient failure is waited out (`wait`) and tried again,
    /// anything else skips the turn.
    async fn provider_failed(
        &mut self,
        scope: &Scope,
        mut reply: DebateReply,
        e: ProviderError,
        wait: Option<Duration>,
        req: &AgentRequest,
        tokens: u64,
    ) -> Result<Option<Ended>, StoreError> {
        reply.provider_error = Some(StoredProviderError::from(&e));
        self.s
            .emitter
            .emit(scope, EngineEvent::DebateReply(reply))?;
        // A transient failure is retried by the retry policy every model call
        // shares (as long as the server asks, else its backoff); anything else
        // (a 400, a refused key) would fail again and is not.
        if let Some(wait) = wait {
            self.transient += 1;
            let _waiting = CallMeter::global().wait(call::call_label(req), wait);
            tokio::select! {
                biased;
                _ = self.s.cancelled() => {}
                _ = tokio::time::sleep(wait) => {}
            }
            if self.s.is_cancelled() {
                return Ok(Some((TurnOutcome::Cancelled, None, tokens)));
            }
            return Ok(None);
        }
        let message = format!(
            "{} failed {} time(s) in round {}: {e}",
            self.role, self.attempt, self.turn.round
        );
        let error = skip_agent_error("agent_failed", &self.role, self.turn.round);
        self.log_error(scope, error, message)?;
        Ok(Some((TurnOutcome::Failed, None, tokens)))
    }

    /// The reply was refused for `problems`: asked again with them, or, out of tries, the
    /// turn gave no valid output.
    fn refused(
        &mut self,
        scope: &Scope,
        mut reply: DebateReply,
        problems: Vec<String>,
        tokens: u64,
    ) -> Result<Option<Ended>, StoreError> {
        reply.problems = problems.clone();
        self.s
            .emitter
            .emit(scope, EngineEvent::DebateReply(reply))?;
        self.tries += 1;
        if self.tries < self.s.spec.output_tries {
            self.turn.problems = problems;
            return Ok(None);
        }
        let role = &self.role;
        let error = json!({
            "error": "invalid_output",
            "agent": role.as_str(),
            "round": self.turn.round,
            "problems": problems,
            "fallback": fallback_of(role)
        });
        let message = format!(
            "{role}'s output in round {} was refused {} time(s): {}",
            self.turn.round,
            self.tries,
            problems.join("; ")
        );
        self.log_error(scope, error, message)?;
        Ok(Some((TurnOutcome::Invalid, None, tokens)))
    }

    /// The model answered: its `text` checked (the protocol, the provider's key, the
    /// content), and either the turn's valid output or a refusal.
    async fn answered(
        &mut self,
        scope: &Scope,
        reply: DebateReply,
        text: &str,
        tokens: u64,
    ) -> Result<Option<Ended>, StoreError> {
        let stamp = self.s.now_text();
        let round = self.turn.round;
        let checked = check(&self.role, round, text, tokens, MAX_OUTPUT_TOKENS, &stamp)
            .and_then(|c| without_secret(self.s, c));
        // What a person reads passes the content check before it is shown.
        let checked = match checked {
            Ok(c) => super::content::check_output(self.s, scope, round, c).await?,
            Err(p) => Err(p),
        };
        let mut c = match checked {
            Ok(c) => c,
            Err(problems) => {
                let problems = self.decoded(problems);
                return self.refused(scope, reply, problems, tokens);
            }
        };
        let ch = changes(self.last.as_ref().map(|l| &l.1), &c.position);
        set_changes(&mut c.output, &mut c.position, ch);
        if self.role == AgentRole::Reporter {
            crate::base::protocol::debate::fill_todo(&mut c.output);
        }
        self.s
            .emitter
            .emit(scope, EngineEvent::DebateReply(reply))?;
        Ok(Some((
            TurnOutcome::Valid,
            Some((c.output, c.position)),
            tokens,
        )))
    }

    /// `problems` with the provider's key (when it has one) found in what they quote.
    fn decoded(&self, problems: Vec<String>) -> Vec<String> {
        // A problem may quote what the model wrote, decoded.
        match self.s.provider.secret_redactor() {
            Some(r) => problems
                .into_iter()
                .map(|p| r.found_in(&p).unwrap_or(p))
                .collect(),
            None => problems,
        }
    }

    /// Logs how the turn ended (the output that stands for the agent, the task's state)
    /// and says so to the session.
    fn finish(self, started: Instant, ended: Ended) -> Result<Spoken, StoreError> {
        let s = self.s;
        let (outcome, fresh, tokens) = ended;
        let (output, position, is_fresh) = match fresh {
            Some((o, p)) => (Some(o), Some(p), true),
            None if outcome != TurnOutcome::Cancelled => match self.last {
                Some((o, p)) => (Some(o), Some(p), false),
                None => (None, None, false),
            },
            None => (None, None, false),
        };
        let scope = Scope {
            task_id: Some(self.task.clone()),
            invocation_id: None,
            agent: Some(self.agent.clone()),
        };
        s.emitter.emit(
            &scope,
            EngineEvent::DebateOutput(DebateOutput {
                round: self.turn.round,
                agent: self.role.clone(),
                outcome,
                attempts: self.attempt,
                closing: self.turn.closing,
                output: output.clone(),
                reused: output.is_some() && !is_fresh,
                output_tokens: tokens,
                duration_ms: started.elapsed().as_millis() as u64,
            }),
        )?;
        s.emitter.write(WriteOp::TaskState {
            run_id: s.emitter.run_id().clone(),
            task_id: self.task,
            status: outcome.task_status(),
            attempts: self.attempt,
            atoms: 0,
            error_code: None,
            final_invocation_id: None,
        })?;
        Ok(Spoken {
            outcome,
            output,
            position,
            fresh: is_fresh,
            problem: self.problem.filter(|_| outcome != TurnOutcome::Valid),
        })
    }
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
