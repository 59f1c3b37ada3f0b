//! The tool-using loop of one invocation (Thought → Action → Observation): the model is
//! called with the tools offered and the turns so far; while it asks for tools, each
//! call is run and its observation handed back; its first answer without a tool call
//! is the final answer, parsed and graded like any other. Bounded by the task's step
//! limit and token budget; every step is an event, so the TUI, replay and rerun show
//! and reproduce it.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use serde_json::Value;

use super::context::prompt::thousands;
use super::emit::Scope;
use super::run_ctx::RunCtx;
use super::sink::StreamSink;
use crate::base::conversation::count::message_tokens;
use crate::base::conversation::{ContextManager, Conversation, Pinned};
pub use crate::base::loop_events::RecordedStep;
use crate::base::protocol::messages::{
    ContentBlock, Message, MessageType, ReactTurns, ToolDefinition,
};
use crate::base::protocol::AgentRequest;
use crate::data::provider::{ProviderError, ToolCall};
use crate::model::event::{ContextCompressed, EngineEvent, LoopFinished, ToolAnswered, ToolCalled};
use crate::model::plan::react::ReactSetup;

/// What a tool call gave: the events to log before its answer (skill activations and
/// refusals), and the answer itself (the observation the model sees).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutcome {
    /// Events that come first.
    pub events: Vec<EngineEvent>,
    /// The observation and the call's metrics.
    pub answered: ToolAnswered,
}

/// A boxed future of a tool call.
pub type ToolFuture<'a> = Pin<Box<dyn Future<Output = ToolOutcome> + Send + 'a>>;

/// The tools (and skills) of one task's loop.
pub trait Toolbox: Send + Sync {
    /// The tools offered to the model.
    fn definitions(&self) -> Vec<ToolDefinition>;

    /// Runs one call of step `step`; `context_usage` is how full the conversation is
    /// (0–1), which decides the output level above 80%.
    fn call<'a>(&'a self, step: u32, call: &'a ToolCall, context_usage: f64) -> ToolFuture<'a>;
}

/// What the loop ended with.
pub struct LoopResult {
    /// The final call's result, shaped as a single call's (a step that ran out of time
    /// is an elapsed timeout, as for a single call).
    pub result: crate::data::provider::call::Outcome,
    /// Every step, for the recording (the totals are in the `loop_finished` event).
    pub steps: Vec<RecordedStep>,
    /// What the provider reported over every step, summed (`None` when no step
    /// reported usage).
    pub usage: Option<crate::data::provider::Usage>,
    /// The loop stopped before a step because the run's money budget was spent.
    pub budget_stopped: bool,
}

/// What a loop's steps have cost so far, charged step by step (so the run's budget sees
/// each step) and readable by the worker even when the loop is stopped halfway.
#[derive(Debug, Default)]
pub struct LoopMeter {
    cost: std::sync::Mutex<Option<f64>>,
    /// Prompt tokens of every step sent, and the model's text over every step.
    tokens: std::sync::Mutex<(u64, u64)>,
}

impl LoopMeter {
    /// Charges one step to the run and adds its cost (`None`: the model has no price).
    fn charge(
        &self,
        ctx: &RunCtx,
        reported: Option<crate::data::provider::Usage>,
        counted: crate::base::cost::CallTokens,
    ) {
        if let Some(c) = ctx.money.charge(reported, counted) {
            if let Ok(mut m) = self.cost.lock() {
                *m = Some(m.unwrap_or(0.0) + c);
            }
        }
    }

    /// The steps' cost so far (`None` without a price).
    pub fn cost(&self) -> Option<f64> {
        self.cost.lock().map_or(None, |c| *c)
    }

    /// Adds a step's prompt (when it is sent) or its text (when it ends).
    fn add_tokens(&self, prompt: u64, output: u64) {
        if let Ok(mut t) = self.tokens.lock() {
            t.0 = t.0.saturating_add(prompt);
            t.1 = t.1.saturating_add(output);
        }
    }

    /// The prompt tokens of every step sent so far and the model's text over them
    /// (`(0, 0)` before the first step, and for a call that is not a loop).
    pub fn tokens(&self) -> (u64, u64) {
        self.tokens.lock().map_or((0, 0), |t| *t)
    }
}

