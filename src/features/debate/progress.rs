//! One progress line per debate event worth telling (headless progress, `plexus log`).
//! What the model wrote (the question, a conclusion) is cut at a word to keep the line
//! short; a reason (why the host decided, why a turn or the session failed) is whole.

use crate::base::text::cut::cut_chars;
use crate::base::text::sanitize::sanitize;
use crate::model::event::EngineEvent;

/// `s` made safe for the terminal and cut at a word to `n` characters.
fn cut(s: &str, n: usize) -> String {
    cut_chars(&sanitize(s), n).into_owned()
}

/// The progress line of a debate event, if it deserves one.
pub fn line(e: &EngineEvent) -> Option<String> {
    match e {
        EngineEvent::DebateStarted(d) => Some(format!(
            "debate: {} (at most {} rounds, similarity by {})",
            cut(&d.spec.question, 80),
            d.spec.max_rounds,
            d.embedder
        )),
        EngineEvent::DebateOutput(o) => {
            let conclusion = o
                .output
                .as_ref()
                .and_then(|v| v.pointer("/metadata/position/conclusion"))
                .and_then(|v| v.as_str())
                .unwrap_or("");
            let outcome = serde_json::to_value(o.outcome)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default();
            // A closing answer lists uncertainties and worst cases: shown as such.
            let conclusion = if o.closing {
                o.output
                    .as_ref()
                    .and_then(|v| v.get("content"))
                    .and_then(|v| v.as_str())
                    .unwrap_or(conclusion)
            } else {
                conclusion
            };
            Some(format!(
                "round {} {}{}: {}{}{}",
                o.round,
                o.agent,
                if o.closing { " (closing)" } else { "" },
                outcome,
                if o.reused {
                    " (previous output reused)"
                } else {
                    ""
                },
                if conclusion.is_empty() {
                    String::new()
                } else {
                    format!(" — {}", cut(conclusion, 70))
                }
            ))
        }
        EngineEvent::PositionsCompared(p) => Some(format!(
            "round {}: mean similarity {:.2} ({})",
            p.round, p.mean_similarity, p.method
        )),
        EngineEvent::HostDecided(h) => {
            let action = h
                .output
                .pointer("/metadata/decision/action")
                .and_then(|v| v.as_str())
                .unwrap_or("?");
            let reason = h
                .output
                .pointer("/metadata/decision/reason")
                .and_then(|v| v.as_str())
                .unwrap_or("");
            Some(format!(
                "round {} host: {action} — {}",
                h.round,
                sanitize(reason)
            ))
        }
        EngineEvent::DebateError(e) => Some(format!("round {}: {}", e.round, sanitize(&e.message))),
        EngineEvent::DebateFinished(f) => Some(format!(
            "debate ended {} after {} round(s): {}",
            f.status,
            f.rounds,
            sanitize(&f.reason)
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::protocol::debate::{AgentRole, SessionStatus};
    use crate::model::event::debate::{
        DebateErrorLogged, DebateFinished, DebateOutput, TurnOutcome,
    };

    #[test]
    fn a_long_reason_is_kept_whole() {
        let reason = format!(
            "no valid position after round 1 (neither the planner nor the critic gave a valid output): {}",
            "planner failed 3 time(s) in round 1: transient provider error: local: HTTP 429 Too Many Requests from http://127.0.0.1:1/v1/chat/completions: slow down"
        );
        let line = line(&EngineEvent::DebateFinished(DebateFinished {
            status: SessionStatus::Failed,
            rounds: 1,
            consensus_trend: Vec::new(),
            reason: reason.clone(),
        }))
        .expect("a line");
        assert_eq!(
            line,
            format!("debate ended failed after 1 round(s): {reason}")
        );
        let line = line_of_error(&reason);
        assert!(line.ends_with("slow down"), "{line}");
    }

    fn line_of_error(message: &str) -> String {
        line(&EngineEvent::DebateError(DebateErrorLogged {
            round: 1,
            error: serde_json::json!({"error": "agent_failed"}),
            message: message.into(),
        }))
        .expect("a line")
    }

    #[test]
    fn a_long_conclusion_is_cut_at_a_word() {
        let conclusion = "Study four hours a day with weekly mock tests and two timed essays every week until the exam";
        let line = line(&EngineEvent::DebateOutput(DebateOutput {
            round: 2,
            agent: AgentRole::Planner,
            outcome: TurnOutcome::Valid,
            attempts: 1,
            closing: false,
            output: Some(serde_json::json!({"metadata": {"position": {"conclusion": conclusion}}})),
            reused: false,
            output_tokens: 10,
            duration_ms: 1,
        }))
        .expect("a line");
        let shown = line.split(" — ").nth(1).expect("the conclusion");
        assert!(
            shown.ends_with('…') && shown.chars().count() <= 70,
            "{shown}"
        );
        let kept = shown.trim_end_matches('…');
        assert!(conclusion.starts_with(kept), "{shown}");
        assert_eq!(
            &conclusion[kept.len()..kept.len() + 1],
            " ",
            "cut at a word: {shown}"
        );
    }
}
