//! The database of `plexus bench failures`: ten runs sharing `invocations` failed,
//! timed-out and partial invocations with requests of about 2 KB, responses with an
//! error, and a quality record each — written with plain inserts in one transaction.

use std::path::Path;

use color_eyre::eyre::Result;
use rusqlite::params;

/// Writes the database at `db` (replacing it).
pub fn write_db(db: &Path, invocations: usize) -> Result<()> {
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", db.display()));
    }
    let mut conn = crate::data::store::open_connection(db)?;
    let tx = conn.transaction()?;
    let runs = 10;
    let now = crate::base::clock::now_rfc3339();
    for r in 0..runs {
        tx.execute(
            "INSERT INTO runs (run_id, plan_id, plan_source, plan_json, provider, config_json, status, created_at, task_count) VALUES (?1, 'bench', 'bench', '{}', 'simulated', '{}', 'failed', ?2, 0)",
            params![format!("R-bench-{r}"), now],
        )?;
    }
    let request = format!(
        "{{\"system_prompt_ref\":\"0\",\"user_prompt\":{{\"instruction\":\"{}\"}}}}",
        "分析论文中的扩散规划方法并给出原子。".repeat(40)
    );
    {
        let mut inv = tx.prepare(
            "INSERT INTO invocations (invocation_id, run_id, task_id, agent, attempt, status, started_at, execution_time_ms, prompt_tokens, output_tokens, error_codes, request_json, response_json) VALUES (?1, ?2, ?3, 'analyst', ?4, ?5, ?6, 1200, 900, 300, ?7, ?8, ?9)",
        )?;
        let mut q = tx.prepare(
            "INSERT INTO quality_records (run_id, task_id, invocation_id, atom_id, grade, score, issues, created_at) VALUES (?1, ?2, ?3, ?4, 'D', 0.3, '[]', ?5)",
        )?;
        let statuses = ["failed", "timeout", "partial"];
        let codes = ["E002", "E004", "E005"];
        for i in 0..invocations {
            let run = format!("R-bench-{}", i % runs);
            let task = format!("T{:06}", i / 2);
            let id = format!("INV_{i:08}");
            let k = i % 3;
            let response = format!(
                "{{\"errors\":[{{\"error_code\":\"{}\",\"message\":\"attempt {} failed: {}\"}}]}}",
                codes[k],
                i % 2 + 1,
                statuses[k]
            );
            inv.execute(params![
                id,
                run,
                task,
                (i % 2 + 1) as i64,
                statuses[k],
                now,
                codes[k],
                request,
                response
            ])?;
            if k == 2 {
                q.execute(params![run, task, id, format!("A{i}"), now])?;
            }
        }
    }
    tx.commit()?;
    Ok(())
}
