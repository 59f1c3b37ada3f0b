//! Round-trip tests of every JSON example of the seed protocol documents
//! (`fixtures/protocol/*.json`): each file parses into its Rust type and serializes back
//! to the same JSON (numbers compared by value, so `300` and `300.0` are equal).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use plexus::base::protocol::context::{
    BatchConfigDoc, ContextLimitsDoc, ContextManagementDoc, PriorityConfigDoc, TaskChainDoc,
    TransferPayload,
};
use plexus::base::protocol::debate::{
    self, AgentOutput, AgentRole, CalculateDateOutput, ComparePositionsOutput, CriticOutput,
    DebateError, DebateToolCall, GetNowOutput, HostAction, HostDirective, HostOutput,
    MaxRoundsReached, MultiAgentStartRequest, PlannerOutput, PositionSummary, ReporterOutput,
    SessionState, SseData, StreamEvent,
};
use plexus::base::protocol::handoff::{
    ContextPackage, ExecuteToInitContext, HandoffType, InitToExecuteContext, Layer1ProblemsReport,
};
use plexus::base::protocol::invocation::{
    CodeInfoGuideDoc, ExecutionModeConstraints, PaperInfoGuideDoc,
};
use plexus::base::protocol::messages::{
    ContentBlock, ConversationMetrics, ConversationRound, LoadLevel, SkillActivationRequest,
    ToolCallMessage, ToolMetrics, ToolResultMessage, ToolRetryPolicy,
};
use plexus::base::protocol::refs::{
    DataReferenceDoc, DataReferenceOverviewDoc, FallbackConfigTemplateDoc, RefFilter,
    ResolutionFailureDoc,
};
use plexus::base::protocol::{
    AgentRequest, AgentResponse, ErrorInfo, QualityCheck, RequestContext, ResponseOutput,
    UserPrompt,
};

/// Parses a fixture's text as `T` and serializes it back.
type RoundTrip = fn(&str) -> serde_json::Result<Value>;

fn rt<T: DeserializeOwned + Serialize>(text: &str) -> serde_json::Result<Value> {
    let parsed: T = serde_json::from_str(text)?;
    serde_json::to_value(parsed)
}

