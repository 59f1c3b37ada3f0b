//! What a person does next with a run that waits for their review: the commands that
//! decide each waiting task and the one that runs what an acceptance frees, as the
//! headless summary and `show` print them.

use std::path::Path;

use crate::data::store::{Store, StoreError};

/// The tasks of `run_id` waiting for a review decision, in the queue's order.
pub fn waiting_tasks(store: &Store, run_id: &str) -> Result<Vec<String>, StoreError> {
    Ok(store
        .review_queue(Some(run_id))?
        .into_iter()
        .filter(|i| i.waits())
        .map(|i| i.task_id)
        .collect())
}

/// The lines that tell a person how to go on with run `run_id` of the database at
/// `db`, whose tasks `waiting` wait for review: read the evidence, accept or reject
/// each, and resume to run what an acceptance unblocked. Empty when nothing waits.
pub fn review_lines(db: &Path, run_id: &str, waiting: &[String]) -> Vec<String> {
    if waiting.is_empty() {
        return Vec::new();
    }
    let mut lines = vec![format!(
        "{} waiting for your review; read the evidence with: {}",
        match waiting.len() {
            1 => "1 task is".to_string(),
            n => format!("{n} tasks are"),
        },
        plexus_command(db, &format!("review {run_id}"))
    )];
    for task in waiting {
        let task = crate::base::text::sanitize::sanitize(task);
        lines.push(format!(
            "  accept: {}",
            plexus_command(db, &format!("review {run_id} {task} --accept"))
        ));
        lines.push(format!(
            "  reject: {}",
            plexus_command(
                db,
                &format!("review {run_id} {task} --reject --reason \"…\"")
            )
        ));
    }
    lines.push(format!(
        "then run what an acceptance unblocked: {}",
        plexus_command(db, &format!("resume {run_id}"))
    ));
    lines
}

/// `plexus ARGS` as a person types it for the database at `db`: `--db` is named only
/// when it is not the default one (quoted for a shell when it needs to be).
pub fn plexus_command(db: &std::path::Path, args: &str) -> String {
    let default = std::env::var_os("PLEXUS_DB")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::PathBuf::from(".plexus/plexus.db"));
    if db == default {
        format!("plexus {args}")
    } else {
        let shown = db.display().to_string();
        let quoted = if shown
            .chars()
            .any(|c| c.is_whitespace() || "'\"$`\\".contains(c))
        {
            format!("'{}'", shown.replace('\'', "'\\''"))
        } else {
            shown
        };
        format!("plexus --db {quoted} {args}")
    }
}

#[cfg(test)]
mod tests {
    use super::review_lines;
    use std::path::Path;

    #[test]
    fn each_waiting_task_gets_an_accept_and_a_reject_line_then_the_resume() {
        let lines = review_lines(
            Path::new("/tmp/x.db"),
            "R1",
            &["t1".to_string(), "t2".to_string()],
        );
        assert_eq!(lines.len(), 6, "{lines:#?}");
        assert!(lines[0].starts_with("2 tasks are waiting for your review"));
        assert!(lines[0].ends_with("plexus --db /tmp/x.db review R1"));
        assert_eq!(
            lines[1],
            "  accept: plexus --db /tmp/x.db review R1 t1 --accept"
        );
        assert_eq!(
            lines[2],
            "  reject: plexus --db /tmp/x.db review R1 t1 --reject --reason \"…\""
        );
        assert!(lines[5].ends_with("plexus --db /tmp/x.db resume R1"));
        assert!(review_lines(Path::new("/tmp/x.db"), "R1", &[]).is_empty());
    }
}
