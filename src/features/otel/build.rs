//! The span model: a run's events folded into OpenTelemetry spans, one pure fold used by
//! the live sender and by `export --otlp` alike, so both give the same spans with the
//! same ids (derived from the run id and the task, invocation and tool-call ids).
//!
//! A span is handed out when it ends: a tool call at its answer, a model call at its
//! end, a task at its end, the run at `run_finished`. [`SpanBuilder::finish`] closes
//! whatever the log left open (a run killed mid-way) at the last event's time.

use std::collections::BTreeMap;
use std::sync::Arc;

use opentelemetry_proto::tonic::trace::v1::{span::SpanKind, Span};

use super::attrs::{self, i, s};
use crate::model::event::Envelope;

/// What a model call's cost is computed from (see [`BuildOptions::cost`]).
#[derive(Debug, Clone, PartialEq)]
pub struct ChatUsage {
    /// `gen_ai.provider.name`.
    pub provider: String,
    /// `gen_ai.request.model`.
    pub model: String,
    /// Input tokens.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
}

/// A model call's prompt, for `--otlp-content`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Prompt {
    /// The system prompt.
    pub system: String,
    /// The user prompt as sent (its JSON text, or the text).
    pub user: String,
}

/// Where the prompts of model calls come from (the store; they are not in the events).
pub trait ContentSource: Send {
    /// The prompt of invocation `invocation_id`, when it is known.
    fn prompt(&mut self, invocation_id: &str) -> Option<Prompt>;
}

/// A price lookup: the cost in US dollars of one model call, when known.
pub type CostFn = Box<dyn Fn(&ChatUsage) -> Option<f64> + Send>;

/// What the spans carry beyond the events' facts.
#[derive(Default)]
pub struct BuildOptions {
    /// Prompts and answers (`--otlp-content`): `None` sends none.
    pub content: Option<Box<dyn ContentSource>>,
    /// Fills `plexus.cost.usd` on model-call spans.
    pub cost: Option<CostFn>,
}

/// A model call being built.
pub(super) struct Chat {
    pub span: Span,
    pub input_tokens: u64,
    /// Streamed text, kept only with content on.
    pub output: String,
}

/// The fold from events to spans.
pub struct SpanBuilder {
    pub(super) run: Arc<str>,
    pub(super) trace: Vec<u8>,
    pub(super) opts: BuildOptions,
    pub(super) root: Option<Span>,
    /// Runs started so far (a resumed run starts again): names the root span.
    pub(super) segments: u32,
    pub(super) plan_id: String,
    pub(super) provider: String,
    pub(super) model: String,
    pub(super) tasks: BTreeMap<Arc<str>, Span>,
    /// Task spans opened so far, per task (a reset task runs again).
    pub(super) task_runs: BTreeMap<Arc<str>, u32>,
    pub(super) chats: BTreeMap<Arc<str>, Chat>,
    pub(super) tools: BTreeMap<(Arc<str>, String), Span>,
    pub(super) last_ts: i64,
}

/// The spans of a whole log, in the order they end.
pub fn spans_of<'a>(
    run: &str,
    events: impl IntoIterator<Item = &'a Envelope>,
    opts: BuildOptions,
) -> Vec<Span> {
    let mut b = SpanBuilder::new(run, opts);
    let mut out = Vec::new();
    for env in events {
        b.feed(env, &mut out);
    }
    b.finish(&mut out);
    out
}

/// `gen_ai.provider.name` and `gen_ai.request.model` from a run's provider label
/// (`simulated`, or `kind:model@profile`).
pub fn provider_and_model(label: &str) -> (String, String) {
    match label.split_once(':') {
        Some((kind, rest)) => {
            let model = rest.rsplit_once('@').map_or(rest, |(m, _)| m);
            (kind.to_string(), model.to_string())
        }
        None => (label.to_string(), label.to_string()),
    }
}

impl SpanBuilder {
    /// A builder for run `run`.
    pub fn new(run: &str, opts: BuildOptions) -> SpanBuilder {
        SpanBuilder {
            run: Arc::from(run),
            trace: attrs::trace_id(run),
            opts,
            root: None,
            segments: 0,
            plan_id: String::new(),
            provider: "unknown".into(),
            model: "unknown".into(),
            tasks: BTreeMap::new(),
            task_runs: BTreeMap::new(),
            chats: BTreeMap::new(),
            tools: BTreeMap::new(),
            last_ts: 0,
        }
    }

