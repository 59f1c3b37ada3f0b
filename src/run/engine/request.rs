//! Building an AgentRequest (SPEC §3.2): constraints from agent defaults and the
//! execution mode (seed 001 §5.2), the instruction template (§6.1), context, ids (§9.1).

use serde::Serialize;
use serde_json::Value;

use crate::base::agents::AgentDef;
pub use crate::base::protocol::invocation::{prompt_hash, render_user_prompt};
use crate::base::protocol::SharedJson;
use crate::base::protocol::{
    AgentRequest, Constraints, Dependency, Grade, RequestContext, UserPrompt,
};
use crate::model::plan::{ConstraintOverrides, ExecutionMode, Task};

/// Constraints of an agent under an execution mode, then the task's overrides.
/// Temperatures are rounded to 2 decimals and floored at `min_temperature`.
pub fn constraints_for(
    agent: &AgentDef,
    mode: ExecutionMode,
    overrides: &ConstraintOverrides,
    min_temperature: f64,
) -> Constraints {
    let (dt, tok, time) = match mode {
        ExecutionMode::DeepInternalization => (0.0, 1.5, 2.0),
        ExecutionMode::QuickAssessment => (0.1, 0.5, 0.5),
        ExecutionMode::EngineeringReproduction => (-0.1, 1.2, 1.5),
    };
    let temperature = ((agent.temperature + dt).max(min_temperature) * 100.0).round() / 100.0;
    let mut c = Constraints {
        timeout_seconds: agent.timeout_seconds * time,
        max_tokens: (agent.max_tokens as f64 * tok).round() as u32,
        temperature,
    };
    if let Some(t) = overrides.timeout_seconds {
        c.timeout_seconds = t;
    }
    if let Some(m) = overrides.max_tokens {
        c.max_tokens = m;
    }
    if let Some(t) = overrides.temperature {
        c.temperature = t;
    }
    c
}

/// `INV_{YYYYMMDD}_{HHMMSS}_{AGENT_SHORT}_{SEQ}` (seed 001 §9.1); SEQ has at least 3 digits.
pub fn invocation_id(at: chrono::DateTime<chrono::Utc>, short: &str, seq: u64) -> String {
    use std::fmt::Write as _;
    let mut id = String::with_capacity(24 + short.len());
    id.push_str("INV_");
    crate::base::clock::push_compact(at, &mut id);
    id.push('_');
    id.push_str(short);
    let _ = write!(id, "_{seq:03}");
    id
}

/// The instruction: the task's own text, completed by the seed 001 §6.1 template parts it
/// lacks (focus, count and type of atoms, constraints), plus feedback from a failed try.
pub fn instruction_for(
    task: &Task,
    agent: &AgentDef,
    threshold: Grade,
    feedback: Option<&str>,
) -> String {
    let req = &task.output_requirements;
    let atom_type = req
        .atom_type
        .clone()
        .unwrap_or_else(|| agent.atom_type.clone());
    let mut s = task.instruction.trim().to_string();
    if let Some(f) = &task.options().focus {
        s.push_str(&format!(" Focus on: {f}."));
    }
    if task.options().text_output {
        if let Some(f) = feedback {
            s.push_str(&format!(" Your previous answer was rejected: {f}."));
        }
        return s;
    }
    match req.max_atoms {
        Some(n) => s.push_str(&format!(" Produce 1-{n} {atom_type}.")),
        None => s.push_str(&format!(" Produce {atom_type} atoms.")),
    }
    s.push_str(&format!(
        " Ensure every atom reaches grade {threshold} or better: fill every required field and anchor it to a paper location or code link."
    ));
    if let Some(f) = feedback {
        s.push_str(&format!(
            " Your previous answer was rejected: {f}. Answer with one valid JSON object only."
        ));
    }
    s
}

/// The quality threshold a task asks for (grade B when it names none or an unknown one).
pub fn threshold_for(task: &Task) -> Grade {
    task.output_requirements
        .quality_threshold
        .as_deref()
        .and_then(Grade::parse)
        .unwrap_or(Grade::B)
}

/// What the engine puts in a task's `context`, as the context budget left it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ContextParts {
    /// `context.dependencies`: the plan's own, or one entry per upstream task.
    pub dependencies: Option<Vec<Dependency>>,
    /// `context.existing_assets`: the plan's, then the atoms of upstream tasks.
    pub existing_assets: Option<Vec<String>>,
    /// `context.inputs`: the planned payloads of the data references.
    pub inputs: Vec<Value>,
    /// `context.context_trimmed`: how much of each list was sent, when one was cut.
    pub trimmed: Option<Value>,
    /// The inputs passed by reference, with their data: the task is offered
    /// `fetch_reference` over them.
    pub fetchable: Vec<crate::run::tools::fetch_reference::Fetchable>,
}