/// Adds one step's reported usage to the loop's.
fn add_usage(
    sum: &mut Option<crate::data::provider::Usage>,
    step: Option<crate::data::provider::Usage>,
) {
    if let Some(u) = step {
        let s = sum.get_or_insert_with(Default::default);
        s.prompt_tokens = s.prompt_tokens.saturating_add(u.prompt_tokens);
        s.completion_tokens = s.completion_tokens.saturating_add(u.completion_tokens);
        s.cached_prompt_tokens = s
            .cached_prompt_tokens
            .saturating_add(u.cached_prompt_tokens);
    }
}

/// Runs the loop for `base` (the task's request without tools), each step within
/// `step_timeout`. Thoughts stream into `sink` like any output and are taken out of its
/// text, so that only the final answer is parsed.
#[allow(clippy::too_many_arguments)]
pub(super) async fn run_loop(
    ctx: &RunCtx,
    scope: &Scope,
    setup: &ReactSetup,
    toolbox: &dyn Toolbox,
    base: &AgentRequest,
    window: u64,
    attempt: u32,
    sink: &mut StreamSink<'_>,
    step_timeout: Duration,
    meter: &LoopMeter,
) -> LoopResult {
    let mut lp = Loop::new(ctx, scope, setup, toolbox, base, window, meter);
    for step in 1..=setup.max_steps {
        if let Some(stopped) = lp.stop_before(step) {
            return stopped;
        }
        lp.compress();
        let conversation = lp.conv.total_tokens() + lp.tools_tokens;
        if let Some(over) = lp.over_limits(step, conversation) {
            return over;
        }
        lp.meter.add_tokens(conversation, 0);
        let out = lp.call(step, attempt, sink, step_timeout).await;
        lp.finished.steps = step;
        lp.finished.total_tokens += conversation;
        lp.finished.input_tokens += conversation;
        let out = match out {
            Ok(Ok(out)) if !out.tool_calls.is_empty() => out,
            other => return lp.final_answer(other, conversation, sink),
        };
        lp.tool_step(step, conversation, out, sink).await;
    }
    let message = format!(
        "the tool-using loop used its {} steps without a final answer",
        setup.max_steps
    );
    lp.end("step_limit", message)
}

/// One loop's state, carried from step to step.
struct Loop<'a> {
    ctx: &'a RunCtx,
    scope: &'a Scope,
    setup: &'a ReactSetup,
    toolbox: &'a dyn Toolbox,
    base: &'a AgentRequest,
    window: u64,
    meter: &'a LoopMeter,
    react: ReactTurns,
    /// The conversation as the model sees it.
    conv: Conversation,
    manager: ContextManager,
    steps: Vec<RecordedStep>,
    ids_used: std::collections::HashSet<String>,
    finished: LoopFinished,
    /// The tool schemas' tokens, sent with every step.
    tools_tokens: u64,
    pins: Vec<Pinned>,
    reported: Option<crate::data::provider::Usage>,
}

impl<'a> Loop<'a> {
    /// The state before the first step.
    fn new(
        ctx: &'a RunCtx,
        scope: &'a Scope,
        setup: &'a ReactSetup,
        toolbox: &'a dyn Toolbox,
        base: &'a AgentRequest,
        window: u64,
        meter: &'a LoopMeter,
    ) -> Self {
        let react = ReactTurns {
            tools: toolbox.definitions(),
            turns: Vec::new(),
            step: 0,
        };
        // The conversation as the model sees it, counted exactly and compressed at 80% of
        // the agent's window: the first request is its head, always kept.
        let mut conv = Conversation::new(ctx.config.tokens, base.system_prompt.clone());
        conv.push(Message::user_text(
            serde_json::to_string(&base.user_prompt).unwrap_or_default(),
        ));
        let mut manager = ContextManager::new(window.max(1));
        let tools_tokens = ctx
            .config
            .tokens
            .count(&serde_json::to_string(&react.tools).unwrap_or_default());
        manager.fixed_tokens = tools_tokens;
        Loop {
            ctx,
            scope,
            setup,
            toolbox,
            base,
            window,
            meter,
            react,
            conv,
            manager,
            steps: Vec::new(),
            ids_used: std::collections::HashSet::new(),
            finished: LoopFinished {
                stop: "answer".into(),
                steps: 0,
                tool_calls: 0,
                compressions: 0,
                total_tokens: 0,
                input_tokens: 0,
                output_tokens: 0,
                answer_tokens: None,
            },
            tools_tokens,
            pins: Vec::new(),
            reported: None,
        }
    }

