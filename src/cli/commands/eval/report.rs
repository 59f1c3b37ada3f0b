//! What the eval commands print: an eval's results (the pass rate of each check with
//! its 95% interval and gate), the list of evals, one sample's results, a comparison.

use color_eyre::eyre::Result;
use serde_json::json;

use crate::base::table::{Col, TextTable};
use crate::features::eval::compare::Comparison;
use crate::features::eval::finish::Results;
use crate::features::eval::read::{Counts, StoredCheck};
use crate::features::eval::record::{EvalRow, SampleRow};
use crate::features::eval::stats::{wilson, Interval, Z95};

fn pct(x: f64) -> String {
    format!("{:.1}%", 100.0 * x)
}

/// An adjusted p-value as the table prints it: three places, and `<0.001` below that
/// (an exact test's p is never 0).
fn p_text(p: f64) -> String {
    if p < 0.001 {
        "<0.001".into()
    } else {
        format!("{p:.3}")
    }
}

/// A side's pass rate with its 95% interval: `50.0% [25.4, 74.6]`.
fn rate_with_interval(i: &Interval) -> String {
    format!(
        "{} [{:.1}, {:.1}]",
        pct(i.estimate),
        100.0 * i.lo,
        100.0 * i.hi
    )
}

fn interval(i: &Interval) -> String {
    format!("[{}, {}]", pct(i.lo), pct(i.hi))
}

fn counts_line(c: &Counts) -> String {
    format!(
        "{} samples · {} passed · {} failed · {} errors{}",
        c.total(),
        c.passed,
        c.failed,
        c.error,
        if c.pending > 0 {
            format!(" · {} not scored", c.pending)
        } else {
            String::new()
        }
    )
}

/// Prints eval `row`'s results: a table on standard output, or JSON.
pub fn print_results(row: &EvalRow, r: &Results, json_out: bool) -> Result<()> {
    if json_out {
        let checks: Vec<_> = r
            .checks
            .iter()
            .map(|c| {
                let w = wilson(c.passed, c.of, Z95);
                json!({"check": c.check, "passed": c.passed, "of": c.of, "errors": c.errors,
                       "rate": c.rate, "interval": [w.lo, w.hi], "gate": c.gate,
                       "gate_met": c.gate.map(|g| c.rate >= g)})
            })
            .collect();
        crate::rawln!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "eval": row,
                "counts": r.counts,
                "checks": checks,
                "gates_missed": r.gates_missed.iter().map(|(c, rate, g)| json!({"check": c, "rate": rate, "gate": g})).collect::<Vec<_>>(),
                "tokens": r.tokens,
                "cost_usd": r.cost_usd,
                "judge_tokens": r.judge_tokens,
                "judge_cost_usd": r.judge_cost_usd,
            }))?
        );
        return Ok(());
    }
    crate::outln!(
        "eval {} ({}): {} · {}",
        row.eval_id,
        row.name,
        row.status,
        counts_line(&r.counts)
    );
    let mut t = TextTable::new(&[
        Col::left("CHECK").max(24),
        Col::right("PASSED"),
        Col::right("RATE"),
        Col::left("95% INTERVAL"),
        Col::left("GATE"),
    ]);
    for c in &r.checks {
        let w = wilson(c.passed, c.of, Z95);
        t.row([
            c.check.clone(),
            format!("{}/{}", c.passed, c.of),
            pct(c.rate),
            interval(&w),
            match c.gate {
                Some(g) if c.rate >= g => format!("≥ {g} met"),
                Some(g) => format!("≥ {g} MISSED"),
                None => "—".into(),
            },
        ]);
    }
    t.print();
    crate::outln!(
        "tokens {} · cost {}",
        r.tokens,
        r.cost_usd
            .map(crate::base::cost::usd)
            .unwrap_or_else(|| "— (no price)".into())
    );
    if r.judge_tokens > 0 {
        crate::outln!(
            "judges (apart): tokens {} · cost {}",
            r.judge_tokens,
            r.judge_cost_usd
                .map(crate::base::cost::usd)
                .unwrap_or_else(|| "— (no price)".into())
        );
    }
    if let Some(out) = &row.out_dir {
        crate::outln!(
            "tree: {}",
            crate::features::eval::tree::iteration_dir(std::path::Path::new(out), row.iteration)
                .display()
        );
    }
    Ok(())
}

