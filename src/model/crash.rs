//! What a panic looks like to a person: one short line on standard error saying where
//! the full report (message, place, backtrace, version, arguments) was written, coloured
//! only on a terminal. The terminal UI restores the terminal before this runs.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

/// Installs the panic hook. Panics caught on purpose (a third-party parser on untrusted
/// bytes, see [`crate::base::panic_guard`]) are not reported.
pub fn install() {
    std::panic::set_hook(Box::new(|info| {
        if crate::base::panic_guard::in_guarded() {
            return;
        }
        let message = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "(no message)".into());
        let place = info
            .location()
            .map(|l| format!("{}:{}", l.file(), l.line()))
            .unwrap_or_default();
        let thread = std::thread::current()
            .name()
            .unwrap_or("unnamed")
            .to_string();
        tracing::error!("panic on thread {thread} at {place}: {message}");
        let report = format!(
            "plexus {} panicked\nthread: {thread}\nat: {place}\nmessage: {message}\nargs: {:?}\n\nbacktrace:\n{}\n",
            env!("CARGO_PKG_VERSION"),
            std::env::args().collect::<Vec<_>>(),
            std::backtrace::Backtrace::force_capture()
        );
        let written = write_report(&report);
        let line = match &written {
            Some(p) => format!(
                "plexus crashed (a bug): {}; the report is in {}",
                first_line(&message),
                p.display()
            ),
            None => format!("plexus crashed (a bug): {}", first_line(&message)),
        };
        let line = crate::base::out::clean(&line);
        let mut err = std::io::stderr().lock();
        let _ = if std::io::stderr().is_terminal() {
            writeln!(err, "\x1b[1;31m{line}\x1b[0m")
        } else {
            writeln!(err, "{line}")
        };
    }));
}

fn first_line(s: &str) -> &str {
    let line = s.lines().next().unwrap_or("");
    match line.char_indices().nth(200) {
        Some((i, _)) => &line[..i],
        None => line,
    }
}

/// Writes the report to a new file in the temporary directory.
fn write_report(report: &str) -> Option<PathBuf> {
    let name = format!(
        "plexus-crash-{}-{}.txt",
        chrono::Utc::now().format("%Y%m%d-%H%M%S"),
        std::process::id()
    );
    let path = std::env::temp_dir().join(name);
    // A new file only this user can read (the report holds the command line); an
    // existing file or link of that name is not followed.
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut f = options.open(&path).ok()?;
    f.write_all(report.as_bytes()).ok()?;
    Some(path)
}
