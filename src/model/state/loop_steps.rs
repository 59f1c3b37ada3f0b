//! A tool-using loop in a task's output: each step's action, observation, skill
//! activation or refusal, compression and the loop's end, as marker lines between the
//! streamed thoughts.

use std::sync::Arc;

use super::loop_view::{observation_preview, one_line};
use super::ops::{keeps_output, marker};
use super::view::RunState;
use crate::model::event::EngineEvent;

/// Most characters of an error's reason its output line shows (the step's popup has it
/// all).
const REASON_CHARS: usize = 400;

/// Most characters of another observation its output line shows.
const OBSERVATION_CHARS: usize = 160;

/// Folds one loop event of task `i` (of invocation `invocation`); false for any other
/// event.
pub(super) fn fold(
    st: &mut RunState,
    i: usize,
    invocation: Option<&Arc<str>>,
    event: &EngineEvent,
) -> bool {
    // Kept with the output: a fold for one task's text keeps only that task's loops.
    if let Some(inv) = invocation.filter(|_| keeps_output(st, i)) {
        let t = Arc::make_mut(&mut st.tasks[i]);
        let prompt_tokens = t.prompt_tokens;
        super::slim::edit(&mut t.loops, |loops| {
            super::loop_view::fold(loops, inv, prompt_tokens, event)
        });
    }
    let text = match event {
        EngineEvent::ToolCalled(c) => format!(
            "▸ step {} · action: {}({})",
            c.step,
            c.tool,
            one_line(&c.input.to_string(), 160)
        ),
        EngineEvent::ToolAnswered(a) => format!(
            "◂ observation{} · {} · {} · {:.0} ms · {} tokens{}{}: {}",
            if a.is_error { " (error)" } else { "" },
            a.tool,
            serde_json::to_value(a.output_level)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
            a.duration_ms,
            a.output_tokens,
            if a.retries > 0 {
                format!(" · {} retries", a.retries)
            } else {
                String::new()
            },
            if a.cached { " · cached" } else { "" },
            observation_line(a)
        ),
        EngineEvent::SkillActivated(s) => format!(
            "✦ skill {} activated ({}, {} tokens)",
            s.skill,
            s.chain.join(" → "),
            s.tokens
        ),
        EngineEvent::SkillRefused(s) => format!("⚠ skill {} refused: {}", s.skill, s.reason),
        EngineEvent::ContextCompressed(c) => format!(
            "⇣ context compressed: {} → {} tokens ({} rounds summarised, {} kept)",
            c.before_tokens, c.after_tokens, c.rounds_summarised, c.rounds_kept
        ),
        EngineEvent::LoopFinished(f) => format!(
            "■ loop ended ({}): {} steps, {} tool calls, {} compressions, {} tokens",
            f.stop, f.steps, f.tool_calls, f.compressions, f.total_tokens
        ),
        _ => return false,
    };
    marker(st, i, &text);
    true
}

/// An observation's preview for its output line: an error's reason, a spilled one's
/// file, and how many more lines Enter shows.
fn observation_line(a: &crate::model::event::ToolAnswered) -> String {
    let max = if a.is_error {
        REASON_CHARS
    } else {
        OBSERVATION_CHARS
    };
    let mut out = observation_preview(&a.observation, a.is_error, max);
    let lines = a
        .observation
        .lines()
        .filter(|l| !l.trim().is_empty())
        .count();
    if a.data_file.is_some() {
        out.push_str(" (stored in a file · Enter opens the step)");
    } else if out.ends_with('…') || (!a.is_error && lines > 1) {
        out.push_str(&format!(" ({lines} lines · Enter opens the step)"));
    }
    out
}
