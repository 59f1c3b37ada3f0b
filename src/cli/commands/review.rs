//! `plexus review`: the review queue of hallucinations (E007) — tasks waiting for a
//! person's decision, with their evidence — and a decision on one of them.

use std::path::Path;
use std::process::ExitCode;

use color_eyre::eyre::{Report, Result};

use crate::base::table::{Col, TextTable};
use crate::data::store::Store;
use crate::run::review::{decide, Decided, DecisionKind, ReviewError, ReviewItem, Verdict};

pub use crate::cli::args::ReviewArgs;

/// Runs `plexus review` on the database at `db`.
pub fn review(db: &Path, args: ReviewArgs) -> Result<ExitCode> {
    let verdict = match (args.accept, args.reject) {
        (true, true) => return Err(usage("--accept and --reject exclude each other")),
        (true, false) => Some(Verdict::Accept { note: args.note }),
        (false, true) => Some(Verdict::Reject {
            reason: args.reason.unwrap_or_default(),
        }),
        (false, false) => None,
    };
    match (verdict, args.run, args.task) {
        (Some(verdict), Some(run), Some(task)) => {
            let reviewer = args
                .reviewer
                .unwrap_or_else(crate::run::review::default_reviewer);
            let d = decide(db, &run, &task, &verdict, &reviewer).map_err(report)?;
            if args.json {
                crate::rawln!("{}", serde_json::to_string_pretty(&d)?);
            } else {
                print_decided(db, &d);
            }
            Ok(ExitCode::SUCCESS)
        }
        (Some(_), _, _) => Err(usage("a decision needs RUN and TASK")),
        (None, run, task) => show_queue(db, run.as_deref(), task.as_deref(), args.json),
    }
}

/// Prints the review queue (of `run`, when one is named; of its `task` alone, when one
/// is named too, refused when it is not in the queue).
fn show_queue(db: &Path, run: Option<&str>, task: Option<&str>, json: bool) -> Result<ExitCode> {
    let store = Store::open(db)?;
    let run_id = match run {
        Some(r) => Some(store.run(r)?.run_id),
        None => None,
    };
    let mut items = store.review_queue(run_id.as_deref())?;
    if let (Some(run_id), Some(task)) = (&run_id, task) {
        items.retain(|i| i.task_id == task);
        if items.is_empty() {
            let why = crate::run::review::check(&store, run_id, task).err();
            let not_queued = || ReviewError::Usage(format!("task `{task}` is not in the queue"));
            return Err(report(why.unwrap_or_else(not_queued)));
        }
    }
    if json {
        crate::rawln!("{}", serde_json::to_string_pretty(&items)?);
    } else {
        print_queue(&items, run_id.as_deref(), task.is_some());
    }
    Ok(ExitCode::SUCCESS)
}

/// A refusal as a report; a database error stays one (so the file is named).
fn report(e: ReviewError) -> Report {
    match e {
        ReviewError::Store(s) => Report::from(s),
        other => Report::from(other),
    }
}

/// A command line that does not make sense (exit 2).
fn usage(why: &str) -> Report {
    Report::from(ReviewError::Usage(why.into()))
}

fn print_decided(db: &Path, d: &Decided) {
    match d.decision {
        DecisionKind::Accepted => {
            crate::outln!(
                "run {}: task {} accepted by {} (event {}); it is now {} with {} atom(s) stored",
                d.run_id,
                d.task_id,
                d.reviewer,
                d.seq,
                d.status.as_str(),
                d.atoms
            );
            if !d.unblocked.is_empty() {
                crate::outln!(
                    "{} blocked task(s) may run now: {}\nrun them with: {}",
                    d.unblocked.len(),
                    d.unblocked.join(", "),
                    crate::cli::launch::resume_command(db, &d.run_id)
                );
            }
            if let Some(s) = d.run_status {
                crate::outln!("nothing is left to run: the run now ends {}", s.as_str());
            }
        }
        DecisionKind::Rejected => {
            crate::outln!(
                "run {}: task {} rejected by {} (event {}); it stays failed and the tasks it blocked stay blocked",
                d.run_id,
                d.task_id,
                d.reviewer,
                d.seq
            );
            if let Some(s) = d.run_status {
                crate::outln!("no review waits any more: the run now ends {}", s.as_str());
            }
        }
    }
}

