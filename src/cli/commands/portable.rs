//! `plexus export RUN [-o FILE]` and `plexus import FILE`: a run written to a file of
//! JSON lines and loaded into another database (see [`crate::data::portable`]).
//!
//! Export reads the database read-only and never writes it; its output goes to
//! standard output (a closed pipe ends it quietly) or to a file that appears whole or
//! not at all (written beside it under a temporary name, synced, then renamed).

use std::io::{BufReader, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use color_eyre::eyre::{eyre, Result};

use crate::data::exit;
use crate::data::portable::{export_run, import_run, Header, PortableError, Rename};
use crate::data::store::Store;

/// Counts the bytes written through it.
struct Counting<W> {
    inner: W,
    bytes: u64,
}

impl<W: Write> Write for Counting<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Exports run `run` of the database at `db` to `output` (standard output when `None`
/// or `-`). A summary line goes to standard error, and progress lines too on a terminal.
pub fn export(db: &Path, run: &str, output: Option<&Path>) -> Result<ExitCode> {
    let store = Store::open(db)?;
    let tty = std::io::stderr().is_terminal();
    let mut progress = |done: u64, total: u64| {
        if tty && done < total {
            crate::errln!("exporting: {done} of {total} events");
        }
    };
    let (header, bytes, dest) = match output.filter(|p| p.as_os_str() != "-") {
        None => {
            let stdout = std::io::stdout();
            let mut out = Counting {
                inner: std::io::BufWriter::with_capacity(1 << 16, stdout.lock()),
                bytes: 0,
            };
            let header = match export_run(&store, run, &mut out, &mut progress) {
                Ok(h) => h,
                Err(PortableError::Write(e)) => return Err(crate::base::out::closed_pipe_ends(e)),
                Err(e) => return Err(report(e)),
            };
            (header, out.bytes, "standard output".to_string())
        }
        Some(path) => {
            refuse_the_database(db, path)?;
            let (header, bytes) = write_atomically(path, |out| {
                export_run(&store, run, out, &mut progress).map_err(|e| match e {
                    PortableError::Write(io) => eyre!("cannot write {}: {io}", path.display()),
                    e => report(e),
                })
            })?;
            (header, bytes, path.display().to_string())
        }
    };
    let c = &header.counts;
    crate::errln!(
        "exported run {} ({}): {} tasks, {} invocations, {} atoms, {} events; {} bytes to {dest}",
        header.run_id,
        header.status,
        c.tasks,
        c.invocations,
        c.atoms,
        c.events,
        bytes
    );
    Ok(ExitCode::SUCCESS)
}

/// Sends run `run` of the database at `db` as a trace to the collector of `settings`
/// (`plexus export RUN --otlp URL`): progress on standard error for a large run, a
/// summary at the end; exit 1 when a batch failed.
pub async fn export_otlp(
    db: &Path,
    run: &str,
    settings: crate::features::otel::OtlpSettings,
) -> Result<ExitCode> {
    let tty = std::io::stderr().is_terminal();
    let mut shown = std::time::Instant::now();
    let mut progress = |sent: u64, read: u64, total: u64| {
        if read < total && shown.elapsed() >= std::time::Duration::from_secs(1) {
            shown = std::time::Instant::now();
            if tty || total >= 100_000 {
                crate::errln!("exporting: {read} of {total} events read, {sent} spans sent");
            }
        }
    };
    let report =
        crate::features::otel::stored::export_stored(db, run, settings, &mut progress).await?;
    crate::errln!("{}", report.line());
    Ok(if report.failed_batches > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The error as a report whose chain holds a database error as such (so that the
/// message names the database file).
fn report(e: PortableError) -> color_eyre::Report {
    match e {
        PortableError::Store(e) => e.into(),
        e => e.into(),
    }
}

/// Refuses to write the export over the database it reads.
fn refuse_the_database(db: &Path, output: &Path) -> Result<()> {
    if let (Ok(a), Ok(b)) = (db.canonicalize(), output.canonicalize()) {
        if a == b {
            return Err(eyre!(
                "{} is the database itself; choose another file for the export",
                output.display()
            ));
        }
    }
    Ok(())
}

/// Runs `write` on a temporary file beside `path`, then syncs it and renames it to
/// `path`; on any error the temporary file is removed and `path` is left as it was.
fn write_atomically<T>(
    path: &Path,
    write: impl FnOnce(&mut Counting<std::io::BufWriter<std::fs::File>>) -> Result<T>,
) -> Result<(T, u64)> {
    let name = path
        .file_name()
        .ok_or_else(|| eyre!("{}: not a file name", path.display()))?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut prefix = std::ffi::OsString::from(".");
    prefix.push(name);
    prefix.push(".partial-");
    remove_stale_partials(&dir, &prefix);
    let mut tmp_name = prefix;
    tmp_name.push(std::process::id().to_string());
    let tmp = dir.join(tmp_name);
    let file =
        std::fs::File::create(&tmp).map_err(|e| eyre!("cannot create {}: {e}", tmp.display()))?;
    let mut out = Counting {
        inner: std::io::BufWriter::with_capacity(1 << 16, file),
        bytes: 0,
    };
    let result = write(&mut out).and_then(|v| {
        let bytes = out.bytes;
        let file = out
            .inner
            .into_inner()
            .map_err(|e| eyre!("cannot write {}: {}", tmp.display(), e.error()))?;
        file.sync_all()
            .map_err(|e| eyre!("cannot write {}: {e}", tmp.display()))?;
        std::fs::rename(&tmp, path)
            .map_err(|e| eyre!("cannot rename {} to {}: {e}", tmp.display(), path.display()))?;
        // The rename itself survives a crash once the directory is synced.
        if let Ok(d) = std::fs::File::open(&dir) {
            let _ = d.sync_all();
        }
        Ok((v, bytes))
    });
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Removes the temporary files that exports to the same target left in `dir` when they
/// were killed: `PREFIX<pid>` (`.NAME.partial-PID`) whose process no longer runs. A live
/// process's file (another export writing now) is left alone, and so is anything that
/// cannot be read as such a name; a file that cannot be removed stays, quietly.
fn remove_stale_partials(dir: &Path, prefix: &std::ffi::OsStr) {
    let Some(prefix) = prefix.to_str() else {
        return;
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(prefix))
            .filter(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        let is_file = entry.file_type().is_ok_and(|t| t.is_file());
        if is_file
            && pid != std::process::id()
            && !crate::data::store::lease::process_alive(pid)
            && std::fs::remove_file(entry.path()).is_ok()
        {
            tracing::info!(file = %entry.path().display(), pid, "removed a killed export's partial file");
        }
    }
}

/// Imports the export in `file` (`-`: standard input) into the database at `db`.
pub fn import(
    db: &Path,
    file: &Path,
    rename: Option<String>,
    rename_auto: bool,
) -> Result<ExitCode> {
    let rename = match (rename, rename_auto) {
        (Some(id), _) => Rename::To(id),
        (None, true) => Rename::Auto,
        (None, false) => Rename::Keep,
    };
    let result = if file.as_os_str() == "-" {
        let stdin = std::io::stdin();
        import_run(
            db,
            BufReader::with_capacity(1 << 20, stdin.lock()),
            "standard input",
            &rename,
        )
    } else {
        let name = file.display().to_string();
        match std::fs::File::open(file) {
            Ok(f) => import_run(db, BufReader::with_capacity(1 << 20, f), &name, &rename),
            Err(source) => Err(PortableError::Read { file: name, source }),
        }
    };
    let report = match result {
        Ok(r) => r,
        Err(
            e @ (PortableError::Input { .. }
            | PortableError::Read { .. }
            | PortableError::BadRename { .. }),
        ) => {
            crate::errln!("error: {e}");
            crate::errln!("nothing was imported: {} is unchanged", db.display());
            return Ok(ExitCode::from(exit::INVALID));
        }
        Err(e @ PortableError::Duplicate { .. }) => {
            return Err(eyre!("database {}: {e}", db.display()))
        }
        Err(e) => return Err(report(e)),
    };
    let h: &Header = &report.header;
    let c = &h.counts;
    let renamed = if report.run_id == h.run_id {
        String::new()
    } else {
        format!(" as {}", report.run_id)
    };
    crate::outln!(
        "imported run {}{renamed} into {}: {} tasks, {} invocations, {} atoms, {} events",
        h.run_id,
        db.display(),
        c.tasks,
        c.invocations,
        c.atoms,
        c.events
    );
    if c.papers + c.assets > 0 {
        crate::outln!(
            "papers: {} added, {} already there; library assets: {} added, {} already there",
            report.papers_added,
            c.papers - report.papers_added.min(c.papers),
            report.assets_added,
            c.assets - report.assets_added.min(c.assets)
        );
    }
    if matches!(
        h.status.as_str(),
        "running" | "paused" | "interrupted" | "budget_reached"
    ) {
        crate::outln!(
            "the run was {}{} when exported; `plexus resume {}` continues it here",
            h.status,
            if h.live {
                " (a process was executing it; the file holds what it had committed)"
            } else {
                ""
            },
            report.run_id
        );
    }
    Ok(ExitCode::SUCCESS)
}
