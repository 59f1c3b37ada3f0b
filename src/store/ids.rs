//! Invocation ids unique in the database: the `SEQ` of `INV_{date}_{time}_{AGENT}_{SEQ}`
//! comes from a counter per agent short name kept in the database (`id_counters`), handed
//! out in blocks inside the writer's transaction. A block is never handed out twice,
//! whichever process asks and however close a crash and a resume come, so two
//! invocations never share an id, in one run or across runs. A process that dies leaves
//! the rest of its block unused (a gap in the numbers, never a repeat).

use rusqlite::{params, Transaction};

use super::StoreError;

/// The `(agent short name, SEQ)` of an invocation id `INV_{YYYYMMDD}_{HHMMSS}_{SHORT}_{SEQ}`;
/// `None` for an id of another shape.
pub fn parse_invocation_id(id: &str) -> Option<(&str, u64)> {
    let rest = id.strip_prefix("INV_")?;
    let mut parts = rest.splitn(3, '_');
    let (_date, _time, tail) = (parts.next()?, parts.next()?, parts.next()?);
    let (short, seq) = tail.rsplit_once('_')?;
    if short.is_empty() || seq.is_empty() || !seq.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((short, seq.parse().ok()?))
}

/// Reserves `count` numbers of the counter `name` (an agent's short name); returns the
/// first. Runs inside the caller's (the writer's) transaction.
pub fn reserve(tx: &Transaction<'_>, name: &str, count: u64) -> Result<u64, StoreError> {
    let count = i64::try_from(count.max(1)).unwrap_or(i64::MAX);
    tx.prepare_cached(
        "INSERT INTO id_counters (name, next) VALUES (?1, 1) ON CONFLICT (name) DO NOTHING",
    )?
    .execute([name])?;
    let first: i64 = tx
        .prepare_cached(
            "UPDATE id_counters SET next = next + ?2 WHERE name = ?1 RETURNING next - ?2",
        )?
        .query_row(params![name, count], |r| r.get(0))?;
    Ok(u64::try_from(first).unwrap_or(1))
}

/// Starts every counter above the numbers ids already in the file use (written before
/// the counters existed): the invocations stored and the calls the logs say started.
pub fn seed_counters(tx: &Transaction<'_>) -> Result<(), StoreError> {
    let mut highest: rustc_hash::FxHashMap<String, u64> = Default::default();
    let mut st = tx.prepare(
        "SELECT invocation_id FROM invocations
         UNION ALL
         SELECT invocation_id FROM execution_logs
          WHERE kind = 'invocation_started' AND invocation_id IS NOT NULL",
    )?;
    let mut rows = st.query([])?;
    while let Some(row) = rows.next()? {
        let id: String = row.get(0)?;
        if let Some((short, seq)) = parse_invocation_id(&id) {
            let h = highest.entry(short.to_string()).or_insert(0);
            *h = (*h).max(seq);
        }
    }
    let mut insert =
        tx.prepare("INSERT OR REPLACE INTO id_counters (name, next) VALUES (?1, ?2)")?;
    for (name, seq) in highest {
        insert.execute(params![
            name,
            i64::try_from(seq.saturating_add(1)).unwrap_or(i64::MAX)
        ])?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_protocol_shape_and_refuses_others() {
        assert_eq!(
            parse_invocation_id("INV_20260203_143052_SCHOLAR_001"),
            Some(("SCHOLAR", 1))
        );
        assert_eq!(
            parse_invocation_id("INV_20260203_143052_MY_AGENT_1234"),
            Some(("MY_AGENT", 1234))
        );
        for bad in [
            "INV_1",
            "INV_20260203_143052_SCHOLAR_",
            "X_1_2_A_3",
            "INV_2026_1_A_x1",
        ] {
            assert_eq!(parse_invocation_id(bad), None, "{bad}");
        }
    }
}
