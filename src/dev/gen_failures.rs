//! Generated trees for tests, fixtures and benchmarks: one iteration of the leave
//! application scenario of seed 002 with mostly failed samples, long traces with tool
//! calls and states, evaluations whose checkers point at turns, attributions, the
//! summary, the problems report and an `ExecuteToInitContext` for the typical cases —
//! plus a few documents damaged on purpose (truncated, not JSON, missing, lacking
//! fields). Deterministic for a seed.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::base::protocol::handoff::{
    ExecuteToInitContext, FailureSampleIndexEntry, Layer1Problem, Layer1ProblemsReport,
    ModificationPriority, SuggestedFix,
};

use super::gen_failures_text::{
    fill, priority_of, ProblemDef, ASSISTANT_LINES, CHECKERS, EMPLOYEES, LEAVE_TYPES, PROBLEMS,
    TOOLS, USER_LINES,
};
use crate::data::failures::doc::DocKind;
use crate::data::failures::index::Sample;
use crate::data::failures::layout;
use crate::data::failures::summary::FailureSummary;
use crate::data::failures::write::{TreeWriter, WriteError};

pub use crate::data::failures::layout::CONTEXT_FILE;

/// What to generate (defined with the command line's options).
pub use crate::cli::args::GenFailuresSpec as GenSpec;

/// What was generated.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct GenReport {
    /// The tree (the scenario directory).
    pub dir: PathBuf,
    /// Samples written.
    pub samples: usize,
    /// Of which failed.
    pub failed: usize,
    /// Documents damaged: (sample, document, how).
    pub damaged: Vec<(String, &'static str, &'static str)>,
    /// Files written.
    pub files: usize,
    /// Bytes written.
    pub bytes: u64,
}

struct Out<'a> {
    w: &'a TreeWriter,
    files: usize,
    bytes: u64,
}

impl Out<'_> {
    fn put(&mut self, rel: &str, bytes: &[u8]) -> Result<(), WriteError> {
        self.files += 1;
        self.bytes += bytes.len() as u64;
        self.w.write_bytes(rel, bytes)
    }

    fn json(
        &mut self,
        rel: &str,
        v: &impl serde::Serialize,
        pretty: bool,
    ) -> Result<(), WriteError> {
        let bytes = if pretty {
            serde_json::to_vec_pretty(v)
        } else {
            serde_json::to_vec(v)
        }
        .map_err(|source| WriteError::Json {
            what: rel.to_string(),
            source,
        })?;
        self.put(rel, &bytes)
    }
}

/// One generated sample before it is written.
struct Gen {
    id: String,
    problem: Option<&'static ProblemDef>,
    turns: usize,
    key_turn: usize,
}

fn pick_problem(rng: &mut fastrand::Rng) -> &'static ProblemDef {
    let total: u32 = PROBLEMS.iter().map(|p| p.weight).sum();
    let mut r = rng.u32(..total.max(1));
    for p in PROBLEMS {
        if r < p.weight {
            return p;
        }
        r -= p.weight;
    }
    &PROBLEMS[0]
}

