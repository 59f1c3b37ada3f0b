//! Seed 004: the multi-agent debate protocol — agent outputs (planner, critic, host,
//! reporter), position summaries, the debate tools, session state, host decision rules,
//! the start request, SSE stream events and error documents.

mod directives;
mod enums;
mod front;
mod metadata;
mod output;
mod session;
mod stream;
mod todo;
mod tools;

pub use directives::{
    ContinueDirective, ContinueInstructions, ConvergeDirective, ConvergeInstructions,
    ForceOppositionDirective, ForceOppositionInstructions, HostDirective, MultiAgentStartRequest,
    UpdateCommandDirective,
};
pub use enums::{AgentRole, AgentStatus, HostAction, Level, OutputType, SessionStatus};
pub use front::{
    FrontDecision, FrontOutput, FrontReport, FrontRound, MultiAgentMessage, FRONT_END_TYPE,
};
pub use metadata::{
    ConsensusAnalysis, CriticMetadata, CriticOutput, Critique, DecisionConstraints,
    DiscussionSummary, FinalPlan, HostDecision, HostMetadata, HostOutput, Phase, Plan, PlanTask,
    PlannerMetadata, PlannerOutput, ReporterMetadata, ReporterOutput, Risk, Suggestion,
    ValidityCheck,
};
pub use output::{AgentOutput, PositionChanges, PositionSummary};
pub use session::{
    action_for_similarity, is_stubborn, AgentSlot, RoundRecord, SessionState, CONTINUE_ABOVE,
    CONVERGE_ABOVE, STUBBORN_ROUNDS, STUBBORN_SELF_SIMILARITY,
};
pub use stream::{
    AgentOutputEvent, AgentTimeoutError, DebateError, FinalReportEvent, HostDecisionEvent,
    MaxRoundsReached, SseData, StreamErrorEvent, StreamEvent, ToolExecutionFailedError, SSE_DONE,
};
pub use todo::{fill_todo, todo_of_plan};
pub use tools::{
    CalculateDateData, CalculateDateInput, CalculateDateOutput, ComparePositionsData,
    ComparePositionsInput, ComparePositionsOutput, DateOffset, DebateToolCall, GetNowData,
    GetNowOutput, ToolOutput,
};
