//! A tool-using loop in a task's output: each step's action, observation, skill
//! activation or refusal, compression and the loop's end, as marker lines between the
//! streamed thoughts.

use super::ops::marker;
use super::view::RunState;
use crate::event::EngineEvent;

/// The first line of `text`, cut to `max` characters.
fn first_line(text: &str, max: usize) -> String {
    let line = text.lines().next().unwrap_or_default();
    let mut out: String = line.chars().take(max).collect();
    if line.chars().count() > max || text.lines().nth(1).is_some() {
        out.push('…');
    }
    out
}

/// Folds one loop event of task `i`; false for any other event.
pub(super) fn fold(st: &mut RunState, i: usize, event: &EngineEvent) -> bool {
    let text = match event {
        EngineEvent::ToolCalled(c) => format!(
            "▸ step {} · action: {}({})",
            c.step,
            c.tool,
            first_line(&c.input.to_string(), 80)
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
            first_line(&a.observation, 100)
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
