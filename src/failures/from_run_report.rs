//! How plexus's own failures are attributed when written as a tree: each failed,
//! timed-out or partial invocation (retried or not) gets a cause from its first error code (or
//! its status), a failure type and a priority; the problems report groups the samples
//! by cause, with counts, a typical case and a suggested fix.

use std::collections::BTreeMap;

use crate::protocol::handoff::{
    FailurePriority, Layer1Problem, Layer1ProblemsReport, ModificationPriority, ProblemSeverity,
    SuggestedFix,
};
use crate::store::FailedInvocation;

/// A cause of failure and what to do about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Cause {
    /// `problem_type`, e.g. `Output_Parse_Error`.
    pub(crate) key: &'static str,
    /// The index's `failure_type`.
    pub(crate) failure_type: &'static str,
    /// Title of the problem.
    pub(crate) title: &'static str,
    /// (target, modification, rationale) of the suggested fix.
    pub(crate) fix: (&'static str, &'static str, &'static str),
}

/// The cause of a failure row.
pub(crate) fn cause_of(row: &FailedInvocation) -> Cause {
    let c = |key, failure_type, title, fix| Cause {
        key,
        failure_type,
        title,
        fix,
    };
    match row.error_code() {
        Some("E001") => c(
            "Source_Not_Found",
            "Layer3_Source",
            "数据来源不可达（E001 source_not_found）",
            (
                "plan.data_references",
                "检查引用的文件、任务输出与查询是否存在，必要时配置 fallback_config",
                "来源缺失时重试无效",
            ),
        ),
        Some("E002") => c(
            "Output_Parse_Error",
            "Layer2_OutputFormat",
            "输出无法解析为 AgentResponse（E002 parse_error）",
            (
                "agents.system_prompt",
                "在系统提示中给出完整的 JSON 输出示例，并要求只输出一个 JSON 对象",
                "模型输出格式不稳定",
            ),
        ),
        Some("E003") => c(
            "Output_Validation",
            "Layer2_OutputFormat",
            "输出缺少必需字段（E003 validation_error）",
            (
                "plan.output_requirements",
                "在 output_requirements 中逐项列出 required_fields 并在提示中强调",
                "必需字段经常遗漏",
            ),
        ),
        Some("E004") => c(
            "Timeout",
            "Layer3_Timeout",
            "调用超时（E004 timeout）",
            (
                "plan.constraints.timeout_seconds",
                "提高 timeout_seconds 或降低 max_tokens，拆分过大的任务",
                "任务在时限内无法完成",
            ),
        ),
        Some("E005") => c(
            "Quality_Below_Threshold",
            "Layer1_QualityGate",
            "原子质量低于阈值（E005 quality_below_threshold）",
            (
                "plan.quality_threshold",
                "检查任务的 quality_threshold 是否过严，或在指令中说明评分依据",
                "质量门槛与任务难度不匹配",
            ),
        ),
        Some("E006") => c(
            "Dependency_Failed",
            "Layer3_Dependency",
            "上游任务失败（E006 dependency_failed）",
            (
                "plan.fallback_config",
                "为依赖失败配置 skip 或 use_default，先修复上游任务",
                "失败沿依赖传播",
            ),
        ),
        Some("E007") => c(
            "Hallucination",
            "Layer2_Hallucination",
            "引用了不存在的资产（E007 hallucination_detected）",
            (
                "agents.system_prompt",
                "要求只引用 existing_assets 中给出的资产 id",
                "需要人工审核",
            ),
        ),
        Some("E008") => c(
            "System_Error",
            "Layer3_System",
            "系统错误（E008 system_error）",
            ("provider", "检查 provider 配置与日志", "非模型问题"),
        ),
        _ => match row.status.as_str() {
            "timeout" => c(
                "Timeout",
                "Layer3_Timeout",
                "调用超时（E004 timeout）",
                (
                    "plan.constraints.timeout_seconds",
                    "提高 timeout_seconds 或降低 max_tokens，拆分过大的任务",
                    "任务在时限内无法完成",
                ),
            ),
            "partial" => c(
                "Partial_Output",
                "Layer2_Quality",
                "部分原子质量不足（partial）",
                (
                    "plan.output_requirements",
                    "明确每类原子的必需字段与出处要求",
                    "平均分低于0.7或存在问题",
                ),
            ),
            "lost" => c(
                "Lost_In_Crash",
                "Layer3_System",
                "进程崩溃时调用仍在进行（lost），恢复运行时已关闭并重新执行该任务",
                (
                    "runtime",
                    "用 plexus resume 继续被中断的运行；检查进程为何被终止",
                    "非模型问题",
                ),
            ),
            _ => c(
                "Failed_Without_Code",
                "Layer3_Unknown",
                "失败但没有错误码",
                ("provider", "查看该调用的请求与流式输出", "原因未记录"),
            ),
        },
    }
}