/// Writes a tree for `spec` at `dir` (which must not exist or be empty), atomically.
pub fn generate_tree(dir: &Path, spec: &GenSpec) -> Result<GenReport, WriteError> {
    let w = TreeWriter::new(dir)?;
    let mut out = Out {
        w: &w,
        files: 0,
        bytes: 0,
    };
    let mut rng = fastrand::Rng::with_seed(spec.seed);
    let it_rel = format!(
        "{}/{}{}",
        layout::OUTPUTS_DIR,
        layout::ITERATION_PREFIX,
        spec.iteration
    );
    let width = spec.samples.to_string().len().max(3);
    let gens: Vec<Gen> = (1..=spec.samples)
        .map(|i| {
            let turns = spec.turns.max(2);
            let turns = rng.usize(turns.div_ceil(2).max(2)..=turns + turns / 2);
            Gen {
                id: format!("BS_MT_{i:0width$}"),
                problem: (rng.u32(..3) < 2).then(|| pick_problem(&mut rng)),
                turns,
                key_turn: rng.usize(turns / 3..turns).max(1),
            }
        })
        .collect();
    let failed: Vec<usize> = (0..gens.len())
        .filter(|&i| gens[i].problem.is_some())
        .collect();
    let mut damage: Vec<(usize, usize)> = Vec::new();
    let mut pool = failed.clone();
    rng.shuffle(&mut pool);
    for (k, &i) in pool.iter().take(spec.broken).enumerate() {
        damage.push((i, k % DAMAGES.len()));
    }
    let mut entries = Vec::with_capacity(failed.len());
    let mut damaged = Vec::new();
    let mut scores = Vec::with_capacity(gens.len());
    for (i, g) in gens.iter().enumerate() {
        let docs = sample_docs(g, &mut rng);
        scores.extend(
            docs[DocKind::Evaluation.index()]
                .as_ref()
                .and_then(|e| e.get("overall_score"))
                .and_then(Value::as_f64),
        );
        let hit = damage
            .iter()
            .find(|(d, _)| *d == i)
            .map(|(_, k)| DAMAGES[*k]);
        for (kind, v) in DocKind::ALL.iter().zip(docs) {
            let Some(v) = v else { continue };
            let rel = format!("{it_rel}/{}", Sample::new(&g.id, 0).rel_path(*kind));
            match hit {
                Some((k, how)) if k == *kind => {
                    damaged.push((g.id.clone(), kind.as_str(), how));
                    write_damaged(&mut out, &rel, &v, how)?;
                }
                _ => out.json(&rel, &v, false)?,
            }
        }
        if let Some(p) = g.problem {
            entries.push(entry(g, p));
        }
    }
    let now = "2026-01-04T15:30:00".to_string();
    let summary = FailureSummary::new(spec.iteration, now.clone(), gens.len() as u32, entries);
    out.json(
        &format!("{it_rel}/{}", layout::SUMMARY_FILE),
        &summary,
        true,
    )?;
    let report = report(&gens, spec.iteration, &now);
    out.json(&format!("{it_rel}/{}", layout::REPORT_FILE), &report, true)?;
    let mean = (!scores.is_empty()).then(|| scores.iter().sum::<f64>() / scores.len() as f64);
    let ctx = context(&gens, &report, &summary, mean, &it_rel, &now);
    out.json(CONTEXT_FILE, &ctx, true)?;
    let (files, bytes) = (out.files, out.bytes);
    let dir = w.finish()?;
    Ok(GenReport {
        dir,
        samples: gens.len(),
        failed: failed.len(),
        damaged,
        files,
        bytes,
    })
}

/// How documents are damaged, in turn.
const DAMAGES: [(DocKind, &str); 4] = [
    (DocKind::Trace, "truncated"),
    (DocKind::Evaluation, "not JSON"),
    (DocKind::Attribution, "missing"),
    (DocKind::Evaluation, "lacks checker_results"),
];

fn write_damaged(out: &mut Out, rel: &str, v: &Value, how: &str) -> Result<(), WriteError> {
    match how {
        "truncated" => {
            let bytes = serde_json::to_vec_pretty(v).unwrap_or_default();
            let cut = bytes.len() / 2;
            out.put(rel, &bytes[..cut])
        }
        "not JSON" => {
            let text = serde_json::to_string_pretty(v).unwrap_or_default();
            out.put(rel, text.replacen("\":", "\" =", 3).as_bytes())
        }
        "missing" => Ok(()),
        _ => {
            let mut v = v.clone();
            if let (Some(m), Some(field)) = (v.as_object_mut(), how.strip_prefix("lacks ")) {
                m.remove(field);
            }
            out.json(rel, &v, true)
        }
    }
}

fn entry(g: &Gen, p: &ProblemDef) -> FailureSampleIndexEntry {
    let s = Sample::new(&g.id, 0);
    FailureSampleIndexEntry {
        sample_id: g.id.clone(),
        sample_path: s.rel_path(DocKind::Sample),
        trace_path: s.rel_path(DocKind::Trace),
        evaluation_path: s.rel_path(DocKind::Evaluation),
        attribution_path: s.rel_path(DocKind::Attribution),
        failure_type: Some(p.failure_type.into()),
        conversation_turns: Some(g.turns as u32),
        checkers_failed: Some(p.checkers.iter().map(|c| c.to_string()).collect()),
        priority: Some(priority_of(p.severity)),
        extra: Default::default(),
    }
}

