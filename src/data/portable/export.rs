//! Writing a run out: every row of it read inside one read transaction (a consistent
//! snapshot even while another process writes the run) and streamed row by row, so a
//! run of any size is exported in bounded memory.

use std::io::Write;

use rusqlite::types::ValueRef;
use rusqlite::{Connection, Row};
use serde::Serialize;

use super::format::{version_for, Counts, Header, JsonText, Kind, Real, Str, FORMAT};
use super::records::{
    AtomRec, EventRec, InvocationRec, PaperRec, PromptRec, QualityRec, RelationRec, ReviewRec,
    RunRec, TaskRec,
};
use super::PortableError;
use crate::data::store::schema::{run_events_sql, PLAN_JSON, RUN_BASE_SQL, SCHEMA_VERSION};
use crate::data::store::{lease, Store, StoreError};

/// Events between two calls of the progress callback.
pub const PROGRESS_EVERY: u64 = 100_000;

/// The atoms the run's relations join (library assets among them are exported).
const RELATED_ATOMS: &str = "SELECT target_atom_id FROM relations WHERE run_id = ?1
     UNION SELECT source_atom_id FROM relations WHERE run_id = ?1";

fn assets_where() -> String {
    format!("run_id IS NULL AND atom_id IN ({RELATED_ATOMS})")
}

fn papers_where() -> String {
    format!(
        "paper_id IN (SELECT paper_id FROM knowledge_atoms WHERE run_id = ?1
                      UNION SELECT paper_id FROM knowledge_atoms WHERE {})",
        assets_where()
    )
}

const ATOM_COLUMNS: &str = "atom_id, task_id, invocation_id, agent, atom_type, category, data_status, paper_id, domain, content, confidence, grade, score, provenance, delta_audit, metadata, created_at, reviewed_by, reviewed_at";

/// Writes run `run` (an id, a unique prefix or `latest`) of `store` to `out`, header
/// first. `progress` is told `(events written, events in all)` every
/// [`PROGRESS_EVERY`] events and once at the end. Returns the header written.
pub fn export_run<W: Write>(
    store: &Store,
    run: &str,
    out: &mut W,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Header, PortableError> {
    let conn = store.conn();
    // Everything below reads one snapshot: what was committed when the first read ran.
    let tx = conn.unchecked_transaction().map_err(StoreError::from)?;
    let run_id = store.run(run)?.run_id;
    let (header, prompts) = header_of(&tx, &run_id)?;
    put(out, &header)?;
    let id: &str = &run_id;
    let c = &header.counts;
    let mut n = Sections { out, conn: &tx };
    n.run_and_calls(id, c, &prompts)?;
    n.atoms_and_library(id, c)?;
    let total = c.events;
    let done = n.events(id, total, progress)?;
    progress(done, total);
    out.flush().map_err(PortableError::Write)?;
    Ok(header)
}

/// The header of `run_id`'s export, and the system prompts its invocations refer to.
fn header_of(conn: &Connection, run_id: &str) -> Result<(Header, Vec<String>), PortableError> {
    let count = |sql: &str| -> Result<u64, StoreError> {
        let n: i64 = conn.query_row(sql, [run_id], |r| r.get(0))?;
        Ok(n.max(0) as u64)
    };
    // The few distinct system prompts; stored requests that are not JSON refer to none.
    let mut prompts = Vec::new();
    {
        let mut st = conn
            .prepare(
                "SELECT p.prompt_hash FROM prompts p WHERE p.prompt_hash IN (
                   SELECT CASE WHEN json_valid(request_json) THEN json_extract(request_json, '$.system_prompt_ref') END
                   FROM invocations WHERE run_id = ?1)
                 ORDER BY p.prompt_hash",
            )
            .map_err(StoreError::from)?;
        let mut rows = st.query([run_id]).map_err(StoreError::from)?;
        while let Some(r) = rows.next().map_err(StoreError::from)? {
            prompts.push(r.get::<_, String>(0).map_err(StoreError::from)?);
        }
    }
    let counts = Counts {
        tasks: count("SELECT COUNT(*) FROM tasks WHERE run_id = ?1")?,
        prompts: prompts.len() as u64,
        invocations: count("SELECT COUNT(*) FROM invocations WHERE run_id = ?1")?,
        atoms: count("SELECT COUNT(*) FROM knowledge_atoms WHERE run_id = ?1")?,
        quality_records: count("SELECT COUNT(*) FROM quality_records WHERE run_id = ?1")?,
        relations: count("SELECT COUNT(*) FROM relations WHERE run_id = ?1")?,
        papers: count(&format!(
            "SELECT COUNT(*) FROM papers WHERE {}",
            papers_where()
        ))?,
        assets: count(&format!(
            "SELECT COUNT(*) FROM knowledge_atoms WHERE {}",
            assets_where()
        ))?,
        events: count(&format!(
            "SELECT COUNT(*) FROM execution_logs WHERE {}",
            run_events_sql(RUN_BASE_SQL)
        ))?,
        reviews: count("SELECT COUNT(*) FROM reviews WHERE run_id = ?1")?,
    };
    let status: String = conn
        .query_row("SELECT status FROM runs WHERE run_id = ?1", [run_id], |r| {
            r.get(0)
        })
        .map_err(StoreError::from)?;
    let now_ms = chrono::Utc::now().timestamp_millis();
    let live = lease::owner(conn, run_id)?.is_some_and(|o| lease::gone(&o, now_ms).is_none());
    Ok((
        Header {
            format: FORMAT.into(),
            version: version_for(&counts),
            plexus: env!("CARGO_PKG_VERSION").into(),
            schema: SCHEMA_VERSION,
            run_id: run_id.into(),
            exported_at: crate::base::clock::now_rfc3339(),
            status,
            live,
            counts,
        },
        prompts,
    ))
}

