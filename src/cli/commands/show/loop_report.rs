//! The loop section of `show`, for a person: each tool-using loop (its conversation
//! id, end, time, tokens in and out, tool calls with success rate and retries, a table
//! per tool), then the same across the run. Lines stay within 80 columns.

use super::loops::{LoopReport, RunToolMetrics};
use super::tool_stats::{CallTotals, ToolStats};
use crate::base::table::{Col, TextTable};
use crate::base::text::cut::cut_width;
use crate::base::text::sanitize::sanitize;
use crate::base::text::wrap::wrap_ranges;

/// Widest line of the section.
const WIDTH: usize = 80;

/// Width of a label (`tokens`, `tools`, …) and the space after it.
const LABEL: usize = 10;

/// The section as lines; nothing when the run had no tool-using loop.
pub fn section(loops: &[LoopReport], run: &RunToolMetrics) -> Vec<String> {
    if loops.is_empty() {
        return Vec::new();
    }
    let mut out = vec![format!("tool-using loops ({})", loops.len())];
    for l in loops {
        out.push(fit(&format!(
            "  {} · conversation {}",
            l.task_id, l.conversation_id
        )));
        out.extend(labelled(4, "ended", &ended(l)));
        out.extend(labelled(
            4,
            "tokens",
            &tokens(l.input_tokens, l.output_tokens, l.total_tokens),
        ));
        out.extend(labelled(4, "tools", &calls(&l.tool_totals)));
        if !l.skills.is_empty() {
            out.extend(labelled(4, "skills", &l.skills.join("; ")));
        }
        for r in &l.refusals {
            out.extend(labelled(4, "refused", r));
        }
        out.extend(table(&l.tool_stats, 4));
    }
    out.push(String::new());
    out.push(format!(
        "tools across the run ({})",
        plural(u64::from(run.loops), "loop")
    ));
    out.extend(labelled(
        2,
        "tokens",
        &tokens(run.input_tokens, run.output_tokens, run.total_tokens),
    ));
    out.extend(labelled(2, "tools", &calls(&run.tool_totals)));
    out.extend(table(&run.tool_stats, 2));
    out
}

/// Prints the section after a blank line; nothing when the run had no loop.
pub fn print(loops: &[LoopReport], run: &RunToolMetrics) {
    let lines = section(loops, run);
    if !lines.is_empty() {
        crate::outln!();
    }
    for line in lines {
        crate::outln!("{line}");
    }
}

/// How the loop ended, after how many steps and how long.
fn ended(l: &LoopReport) -> String {
    let steps = plural(u64::from(l.steps), "step");
    if l.stop.is_empty() {
        return format!("not finished, {steps} logged");
    }
    let time = l
        .duration_ms
        .map(|ms| format!(", {ms} ms"))
        .unwrap_or_default();
    format!(
        "{} after {steps}, {}{time}",
        l.stop,
        plural(u64::from(l.compressions), "compression")
    )
}

/// The model's tokens: in (prompts) and out (its text), or only the total.
fn tokens(input: Option<u64>, output: Option<u64>, total: u64) -> String {
    match (input, output) {
        (Some(i), Some(o)) => format!("{i} in, {o} out, {total} in all"),
        _ => format!("{total} in all (in and out not told apart)"),
    }
}

/// Tool calls added up, in one line.
fn calls(t: &CallTotals) -> String {
    if t.calls == 0 {
        return "no calls".into();
    }
    format!(
        "{}, {} succeeded, {}, {} cached, {:.1} ms",
        plural(u64::from(t.calls), "call"),
        percent(t.success_rate),
        plural(u64::from(t.retries), "retry"),
        t.cached,
        t.duration_ms
    )
}

/// One row per tool.
fn table(stats: &[ToolStats], indent: usize) -> Vec<String> {
    if stats.is_empty() {
        return Vec::new();
    }
    let mut t = TextTable::new(&[
        Col::left("TOOL").max(18),
        Col::right("CALLS"),
        Col::right("OK"),
        Col::right("RETRIES"),
        Col::right("TIME MS"),
        Col::right("IN TOK"),
        Col::right("OUT TOK"),
    ])
    .indent(indent);
    for s in stats {
        t.row([
            s.tool_name.clone(),
            s.totals.calls.to_string(),
            percent(s.totals.success_rate),
            s.totals.retries.to_string(),
            format!("{:.1}", s.totals.duration_ms),
            s.input_tokens.to_string(),
            s.output_tokens.to_string(),
        ]);
    }
    t.render().lines().map(str::to_string).collect()
}

/// A rate as a whole percentage (`-` when there is none).
fn percent(rate: Option<f64>) -> String {
    rate.map_or_else(|| "-".into(), |r| format!("{:.0}%", r * 100.0))
}

/// `n` and `word`, plural when `n` is not 1 (`retry` becomes `retries`).
fn plural(n: u64, word: &str) -> String {
    match (n, word.strip_suffix('y')) {
        (1, _) => format!("1 {word}"),
        (_, Some(stem)) => format!("{n} {stem}ies"),
        _ => format!("{n} {word}s"),
    }
}

/// `label` and `text` in two columns after `indent` spaces, `text` wrapped to the
/// width under itself.
fn labelled(indent: usize, label: &str, text: &str) -> Vec<String> {
    let text = sanitize(text);
    let room = WIDTH.saturating_sub(indent + LABEL);
    wrap_ranges(&text, u16::try_from(room).unwrap_or(u16::MAX))
        .into_iter()
        .enumerate()
        .map(|(i, r)| {
            let label = if i == 0 { label } else { "" };
            let part = text.get(r).unwrap_or_default().trim_end();
            format!("{:indent$}{label:<LABEL$}{part}", "")
        })
        .collect()
}

/// `line`, sanitised, cut to the width.
fn fit(line: &str) -> String {
    cut_width(&sanitize(line), WIDTH).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_and_rates_read_plainly() {
        assert_eq!(plural(1, "retry"), "1 retry");
        assert_eq!(plural(3, "retry"), "3 retries");
        assert_eq!(plural(0, "call"), "0 calls");
        assert_eq!(percent(Some(2.0 / 3.0)), "67%");
        assert_eq!(percent(None), "-");
        assert_eq!(
            tokens(None, None, 7711),
            "7711 in all (in and out not told apart)"
        );
        assert_eq!(
            tokens(Some(7000), Some(711), 7711),
            "7000 in, 711 out, 7711 in all"
        );
    }

    #[test]
    fn a_long_text_wraps_under_itself_within_80_columns() {
        let lines = labelled(4, "refused", &"a cycle of skills ".repeat(8));
        assert!(lines.len() > 1, "{lines:?}");
        assert!(lines[0].starts_with("    refused   a cycle"), "{lines:?}");
        for l in &lines[1..] {
            assert!(l.starts_with(&" ".repeat(14)), "{lines:?}");
        }
        assert!(lines.iter().all(|l| l.chars().count() <= 80), "{lines:?}");
    }
}