    /// Closes every span still open at the last event's time (the log ends mid-run).
    pub fn finish(&mut self, out: &mut Vec<Span>) {
        let ts = self.last_ts;
        self.close_all(ts, "the log ends before this ended", out);
        if let Some(mut root) = self.root.take() {
            root.end_time_unix_nano = attrs::nanos(ts);
            if root.status.is_none() {
                root.status = attrs::error("the log ends before the run's end");
            }
            out.push(root);
        }
    }

    /// A new span of this run's trace.
    pub(super) fn span(
        &self,
        id: Vec<u8>,
        parent: Vec<u8>,
        name: String,
        kind: SpanKind,
        ts: i64,
        attributes: Vec<opentelemetry_proto::tonic::common::v1::KeyValue>,
    ) -> Span {
        Span {
            trace_id: self.trace.clone(),
            span_id: id,
            parent_span_id: parent,
            name,
            kind: kind as i32,
            start_time_unix_nano: attrs::nanos(ts),
            end_time_unix_nano: attrs::nanos(ts),
            attributes,
            ..Span::default()
        }
    }

    /// Opens the run's root span (a resumed run opens another in the same trace).
    pub(super) fn open_root(&mut self, ts: i64, out: &mut Vec<Span>) {
        if let Some(mut old) = self.root.take() {
            self.close_all(ts, "the run stopped before this ended", out);
            old.end_time_unix_nano = attrs::nanos(ts);
            old.status = attrs::error("the run stopped before its end");
            out.push(old);
        }
        self.segments += 1;
        let id = attrs::span_id(&self.run, &["run", &self.segments.to_string()]);
        let name = format!("invoke_workflow {}", self.plan_id);
        let attributes = vec![
            s("gen_ai.operation.name", "invoke_workflow"),
            s("openinference.span.kind", "CHAIN"),
            s("plexus.run.id", self.run.to_string()),
            s("plexus.plan.id", self.plan_id.clone()),
            i("plexus.run.part", self.segments),
        ];
        self.root = Some(self.span(id, Vec::new(), name, SpanKind::Internal, ts, attributes));
    }

    /// The root span's id, opening an implicit root when the log has none yet.
    pub(super) fn root_id(&mut self, ts: i64, out: &mut Vec<Span>) -> Vec<u8> {
        if self.root.is_none() {
            self.open_root(ts, out);
        }
        self.root
            .as_ref()
            .map(|r| r.span_id.clone())
            .unwrap_or_default()
    }

    /// The open span of `task`, opened now (as `agent`) when it has none.
    pub(super) fn task_span(
        &mut self,
        task: &Arc<str>,
        agent: Option<&Arc<str>>,
        ts: i64,
        out: &mut Vec<Span>,
    ) -> &mut Span {
        let mut fresh = None;
        if !self.tasks.contains_key(task) {
            let parent = self.root_id(ts, out);
            let n = self.task_runs.entry(task.clone()).or_insert(0);
            *n += 1;
            let id = attrs::span_id(&self.run, &["task", task, &n.to_string()]);
            let agent = agent.map_or("agent", |a| a);
            let attributes = vec![
                s("gen_ai.operation.name", "invoke_agent"),
                s("gen_ai.agent.name", agent),
                s("openinference.span.kind", "AGENT"),
                s("plexus.task.id", task.to_string()),
            ];
            let span = self.span(
                id,
                parent,
                format!("invoke_agent {agent}"),
                SpanKind::Internal,
                ts,
                attributes,
            );
            fresh = Some(span);
        }
        self.tasks
            .entry(task.clone())
            .or_insert_with(|| fresh.unwrap_or_default())
    }