    /// Logs one loop event (a failure to log is logged, the loop goes on).
    fn emit(&self, e: EngineEvent) {
        if let Err(err) = self.ctx.emitter.emit(self.scope, e) {
            tracing::error!("cannot log a loop event: {err}");
        }
    }

    /// The loop's result so far with `result` (its steps taken out of the state).
    fn result(&mut self, result: crate::data::provider::call::Outcome) -> LoopResult {
        loop_result(result, std::mem::take(&mut self.steps), self.reported)
    }

    /// Ends the loop with `stop`: logs `loop_finished`, the result a permanent failure
    /// saying `message`.
    fn end(&mut self, stop: &str, message: String) -> LoopResult {
        self.finished.stop = stop.into();
        self.emit(EngineEvent::LoopFinished(self.finished.clone()));
        self.result(Ok(Err(ProviderError::Permanent(message))))
    }

    /// The loop's end before step `step` when the run's log has failed or its money
    /// budget is spent.
    fn stop_before(&mut self, step: u32) -> Option<LoopResult> {
        // No new step once the run's log cannot be written: its calls would be paid and
        // never recorded.
        if let Some(why) = self.ctx.emitter.writer().failure() {
            self.finished.stop = "log_failed".into();
            return Some(self.result(Ok(Err(ProviderError::Permanent(format!(
                "the run's log cannot be written: {why}"
            ))))));
        }
        // No new step once the run's money budget is spent (the first was let through
        // when the invocation started): the task waits for a resume.
        if step > 1 && self.ctx.money.reached() {
            let mut r = self.end("money_budget", "the run's money budget was reached".into());
            r.budget_stopped = true;
            return Some(r);
        }
        None
    }

    /// Compresses the conversation when it is due, and logs a compression that
    /// summarised rounds.
    fn compress(&mut self) {
        // The whole prompt (system, messages, tool schemas) is counted before each call:
        // at 80% of the window the older rounds are summarised, the pinned texts kept.
        if self.manager.should_compress(&self.conv) {
            self.manager.pinned.clone_from(&self.pins);
        }
        if let Some(c) = self
            .manager
            .compress_to_fit(&mut self.conv)
            .filter(|c| c.rounds_summarised > 0)
        {
            self.finished.compressions += 1;
            self.emit(EngineEvent::ContextCompressed(ContextCompressed {
                before_tokens: c.before_tokens,
                after_tokens: c.after_tokens,
                rounds_summarised: u32::try_from(c.rounds_summarised).unwrap_or(u32::MAX),
                rounds_kept: u32::try_from(c.rounds_kept).unwrap_or(u32::MAX),
            }));
        }
    }

    /// The loop's end when step `step`'s prompt of `conversation` tokens is over the
    /// agent's window or the loop's token budget.
    fn over_limits(&mut self, step: u32, conversation: u64) -> Option<LoopResult> {
        if conversation > self.window {
            let system = self.conv.system_tokens();
            let message = format!(
                    "task `{}`: the prompt of step {step} for {} is {} tokens{} (system prompt {}, messages {}, tool schemas {}), over the agent's input limit of {} tokens; nothing was sent to the provider",
                    self.base.task_id,
                    self.base.agent,
                    thousands(conversation),
                    if self.finished.compressions > 0 { " after compression" } else { "" },
                    thousands(system),
                    thousands(self.conv.total_tokens().saturating_sub(system)),
                    thousands(self.tools_tokens),
                    thousands(self.window),
            );
            return Some(self.end("context_window", message));
        }
        if self.finished.total_tokens + conversation > self.setup.token_budget {
            let message = format!(
                "the tool-using loop would pass its token budget of {} at step {step}",
                self.setup.token_budget
            );
            return Some(self.end("token_budget", message));
        }
        None
    }

