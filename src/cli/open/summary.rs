//! The summaries printed after the terminal UI of a run or a debate session closes.

use crate::model::event::RunStatus;
use crate::model::state::debate::DebateState;
use crate::model::state::RunState;

/// The end-of-session summary of a debate: how it ended, the consensus by round, the
/// report, the errors handled.
pub fn debate_summary(d: &DebateState) -> String {
    let status = d
        .status
        .as_ref()
        .map_or("in_progress", |s| s.as_str())
        .to_string();
    let trend: Vec<String> = d
        .consensus_trend
        .iter()
        .map(|c| format!("{c:.2}"))
        .collect();
    let mut out = format!(
        "debate: {status} after {} round(s); consensus {}\n",
        d.rounds.len(),
        if trend.is_empty() {
            "not measured".to_string()
        } else {
            trend.join(" → ")
        }
    );
    out.push_str(if d.report.is_some() {
        "report: written\n"
    } else {
        "report: none\n"
    });
    if !d.errors.is_empty() {
        out.push_str(&format!("errors handled: {}\n", d.errors.len()));
    }
    out
}

/// The end-of-run summary printed after the terminal is restored.
pub fn summary(st: &RunState) -> String {
    use crate::model::event::TaskStatus;
    let mut out = String::new();
    let counts: Vec<String> = TaskStatus::ALL
        .iter()
        .filter(|&&s| st.count(s) > 0)
        .map(|&s| format!("{} {}", st.count(s), s.as_str()))
        .collect();
    out.push_str(&format!(
        "tasks: {} ({})\n",
        st.tasks.len(),
        counts.join(", ")
    ));
    let q = &st.quality;
    out.push_str(&format!(
        "atoms accepted: {} (A {} · B {} · C {} · D {}), average score {:.2}\n",
        q.atoms(),
        q.grades.a,
        q.grades.b,
        q.grades.c,
        q.grades.d,
        q.avg_score()
    ));
    let tokens_in: u64 = st.agents.iter().map(|a| a.tokens_in).sum();
    let tokens_out: u64 = st.agents.iter().map(|a| a.tokens_out).sum();
    out.push_str(&format!(
        "tokens: {tokens_in} in, {tokens_out} out over {} invocation(s); {} events\n",
        st.agents.iter().map(|a| a.invocations).sum::<u32>(),
        st.events
    ));
    if st.status == Some(RunStatus::Running) {
        out.push_str("the run did not end\n");
    }
    out
}
