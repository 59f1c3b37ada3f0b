//! One progress line per debate event worth telling (headless progress, `plexus log`).

use crate::event::EngineEvent;
use crate::ui::sanitize::sanitize;

fn cut(s: &str, n: usize) -> String {
    let s = sanitize(s);
    let mut out: String = s.chars().take(n).collect();
    if s.chars().count() > n {
        out.push('…');
    }
    out
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
            Some(format!(
                "round {} {}: {}{}{}",
                o.round,
                o.agent,
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
                cut(reason, 90)
            ))
        }
        EngineEvent::DebateError(e) => Some(format!("round {}: {}", e.round, cut(&e.message, 100))),
        EngineEvent::DebateFinished(f) => Some(format!(
            "debate ended {} after {} round(s): {}",
            f.status,
            f.rounds,
            cut(&f.reason, 100)
        )),
        _ => None,
    }
}