    /// Calls the model for step `step` with the conversation so far.
    async fn call(
        &mut self,
        step: u32,
        attempt: u32,
        sink: &mut StreamSink<'_>,
        step_timeout: Duration,
    ) -> crate::data::provider::call::Outcome {
        self.react.turns = self.conv.messages()[1..].to_vec();
        let mut request = self.base.clone();
        self.react.step = step;
        request.set_react(&self.react);
        let limits = crate::data::provider::call::Limits::for_call(
            self.ctx.provider.as_ref(),
            step_timeout,
            request.constraints.max_tokens,
        );
        crate::data::provider::call::attempt(
            self.ctx.provider.as_ref(),
            std::sync::Arc::new(request),
            attempt,
            sink,
            &limits,
        )
        .await
    }

    /// Ends the loop with the final answer (or a failure) of a step whose prompt was
    /// `conversation` tokens: it stays in the sink, to be parsed. Its last chunks are
    /// logged before `loop_finished`, so the log reads the whole answer, then the end.
    fn final_answer(
        &mut self,
        other: crate::data::provider::call::Outcome,
        conversation: u64,
        sink: &mut StreamSink<'_>,
    ) -> LoopResult {
        sink.flush();
        // A step the provider failed (an error, a timeout) ends the loop without an
        // answer, and the loop's end says so.
        if !matches!(other, Ok(Ok(_))) {
            self.finished.stop = "step_failed".into();
        }
        self.steps.push(RecordedStep {
            text: sink.text.clone(),
            ..RecordedStep::default()
        });
        let answer_tokens = self.ctx.config.tokens.count(&sink.text);
        let step_usage = match &other {
            Ok(Ok(o)) => o.usage,
            _ => None,
        };
        // A step the provider refused before answering (no usage, no text) is
        // not billed.
        let answered = step_usage.is_some() || matches!(other, Ok(Ok(_))) || answer_tokens > 0;
        self.meter.charge(
            self.ctx,
            step_usage,
            if answered {
                crate::base::cost::CallTokens {
                    input: conversation,
                    cached_input: 0,
                    output: answer_tokens,
                }
            } else {
                crate::base::cost::CallTokens::default()
            },
        );
        self.meter.add_tokens(0, answer_tokens);
        self.finished.total_tokens += answer_tokens;
        self.finished.output_tokens += answer_tokens;
        self.finished.answer_tokens = Some(answer_tokens);
        self.emit(EngineEvent::LoopFinished(self.finished.clone()));
        let mut result = other;
        if let Ok(Ok(o)) = &mut result {
            add_usage(&mut self.reported, o.usage);
            o.usage = self.reported;
        }
        self.result(result)
    }

    /// A step whose reply asks for tools: charges its thought, runs each call and adds
    /// the round (the assistant's message, the results) to the conversation.
    async fn tool_step(
        &mut self,
        step: u32,
        conversation: u64,
        mut out: crate::data::provider::ProviderOutput,
        sink: &mut StreamSink<'_>,
    ) {
        add_usage(&mut self.reported, out.usage);
        super::call_ids::own_ids(&mut out.tool_calls, step, &mut self.ids_used);
        let thought = sink.take_text();
        let thought_tokens = self.ctx.config.tokens.count(&thought);
        self.meter.charge(
            self.ctx,
            out.usage,
            crate::base::cost::CallTokens {
                input: conversation,
                cached_input: 0,
                output: thought_tokens,
            },
        );
        self.meter.add_tokens(0, thought_tokens);
        self.finished.total_tokens += thought_tokens;
        self.finished.output_tokens += thought_tokens;
        let (assistant, inputs) = assistant_message(&thought, &out.tool_calls);
        let message_tokens = message_tokens(self.conv.counter(), &assistant);
        let mut recorded = RecordedStep {
            text: thought.clone(),
            tool_calls: out.tool_calls.clone(),
            answers: Vec::new(),
        };
        let mut results = Vec::new();
        let mut answered_tokens = 0u64;
        for (call, input) in out.tool_calls.iter().zip(inputs) {
            self.emit(EngineEvent::ToolCalled(ToolCalled {
                step,
                tool_call_id: call.id.clone(),
                tool: call.name.clone(),
                input,
                thought: thought.clone(),
                message_tokens: Some(message_tokens),
            }));
            let a = self.run_tool(step, call, answered_tokens).await;
            answered_tokens += a.output_tokens;
            self.finished.tool_calls += 1;
            results.push(ContentBlock::tool_result(
                &call.id,
                &a.observation,
                a.is_error,
            ));
            recorded.answers.push(a.clone());
            self.emit(EngineEvent::ToolAnswered(a));
        }
        self.conv.push(assistant);
        self.conv.push(Message {
            role: MessageType::User,
            content: results,
        });
        self.steps.push(recorded);
    }