/// Where the records go, and the snapshot they come from.
struct Sections<'w, 'c, W: Write> {
    out: &'w mut W,
    conn: &'c Connection,
}

impl<W: Write> Sections<'_, '_, W> {
    /// The run's row, its tasks, the system prompts `prompts` and its invocations.
    fn run_and_calls(
        &mut self,
        id: &str,
        c: &Counts,
        prompts: &[String],
    ) -> Result<(), PortableError> {
        self.rows(1, &format!("SELECT r.run_id, r.plan_id, r.plan_source, {PLAN_JSON}, r.provider, r.config_json, r.status, r.created_at, r.finished_at, r.task_count FROM runs r WHERE r.run_id = ?1"), id, |r, out| {
            put(out, &RunRec {
                t: Kind::Run,
                run_id: s(r, 0)?,
                plan_id: s(r, 1)?,
                plan_source: s(r, 2)?,
                plan_json: j(r, 3)?,
                provider: s(r, 4)?,
                config_json: j(r, 5)?,
                status: s(r, 6)?,
                created_at: s(r, 7)?,
                finished_at: os(r, 8)?,
                task_count: r.get(9)?,
            })
        })?;
        self.rows(c.tasks, "SELECT task_id, agent, status, attempts, atoms, error_code, final_invocation_id, updated_at FROM tasks WHERE run_id = ?1 ORDER BY rowid", id, |r, out| {
            put(out, &TaskRec {
                t: Kind::Task,
                task_id: s(r, 0)?,
                agent: s(r, 1)?,
                status: s(r, 2)?,
                attempts: r.get(3)?,
                atoms: r.get(4)?,
                error_code: os(r, 5)?,
                final_invocation_id: os(r, 6)?,
                updated_at: s(r, 7)?,
            })
        })?;
        for hash in prompts {
            self.rows(
                1,
                "SELECT prompt_hash, text FROM prompts WHERE prompt_hash = ?1",
                hash,
                |r, out| {
                    put(
                        out,
                        &PromptRec {
                            t: Kind::Prompt,
                            prompt_hash: s(r, 0)?,
                            text: s(r, 1)?,
                        },
                    )
                },
            )?;
        }
        self.rows(c.invocations, "SELECT invocation_id, task_id, agent, attempt, status, started_at, execution_time_ms, prompt_tokens, output_tokens, error_codes, request_json, response_json, provider_prompt_tokens, provider_output_tokens FROM invocations WHERE run_id = ?1 ORDER BY rowid", id, |r, out| {
            put(out, &InvocationRec {
                t: Kind::Invocation,
                invocation_id: s(r, 0)?,
                task_id: s(r, 1)?,
                agent: s(r, 2)?,
                attempt: r.get(3)?,
                status: os(r, 4)?,
                started_at: s(r, 5)?,
                execution_time_ms: r.get(6)?,
                prompt_tokens: r.get(7)?,
                output_tokens: r.get(8)?,
                error_codes: os(r, 9)?,
                request_json: j(r, 10)?,
                response_json: oj(r, 11)?,
                provider_prompt_tokens: r.get(12)?,
                provider_output_tokens: r.get(13)?,
            })
        })?;
        Ok(())
    }

