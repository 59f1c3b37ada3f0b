//! Everything the CLI prints goes through here. Human-readable text is sanitised line
//! by line (ids, paths, model and server text are untrusted: no escape sequence, control
//! character or bidi override reaches the terminal); JSON goes out exact. Printing never
//! panics: a closed standard output (`plexus log latest | head -1`) ends the process
//! quietly, and a standard error that cannot be written is ignored (a run keeps going
//! when its progress cannot be shown).

use std::io::Write;

use crate::base::text::sanitize::sanitize_cow;

/// Exit code when standard output was closed by the reader: the command did what was
/// asked of it as far as anyone was reading.
pub const CLOSED_PIPE_EXIT: i32 = 0;

/// `text` with every line sanitised for the terminal (newlines kept, tabs expanded).
pub fn clean(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&sanitize_cow(line.strip_suffix('\r').unwrap_or(line)));
    }
    out
}

/// Writes sanitised `text` to standard output.
pub fn stdout_text(text: &str) {
    stdout_raw(&clean(text));
}

/// Writes `text` to standard output exactly (JSON, generated plans). A closed pipe
/// ends the process quietly.
pub fn stdout_raw(text: &str) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(CLOSED_PIPE_EXIT);
        }
        tracing::warn!("cannot write to standard output: {e}");
    }
}

/// Writes sanitised `text` to standard error; errors are ignored.
pub fn stderr_text(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err
        .write_all(clean(text).as_bytes())
        .and_then(|()| err.flush());
}

/// Prints a sanitised line to standard output (like `println!`, never panics).
#[macro_export]
macro_rules! outln {
    () => { $crate::base::out::stdout_raw("\n") };
    ($($arg:tt)*) => { $crate::base::out::stdout_text(&format!("{}\n", format_args!($($arg)*))) };
}

/// Prints a sanitised line to standard error (like `eprintln!`, never panics).
#[macro_export]
macro_rules! errln {
    () => { $crate::base::out::stderr_text("\n") };
    ($($arg:tt)*) => { $crate::base::out::stderr_text(&format!("{}\n", format_args!($($arg)*))) };
}

/// Prints sanitised text to standard error without a newline.
#[macro_export]
macro_rules! errprint {
    ($($arg:tt)*) => { $crate::base::out::stderr_text(&format!($($arg)*)) };
}

/// Prints exact text (JSON) with a newline to standard output.
#[macro_export]
macro_rules! rawln {
    ($($arg:tt)*) => { $crate::base::out::stdout_raw(&format!("{}\n", format_args!($($arg)*))) };
}

/// Ends the process quietly when `e` says standard output was closed by its reader;
/// otherwise gives the error back.
pub fn closed_pipe_ends<E: Into<color_eyre::Report>>(e: E) -> color_eyre::Report {
    let report = e.into();
    let closed = report.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .map(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            .or_else(|| {
                c.downcast_ref::<serde_json::Error>()
                    .map(|j| j.io_error_kind() == Some(std::io::ErrorKind::BrokenPipe))
            })
            .unwrap_or(false)
    });
    if closed {
        std::process::exit(CLOSED_PIPE_EXIT);
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_keeps_lines_and_removes_escapes_bidi_and_bells() {
        let s = clean("plan \u{1b}]0;pwned\u{7}id\u{202E}x\nnext\u{7}\r\n");
        assert!(!s.contains('\u{1b}') && !s.contains('\u{7}') && !s.contains('\u{202E}'));
        assert_eq!(s.lines().count(), 2);
        assert!(s.starts_with("plan ␛id"), "{s:?}");
        assert!(s.ends_with('\n'));
    }
}
