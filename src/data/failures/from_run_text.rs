//! The words of a run's problems report, in the language the run's plan is written in:
//! Chinese when most of the plan's text is Chinese, English otherwise. Each cause has
//! a title and a suggested fix (where to change what, and why) in both.

use serde_json::Value;

/// The language a report is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lang {
    /// English.
    En,
    /// Chinese.
    Zh,
}

impl Lang {
    /// The language most of the text in `plan` (its string values, not its keys) is
    /// written in: Chinese when its CJK characters outnumber its Latin letters.
    pub(crate) fn of_plan(plan: &Value) -> Lang {
        let (mut cjk, mut latin) = (0usize, 0usize);
        count(plan, &mut cjk, &mut latin);
        if cjk > latin {
            Lang::Zh
        } else {
            Lang::En
        }
    }
}

fn count(v: &Value, cjk: &mut usize, latin: &mut usize) {
    match v {
        Value::String(s) => {
            for c in s.chars() {
                if is_cjk(c) {
                    *cjk += 1;
                } else if c.is_ascii_alphabetic() {
                    *latin += 1;
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| count(x, cjk, latin)),
        Value::Object(o) => o.values().for_each(|x| count(x, cjk, latin)),
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32, 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0x20000..=0x2FA1F)
}

/// A cause's title and suggested fix: (target, modification, rationale).
pub(crate) struct CauseText {
    /// Title of the problem.
    pub(crate) title: &'static str,
    /// Where to change what, and why.
    pub(crate) fix: (&'static str, &'static str, &'static str),
}

/// The title and fix of cause `key` (a `problem_type`) in `lang`.
pub(crate) fn cause_text(key: &str, lang: Lang) -> CauseText {
    let t = |title, target, modification, rationale| CauseText {
        title,
        fix: (target, modification, rationale),
    };
    let zh = lang == Lang::Zh;
    match key {
        "Source_Not_Found" if zh => t("数据来源不可达（E001 source_not_found）", "plan.data_references", "检查引用的文件、任务输出与查询是否存在，必要时配置 fallback_config", "来源缺失时重试无效"),
        "Source_Not_Found" => t("A data source could not be reached (E001 source_not_found)", "plan.data_references", "check that the referenced files, task outputs and queries exist; configure fallback_config where needed", "retrying does not help while the source is missing"),
        "Output_Parse_Error" if zh => t("输出无法解析为 AgentResponse（E002 parse_error）", "agents.system_prompt", "在系统提示中给出完整的 JSON 输出示例，并要求只输出一个 JSON 对象", "模型输出格式不稳定"),
        "Output_Parse_Error" => t("The output does not parse as an AgentResponse (E002 parse_error)", "agents.system_prompt", "give a complete JSON example of the output in the system prompt and ask for one JSON object only", "the model's output format is unstable"),
        "Output_Validation" if zh => t("输出缺少必需字段（E003 validation_error）", "plan.output_requirements", "在 output_requirements 中逐项列出 required_fields 并在提示中强调", "必需字段经常遗漏"),
        "Output_Validation" => t("The output misses required fields (E003 validation_error)", "plan.output_requirements", "list every required field in output_requirements and stress them in the prompt", "required fields are often left out"),
        "Timeout" if zh => t("调用超时（E004 timeout）", "plan.constraints.timeout_seconds", "提高 timeout_seconds 或降低 max_tokens，拆分过大的任务", "任务在时限内无法完成"),
        "Timeout" => t("The call timed out (E004 timeout)", "plan.constraints.timeout_seconds", "raise timeout_seconds or lower max_tokens; split tasks that are too large", "the task cannot finish within its time limit"),
        "Quality_Below_Threshold" if zh => t("原子质量低于阈值（E005 quality_below_threshold）", "plan.quality_threshold", "检查任务的 quality_threshold 是否过严，或在指令中说明评分依据", "质量门槛与任务难度不匹配"),
        "Quality_Below_Threshold" => t("Atom quality below the threshold (E005 quality_below_threshold)", "plan.quality_threshold", "check whether the task's quality_threshold is too strict, or say in the instruction how atoms are graded", "the quality bar does not match the task's difficulty"),
        "Dependency_Failed" if zh => t("上游任务失败（E006 dependency_failed）", "plan.fallback_config", "为依赖失败配置 skip 或 use_default，先修复上游任务", "失败沿依赖传播"),
        "Dependency_Failed" => t("An upstream task failed (E006 dependency_failed)", "plan.fallback_config", "configure skip or use_default for failed dependencies; fix the upstream task first", "failures spread along dependencies"),
        "Hallucination" if zh => t("引用了不存在的资产（E007 hallucination_detected）", "agents.system_prompt", "要求只引用 existing_assets 中给出的资产 id", "需要人工审核"),
        "Hallucination" => t("References to assets that do not exist (E007 hallucination_detected)", "agents.system_prompt", "ask for asset ids from existing_assets only", "a person must review it"),
        "Provider_Error" if zh => t("模型服务出错（E001：HTTP 错误或连接失败）", "provider", "检查 plexus.toml 中该 provider 的 base_url、model 与密钥，以及服务端日志；错误信息给出了状态码", "问题在模型服务，不在计划的数据引用"),
        "Provider_Error" => t("The model's server failed the call (E001: an HTTP error or a failed connection)", "provider", "check the provider's profile in plexus.toml (base_url, model, key) and the server's log; the error message gives the status", "the server failed, not the plan's data references"),
        "System_Error" if zh => t("系统错误（E008 system_error）", "provider", "检查 provider 配置与日志", "非模型问题"),
        "System_Error" => t("System error (E008 system_error)", "provider", "check the provider's configuration and the log", "not a problem of the model"),
        "Partial_Output" if zh => t("部分原子质量不足（partial）", "plan.output_requirements", "明确每类原子的必需字段与出处要求", "平均分低于0.7或存在问题"),
        "Partial_Output" => t("Some atoms fall short of the quality bar (partial)", "plan.output_requirements", "state each atom type's required fields and how to cite sources", "the mean score is below 0.7 or there are issues"),
        "Lost_In_Crash" if zh => t("进程崩溃时调用仍在进行（lost），恢复运行时已关闭并重新执行该任务", "runtime", "用 plexus resume 继续被中断的运行；检查进程为何被终止", "非模型问题"),
        "Lost_In_Crash" => t("The call was in flight when the process stopped (lost); resuming closed it and ran the task again", "runtime", "continue an interrupted run with plexus resume; find out why the process was stopped", "not a problem of the model"),
        _ if zh => t("失败但没有错误码", "provider", "查看该调用的请求与流式输出", "原因未记录"),
        _ => t("Failed without an error code", "provider", "read the call's request and streamed output", "the cause was not recorded"),
    }
}

/// `3 calls (2 tasks) failed this way, 1 of them for good`.
pub(crate) fn description(lang: Lang, calls: u32, tasks: usize, finals: u32) -> String {
    match lang {
        Lang::Zh => format!("{calls}次调用（{tasks}个任务）因此失败，其中{finals}次为最终失败"),
        Lang::En => {
            format!("{calls} call(s) ({tasks} task(s)) failed this way, {finals} of them for good")
        }
    }
}

/// Evidence when a sample has no message: `SAMPLE ended failed`.
pub(crate) fn no_message(lang: Lang, sample: &str, status: &str) -> String {
    match lang {
        Lang::Zh => format!("{sample} 的状态为 {status}"),
        Lang::En => format!("{sample} ended {status}"),
    }
}

/// `fixes 3 failed cases`.
pub(crate) fn impact(lang: Lang, n: u32) -> String {
    match lang {
        Lang::Zh => format!("解决{n}个失败case"),
        Lang::En => format!("fixes {n} failed case(s)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_plan_s_text_decides_the_language() {
        let en =
            json!({"tasks": [{"instruction": "Find the assets related to the planner. 找重复"}]});
        assert_eq!(Lang::of_plan(&en), Lang::En);
        let zh = json!({"tasks": [{"task_id": "T1", "instruction": "检索与扩散规划器相关的已有知识资产，标记重复与矛盾"}]});
        assert_eq!(Lang::of_plan(&zh), Lang::Zh);
        assert!(cause_text("Output_Parse_Error", Lang::En)
            .title
            .starts_with("The output"));
        assert!(cause_text("Output_Parse_Error", Lang::Zh)
            .title
            .starts_with("输出"));
    }
}