    /// Runs one call of step `step` (the reply's results so far being `answered_tokens`),
    /// logs the events that come before its answer and pins its observation.
    async fn run_tool(&mut self, step: u32, call: &ToolCall, answered_tokens: u64) -> ToolAnswered {
        // The reply's calls share the window: the results already answered count
        // against it for the next call (the 80 % brief rule over their sum).
        let usage = (self.conv.total_tokens() + self.tools_tokens + answered_tokens) as f64
            / self.window.max(1) as f64;
        let outcome = self.toolbox.call(step, call, usage).await;
        let mut label = format!("latest {} result", call.name);
        for e in outcome.events {
            if let EngineEvent::SkillActivated(s) = &e {
                label = format!("active skill {}", s.skill);
            }
            self.emit(e);
        }
        let a = outcome.answered;
        if a.tool != crate::data::provider::sim_react::ACTIVATE_SKILL
            || label.starts_with("active skill")
        {
            pin(&mut self.pins, label, &a.tool_call_id, &a.observation);
        }
        a
    }
}

/// The step's assistant message (its thought and every call), counted as the
/// conversation counts it, so the log can list the conversation's messages; and each
/// call's input as JSON.
fn assistant_message(thought: &str, calls: &[ToolCall]) -> (Message, Vec<Value>) {
    let inputs: Vec<Value> = calls
        .iter()
        .map(|c| arguments_of(&c.arguments).unwrap_or_else(|_| Value::String(c.arguments.clone())))
        .collect();
    let mut assistant = Vec::new();
    if !thought.is_empty() {
        assistant.push(ContentBlock::text(thought.to_string()));
    }
    for (call, input) in calls.iter().zip(&inputs) {
        assistant.push(ContentBlock::tool_use(&call.id, &call.name, input.clone()));
    }
    let assistant = Message {
        role: MessageType::Assistant,
        content: assistant,
    };
    (assistant, inputs)
}

/// A tool call's arguments as JSON: an object, or nothing (`""`, which some servers
/// send for a call without parameters, is `{}`); the parse error said exactly otherwise.
pub fn arguments_of(raw: &str) -> Result<Value, String> {
    if raw.trim().is_empty() {
        return Ok(Value::Object(Default::default()));
    }
    match serde_json::from_str::<Value>(raw) {
        Ok(v @ Value::Object(_)) => Ok(v),
        Ok(other) => Err(format!(
            "the arguments must be a JSON object of the tool's parameters, not {}",
            crate::base::json_text::kind_of(&other)
        )),
        Err(e) => Err(format!(
            "the arguments are not valid JSON: {e}; they were {:?}",
            crate::base::text::cut::cut_chars(raw, 200)
        )),
    }
}

/// The loop's result with its totals.
fn loop_result(
    result: crate::data::provider::call::Outcome,
    steps: Vec<RecordedStep>,
    usage: Option<crate::data::provider::Usage>,
) -> LoopResult {
    LoopResult {
        result,
        steps,
        usage,
        budget_stopped: false,
    }
}

/// Keeps `text` as the pinned text labelled `label` (replacing the previous one).
fn pin(pins: &mut Vec<Pinned>, label: String, call_id: &str, text: &str) {
    let p = Pinned {
        label,
        call_id: call_id.to_string(),
        text: text.to_string(),
    };
    match pins.iter_mut().find(|q| q.label == p.label) {
        Some(q) => *q = p,
        None => pins.push(p),
    }
}
