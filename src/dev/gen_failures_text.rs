//! The text of generated trees, in the protocol's own example domain (the leave
//! application scenario of seed 002): employees, utterances, tools, checkers, and the
//! Layer 1 problems with their suggested fixes.

use crate::base::protocol::handoff::{FailurePriority, ProblemSeverity};

/// Employees: (id, name, department).
pub const EMPLOYEES: &[(&str, &str, &str)] = &[
    ("E1001", "张伟", "研发部"),
    ("E1002", "王芳", "市场部"),
    ("E1003", "李娜", "财务部"),
    ("E1004", "刘洋", "人力资源部"),
    ("E1005", "陈静", "研发部"),
    ("E1006", "杨磊", "销售部"),
    ("E1007", "赵敏", "客服部"),
    ("E1008", "黄强", "运维部"),
];

/// Leave types.
pub const LEAVE_TYPES: &[&str] = &["年假", "病假", "事假", "调休", "婚假"];

/// What a user says, with `{days}`, `{type}`, `{date}` filled in.
pub const USER_LINES: &[&str] = &[
    "你好，我想申请{days}天{type}，从{date}开始。",
    "帮我查一下我还剩多少天{type}？",
    "我之前那个请假申请批下来了吗？",
    "能不能把请假改成{days}天？家里临时有事。",
    "这次请假需要谁审批？我的主管这周出差。",
    "如果跨年请假，余额是按今年还是明年算？",
    "好的，那就按这个提交吧。",
    "不好意思，日期写错了，应该是{date}。",
    "请问病假需要提供证明材料吗？",
    "提交之后我的余额会马上扣吗？",
];

/// What the assistant says.
pub const ASSISTANT_LINES: &[&str] = &[
    "好的，我先帮您查询一下当前的假期余额。",
    "您当前剩余{type}{days}天，可以提交本次申请。",
    "已为您创建请假申请，申请编号为 {app}，等待主管审批。",
    "根据公司规定，{type}需提前3个工作日申请，您的申请符合要求。",
    "已通知您的直属主管进行审批，审批结果会通过邮件通知您。",
    "跨年度请假时，今年的部分扣减今年余额，明年的部分扣减明年余额。",
    "抱歉，系统暂时无法连接审批服务，我稍后再试一次。",
    "已将请假天数修改为{days}天，请确认是否提交。",
    "病假超过2天需要上传医院证明，您可以在申请详情页补充附件。",
    "申请已提交成功。请问还有其他需要帮助的吗？",
];

/// Tools of the scenario.
pub const TOOLS: &[&str] = &[
    "get_employee_info",
    "get_leave_balance",
    "create_leave_application",
    "update_employee_leave_balance",
    "notify_approver",
    "query_application_status",
];

/// Checkers of the scenario.
pub const CHECKERS: &[&str] = &[
    "leave_balance_deducted",
    "application_status_correct",
    "approval_chain_notified",
    "date_range_valid",
    "cross_year_balance_correct",
    "date_format_valid",
];

/// A problem the generator attributes failures to.
#[derive(Debug, Clone, Copy)]
pub struct ProblemDef {
    /// `problem_id`.
    pub id: &'static str,
    /// `problem_type`.
    pub problem_type: &'static str,
    /// The index's `failure_type` of samples it explains.
    pub failure_type: &'static str,
    /// Severity.
    pub severity: ProblemSeverity,
    /// The checkers that fail because of it.
    pub checkers: &'static [&'static str],
    /// Title.
    pub title: &'static str,
    /// Description.
    pub description: &'static str,
    /// Evidence, with `{n}` for the count.
    pub evidence: &'static str,
    /// (target, section, modification, rationale).
    pub fix: (&'static str, &'static str, &'static str, &'static str),
    /// Relative frequency among failures.
    pub weight: u32,
}