/// Prints the list of evals.
pub fn print_list(rows: &[(EvalRow, Counts)], json_out: bool) -> Result<()> {
    if json_out {
        let v: Vec<_> = rows
            .iter()
            .map(|(r, c)| json!({"eval": r, "counts": c}))
            .collect();
        crate::rawln!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    if rows.is_empty() {
        crate::outln!("no evals yet: `plexus eval FILE` runs one");
        return Ok(());
    }
    let mut t = TextTable::new(&[
        Col::left("EVAL"),
        Col::left("NAME").max(20),
        Col::left("KIND"),
        Col::left("STATUS"),
        Col::right("SAMPLES"),
        Col::right("PASSED"),
        Col::right("FAILED"),
        Col::right("ERRORS"),
    ]);
    for (r, c) in rows {
        t.row([
            r.eval_id.clone(),
            r.name.clone(),
            r.kind.clone(),
            r.status.clone(),
            c.total().to_string(),
            c.passed.to_string(),
            c.failed.to_string(),
            c.error.to_string(),
        ]);
    }
    t.print();
    Ok(())
}

/// Prints one sample's results, check by check.
pub fn print_sample(
    s: &SampleRow,
    attempts: &[crate::features::eval::record::AttemptRow],
    checks: &[StoredCheck],
    json_out: bool,
) -> Result<()> {
    let parse = |r: &Option<String>| {
        r.as_deref()
            .and_then(|r| serde_json::from_str::<serde_json::Value>(r).ok())
            .unwrap_or(serde_json::Value::Null)
    };
    if json_out {
        let v = json!({
            "sample": s,
            "attempts": attempts,
            "checks": checks.iter().map(|c| json!({"epoch": c.epoch, "check": c.check,
                "passed": c.passed, "score": c.score, "result": parse(&c.result)})).collect::<Vec<_>>(),
        });
        crate::rawln!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    crate::outln!(
        "sample {} (line {}): {}{}",
        s.sample_id,
        s.line,
        s.status,
        s.inherited_from
            .as_deref()
            .map(|p| format!(" (inherited from {p})"))
            .unwrap_or_default()
    );
    for a in attempts {
        crate::outln!(
            "epoch {}: {} · score {:.2} · {} tokens · {} ms{}",
            a.epoch,
            a.status,
            a.score,
            a.tokens,
            a.latency_ms,
            a.error
                .as_deref()
                .map(|e| format!(" · {e}"))
                .unwrap_or_default()
        );
        for c in checks.iter().filter(|c| c.epoch == a.epoch) {
            let r = parse(&c.result);
            let mark = match c.passed {
                Some(true) => "pass",
                Some(false) => "FAIL",
                None => "n/a ",
            };
            crate::outln!("  {mark} {}: {}", c.check, r["why"].as_str().unwrap_or(""));
            if c.passed == Some(false) {
                crate::outln!("       at {}", r["at"].as_str().unwrap_or("?"));
                crate::outln!("       expected {}", short(&r["expected"]));
                crate::outln!("       found    {}", short(&r["found"]));
            }
        }
    }
    Ok(())
}

fn short(v: &serde_json::Value) -> String {
    let s = match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    crate::base::text::cut::cut_chars(&s, 100).replace('\n', " ")
}

/// Prints a comparison of evals `a` and `b`.
pub fn print_comparison(a: &str, b: &str, c: &Comparison, group: Option<&str>) {
    if let Some(g) = group {
        crate::outln!("\n{g}");
    } else {
        crate::outln!("{a} → {b}");
    }
    let mut t = TextTable::new(&[
        Col::left("CHECK").max(24),
        Col::left("A (95%)"),
        Col::left("B (95%)"),
        Col::left("B − A (95%)"),
        Col::right("P (ADJ.)"),
        Col::right("FLIPS −/+"),
    ]);
    for k in c.checks.iter().filter(|k| !k.compared) {
        let rate = |s: &crate::features::eval::compare::Side| {
            if s.n == 0 {
                "—".to_string()
            } else {
                pct(s.rate.estimate)
            }
        };
        t.row([
            k.check.clone(),
            rate(&k.first),
            rate(&k.second),
            "not in both".into(),
            "—".into(),
            "—".into(),
        ]);
    }
    for k in c.checks.iter().filter(|k| k.compared) {
        t.row([
            k.check.clone(),
            rate_with_interval(&k.first.rate),
            rate_with_interval(&k.second.rate),
            format!(
                "{:+.1} [{:+.1}, {:+.1}]",
                100.0 * k.difference.estimate,
                100.0 * k.difference.lo,
                100.0 * k.difference.hi
            ),
            p_text(k.p_adjusted),
            format!("{}/{}", k.regressed.len(), k.improved.len()),
        ]);
    }
    t.print();
    if !c.changed.is_empty() {
        crate::outln!(
            "{} sample(s) changed content under the same id (compared apart): {}",
            c.changed.len(),
            list(&c.changed)
        );
    }
    if !c.only_first.is_empty() || !c.only_second.is_empty() {
        crate::outln!(
            "only in A: {} · only in B: {}",
            c.only_first.len(),
            c.only_second.len()
        );
    }
    for k in &c.checks {
        if !k.regressed.is_empty() {
            crate::outln!("{} regressed on: {}", k.check, list(&k.regressed));
        }
    }
}

fn list(ids: &[String]) -> String {
    let shown: Vec<&str> = ids.iter().take(8).map(String::as_str).collect();
    if ids.len() > 8 {
        format!("{} and {} more", shown.join(", "), ids.len() - 8)
    } else {
        shown.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tiny_p_is_below_a_bound_and_a_rate_carries_its_interval() {
        assert_eq!(p_text(0.0000004), "<0.001");
        assert_eq!(p_text(0.0014), "0.001");
        assert_eq!(p_text(0.5), "0.500");
        let i = Interval {
            estimate: 0.5,
            lo: 0.254,
            hi: 0.746,
        };
        assert_eq!(rate_with_interval(&i), "50.0% [25.4, 74.6]");
    }
}
