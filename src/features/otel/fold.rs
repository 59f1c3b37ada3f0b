//! One event into the span model: which span it opens, ends, or adds an event or
//! attributes to. Every event kind has its arm (no wildcard), so a new kind must decide
//! here what it means for a trace.

use std::sync::Arc;

use opentelemetry_proto::tonic::trace::v1::Span;

use super::attrs::{self, b, f, i, list, s};
use super::build::{provider_and_model, SpanBuilder};
use super::chat::grades;
use crate::base::protocol::GradeCounts;
use crate::model::event::{EngineEvent, Envelope, RunStatus, TaskStatus};

/// Folds `env` into `sb`; spans it ends go to `out`.
pub(super) fn fold(sb: &mut SpanBuilder, env: &Envelope, out: &mut Vec<Span>) {
    let ts = env.ts;
    match &env.event {
        EngineEvent::RunStarted(r) => {
            sb.plan_id = r.plan_id.clone();
            (sb.provider, sb.model) = provider_and_model(&r.provider);
            sb.open_root(ts, out);
            if let Some(root) = sb.root.as_mut() {
                for a in [
                    s("plexus.execution_mode", r.execution_mode.clone()),
                    s("gen_ai.provider.name", sb.provider.clone()),
                    s("gen_ai.request.model", sb.model.clone()),
                    i("plexus.seed", r.seed),
                    i("plexus.concurrency", r.concurrency),
                    i("plexus.tasks", r.tasks.len()),
                ] {
                    attrs::set(root, a);
                }
            }
        }
        EngineEvent::CrashDetected(c) => sb.note(
            env,
            "plexus.crash_detected",
            vec![
                i("plexus.last_seq", c.last_seq),
                list("plexus.interrupted_tasks", c.interrupted_tasks.clone()),
            ],
            out,
        ),
        EngineEvent::LeaseTakenOver(l) => sb.note(
            env,
            "plexus.lease_taken_over",
            vec![
                i("plexus.previous_pid", l.previous_pid),
                s("plexus.reason", l.reason.clone()),
            ],
            out,
        ),
        EngineEvent::RunResumed(r) => sb.note(
            env,
            "plexus.run_resumed",
            vec![
                s("plexus.previous_status", r.previous_status.as_str()),
                i("plexus.finished_tasks", r.finished_tasks),
                i("plexus.remaining_tasks", r.remaining_tasks),
            ],
            out,
        ),
        EngineEvent::RunPaused(_) => sb.note(env, "plexus.paused", Vec::new(), out),
        EngineEvent::RunUnpaused(_) => sb.note(env, "plexus.unpaused", Vec::new(), out),
        EngineEvent::CancelRequested(c) => sb.note(
            env,
            "plexus.cancel_requested",
            vec![s("plexus.reason", c.reason.clone())],
            out,
        ),
        EngineEvent::BudgetReached(b) => sb.note(
            env,
            "plexus.budget_reached",
            vec![
                f("plexus.budget.limit_usd", b.limit_usd),
                f("plexus.cost.usd", b.spent_usd),
            ],
            out,
        ),
        EngineEvent::RunFinished(r) => {
            sb.close_all(ts, "the run ended before this ended", out);
            sb.root_id(ts, out);
            if let Some(mut root) = sb.root.take() {
                attrs::set(&mut root, s("plexus.run.status", r.status.as_str()));
                attrs::set(&mut root, i("plexus.atoms", r.atoms));
                grades(&mut root, &r.grades);
                root.status = match r.status {
                    RunStatus::Succeeded | RunStatus::Partial => attrs::ok(),
                    other => attrs::error(format!("the run ended {}", other.label())),
                };
                root.end_time_unix_nano = attrs::nanos(ts);
                out.push(root);
            }
        }
        EngineEvent::TaskReady(_) => {
            if let Some(t) = &env.task_id {
                sb.task_span(t, env.agent.as_ref(), ts, out);
            }
        }
        EngineEvent::TaskBlocked(bl) => {
            if let Some(t) = &env.task_id {
                let span = sb.task_span(t, env.agent.as_ref(), ts, out);
                attrs::set(span, s("plexus.blocked_by", bl.upstream.clone()));
                attrs::event(
                    span,
                    "plexus.blocked",
                    ts,
                    vec![s("plexus.message", bl.message.clone())],
                );
            }
        }
        EngineEvent::TaskFinished(tf) => {
            if let Some(t) = &env.task_id {
                sb.task_span(t, env.agent.as_ref(), ts, out);
                if let Some(mut span) = sb.end_task(t, ts, out) {
                    attrs::set(&mut span, s("plexus.task.status", tf.status.as_str()));
                    attrs::set(&mut span, i("plexus.attempts", tf.attempts));
                    attrs::set(&mut span, i("plexus.atoms", tf.atoms));
                    if let Some(code) = tf.error_code {
                        attrs::set(&mut span, s("error.type", code.as_str()));
                    }
                    span.status = task_status(tf.status, tf.error_message.as_deref());
                    out.push(span);
                }
            }
        }
        EngineEvent::TaskReset(r) => {
            if let Some(t) = &env.task_id {
                if let Some(mut span) = sb.end_task(t, ts, out) {
                    span.status = attrs::error("reset before its end");
                    out.push(span);
                }
            }
            sb.note(
                env,
                "plexus.task_reset",
                vec![s("plexus.reason", r.reason.clone())],
                out,
            );
        }
        EngineEvent::InvocationStarted(st) => {
            if let Some(inv) = &env.invocation_id {
                sb.open_chat(env, inv, out);
                if let Some(c) = sb.chats.get_mut(inv) {
                    c.input_tokens = st.prompt_tokens;
                    for a in [
                        i("plexus.attempt", st.attempt),
                        i("gen_ai.request.max_tokens", st.constraints.max_tokens),
                        f("gen_ai.request.temperature", st.constraints.temperature),
                        s("plexus.quality_threshold", st.quality_threshold.clone()),
                    ] {
                        attrs::set(&mut c.span, a);
                    }
                }
            }
        }
        EngineEvent::Chunk(ch) => {
            let content = sb.content();
            if let Some(c) = env.invocation_id.as_ref().and_then(|i| sb.chats.get_mut(i)) {
                if content {
                    c.output.push_str(&ch.text);
                }
            }
        }
        EngineEvent::InvocationFinished(fin) => {
            if let Some(inv) = &env.invocation_id {
                if !sb.chats.contains_key(inv) {
                    sb.open_chat(env, inv, out);
                }
                if let Some(mut c) = sb.chats.remove(inv) {
                    super::chat::finished(sb, &mut c, inv, fin);
                    sb.end_chat(c, ts, None, out);
                }
            }
        }
        EngineEvent::InvocationLost(l) => {
            if let Some(inv) = &env.invocation_id {
                if let Some(mut c) = sb.chats.remove(inv) {
                    attrs::set(
                        &mut c.span,
                        i("gen_ai.usage.output_tokens", l.output_tokens),
                    );
                    if let Some(usd) = l.cost_usd {
                        attrs::set(&mut c.span, f("plexus.cost.usd", usd));
                    }
                    attrs::event(
                        &mut c.span,
                        "plexus.lost",
                        ts,
                        vec![s("plexus.reason", l.reason.clone())],
                    );
                    sb.end_chat(c, l.last_ts.max(0), Some("lost"), out);
                }
            }
        }
        EngineEvent::AtomsGraded(g) => {
            let mut counts = GradeCounts::default();
            for a in &g.atoms {
                counts.add(a.grade);
            }
            let attributes = vec![
                i("plexus.atoms", g.atoms.len()),
                i("plexus.grade.A", counts.a),
                i("plexus.grade.B", counts.b),
                i("plexus.grade.C", counts.c),
                i("plexus.grade.D", counts.d),
            ];
            on_call(sb, env, "plexus.atoms_graded", attributes, out);
        }
        EngineEvent::RetryScheduled(r) => {
            let mut attributes = vec![
                i("plexus.next_attempt", r.next_attempt),
                s("error.type", r.error_code.as_str()),
                i("plexus.delay_ms", r.delay_ms),
                s("plexus.adjustment", r.adjustment.clone()),
                b("plexus.transient", r.is_transient()),
            ];
            if let Some(batch) = r.batch {
                attributes.push(i("plexus.batch", batch));
            }
            sb.note(env, "plexus.retry_scheduled", attributes, out);
        }
        EngineEvent::ReferenceFailed(r) => sb.note(
            env,
            "plexus.reference_failed",
            vec![i("plexus.reference.index", r.index)],
            out,
        ),
        EngineEvent::ContextPlanned(c) => sb.note(
            env,
            "plexus.context_planned",
            vec![
                i("plexus.context.inputs", c.inputs.len()),
                i("plexus.context.total_tokens", c.report.total_tokens),
                i("plexus.context.limit", c.report.context_limit),
                i("plexus.context.overflow", c.report.overflow),
                s(
                    "plexus.context.strategy",
                    c.report.resolution.strategy.clone(),
                ),
                i(
                    "plexus.context.trim_actions",
                    c.report.resolution.actions.len(),
                ),
                i(
                    "plexus.context.final_tokens",
                    c.report.resolution.final_tokens,
                ),
            ],
            out,
        ),
        EngineEvent::ReviewAccepted(r) => sb.note(
            env,
            "plexus.review",
            vec![
                s("plexus.review.decision", "accepted"),
                s("plexus.review.reviewer", r.reviewer.clone()),
                s("plexus.task.status", r.status.as_str()),
                i("plexus.atoms", r.atoms),
            ],
            out,
        ),
        EngineEvent::ReviewRejected(r) => sb.note(
            env,
            "plexus.review",
            vec![
                s("plexus.review.decision", "rejected"),
                s("plexus.review.reviewer", r.reviewer.clone()),
            ],
            out,
        ),
        EngineEvent::ToolCalled(t) => super::tools::called(sb, env, t, out),
        EngineEvent::ToolAnswered(t) => super::tools::answered(sb, env, t, out),
        EngineEvent::SkillActivated(sk) => on_call(
            sb,
            env,
            "plexus.skill_activated",
            vec![
                s("plexus.skill", sk.skill.clone()),
                i("plexus.tokens", sk.tokens),
            ],
            out,
        ),
        EngineEvent::SkillRefused(sk) => on_call(
            sb,
            env,
            "plexus.skill_refused",
            vec![
                s("plexus.skill", sk.skill.clone()),
                s("plexus.reason", sk.reason.clone()),
            ],
            out,
        ),
        EngineEvent::ContextCompressed(c) => on_call(
            sb,
            env,
            "plexus.context_compressed",
            vec![
                i("plexus.before_tokens", c.before_tokens),
                i("plexus.after_tokens", c.after_tokens),
                i("plexus.rounds_summarised", c.rounds_summarised),
                i("plexus.rounds_kept", c.rounds_kept),
            ],
            out,
        ),
        EngineEvent::LoopFinished(l) => on_call(
            sb,
            env,
            "plexus.loop_finished",
            vec![
                s("plexus.loop.stop", l.stop.clone()),
                i("plexus.loop.steps", l.steps),
                i("plexus.loop.tool_calls", l.tool_calls),
                i("plexus.loop.compressions", l.compressions),
                i("plexus.loop.total_tokens", l.total_tokens),
            ],
            out,
        ),
        EngineEvent::DebateStarted(d) => sb.note(
            env,
            "plexus.debate_started",
            vec![
                s("plexus.debate.embedder", d.embedder.clone()),
                i("plexus.debate.max_rounds", d.spec.max_rounds),
            ],
            out,
        ),
        EngineEvent::DebateTurnStarted(t) => super::debate::turn_started(sb, env, t, out),
        EngineEvent::DebateReply(r) => super::debate::reply(sb, env, r, out),
        EngineEvent::DebateOutput(o) => super::debate::output(sb, env, o, out),
        EngineEvent::PositionsCompared(p) => super::debate::compared(sb, env, p, out),
        EngineEvent::HostDecided(h) => super::debate::host(sb, env, h, out),
        EngineEvent::DebateError(e) => sb.note(
            env,
            "plexus.debate_error",
            vec![
                i("plexus.round", e.round),
                s("plexus.message", e.message.clone()),
            ],
            out,
        ),
        EngineEvent::DebateFinished(d) => super::debate::finished(sb, env, d, out),
    }
}