    /// Opens the span of model call `inv` under its task.
    pub(super) fn open_chat(&mut self, env: &Envelope, inv: &Arc<str>, out: &mut Vec<Span>) {
        let parent = match &env.task_id {
            Some(t) => self
                .task_span(t, env.agent.as_ref(), env.ts, out)
                .span_id
                .clone(),
            None => self.root_id(env.ts, out),
        };
        if let Some(old) = self.chats.remove(inv) {
            // The same invocation started twice: the first never ended.
            self.end_chat(old, env.ts, Some("restarted"), out);
        }
        let id = attrs::span_id(&self.run, &["call", inv]);
        let attributes = vec![
            s("gen_ai.operation.name", "chat"),
            s("gen_ai.provider.name", self.provider.clone()),
            s("gen_ai.request.model", self.model.clone()),
            s("openinference.span.kind", "LLM"),
            s("plexus.invocation.id", inv.to_string()),
        ];
        let name = format!("chat {}", self.model);
        let span = self.span(id, parent, name, SpanKind::Client, env.ts, attributes);
        self.chats.insert(
            inv.clone(),
            Chat {
                span,
                input_tokens: 0,
                output: String::new(),
            },
        );
    }

    /// Ends a model call's span; `lost` names why it ended without an answer.
    pub(super) fn end_chat(
        &mut self,
        mut chat: Chat,
        ts: i64,
        lost: Option<&str>,
        out: &mut Vec<Span>,
    ) {
        let inv = attrs::attr_str(&chat.span, "plexus.invocation.id");
        let open: Vec<_> = self
            .tools
            .keys()
            .filter(|(i, _)| **i == *inv)
            .cloned()
            .collect();
        for key in open {
            if let Some(mut t) = self.tools.remove(&key) {
                t.end_time_unix_nano = attrs::nanos(ts);
                t.status = attrs::error("the model call ended before the tool answered");
                out.push(t);
            }
        }
        if let Some(why) = lost {
            attrs::set(&mut chat.span, s("error.type", why));
            chat.span.status = attrs::error(format!("the call ended without an answer: {why}"));
        }
        chat.span.end_time_unix_nano = attrs::nanos(ts);
        out.push(chat.span);
    }

    /// Ends a task's span with its status.
    pub(super) fn end_task(
        &mut self,
        task: &Arc<str>,
        ts: i64,
        out: &mut Vec<Span>,
    ) -> Option<Span> {
        let mut span = self.tasks.remove(task)?;
        let calls: Vec<_> = self
            .chats
            .iter()
            .filter(|(_, c)| c.span.parent_span_id == span.span_id)
            .map(|(k, _)| k.clone())
            .collect();
        for inv in calls {
            if let Some(c) = self.chats.remove(&inv) {
                self.end_chat(c, ts, Some("unfinished"), out);
            }
        }
        span.end_time_unix_nano = attrs::nanos(ts);
        Some(span)
    }

    /// Closes every open tool, model-call and task span at `ts`.
    pub(super) fn close_all(&mut self, ts: i64, why: &str, out: &mut Vec<Span>) {
        for (_, mut t) in std::mem::take(&mut self.tools) {
            t.end_time_unix_nano = attrs::nanos(ts);
            t.status = attrs::error(why);
            out.push(t);
        }
        for (_, c) in std::mem::take(&mut self.chats) {
            self.end_chat(c, ts, Some("unfinished"), out);
        }
        let tasks: Vec<_> = self.tasks.keys().cloned().collect();
        for t in tasks {
            if let Some(mut span) = self.end_task(&t, ts, out) {
                span.status = attrs::error(why);
                out.push(span);
            }
        }
    }

    /// Whether prompts and answers are sent.
    pub(super) fn content(&self) -> bool {
        self.opts.content.is_some()
    }

    /// A span event on the open span of the envelope's task, or on the root span.
    pub(super) fn note(
        &mut self,
        env: &Envelope,
        name: &str,
        mut attributes: Vec<opentelemetry_proto::tonic::common::v1::KeyValue>,
        out: &mut Vec<Span>,
    ) {
        if let Some(task) = &env.task_id {
            if let Some(span) = self.tasks.get_mut(task) {
                attrs::event(span, name, env.ts, attributes);
                return;
            }
            attributes.push(s("plexus.task.id", task.to_string()));
        }
        self.root_id(env.ts, out);
        if let Some(root) = self.root.as_mut() {
            attrs::event(root, name, env.ts, attributes);
        }
    }
}
