//! `plexus schema plan|config|response`: the JSON Schema of plan files or of
//! plexus.toml, for editors, generated from the same declarations the checks use; and
//! the schema a plan's task holds its model's answer to.

use std::path::Path;

use color_eyre::eyre::{eyre, Result};

use crate::cli::args::SchemaKind;

/// The schema of `what`, as pretty-printed JSON; `response` needs `plan` and `task`.
pub fn schema_text(what: SchemaKind, plan: Option<&Path>, task: Option<&str>) -> Result<String> {
    let schema = match what {
        SchemaKind::Plan => crate::model::plan::plan_schema(),
        SchemaKind::Config => crate::base::config::config_schema(),
        SchemaKind::Response => {
            let (Some(plan), Some(task)) = (plan, task) else {
                return Err(eyre!(
                    "`plexus schema response` needs a plan and one of its tasks: plexus schema response --task TASK PLAN"
                ));
            };
            response_schema(plan, task)?
        }
    };
    Ok(serde_json::to_string_pretty(&schema)?)
}

/// The schema task `task_id` of the plan file `plan` asks its model's answer to hold to
/// (before the run: the assets its upstream tasks make join `existing_assets` then).
fn response_schema(plan: &Path, task_id: &str) -> Result<serde_json::Value> {
    let plan_file = plan;
    let plan = crate::model::plan::load_plan_file(plan_file)?;
    let Some(task) = plan.tasks.iter().find(|t| t.task_id == task_id) else {
        return Err(eyre!(
            "{}: no task `{task_id}`{}",
            plan_file.display(),
            crate::base::text::suggest::did_you_mean(
                task_id,
                plan.tasks.iter().map(|t| t.task_id.as_str())
            )
        ));
    };
    if task.options().text_output {
        return Err(eyre!(
            "{}: task `{task_id}` takes the model's text as its output (`output_format: \"text\"`): its answer has no schema",
            plan_file.display()
        ));
    }
    let agent = plan.agents.get(&*task.agent).ok_or_else(|| {
        eyre!(
            "{}: task `{task_id}` names no known agent",
            plan_file.display()
        )
    })?;
    let known = task.context.existing_assets.as_deref().unwrap_or_default();
    Ok(crate::run::engine::answer_shape::schema(task, agent, known))
}

/// `plexus schema WHAT [--task T PLAN]`: prints the schema on standard output.
pub fn print(what: SchemaKind, plan: Option<&Path>, task: Option<&str>) -> Result<()> {
    crate::rawln!("{}", schema_text(what, plan, task)?);
    Ok(())
}
