//! Generator of large plans (layers of fan-out and fan-in) for benchmarks and tests.

use serde_json::{json, Value};

const AGENTS: [(&str, &str, &[&str]); 4] = [
    (
        "Scholar_Internalizer",
        "Math_Atom",
        &[
            "content.mathematical_expression",
            "content.physical_intuition",
            "provenance.paper_location",
        ],
    ),
    (
        "Code_Architect",
        "Code_Atom",
        &["content.source_code", "content.code_location"],
    ),
    (
        "Scenario_Validator",
        "Scenario_Atom",
        &["content.challenge_scenario", "content.failure_mechanism"],
    ),
    (
        "Strategic_Critic",
        "Strategic_Decision",
        &["content.decision", "content.rationale"],
    ),
];

/// Shape of a generated plan (defined with the command line's options).
pub use crate::cli::args::GenPlanSpec as GenSpec;

/// Builds the plan JSON: one root, layers of `width` tasks each depending on up to
/// `fan_in` tasks of the layer above, and one final sink depending on the whole last
/// layer. Deterministic: the same spec gives the same plan.
pub fn generate(spec: GenSpec) -> Value {
    let n = spec.tasks.max(1);
    let width = spec.width.max(1);
    let mut tasks = Vec::with_capacity(n);
    let id = |i: usize| format!("T{i:05}");
    let task = |i: usize, deps: Vec<String>| {
        let (agent, atom_type, required) = AGENTS[i % AGENTS.len()];
        json!({
            "task_id": id(i),
            "agent": agent,
            "instruction": format!("Analyse part {i} of the method, produce {} {atom_type}, anchored to the source.", spec.max_atoms),
            "depends_on": deps,
            "output_requirements": {
                "atom_type": atom_type,
                "required_fields": required,
                "quality_threshold": "C",
                "max_atoms": spec.max_atoms
            }
        })
    };
    tasks.push(task(0, Vec::new()));
    let mut prev: Vec<usize> = vec![0];
    let mut i = 1;
    while i < n {
        let remaining = n - i;
        if remaining == 1 && n > 2 {
            // fan-in sink over the last layer
            tasks.push(task(i, prev.iter().map(|&p| id(p)).collect()));
            break;
        }
        let layer_len = width.min(remaining - usize::from(n > 2 && remaining > 1));
        let layer_len = layer_len.max(1);
        let mut layer = Vec::with_capacity(layer_len);
        for k in 0..layer_len {
            let fan = spec.fan_in.max(1).min(prev.len());
            let deps: Vec<String> = (0..fan)
                .map(|f| id(prev[(k + f * 7) % prev.len()]))
                .collect();
            let mut deps = deps;
            deps.sort();
            deps.dedup();
            tasks.push(task(i, deps));
            layer.push(i);
            i += 1;
        }
        prev = layer;
    }
    json!({
        "plan_id": format!("GEN_{n}_W{width}"),
        "execution_mode": "Quick_Assessment",
        "description": format!("generated: {n} tasks in layers of {width}, fan-in {}", spec.fan_in),
        "tasks": tasks
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::plan::parse_plan;

    #[test]
    fn generated_plans_validate_with_the_requested_size() {
        for n in [1, 2, 3, 10, 1001] {
            let v = generate(GenSpec {
                tasks: n,
                width: 50,
                fan_in: 3,
                max_atoms: 1,
            });
            let plan = parse_plan(&v.to_string(), "gen").expect("valid");
            assert_eq!(plan.tasks.len(), n);
            if n > 2 {
                let last = plan.tasks.last().expect("sink");
                assert!(!last.depends_on.is_empty());
            }
        }
    }
}