/// Every fixture file and the Rust type it parses as (keep in step with the README).
const FIXTURES: &[(&str, RoundTrip)] = &[
    // Seed 000: data transfer protocol.
    (
        "seed000_2.1_data_reference_overview.json",
        rt::<DataReferenceOverviewDoc>,
    ),
    ("seed000_2.2_task_output_ref.json", rt::<DataReferenceDoc>),
    ("seed000_2.2_filter_eq.json", rt::<RefFilter>),
    ("seed000_2.2_filter_ne.json", rt::<RefFilter>),
    ("seed000_2.2_filter_in.json", rt::<RefFilter>),
    ("seed000_2.2_filter_gte.json", rt::<RefFilter>),
    ("seed000_2.2_filter_lt.json", rt::<RefFilter>),
    ("seed000_2.2_filter_contains.json", rt::<RefFilter>),
    ("seed000_2.3_file_ref.json", rt::<DataReferenceDoc>),
    ("seed000_2.4_db_query_ref.json", rt::<DataReferenceDoc>),
    (
        "seed000_3.2_resolution_failure.json",
        rt::<ResolutionFailureDoc>,
    ),
    (
        "seed000_3.2_fallback_config_template.json",
        rt::<FallbackConfigTemplateDoc>,
    ),
    ("seed000_4.1_full_transfer.json", rt::<TransferPayload>),
    ("seed000_4.2_summary_transfer.json", rt::<TransferPayload>),
    ("seed000_4.3_reference_transfer.json", rt::<TransferPayload>),
    ("seed000_6.1_context_limits.json", rt::<ContextLimitsDoc>),
    ("seed000_6.2_batch_config.json", rt::<BatchConfigDoc>),
    ("seed000_6.3_priority_config.json", rt::<PriorityConfigDoc>),
    ("seed000_7.1_task_chain.json", rt::<TaskChainDoc>),
    (
        "seed000_7.2_context_management.json",
        rt::<ContextManagementDoc>,
    ),
    // Seed 001: agent invocation protocol.
    ("seed001_2.1_agent_request.json", rt::<AgentRequest>),
    ("seed001_2.2.2_user_prompt.json", rt::<UserPrompt>),
    ("seed001_3.1_agent_response.json", rt::<AgentResponse>),
    ("seed001_3.2.2_output.json", rt::<ResponseOutput>),
    ("seed001_3.2.3_quality_check.json", rt::<QualityCheck>),
    ("seed001_3.2.4_errors.json", rt::<Vec<ErrorInfo>>),
    (
        "seed001_5.3_mode_parameters.json",
        rt::<ExecutionModeConstraints>,
    ),
    (
        "seed001_6.2.1_paper_info_guide.json",
        rt::<PaperInfoGuideDoc>,
    ),
    ("seed001_6.2.2_code_info_guide.json", rt::<CodeInfoGuideDoc>),
    ("seed001_6.2.3_dependencies.json", rt::<RequestContext>),
    ("seed001_7.1_scholar_request.json", rt::<AgentRequest>),
    ("seed001_7.1_scholar_response.json", rt::<AgentResponse>),
    ("seed001_7.2_code_request.json", rt::<AgentRequest>),
    ("seed001_7.3_validator_request.json", rt::<AgentRequest>),
    // Seed 002: handoff contexts.
    (
        "seed002_handoff1_init_to_execute.json",
        rt::<InitToExecuteContext>,
    ),
    (
        "seed002_handoff2_execute_to_init.json",
        rt::<ExecuteToInitContext>,
    ),
    (
        "seed002_report_layer1_problems_report.json",
        rt::<Layer1ProblemsReport>,
    ),
    // Seed 003: message pipeline (instances written for the Python models).
    ("seed003_1_content_block_text.json", rt::<ContentBlock>),
    ("seed003_1_content_block_thinking.json", rt::<ContentBlock>),
    ("seed003_1_content_block_tool_use.json", rt::<ContentBlock>),
    (
        "seed003_1_content_block_tool_result.json",
        rt::<ContentBlock>,
    ),
    ("seed003_2_tool_call.json", rt::<ToolCallMessage>),
    ("seed003_3_tool_result.json", rt::<ToolResultMessage>),
    ("seed003_3_tool_result_file.json", rt::<ToolResultMessage>),
    ("seed003_3_tool_result_error.json", rt::<ToolResultMessage>),
    (
        "seed003_retry_tool_retry_policy_defaults.json",
        rt::<ToolRetryPolicy>,
    ),
    (
        "seed003_skills_skill_activation_request.json",
        rt::<SkillActivationRequest>,
    ),
    ("seed003_metrics_tool_metrics.json", rt::<ToolMetrics>),
    (
        "seed003_metrics_conversation_metrics.json",
        rt::<ConversationMetrics>,
    ),
    (
        "seed003_rounds_conversation_round.json",
        rt::<ConversationRound>,
    ),
    // Seed 004: multi-agent debate protocol.
    ("seed004_2.1_agent_output_base.json", rt::<AgentOutput>),
    ("seed004_2.2_planner_output.json", rt::<PlannerOutput>),
    ("seed004_2.3_critic_output.json", rt::<CriticOutput>),
    ("seed004_2.4_host_output.json", rt::<HostOutput>),
    ("seed004_2.5_reporter_output.json", rt::<ReporterOutput>),
    (
        "seed004_3.1_compare_positions_input.json",
        rt::<DebateToolCall>,
    ),
    (
        "seed004_3.1_compare_positions_output.json",
        rt::<ComparePositionsOutput>,
    ),
    ("seed004_3.2_get_now_input.json", rt::<DebateToolCall>),
    ("seed004_3.2_get_now_output.json", rt::<GetNowOutput>),
    (
        "seed004_3.3_calculate_date_input.json",
        rt::<DebateToolCall>,
    ),
    (
        "seed004_3.3_calculate_date_output.json",
        rt::<CalculateDateOutput>,
    ),
    ("seed004_4.1_session_state.json", rt::<SessionState>),
    ("seed004_5.1_converge.json", rt::<HostDirective>),
    ("seed004_5.2_continue.json", rt::<HostDirective>),
    ("seed004_5.3_force_opposition.json", rt::<HostDirective>),
    ("seed004_5.4_update_command.json", rt::<HostDirective>),
    (
        "seed004_6.1_start_request.json",
        rt::<MultiAgentStartRequest>,
    ),
    (
        "seed004_6.1_sse_1_agent_output_planner.json",
        rt::<StreamEvent>,
    ),
    (
        "seed004_6.1_sse_2_agent_output_critic.json",
        rt::<StreamEvent>,
    ),
    ("seed004_6.1_sse_3_host_decision.json", rt::<StreamEvent>),
    (
        "seed004_6.1_sse_4_agent_output_planner_round2.json",
        rt::<StreamEvent>,
    ),
    ("seed004_6.1_sse_5_final_report.json", rt::<StreamEvent>),
    ("seed004_7.1_agent_timeout.json", rt::<DebateError>),
    (
        "seed004_7.2_max_rounds_reached.json",
        rt::<MaxRoundsReached>,
    ),
    ("seed004_7.3_tool_execution_failed.json", rt::<DebateError>),
    ("seed004_8_position_summary.json", rt::<PositionSummary>),
];

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join("protocol")
}

