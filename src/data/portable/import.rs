//! Loading an exported run into a database: the header is checked before the database
//! is opened, then every record is checked and inserted inside one write transaction,
//! which is committed only when the whole file has been read and every count matches
//! the header. Any problem names the file and the line and rolls everything back.

use std::io::BufRead;
use std::path::Path;

use rusqlite::{params, Transaction, TransactionBehavior};
use serde::Deserialize;

use super::format::{Counts, Header, JsonText, Kind, Str, FORMAT, VERSION};
use super::lines::Lines;
use super::records::{
    AtomRec, EventRec, InvocationRec, PaperRec, PromptRec, QualityRec, RelationRec, ReviewRec,
    RunRec, Tag, TaskRec,
};
use super::{check_run_id, PortableError};
use crate::data::store::ids::HighestSeq;
use crate::data::store::schema::{event_base, MAX_SEQ};
use crate::data::store::{is_clock_kind, note_clock_event};
use crate::data::store::{open_connection, StoreError};

/// Page cache of the importing connection, KiB.
const CACHE_KIB: i64 = 32 * 1024;

/// Which id the imported run gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rename {
    /// Its own; refused when the database already has it.
    Keep,
    /// This one; refused when the database already has it.
    To(String),
    /// Its own, or when that is taken the first free one of `ID-2`, `ID-3`, …
    Auto,
}

/// What an import did.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportReport {
    /// The file's header.
    pub header: Header,
    /// The run's id in the database now.
    pub run_id: String,
    /// System prompts the database did not have.
    pub prompts_added: u64,
    /// Papers the database did not have (the others were kept as they are).
    pub papers_added: u64,
    /// Library assets the database did not have (the others were kept as they are).
    pub assets_added: u64,
}

/// Loads the export read from `input` (named `file` in messages) into the database at
/// `db` (created and migrated if needed). Nothing is written unless the whole file is
/// valid.
pub fn import_run<R: BufRead>(
    db: &Path,
    input: R,
    file: &str,
    rename: &Rename,
) -> Result<ImportReport, PortableError> {
    let mut lines = Lines::new(input, file);
    let header = read_header(&mut lines)?;
    if let Rename::To(id) = rename {
        check_run_id(id).map_err(|why| PortableError::BadRename {
            id: id.clone(),
            why,
        })?;
    }
    let mut conn = open_connection(db)?;
    conn.pragma_update(None, "cache_size", -CACHE_KIB)
        .map_err(StoreError::from)?;
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(StoreError::from)?;
    let run_id = target_id(&tx, &header.run_id, rename)?;
    let mut load = Loader {
        tx: &tx,
        run_id: &run_id,
        header: &header,
        seen: Counts::default(),
        run_seen: false,
        run_no: None,
        last_seq: 0,
        prompts_added: 0,
        papers_added: 0,
        assets_added: 0,
        highest: HighestSeq::default(),
    };
    while let Some((n, line)) = lines.next()? {
        match load.record(line) {
            Ok(()) => {}
            Err(Refused::Bad(message)) => return Err(lines.error_at(n, message)),
            Err(Refused::Store(e)) => return Err(e.into()),
        }
    }
    // The line the file should have gone on at.
    let end = lines.line;
    if !load.run_seen {
        return Err(lines.error_at(end, "the file has no run record".into()));
    }
    for kind in Kind::ALL {
        let (want, got) = (header.counts.of(kind), load.seen.of(kind));
        if kind != Kind::Run && got != want {
            return Err(lines.error_at(
                end,
                format!(
                    "the file ends with {got} `{}` records where its header announces {want} (is it cut short?)",
                    kind.as_str()
                ),
            ));
        }
    }
    load.highest.raise_counters(&tx)?;
    let report = ImportReport {
        header: header.clone(),
        run_id: run_id.clone(),
        prompts_added: load.prompts_added,
        papers_added: load.papers_added,
        assets_added: load.assets_added,
    };
    tx.commit().map_err(StoreError::from)?;
    Ok(report)
}