/// The priority of a failure row: a final failure is high, a partial result medium, a
/// failure that a later attempt replaced low.
pub(crate) fn priority_of(row: &FailedInvocation) -> FailurePriority {
    if row.retried {
        return FailurePriority::Low;
    }
    match row.status.as_str() {
        "failed" | "timeout" => FailurePriority::High,
        "partial" => FailurePriority::Medium,
        _ => FailurePriority::Low,
    }
}

/// One sample as the report sees it.
pub(crate) struct Attributed<'a> {
    pub(crate) row: &'a FailedInvocation,
    pub(crate) cause: Cause,
}

/// The problems report: one problem per cause (most samples first), severity from how
/// many are final failures, and the modification priority in the same order.
pub(crate) fn problems_report(
    samples: &[Attributed],
    total: u32,
    iteration: u32,
    now: &str,
) -> Layer1ProblemsReport {
    let mut groups: BTreeMap<&'static str, Vec<&Attributed>> = BTreeMap::new();
    for s in samples {
        groups.entry(s.cause.key).or_default().push(s);
    }
    let mut groups: Vec<(&'static str, Vec<&Attributed>)> = groups.into_iter().collect();
    groups.sort_by_key(|(k, v)| (std::cmp::Reverse(v.len()), *k));
    let failed = samples.len() as u32;
    let mut problems = Vec::new();
    let mut priority = Vec::new();
    for (i, (_, group)) in groups.iter().enumerate() {
        let Some(first) = group.first() else { continue };
        let cause = first.cause;
        let finals = group
            .iter()
            .filter(|s| priority_of(s.row) == FailurePriority::High)
            .count() as f64;
        let n = group.len() as u32;
        let severity = if total > 0 && finals / total as f64 >= 0.3 {
            ProblemSeverity::Critical
        } else if finals > 0.0 {
            ProblemSeverity::High
        } else if group
            .iter()
            .any(|s| priority_of(s.row) == FailurePriority::Medium)
        {
            ProblemSeverity::Medium
        } else {
            ProblemSeverity::Low
        };
        let typical = group
            .iter()
            .find(|s| priority_of(s.row) == FailurePriority::High)
            .unwrap_or(first);
        let tasks: std::collections::BTreeSet<&str> =
            group.iter().map(|s| s.row.task_id.as_str()).collect();
        let id = format!("L1P_{:03}", i + 1);
        problems.push(Layer1Problem {
            problem_id: id.clone(),
            problem_type: cause.key.into(),
            severity,
            title: cause.title.into(),
            description: format!(
                "{n}次调用（{}个任务）因此失败，其中{}次为最终失败",
                tasks.len(),
                finals as u32
            ),
            affected_samples: group.iter().map(|s| s.row.invocation_id.clone()).collect(),
            affected_count: n,
            evidence_summary: typical.row.message.clone().unwrap_or_else(|| {
                format!(
                    "{} 的状态为 {}",
                    typical.row.invocation_id, typical.row.status
                )
            }),
            typical_case_id: typical.row.invocation_id.clone(),
            suggested_fix: SuggestedFix {
                target: cause.fix.0.into(),
                section: cause.key.into(),
                modification: cause.fix.1.into(),
                rationale: cause.fix.2.into(),
                extra: Default::default(),
            },
            extra: Default::default(),
        });
        priority.push(ModificationPriority {
            priority: i as u32 + 1,
            problem_id: id,
            impact: format!("解决{n}个失败case"),
            estimated_improvement: format!("+{:.0}%", 100.0 * n as f64 / total.max(1) as f64),
            extra: Default::default(),
        });
    }
    Layer1ProblemsReport {
        report_version: "1.0".into(),
        generated_at: now.into(),
        iteration,
        total_samples: total.max(failed),
        failed_samples: failed,
        failure_rate: if total == 0 {
            0.0
        } else {
            ((failed as f64 / total as f64) * 100.0).round() / 100.0
        },
        layer1_problems: problems,
        modification_priority: priority,
        extra: Default::default(),
    }
}