fn read_fixture(name: &str) -> String {
    let path = fixtures_dir().join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

fn parse<T: DeserializeOwned>(name: &str) -> T {
    serde_json::from_str(&read_fixture(name)).unwrap_or_else(|e| panic!("parsing {name}: {e}"))
}

/// The first difference between two JSON values, numbers compared as `f64` and object
/// keys in any order; `None` when they are equal.
fn json_diff(expected: &Value, actual: &Value, path: &str) -> Option<String> {
    match (expected, actual) {
        (Value::Number(a), Value::Number(b)) => {
            let (x, y) = (a.as_f64(), b.as_f64());
            (x != y).then(|| format!("{path}: number {a} != {b}"))
        }
        (Value::Array(a), Value::Array(b)) => {
            if a.len() != b.len() {
                return Some(format!("{path}: array length {} != {}", a.len(), b.len()));
            }
            a.iter()
                .zip(b)
                .enumerate()
                .find_map(|(i, (x, y))| json_diff(x, y, &format!("{path}[{i}]")))
        }
        (Value::Object(a), Value::Object(b)) => {
            if let Some(k) = a.keys().find(|k| !b.contains_key(*k)) {
                return Some(format!("{path}.{k}: missing after round trip"));
            }
            if let Some(k) = b.keys().find(|k| !a.contains_key(*k)) {
                return Some(format!("{path}.{k}: added by round trip ({})", b[k]));
            }
            a.iter()
                .find_map(|(k, x)| json_diff(x, &b[k], &format!("{path}.{k}")))
        }
        (a, b) => (a != b).then(|| format!("{path}: {a} != {b}")),
    }
}

#[test]
fn every_fixture_round_trips() {
    let mut failures = Vec::new();
    for (name, round_trip) in FIXTURES {
        let text = read_fixture(name);
        let original: Value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name} is not JSON: {e}"));
        match round_trip(&text) {
            Err(e) => failures.push(format!("{name}: does not parse: {e}")),
            Ok(back) => {
                if let Some(d) = json_diff(&original, &back, "$") {
                    failures.push(format!("{name}: {d}"));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "round-trip failures:\n{}",
        failures.join("\n")
    );
}

#[test]
fn every_fixture_file_is_in_the_table() {
    let on_disk: BTreeSet<String> = std::fs::read_dir(fixtures_dir())
        .expect("fixtures/protocol exists")
        .map(|e| {
            e.expect("directory entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|n| n.ends_with(".json"))
        .collect();
    let in_table: BTreeSet<String> = FIXTURES.iter().map(|(n, _)| n.to_string()).collect();
    assert_eq!(in_table.len(), FIXTURES.len(), "a fixture is listed twice");
    let untested: Vec<_> = on_disk.difference(&in_table).collect();
    let missing: Vec<_> = in_table.difference(&on_disk).collect();
    assert!(
        untested.is_empty(),
        "fixtures without a round-trip entry: {untested:?}"
    );
    assert!(
        missing.is_empty(),
        "table entries without a file: {missing:?}"
    );
}

#[test]
fn readme_lists_every_fixture() {
    let readme = read_fixture("README.md");
    let unlisted: Vec<_> = FIXTURES
        .iter()
        .map(|(n, _)| *n)
        .filter(|n| !readme.contains(&format!("`{n}`")))
        .collect();
    assert!(
        unlisted.is_empty(),
        "fixtures missing from README.md: {unlisted:?}"
    );
}

#[test]
fn numbers_compare_by_value() {
    let a: Value = serde_json::from_str(r#"{"t": 300, "x": [1, 2.5]}"#).expect("json");
    let b: Value = serde_json::from_str(r#"{"x": [1.0, 2.5], "t": 300.0}"#).expect("json");
    assert_eq!(json_diff(&a, &b, "$"), None);
    let c: Value = serde_json::from_str(r#"{"t": 301, "x": [1, 2.5]}"#).expect("json");
    assert!(json_diff(&a, &c, "$").is_some());
    let d: Value = serde_json::from_str(r#"{"t": 300, "x": [1, 2.5], "y": null}"#).expect("json");
    assert!(json_diff(&a, &d, "$").is_some());
}

#[test]
fn handoff_contexts_parse_as_the_base_package() {
    let init: ContextPackage = parse("seed002_handoff1_init_to_execute.json");
    assert_eq!(init.handoff_type, HandoffType::InitToExecute);
    assert_eq!(init.version, "2.0");
    assert!(init.extra.contains_key("user_requirement"));
    let back: ContextPackage = parse("seed002_handoff2_execute_to_init.json");
    assert_eq!(back.handoff_type, HandoffType::ExecuteToInit);
    assert!(back.extra.contains_key("failure_samples_index"));

    let ctx: ExecuteToInitContext = parse("seed002_handoff2_execute_to_init.json");
    assert_eq!(ctx.failure_samples_index.len(), 2);
    assert_eq!(ctx.iteration_summary.failed_samples, Some(18));
    let report: Layer1ProblemsReport = parse("seed002_report_layer1_problems_report.json");
    for p in &report.layer1_problems {
        assert_eq!(
            p.affected_samples.len() as u32,
            p.affected_count,
            "{}",
            p.problem_id
        );
    }
}

#[test]
fn seed003_defaults_and_rules() {
    let policy: ToolRetryPolicy = parse("seed003_retry_tool_retry_policy_defaults.json");
    assert_eq!(policy, ToolRetryPolicy::default());
    let from_empty: ToolRetryPolicy = serde_json::from_str("{}").expect("all fields default");
    assert_eq!(from_empty, ToolRetryPolicy::default());

    let req: SkillActivationRequest = parse("seed003_skills_skill_activation_request.json");
    assert_eq!(req.load_level, LoadLevel::Full);
    assert!(req.can_activate_nested("chart_export"));
    assert!(
        !req.can_activate_nested("data_analysis"),
        "a cycle is refused"
    );
    let deep = SkillActivationRequest {
        activation_depth: 3,
        ..req
    };
    assert!(
        !deep.can_activate_nested("chart_export"),
        "the depth limit holds"
    );
    assert!(serde_json::from_str::<LoadLevel>("4").is_err());

    let err: ToolResultMessage = parse("seed003_3_tool_result_error.json");
    assert_eq!(err.format_error_observation(), err.observation);
    let ok: ToolResultMessage =
        serde_json::from_str(r#"{"tool_call_id": "c", "observation": "o"}"#)
            .expect("minimal result");
    assert!(ok.success);
    assert_eq!(
        serde_json::to_value(ok.output_level).expect("level"),
        "standard"
    );
}

#[test]
fn seed004_placeholders_and_rules() {
    let base: AgentOutput = parse("seed004_2.1_agent_output_base.json");
    assert_eq!(base.agent_id, AgentRole::Other("string".into()));
    let host: HostOutput = parse("seed004_2.4_host_output.json");
    assert_eq!(
        host.metadata.decision.action,
        HostAction::Other("string".into())
    );
    let planner: PlannerOutput = parse("seed004_2.2_planner_output.json");
    assert_eq!(planner.agent_id, AgentRole::Planner);

    let reporter: ReporterOutput = parse("seed004_2.5_reporter_output.json");
    let plan = &reporter.metadata.final_plan.plan;
    let hours: f64 = plan
        .phases
        .iter()
        .flat_map(|p| &p.tasks)
        .map(|t| t.estimated_hours)
        .sum();
    assert_eq!(hours, plan.total_estimated_hours);

    assert_eq!(debate::action_for_similarity(0.92), HostAction::Converge);
    assert_eq!(debate::action_for_similarity(0.90), HostAction::Continue);
    assert_eq!(
        debate::action_for_similarity(0.70),
        HostAction::ForceOpposition
    );
    assert!(debate::is_stubborn(&[0.5, 0.99, 0.985]));
    assert!(!debate::is_stubborn(&[0.99, 0.97, 0.99]));

    assert_eq!(SseData::parse(" [DONE]").expect("done"), SseData::Done);
    let event = read_fixture("seed004_6.1_sse_3_host_decision.json");
    let parsed = SseData::parse(&event).expect("event");
    assert!(
        matches!(&parsed, SseData::Event(e) if matches!(e.as_ref(), StreamEvent::HostDecision(d) if d.action == HostAction::Continue))
    );
    let again = SseData::parse(&parsed.to_payload().expect("payload")).expect("reparse");
    assert_eq!(again, parsed);
}