/// Reads and checks line 1.
fn read_header<R: BufRead>(lines: &mut Lines<R>) -> Result<Header, PortableError> {
    let Some((_, line)) = lines.next()? else {
        return Err(lines.error_at(1, "the file is empty; it is not a plexus run export".into()));
    };
    let v: serde_json::Value = serde_json::from_str(line).map_err(|e| {
        lines.error_at(
            1,
            format!(
                "not a plexus run export (the first line is not JSON: {})",
                json_message(&e)
            ),
        )
    })?;
    if v.get("format").and_then(|f| f.as_str()) != Some(FORMAT) {
        return Err(lines.error_at(
            1,
            format!("not a plexus run export (its header has no \"format\":\"{FORMAT}\")"),
        ));
    }
    match v.get("version").and_then(|n| n.as_u64()) {
        Some(n) if (1..=VERSION).contains(&n) => {}
        Some(n) if n > VERSION => {
            let by = v.get("plexus").and_then(|p| p.as_str()).unwrap_or("?");
            return Err(lines.error_at(
                1,
                format!(
                    "written in run format version {n} (by plexus {}); this plexus ({}) reads versions up to {VERSION}: upgrade plexus to import it",
                    crate::base::text::sanitize::sanitize(by),
                    env!("CARGO_PKG_VERSION")
                ),
            ));
        }
        _ => {
            return Err(lines.error_at(
                1,
                format!("its header has no valid \"version\" (1 to {VERSION})"),
            ))
        }
    }
    let header: Header =
        serde_json::from_value(v).map_err(|e| lines.error_at(1, format!("bad header: {e}")))?;
    check_run_id(&header.run_id)
        .map_err(|why| lines.error_at(1, format!("bad run id in the header: {why}")))?;
    Ok(header)
}

/// The id the run gets in the database `tx` writes.
fn target_id(tx: &Transaction<'_>, own: &str, rename: &Rename) -> Result<String, PortableError> {
    let taken = |id: &str| -> Result<bool, StoreError> {
        Ok(tx.query_row(
            "SELECT EXISTS (SELECT 1 FROM runs WHERE run_id = ?1)
                 OR EXISTS (SELECT 1 FROM log_runs WHERE run_id = ?1)
                 OR EXISTS (SELECT 1 FROM run_leases WHERE run_id = ?1)
                 OR EXISTS (SELECT 1 FROM tasks WHERE run_id = ?1)
                 OR EXISTS (SELECT 1 FROM invocations WHERE run_id = ?1)
                 OR EXISTS (SELECT 1 FROM knowledge_atoms WHERE run_id = ?1)",
            [id],
            |r| r.get(0),
        )?)
    };
    let id = match rename {
        Rename::Keep => own.to_string(),
        Rename::To(id) => id.clone(),
        Rename::Auto => {
            if !taken(own)? {
                return Ok(own.to_string());
            }
            let mut k = 2u64;
            loop {
                let id = format!("{own}-{k}");
                if !taken(&id)? {
                    return Ok(id);
                }
                k += 1;
            }
        }
    };
    if taken(&id)? {
        return Err(PortableError::Duplicate { run_id: id });
    }
    Ok(id)
}

/// Why one record was refused.
enum Refused {
    /// The record is bad.
    Bad(String),
    /// The database failed.
    Store(StoreError),
}

impl From<rusqlite::Error> for Refused {
    fn from(e: rusqlite::Error) -> Refused {
        if e.sqlite_error_code() == Some(rusqlite::ErrorCode::ConstraintViolation) {
            Refused::Bad(format!("the database refuses it: {e}"))
        } else {
            Refused::Store(e.into())
        }
    }
}

/// serde_json's message without its "at line 1 column N" (every record is one line).
fn json_message(e: &serde_json::Error) -> String {
    let text = e.to_string();
    match text.rsplit_once(" at line ") {
        Some((msg, _)) => format!("{msg} (column {})", e.column()),
        None => text,
    }
}