/// The four documents of a sample (no attribution for a sample that passed).
fn sample_docs(g: &Gen, rng: &mut fastrand::Rng) -> [Option<Value>; 4] {
    let (emp, name, dept) = EMPLOYEES[rng.usize(..EMPLOYEES.len())];
    let ty = LEAVE_TYPES[rng.usize(..LEAVE_TYPES.len())];
    let balance = rng.u32(3..=15);
    let difficulty = ["easy", "medium", "hard"][rng.usize(..3)];
    let sample = json!({
        "sample_id": g.id,
        "scenario": "leave_application",
        "category": "多轮请假申请",
        "user_profile": {"employee_id": emp, "name": name, "department": dept,
            "leave_balance": {ty: balance}},
        "task_description": format!("{name}（{dept}）申请{ty}，需要查询余额、创建申请、扣减余额并通知审批人"),
        "expected_outcome": {"application_status": "pending_approval", "leave_balance_after": balance.saturating_sub(3),
            "approver_notified": true},
        "difficulty": difficulty,
    });
    let mut history = Vec::with_capacity(g.turns);
    let mut calls = Vec::new();
    let mut states = Vec::new();
    for t in 1..=g.turns {
        let user = t % 2 == 1;
        let line = if user {
            USER_LINES[rng.usize(..USER_LINES.len())]
        } else {
            ASSISTANT_LINES[rng.usize(..ASSISTANT_LINES.len())]
        };
        let mut turn = json!({"turn": t, "role": if user {"user"} else {"assistant"}, "content": fill(line, rng)});
        if !user && rng.u32(..2) == 0 {
            let tool = TOOLS[rng.usize(..TOOLS.len())];
            let id = format!("call_{t}");
            turn["tool_calls"] = json!([{"id": id, "type": "function",
                "function": {"name": tool, "arguments": format!("{{\"employee_id\": \"{emp}\"}}")}}]);
            calls.push(json!({"call_id": id, "turn": t, "tool_name": tool,
                "result": {"ok": rng.u32(..8) != 0, "balance": balance}}));
            states.push(json!({"turn": t, "state": {"leave_balance": balance,
                "application_status": if t > g.turns / 2 {"pending_approval"} else {"draft"}}}));
        }
        history.push(turn);
    }
    let trace = json!({
        "sample_id": g.id,
        "conversation_history": history,
        "tool_calls": calls,
        "states": states,
        "final_state": {"leave_balance": balance, "application_status": "pending_approval"},
    });
    let checks: Vec<Value> = CHECKERS
        .iter()
        .map(|c| {
            let fails = g.problem.is_some_and(|p| p.checkers.contains(c));
            let mut r = json!({"checker": c, "passed": !fails});
            if fails {
                r["failed_turn"] = json!(g.key_turn);
                r["expected"] = json!(balance.saturating_sub(3));
                r["actual"] = json!(balance);
                r["message"] = json!(format!("第{}轮后{}检查未通过", g.key_turn, c));
            }
            r
        })
        .collect();
    let score = if g.problem.is_some() {
        0.3 + rng.f64() * 0.35
    } else {
        0.8 + rng.f64() * 0.2
    };
    let eval = json!({
        "sample_id": g.id,
        "passed": g.problem.is_none(),
        "overall_score": (score * 100.0).round() / 100.0,
        "checker_results": checks,
        "llm_judgment": {"score": (score * 10.0).round() / 10.0,
            "verdict": if g.problem.is_some() {"fail"} else {"pass"},
            "reasoning": if g.problem.is_some() {"Agent创建了申请，但关键业务操作缺失或结果与规则不符。"} else {"流程完整，结果正确。"}},
    });
    let attribution = g.problem.map(|p| {
        json!({
            "sample_id": g.id,
            "failure_type": p.failure_type,
            "layer": if p.failure_type.starts_with("Layer1") {1} else {2},
            "problem_id": p.id,
            "root_cause": p.description,
            "checkers_failed": p.checkers,
            "evidence": [{"turn": g.key_turn, "description": p.title}],
            "evidence_turns": [g.key_turn, (g.key_turn + 2).min(g.turns)],
            "confidence": 0.85,
            "suggested_fix": {"target": p.fix.0, "section": p.fix.1, "modification": p.fix.2},
        })
    });
    [Some(sample), Some(trace), Some(eval), attribution]
}