    /// The run's atoms, quality records, relations and reviews, then the papers and
    /// library assets they refer to.
    fn atoms_and_library(&mut self, id: &str, c: &Counts) -> Result<(), PortableError> {
        self.rows(
            c.atoms,
            &format!("SELECT {ATOM_COLUMNS} FROM knowledge_atoms WHERE run_id = ?1 ORDER BY rowid"),
            id,
            |r, out| put(out, &atom(Kind::Atom, r)?),
        )?;
        self.rows(c.quality_records, "SELECT task_id, invocation_id, atom_id, grade, score, issues, created_at FROM quality_records WHERE run_id = ?1 ORDER BY record_id", id, |r, out| {
            put(out, &QualityRec {
                t: Kind::Quality,
                task_id: s(r, 0)?,
                invocation_id: s(r, 1)?,
                atom_id: s(r, 2)?,
                grade: s(r, 3)?,
                score: Real(r.get(4)?),
                issues: j(r, 5)?,
                created_at: s(r, 6)?,
            })
        })?;
        self.rows(c.relations, "SELECT source_atom_id, target_atom_id, relation_type, invocation_id, note, created_at FROM relations WHERE run_id = ?1 ORDER BY relation_id", id, |r, out| {
            put(out, &RelationRec {
                t: Kind::Relation,
                source_atom_id: s(r, 0)?,
                target_atom_id: s(r, 1)?,
                relation_type: s(r, 2)?,
                invocation_id: os(r, 3)?,
                note: os(r, 4)?,
                created_at: s(r, 5)?,
            })
        })?;
        self.rows(c.reviews, "SELECT task_id, invocation_id, decision, reviewer, note, decided_at, seq FROM reviews WHERE run_id = ?1 ORDER BY seq", id, |r, out| {
            put(out, &ReviewRec {
                t: Kind::Review,
                task_id: s(r, 0)?,
                invocation_id: s(r, 1)?,
                decision: s(r, 2)?,
                reviewer: s(r, 3)?,
                note: os(r, 4)?,
                decided_at: s(r, 5)?,
                seq: r.get(6)?,
            })
        })?;
        self.rows(c.papers, &format!("SELECT paper_id, title, authors, year, venue, domain, pdf_path, arxiv_url, abstract, created_at FROM papers WHERE {} ORDER BY paper_id", papers_where()), id, |r, out| {
            put(out, &PaperRec {
                t: Kind::Paper,
                paper_id: s(r, 0)?,
                title: os(r, 1)?,
                authors: os(r, 2)?,
                year: r.get(3)?,
                venue: os(r, 4)?,
                domain: os(r, 5)?,
                pdf_path: os(r, 6)?,
                arxiv_url: os(r, 7)?,
                abstract_text: os(r, 8)?,
                created_at: s(r, 9)?,
            })
        })?;
        self.rows(
            c.assets,
            &format!(
                "SELECT {ATOM_COLUMNS} FROM knowledge_atoms WHERE {} ORDER BY rowid",
                assets_where()
            ),
            id,
            |r, out| put(out, &atom(Kind::Asset, r)?),
        )?;
        Ok(())
    }