/// Parses `line` as a `T`.
fn parse<'a, T: Deserialize<'a>>(line: &'a str, kind: Kind) -> Result<T, Refused> {
    serde_json::from_str(line).map_err(|e| {
        Refused::Bad(format!(
            "bad `{}` record: {}",
            kind.as_str(),
            json_message(&e)
        ))
    })
}

/// Inserts records into the transaction.
struct Loader<'t> {
    tx: &'t Transaction<'t>,
    run_id: &'t str,
    header: &'t Header,
    seen: Counts,
    run_seen: bool,
    run_no: Option<i64>,
    last_seq: i64,
    prompts_added: u64,
    papers_added: u64,
    assets_added: u64,
    /// The highest invocation number per agent in the file: the database's counters
    /// move above them, so a resume of the imported run never hands out one again.
    highest: HighestSeq,
}

impl Loader<'_> {
    /// Checks and inserts the record on `line`.
    fn record(&mut self, line: &str) -> Result<(), Refused> {
        let tag: Tag<'_> = serde_json::from_str(line)
            .map_err(|e| Refused::Bad(format!("not a JSON object record: {}", json_message(&e))))?;
        let Some(t) = tag.t else {
            return Err(Refused::Bad("a record without a kind (`t`)".into()));
        };
        let Some(kind) = Kind::parse(t.as_str()) else {
            return Err(Refused::Bad(format!(
                "a record of unknown kind `{}`",
                t.as_str()
            )));
        };
        if kind == Kind::Run {
            if self.run_seen {
                return Err(Refused::Bad("a second run record".into()));
            }
            self.run_seen = true;
        } else if !self.run_seen {
            return Err(Refused::Bad(format!(
                "a `{}` record before the run record (the run comes first)",
                kind.as_str()
            )));
        }
        if let Some(n) = self.seen.slot(kind) {
            *n += 1;
            let want = self.header.counts.of(kind);
            if *n > want {
                return Err(Refused::Bad(format!(
                    "more `{}` records than the {want} its header announces",
                    kind.as_str()
                )));
            }
        }
        match kind {
            Kind::Run => self.run(parse(line, kind)?),
            Kind::Task => self.task(parse(line, kind)?),
            Kind::Prompt => self.prompt(parse(line, kind)?),
            Kind::Invocation => self.invocation(parse(line, kind)?),
            Kind::Atom | Kind::Asset => self.atom(kind, parse(line, kind)?),
            Kind::Quality => self.quality(parse(line, kind)?),
            Kind::Relation => self.relation(parse(line, kind)?),
            Kind::Review => self.review(parse(line, kind)?),
            Kind::Paper => self.paper(parse(line, kind)?),
            Kind::Event => self.event(parse(line, kind)?),
        }
    }

    fn run(&mut self, r: RunRec<'_>) -> Result<(), Refused> {
        if r.run_id.as_str() != self.header.run_id {
            return Err(Refused::Bad(format!(
                "the run record is of run `{}`, the header of `{}`",
                r.run_id.as_str(),
                self.header.run_id
            )));
        }
        self.tx
            .prepare_cached("INSERT INTO runs (run_id, plan_id, plan_source, plan_json, provider, config_json, status, created_at, finished_at, task_count) VALUES (?1, ?2, ?3, '', ?4, ?5, ?6, ?7, ?8, ?9)")?
            .execute(params![self.run_id, r.plan_id.as_str(), r.plan_source.as_str(), r.provider.as_str(), r.config_json.as_str(), r.status.as_str(), r.created_at.as_str(), o(&r.finished_at), r.task_count])?;
        self.tx
            .prepare_cached("INSERT INTO run_plans (run_id, plan_json) VALUES (?1, zeroblob(?2))")?
            .execute(params![self.run_id, r.plan_json.as_str().len() as i64])?;
        crate::data::store::in_place::write(
            self.tx,
            "run_plans",
            "plan_json",
            self.tx.last_insert_rowid(),
            r.plan_json.as_str().as_bytes(),
        )?;
        Ok(())
    }

    fn task(&mut self, r: TaskRec<'_>) -> Result<(), Refused> {
        self.tx
            .prepare_cached("INSERT INTO tasks (run_id, task_id, agent, status, attempts, atoms, error_code, final_invocation_id, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)")?
            .execute(params![self.run_id, r.task_id.as_str(), r.agent.as_str(), r.status.as_str(), r.attempts, r.atoms, o(&r.error_code), o(&r.final_invocation_id), r.updated_at.as_str()])?;
        Ok(())
    }

    fn prompt(&mut self, r: PromptRec<'_>) -> Result<(), Refused> {
        let have: Option<String> = self
            .tx
            .prepare_cached("SELECT text FROM prompts WHERE prompt_hash = ?1")?
            .query_row([r.prompt_hash.as_str()], |row| row.get(0))
            .map(Some)
            .or_else(|e| match e {
                rusqlite::Error::QueryReturnedNoRows => Ok(None),
                e => Err(e),
            })?;
        match have {
            Some(text) if text == r.text.as_str() => Ok(()),
            Some(_) => Err(Refused::Bad(format!(
                "the database has another text under prompt hash {}",
                r.prompt_hash.as_str()
            ))),
            None => {
                self.tx
                    .prepare_cached("INSERT INTO prompts (prompt_hash, text) VALUES (?1, ?2)")?
                    .execute([r.prompt_hash.as_str(), r.text.as_str()])?;
                self.prompts_added += 1;
                Ok(())
            }
        }
    }

    fn invocation(&mut self, r: InvocationRec<'_>) -> Result<(), Refused> {
        self.highest.note(r.invocation_id.as_str());
        self.tx
            .prepare_cached("INSERT INTO invocations (invocation_id, run_id, task_id, agent, attempt, status, started_at, execution_time_ms, prompt_tokens, output_tokens, error_codes, request_json, response_json, provider_prompt_tokens, provider_output_tokens) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)")?
            .execute(params![r.invocation_id.as_str(), self.run_id, r.task_id.as_str(), r.agent.as_str(), r.attempt, o(&r.status), r.started_at.as_str(), r.execution_time_ms, r.prompt_tokens, r.output_tokens, o(&r.error_codes), r.request_json.as_str(), oj(&r.response_json), r.provider_prompt_tokens, r.provider_output_tokens])?;
        Ok(())
    }

    fn atom(&mut self, kind: Kind, r: AtomRec<'_>) -> Result<(), Refused> {
        // An asset the database already has (under the same id) is kept as it is.
        let sql = if kind == Kind::Asset {
            "INSERT INTO knowledge_atoms (atom_id, run_id, task_id, invocation_id, agent, atom_type, category, data_status, paper_id, domain, content, confidence, grade, score, provenance, delta_audit, metadata, created_at, reviewed_by, reviewed_at) SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20 WHERE NOT EXISTS (SELECT 1 FROM knowledge_atoms WHERE atom_id = ?1)"
        } else {
            "INSERT INTO knowledge_atoms (atom_id, run_id, task_id, invocation_id, agent, atom_type, category, data_status, paper_id, domain, content, confidence, grade, score, provenance, delta_audit, metadata, created_at, reviewed_by, reviewed_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20)"
        };
        let run = (kind == Kind::Atom).then_some(self.run_id);
        let added = self.tx.prepare_cached(sql)?.execute(params![
            r.atom_id.as_str(),
            run,
            o(&r.task_id),
            o(&r.invocation_id),
            o(&r.agent),
            o(&r.atom_type),
            o(&r.category),
            o(&r.data_status),
            o(&r.paper_id),
            o(&r.domain),
            r.content.as_str(),
            r.confidence.map(|v| v.0),
            o(&r.grade),
            r.score.map(|v| v.0),
            oj(&r.provenance),
            oj(&r.delta_audit),
            oj(&r.metadata),
            r.created_at.as_str(),
            o(&r.reviewed_by),
            o(&r.reviewed_at)
        ])?;
        if kind == Kind::Asset {
            self.assets_added += added as u64;
        }
        Ok(())
    }

    fn quality(&mut self, r: QualityRec<'_>) -> Result<(), Refused> {
        self.tx
            .prepare_cached("INSERT INTO quality_records (run_id, task_id, invocation_id, atom_id, grade, score, issues, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)")?
            .execute(params![self.run_id, r.task_id.as_str(), r.invocation_id.as_str(), r.atom_id.as_str(), r.grade.as_str(), r.score.0, r.issues.as_str(), r.created_at.as_str()])?;
        Ok(())
    }

    fn relation(&mut self, r: RelationRec<'_>) -> Result<(), Refused> {
        self.tx
            .prepare_cached("INSERT INTO relations (source_atom_id, target_atom_id, relation_type, run_id, invocation_id, note, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)")?
            .execute(params![r.source_atom_id.as_str(), r.target_atom_id.as_str(), r.relation_type.as_str(), self.run_id, o(&r.invocation_id), o(&r.note), r.created_at.as_str()])?;
        Ok(())
    }

    fn review(&mut self, r: ReviewRec<'_>) -> Result<(), Refused> {
        if !matches!(r.decision.as_str(), "accepted" | "rejected") {
            return Err(Refused::Bad(format!(
                "a review decision `{}` (accepted or rejected)",
                r.decision.as_str()
            )));
        }
        self.tx
            .prepare_cached("INSERT INTO reviews (run_id, task_id, invocation_id, decision, reviewer, note, decided_at, seq) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)")?
            .execute(params![self.run_id, r.task_id.as_str(), r.invocation_id.as_str(), r.decision.as_str(), r.reviewer.as_str(), o(&r.note), r.decided_at.as_str(), r.seq])?;
        Ok(())
    }

    fn paper(&mut self, r: PaperRec<'_>) -> Result<(), Refused> {
        // A paper the database already has is kept as it is.
        let added = self
            .tx
            .prepare_cached("INSERT OR IGNORE INTO papers (paper_id, title, authors, year, venue, domain, pdf_path, arxiv_url, abstract, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)")?
            .execute(params![r.paper_id.as_str(), o(&r.title), o(&r.authors), r.year, o(&r.venue), o(&r.domain), o(&r.pdf_path), o(&r.arxiv_url), o(&r.abstract_text), r.created_at.as_str()])?;
        self.papers_added += added as u64;
        Ok(())
    }

    fn event(&mut self, r: EventRec<'_>) -> Result<(), Refused> {
        if r.seq <= self.last_seq || r.seq < 1 || r.seq as u64 > MAX_SEQ {
            return Err(Refused::Bad(format!(
                "event seq {} out of order (after {}; events are numbered upwards from 1, at most {MAX_SEQ})",
                r.seq, self.last_seq
            )));
        }
        self.last_seq = r.seq;
        if let Some(id) = &r.invocation_id {
            self.highest.note(id.as_str());
        }
        let run_no = match self.run_no {
            Some(n) => n,
            None => {
                // The run's number in this database's event ids: the next free one.
                self.tx
                    .prepare_cached("INSERT INTO log_runs (run_id) VALUES (?1)")?
                    .execute([self.run_id])?;
                let n = self.tx.last_insert_rowid();
                self.run_no = Some(n);
                n
            }
        };
        self.tx
            .prepare_cached("INSERT INTO execution_logs (event_id, run_id, seq, ts, kind, task_id, invocation_id, agent, payload) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)")?
            .execute(params![event_base(run_no) | r.seq, self.run_id, r.seq, r.ts, r.kind.as_str(), o(&r.task_id), o(&r.invocation_id), o(&r.agent), r.payload.as_str()])?;
        if is_clock_kind(r.kind.as_str()) {
            note_clock_event(self.tx, event_base(run_no) | r.seq, r.kind.as_str(), r.ts)?;
        }
        Ok(())
    }
}

/// The text of an optional text column.
fn o<'s>(s: &'s Option<Str<'_>>) -> Option<&'s str> {
    s.as_ref().map(Str::as_str)
}

/// The text of an optional JSON column.
fn oj<'s>(s: &'s Option<JsonText<'_>>) -> Option<&'s str> {
    s.as_ref().map(JsonText::as_str)
}