/// The problems, most frequent first (the first two are the seed's own example).
pub const PROBLEMS: &[ProblemDef] = &[
    ProblemDef {
        id: "L1P_001",
        problem_type: "BusinessRule_Unclear",
        failure_type: "Layer1_BusinessRule",
        severity: ProblemSeverity::Critical,
        checkers: &["leave_balance_deducted"],
        title: "余额扣减时机未明确",
        description: "BusinessRules.md 未明确说明余额必须在创建申请时同步扣减",
        evidence: "{n}个case中Agent都创建了申请但未扣减余额",
        fix: (
            "BusinessRules.md",
            "## 请假申请流程",
            "在步骤2后添加：必须立即调用 update_employee_leave_balance 扣减余额",
            "明确业务规则，避免Agent遗漏关键操作",
        ),
        weight: 9,
    },
    ProblemDef {
        id: "L1P_002",
        problem_type: "Checker_Design",
        failure_type: "Layer1_CheckerDesign",
        severity: ProblemSeverity::High,
        checkers: &["leave_balance_deducted"],
        title: "余额checker容忍度过严",
        description: "leave_balance_deducted要求精确相等，但存在浮点误差",
        evidence: "{n}个case预期7.0天但实际6.999999天",
        fix: (
            "unified_scenario_design.yaml",
            "checkers.leave_balance_deducted",
            "将validation_logic改为容忍0.01天误差",
            "处理浮点数精度问题",
        ),
        weight: 3,
    },
    ProblemDef {
        id: "L1P_003",
        problem_type: "BusinessRule_Missing",
        failure_type: "Layer1_BusinessRule",
        severity: ProblemSeverity::High,
        checkers: &["cross_year_balance_correct", "application_status_correct"],
        title: "跨年度请假余额计算规则缺失",
        description: "BusinessRules.md 没有说明跨年度请假时两个年度余额如何分别扣减",
        evidence: "{n}个跨年请假case中Agent一次性扣减了当年余额",
        fix: (
            "BusinessRules.md",
            "## 余额计算",
            "在BusinessRules中明确跨年度请假的余额计算规则：按自然年拆分扣减",
            "补全缺失的规则分支",
        ),
        weight: 3,
    },
    ProblemDef {
        id: "L1P_004",
        problem_type: "Format_Specification",
        failure_type: "Layer1_FormatSpec",
        severity: ProblemSeverity::Medium,
        checkers: &["date_format_valid", "date_range_valid"],
        title: "日期格式规范前后不一致",
        description: "format_specifications.json 要求 YYYY-MM-DD，示例中却使用 YYYY/MM/DD",
        evidence: "{n}个case中Agent按示例输出了斜杠分隔的日期",
        fix: (
            "format_specifications.json",
            "fields.start_date",
            "统一示例与规范为 YYYY-MM-DD，并在规范中给出反例",
            "消除规范与示例的矛盾",
        ),
        weight: 2,
    },
    ProblemDef {
        id: "L2_AGENT",
        problem_type: "Agent_Behavior",
        failure_type: "Layer2_AgentBehavior",
        severity: ProblemSeverity::Low,
        checkers: &["approval_chain_notified"],
        title: "Agent未通知审批人",
        description: "规则清楚，但Agent在部分对话中遗漏了 notify_approver 调用",
        evidence: "{n}个case中缺少审批通知",
        fix: (
            "agent_prompt",
            "工具调用顺序",
            "在提示词中强调创建申请后必须通知审批人",
            "属于Layer 2问题，不需要修改Layer 1设计",
        ),
        weight: 2,
    },
];

/// The priority of a failure explained by a problem of `severity`.
pub fn priority_of(severity: ProblemSeverity) -> FailurePriority {
    match severity {
        ProblemSeverity::Critical | ProblemSeverity::High => FailurePriority::High,
        ProblemSeverity::Medium => FailurePriority::Medium,
        ProblemSeverity::Low => FailurePriority::Low,
    }
}

/// `line` with its placeholders filled from `rng`.
pub fn fill(line: &str, rng: &mut fastrand::Rng) -> String {
    let days = rng.u32(1..=10).to_string();
    let ty = LEAVE_TYPES[rng.usize(..LEAVE_TYPES.len())];
    let date = format!("2026-{:02}-{:02}", rng.u32(1..=12), rng.u32(1..=28));
    let app = format!("LA{:06}", rng.u32(..1_000_000));
    line.replace("{days}", &days)
        .replace("{type}", ty)
        .replace("{date}", &date)
        .replace("{app}", &app)
}
