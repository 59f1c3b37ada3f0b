//! Invocation ids unique in the database: the `SEQ` of `INV_{date}_{time}_{AGENT}_{SEQ}`
//! comes from a counter per agent short name kept in the database (`id_counters`), handed
//! out in blocks inside the writer's transaction. A block is never handed out twice,
//! whichever process asks and however close a crash and a resume come, so two
//! invocations never share an id, in one run or across runs. A process that dies leaves
//! the rest of its block unused (a gap in the numbers, never a repeat).

use rusqlite::{params, OptionalExtension, Transaction};

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

/// The largest number a counter hands out.
const LAST: i64 = 1 << 62;

/// Reserves `count` numbers of the counter `name` (an agent's short name); returns the
/// first. Runs inside the caller's (the writer's) transaction.
pub fn reserve(tx: &Transaction<'_>, name: &str, count: u64) -> Result<u64, StoreError> {
    let count = i64::try_from(count.clamp(1, 1 << 20)).unwrap_or(1);
    tx.prepare_cached(
        "INSERT INTO id_counters (name, next) VALUES (?1, 1) ON CONFLICT (name) DO NOTHING",
    )?
    .execute([name])?;
    // Only a counter with room for the block moves: the numbers never wrap or repeat.
    let first: Option<i64> = tx
        .prepare_cached(
            "UPDATE id_counters SET next = next + ?2
              WHERE name = ?1 AND next >= 1 AND next <= ?3 - ?2
              RETURNING next - ?2",
        )?
        .query_row(params![name, count, LAST], |r| r.get(0))
        .optional()?;
    first
        .and_then(|f| u64::try_from(f).ok())
        .ok_or_else(|| {
            StoreError::WriterGone(format!(
                "the invocation numbers of agent {name} (table id_counters) are used up or out of range"
            ))
        })
}

/// The highest `SEQ` seen per agent short name, gathered from invocation ids.
#[derive(Debug, Default)]
pub struct HighestSeq(rustc_hash::FxHashMap<String, u64>);

impl HighestSeq {
    /// Notes the id (ids of another shape are ignored).
    pub fn note(&mut self, id: &str) {
        if let Some((short, seq)) = parse_invocation_id(id) {
            match self.0.get_mut(short) {
                Some(h) => *h = (*h).max(seq),
                None => {
                    self.0.insert(short.to_string(), seq);
                }
            }
        }
    }

    /// Moves every counter above the numbers noted; a counter already higher stays
    /// where it is (counters never go down).
    pub fn raise_counters(&self, tx: &Transaction<'_>) -> Result<(), StoreError> {
        let mut raise = tx.prepare_cached(
            "INSERT INTO id_counters (name, next) VALUES (?1, ?2)
             ON CONFLICT (name) DO UPDATE SET next = MAX(next, excluded.next)",
        )?;
        for (name, seq) in &self.0 {
            let next = i64::try_from(seq.saturating_add(1))
                .unwrap_or(LAST)
                .min(LAST);
            raise.execute(params![name, next])?;
        }
        Ok(())
    }
}

/// Starts every counter above the numbers ids already in the file use (written before
/// the counters existed): the invocations stored and every event of a call (a debate's
/// calls are only in its events).
pub fn seed_counters(tx: &Transaction<'_>) -> Result<(), StoreError> {
    let mut highest = HighestSeq::default();
    let mut st = tx.prepare(
        "SELECT invocation_id FROM invocations
         UNION ALL
         SELECT invocation_id FROM execution_logs WHERE invocation_id IS NOT NULL",
    )?;
    let mut rows = st.query([])?;
    while let Some(row) = rows.next()? {
        let id: String = row.get(0)?;
        highest.note(&id);
    }
    highest.raise_counters(tx)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn migrated() -> rusqlite::Connection {
        let mut conn = rusqlite::Connection::open_in_memory().expect("db");
        crate::data::store::schema::migrate(&mut conn).expect("schema");
        conn
    }

    #[test]
    fn blocks_never_overlap_and_a_counter_never_wraps() {
        let mut conn = migrated();
        let tx = conn.transaction().expect("tx");
        let a = reserve(&tx, "SCHOLAR", 16).expect("a");
        let b = reserve(&tx, "SCHOLAR", 32).expect("b");
        let c = reserve(&tx, "CODE", 16).expect("c");
        assert_eq!((a, b, c), (1, 17, 1));
        tx.execute(
            "UPDATE id_counters SET next = ?1 WHERE name = 'CODE'",
            [LAST - 4],
        )
        .expect("near the end");
        assert!(
            reserve(&tx, "CODE", 16).is_err(),
            "no room: refused, not wrapped"
        );
        tx.execute("UPDATE id_counters SET next = -5 WHERE name = 'CODE'", [])
            .expect("corrupt");
        assert!(
            reserve(&tx, "CODE", 1).is_err(),
            "a negative counter is refused"
        );
    }

    #[test]
    fn counters_start_above_every_number_the_file_names() {
        let mut conn = migrated();
        conn.execute_batch(
            "INSERT INTO execution_logs (event_id, run_id, seq, ts, kind, invocation_id, payload)
             VALUES (1, 'R', 1, 0, 'invocation_started', 'INV_20260101_000000_SCHOLAR_007', '{}'),
                    (2, 'R', 2, 0, 'debate_reply', 'INV_20260101_000000_PLANNER_041', '{}')",
        )
        .expect("events");
        let tx = conn.transaction().expect("tx");
        seed_counters(&tx).expect("seed");
        assert_eq!(reserve(&tx, "SCHOLAR", 1).expect("scholar"), 8);
        assert_eq!(reserve(&tx, "PLANNER", 1).expect("planner"), 42);
    }

    #[test]
    fn raising_counters_moves_them_up_and_never_down() {
        let mut conn = migrated();
        let tx = conn.transaction().expect("tx");
        assert_eq!(reserve(&tx, "CODE", 100).expect("code"), 1);
        let mut seen = HighestSeq::default();
        for id in [
            "INV_20260101_000000_SCHOLAR_007",
            "INV_20260101_000000_SCHOLAR_003",
            "INV_20260101_000000_CODE_050",
            "not an id",
        ] {
            seen.note(id);
        }
        seen.raise_counters(&tx).expect("raise");
        assert_eq!(reserve(&tx, "SCHOLAR", 1).expect("scholar"), 8);
        assert_eq!(
            reserve(&tx, "CODE", 1).expect("code"),
            101,
            "a counter already above the ids stays"
        );
    }

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