/// A span event on the envelope's model call, else on its task or the run.
fn on_call(
    sb: &mut SpanBuilder,
    env: &Envelope,
    name: &str,
    attributes: Vec<opentelemetry_proto::tonic::common::v1::KeyValue>,
    out: &mut Vec<Span>,
) {
    let inv: Option<&Arc<str>> = env.invocation_id.as_ref();
    match inv.and_then(|i| sb.chats.get_mut(i)) {
        Some(c) => attrs::event(&mut c.span, name, env.ts, attributes),
        None => sb.note(env, name, attributes, out),
    }
}

/// A task's span status from its final status.
fn task_status(
    st: TaskStatus,
    message: Option<&str>,
) -> Option<opentelemetry_proto::tonic::trace::v1::Status> {
    match st {
        TaskStatus::Success | TaskStatus::Partial => attrs::ok(),
        TaskStatus::Pending | TaskStatus::Ready | TaskStatus::Running => None,
        other => attrs::error(
            message
                .map(str::to_string)
                .unwrap_or_else(|| format!("the task ended {}", other.as_str())),
        ),
    }
}

impl SpanBuilder {
    /// Folds one event; spans it ends go to `out`.
    pub fn feed(&mut self, env: &Envelope, out: &mut Vec<Span>) {
        self.last_ts = self.last_ts.max(env.ts);
        fold(self, env, out);
    }
}