    /// The run's `total` events, `progress` told every [`PROGRESS_EVERY`]; returns how
    /// many were written.
    fn events(
        &mut self,
        id: &str,
        total: u64,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<u64, PortableError> {
        let mut done = 0u64;
        self.rows(total, &format!("SELECT seq, ts, kind, task_id, invocation_id, agent, payload FROM execution_logs WHERE {} ORDER BY event_id", run_events_sql(RUN_BASE_SQL)), id, |r, out| {
            done += 1;
            if done.is_multiple_of(PROGRESS_EVERY) {
                progress(done, total);
            }
            put(out, &EventRec {
                t: Kind::Event,
                seq: r.get(0)?,
                ts: r.get(1)?,
                kind: s(r, 2)?,
                task_id: os(r, 3)?,
                invocation_id: os(r, 4)?,
                agent: os(r, 5)?,
                payload: j(r, 6)?,
            })
        })?;
        Ok(done)
    }

    /// Writes one record per row of `sql` (bound to `param`) and checks that they are
    /// the `expected` number the header announced.
    fn rows(
        &mut self,
        expected: u64,
        sql: &str,
        param: &str,
        mut record: impl FnMut(&Row<'_>, &mut W) -> Result<(), PortableError>,
    ) -> Result<(), PortableError> {
        let mut st = self.conn.prepare(sql).map_err(StoreError::from)?;
        let mut rows = st.query([param]).map_err(StoreError::from)?;
        let mut n = 0u64;
        while let Some(r) = rows.next().map_err(StoreError::from)? {
            record(r, self.out)?;
            n += 1;
        }
        if n != expected {
            return Err(PortableError::Snapshot(format!(
                "counted {expected} rows but read {n} for: {}",
                sql.split_whitespace().take(8).collect::<Vec<_>>().join(" ")
            )));
        }
        Ok(())
    }
}

/// Writes one line.
fn put<W: Write, T: Serialize>(out: &mut W, rec: &T) -> Result<(), PortableError> {
    serde_json::to_writer(&mut *out, rec)
        .map_err(|e| PortableError::Write(std::io::Error::from(e)))?;
    out.write_all(b"\n").map_err(PortableError::Write)
}

fn atom<'r>(t: Kind, r: &'r Row<'_>) -> rusqlite::Result<AtomRec<'r>> {
    Ok(AtomRec {
        t,
        atom_id: s(r, 0)?,
        task_id: os(r, 1)?,
        invocation_id: os(r, 2)?,
        agent: os(r, 3)?,
        atom_type: os(r, 4)?,
        category: os(r, 5)?,
        data_status: os(r, 6)?,
        paper_id: os(r, 7)?,
        domain: os(r, 8)?,
        content: j(r, 9)?,
        confidence: r.get::<_, Option<f64>>(10)?.map(Real),
        grade: os(r, 11)?,
        score: r.get::<_, Option<f64>>(12)?.map(Real),
        provenance: oj(r, 13)?,
        delta_audit: oj(r, 14)?,
        metadata: oj(r, 15)?,
        created_at: s(r, 16)?,
        reviewed_by: os(r, 17)?,
        reviewed_at: os(r, 18)?,
    })
}

/// Text of column `i` (NULL, where the schema allows none, is an error), borrowed.
fn text<'r>(r: &'r Row<'_>, i: usize) -> rusqlite::Result<Option<&'r str>> {
    let v = r.get_ref(i)?;
    match v {
        ValueRef::Null => Ok(None),
        _ => v
            .as_str()
            .map(Some)
            .map_err(|e| rusqlite::Error::FromSqlConversionFailure(i, v.data_type(), Box::new(e))),
    }
}

fn os<'r>(r: &'r Row<'_>, i: usize) -> rusqlite::Result<Option<Str<'r>>> {
    Ok(text(r, i)?.map(Str::from))
}

fn s<'r>(r: &'r Row<'_>, i: usize) -> rusqlite::Result<Str<'r>> {
    text(r, i)?
        .map(Str::from)
        .ok_or(rusqlite::Error::InvalidColumnType(
            i,
            format!("column {i}"),
            rusqlite::types::Type::Null,
        ))
}

fn oj<'r>(r: &'r Row<'_>, i: usize) -> rusqlite::Result<Option<JsonText<'r>>> {
    Ok(text(r, i)?.map(JsonText::from))
}

fn j<'r>(r: &'r Row<'_>, i: usize) -> rusqlite::Result<JsonText<'r>> {
    Ok(JsonText(s(r, i)?.0))
}