/// The dependencies a task's context lists: the plan's, or one per `depends_on` entry
/// pointing at its atoms.
pub fn dependencies_for(task: &Task) -> Option<Vec<Dependency>> {
    if task.context.dependencies.is_some() || task.depends_on.is_empty() {
        return task.context.dependencies.clone();
    }
    Some(
        task.depends_on
            .iter()
            .map(|d| Dependency {
                task_id: d.to_string(),
                output_ref: Some("output.atoms".into()),
                required: Some(true),
                extra: Default::default(),
            })
            .collect(),
    )
}

/// Builds the user prompt of a task around the context `parts` the engine adds, with
/// the answer's shape as `answer_format` shows it (see [`super::answer_shape`]).
pub fn user_prompt_for(
    task: &Task,
    agent: &AgentDef,
    threshold: Grade,
    feedback: Option<&str>,
    parts: ContextParts,
    answer_format: SharedJson,
) -> UserPrompt {
    let mut extra = task.context.extra.clone();
    extra.remove("focus");
    if !parts.inputs.is_empty() {
        extra.insert("inputs".into(), Value::Array(parts.inputs));
    }
    if let Some(t) = parts.trimmed {
        extra.insert("context_trimmed".into(), t);
    }
    let context = RequestContext {
        paper_info: task.context.paper_info.clone(),
        code_info: task.context.code_info.clone(),
        dependencies: parts.dependencies,
        existing_assets: parts.existing_assets,
        extra,
    };
    let mut output_requirements = (*task.output_requirements).clone();
    if output_requirements.atom_type.is_none() {
        output_requirements.atom_type = Some(agent.atom_type.clone());
    }
    output_requirements.quality_threshold = Some(threshold.as_str().to_string());
    UserPrompt {
        instruction: instruction_for(task, agent, threshold, feedback),
        context,
        focus: task.options().focus.clone(),
        output_requirements,
        answer_format: Some(answer_format),
        extra: Default::default(),
    }
}

/// The request as stored: the system prompt replaced by a reference into `prompts`.
#[derive(Serialize)]
pub struct StoredRequest<'a> {
    /// Id.
    pub invocation_id: &'a str,
    /// Agent.
    pub agent: &'a str,
    /// Task.
    pub task_id: &'a str,
    /// Plan.
    pub plan_id: &'a str,
    /// Hash key of the system prompt in `prompts`.
    pub system_prompt_ref: &'a str,
    /// User prompt, already rendered (see [`render_user_prompt`]).
    pub user_prompt: &'a serde_json::value::RawValue,
    /// Constraints.
    pub constraints: &'a Constraints,
    /// The context plan (seed 000 §7.2 report and per-input modes), when the task had
    /// inputs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_management: Option<&'a serde_json::Value>,
}

impl<'a> StoredRequest<'a> {
    /// Borrows a request for storage; `user_prompt` is its rendered user prompt.
    pub fn new(
        r: &'a AgentRequest,
        prompt_hash: &'a str,
        user_prompt: &'a serde_json::value::RawValue,
    ) -> Self {
        StoredRequest {
            invocation_id: &r.invocation_id,
            agent: &r.agent,
            task_id: &r.task_id,
            plan_id: &r.plan_id,
            system_prompt_ref: prompt_hash,
            user_prompt,
            constraints: &r.constraints,
            context_management: r.extra.get("context_management"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::agents::builtin;

    fn c(agent: &str, mode: ExecutionMode) -> Constraints {
        constraints_for(
            &builtin(agent).expect("agent"),
            mode,
            &ConstraintOverrides::default(),
            0.1,
        )
    }

    #[test]
    fn seed_001_5_3_examples() {
        let s = c("Scholar_Internalizer", ExecutionMode::DeepInternalization);
        assert_eq!(
            (s.temperature, s.max_tokens, s.timeout_seconds),
            (0.25, 12000, 600.0)
        );
        let s = c("Scholar_Internalizer", ExecutionMode::QuickAssessment);
        assert_eq!(
            (s.temperature, s.max_tokens, s.timeout_seconds),
            (0.35, 4000, 150.0)
        );
        let k = c("Code_Architect", ExecutionMode::DeepInternalization);
        assert_eq!(
            (k.temperature, k.max_tokens, k.timeout_seconds),
            (0.15, 15000, 600.0)
        );
        let k = c("Code_Architect", ExecutionMode::EngineeringReproduction);
        assert_eq!(
            (k.temperature, k.max_tokens, k.timeout_seconds),
            (0.1, 12000, 450.0)
        );
    }

    #[test]
    fn invocation_ids_follow_9_1() {
        let at = chrono::DateTime::parse_from_rfc3339("2026-02-03T14:30:52Z")
            .expect("time")
            .to_utc();
        assert_eq!(
            invocation_id(at, "SCHOLAR", 1),
            "INV_20260203_143052_SCHOLAR_001"
        );
        assert_eq!(
            invocation_id(at, "CODE", 1234),
            "INV_20260203_143052_CODE_1234"
        );
    }
}