fn print_queue(items: &[ReviewItem], run: Option<&str>, whole: bool) {
    if items.is_empty() {
        match run {
            Some(r) => crate::outln!("run {r}: no task waits for review"),
            None => crate::outln!("no task waits for review"),
        }
        return;
    }
    let waiting = items.iter().filter(|i| i.waits()).count();
    let retried = items
        .iter()
        .filter(|i| i.retried && i.decision.is_none())
        .count();
    crate::outln!(
        "{} answer(s) stopped for review, {waiting} waiting for a decision{}",
        items.len(),
        match retried {
            0 => String::new(),
            n => format!(", {n} retried (a later attempt stands)"),
        }
    );
    if whole {
        items.iter().for_each(print_item);
    } else {
        print_table(items, run.is_none());
    }
    if waiting > 0 {
        crate::outln!(
            "\nshow the evidence: plexus review RUN TASK\ndecide with: plexus review RUN TASK --accept [--note TEXT] | --reject --reason TEXT"
        );
    }
}

/// What became of an item: `waiting`, `retried`, or the decision with who and when.
fn state_of(i: &ReviewItem) -> String {
    match &i.decision {
        None if i.retried => "retried (a later attempt stands)".to_string(),
        None => "waiting".to_string(),
        Some(d) => format!(
            "{} by {} at {}",
            match d.decision {
                DecisionKind::Accepted => "accepted",
                DecisionKind::Rejected => "rejected",
            },
            d.reviewer,
            d.decided_at,
        ),
    }
}

/// One row per item, columns as wide as their widest cell (in display columns).
fn print_table(items: &[ReviewItem], with_run: bool) {
    let cols = [
        Col::left("RUN"),
        Col::left("TASK"),
        Col::left("AGENT"),
        Col::left("INVOCATION"),
        Col::right("TRY"),
        Col::left("FABRICATED"),
        Col::right("ATOMS"),
        Col::right("SCORE"),
        Col::left("STATE").max(usize::MAX),
    ];
    let skip = usize::from(!with_run);
    let mut table = TextTable::new(&cols[skip..]);
    for i in items {
        let fabricated = match i.fabricated.as_slice() {
            [] => "-".to_string(),
            [one] => one.reference.clone(),
            [first, rest @ ..] => format!("{} +{}", first.reference, rest.len()),
        };
        let row = [
            i.run_id.clone(),
            i.task_id.clone(),
            i.agent.clone(),
            i.invocation_id.clone(),
            i.attempt.to_string(),
            fabricated,
            i.atoms.len().to_string(),
            format!("{:.2}", i.avg_score),
            state_of(i),
        ];
        table.row(row.into_iter().skip(skip));
    }
    crate::outln!();
    table.print();
}

/// One item's whole evidence: the message, the fabricated references, every atom and
/// every issue.
fn print_item(i: &ReviewItem) {
    let note = i
        .decision
        .as_ref()
        .and_then(|d| d.note.as_deref())
        .map(|n| format!(": {n}"))
        .unwrap_or_default();
    crate::outln!(
        "\n{} {} ({}) — {}{note}; task {}",
        i.run_id,
        i.task_id,
        i.agent,
        state_of(i),
        i.status
    );
    crate::outln!(
        "  invocation {} (attempt {}): {}",
        i.invocation_id,
        i.attempt,
        i.message.as_deref().unwrap_or("no message stored")
    );
    for f in &i.fabricated {
        crate::outln!(
            "  {} refers to {}, which does not exist",
            f.atom_id,
            f.reference
        );
    }
    crate::outln!(
        "  {} atom(s), mean score {:.2} (A {} B {} C {} D {}), {} issue(s)",
        i.atoms.len(),
        i.avg_score,
        i.grades.a,
        i.grades.b,
        i.grades.c,
        i.grades.d,
        i.issues.len()
    );
    for a in &i.atoms {
        crate::outln!(
            "  atom {}",
            serde_json::to_string_pretty(a).unwrap_or_default()
        );
    }
    for issue in &i.issues {
        crate::outln!(
            "  issue {} {}: {}",
            issue.atom_id,
            issue.issue_type,
            issue.message
        );
    }
}