fn report(gens: &[Gen], iteration: u32, now: &str) -> Layer1ProblemsReport {
    let failed = gens.iter().filter(|g| g.problem.is_some()).count() as u32;
    let total = gens.len() as u32;
    let mut problems: Vec<Layer1Problem> = PROBLEMS
        .iter()
        .filter(|p| p.failure_type.starts_with("Layer1"))
        .filter_map(|p| {
            let ids: Vec<String> = gens
                .iter()
                .filter(|g| g.problem.is_some_and(|q| q.id == p.id))
                .map(|g| g.id.clone())
                .collect();
            let first = ids.first()?.clone();
            let n = ids.len() as u32;
            Some(Layer1Problem {
                problem_id: p.id.into(),
                problem_type: p.problem_type.into(),
                severity: p.severity,
                title: p.title.into(),
                description: p.description.into(),
                affected_samples: ids,
                affected_count: n,
                evidence_summary: p.evidence.replace("{n}", &n.to_string()),
                typical_case_id: first,
                suggested_fix: SuggestedFix {
                    target: p.fix.0.into(),
                    section: p.fix.1.into(),
                    modification: p.fix.2.into(),
                    rationale: p.fix.3.into(),
                    extra: Default::default(),
                },
                extra: Default::default(),
            })
        })
        .collect();
    problems.sort_by_key(|p| (p.severity, std::cmp::Reverse(p.affected_count)));
    let modification_priority = problems
        .iter()
        .enumerate()
        .map(|(i, p)| ModificationPriority {
            priority: i as u32 + 1,
            problem_id: p.problem_id.clone(),
            impact: format!("解决{}个失败case", p.affected_count),
            estimated_improvement: format!(
                "+{:.0}%",
                100.0 * p.affected_count as f64 / total.max(1) as f64
            ),
            extra: Default::default(),
        })
        .collect();
    Layer1ProblemsReport {
        report_version: "1.0".into(),
        generated_at: now.into(),
        iteration,
        total_samples: total,
        failed_samples: failed,
        failure_rate: if total == 0 {
            0.0
        } else {
            (failed as f64 / total as f64 * 100.0).round() / 100.0
        },
        layer1_problems: problems,
        modification_priority,
        extra: Default::default(),
    }
}

/// The context for the report's typical cases (the seed's example shape): its quality
/// is the mean evaluation score, its trigger the critical share when over 30%.
fn context(
    gens: &[Gen],
    report: &Layer1ProblemsReport,
    summary: &FailureSummary,
    mean_score: Option<f64>,
    it_rel: &str,
    now: &str,
) -> ExecuteToInitContext {
    let typical: Vec<&str> = report
        .layer1_problems
        .iter()
        .map(|p| p.typical_case_id.as_str())
        .collect();
    let index: Vec<FailureSampleIndexEntry> = summary
        .failure_samples_index
        .iter()
        .filter(|e| typical.contains(&e.sample_id.as_str()))
        .cloned()
        .collect();
    let critical = report
        .layer1_problems
        .iter()
        .filter(|p| p.severity == crate::base::protocol::handoff::ProblemSeverity::Critical)
        .map(|p| p.affected_count)
        .sum::<u32>();
    let share = 100.0 * critical as f64 / gens.len().max(1) as f64;
    ExecuteToInitContext {
        version: "2.0".into(),
        handoff_type: crate::base::protocol::handoff::HandoffType::ExecuteToInit,
        timestamp: now.into(),
        metadata: Default::default(),
        execution_output_dir: it_rel.into(),
        trigger_reason: (share > 30.0).then(|| format!("Critical问题占比{share:.0}%，超过30%阈值")),
        iteration_summary: crate::base::protocol::handoff::IterationSummary {
            total_iterations: Some(report.iteration),
            final_quality: mean_score.map(|m| (m * 100.0).round() / 100.0),
            total_samples: Some(report.total_samples),
            failed_samples: Some(report.failed_samples),
            ..Default::default()
        },
        failure_samples_index: index,
        layer1_problems_report_path: layout::REPORT_FILE.into(),
        modification_suggestions_summary: report
            .layer1_problems
            .iter()
            .take(5)
            .map(|p| p.suggested_fix.modification.clone())
            .collect(),
        extra: Default::default(),
    }
}
