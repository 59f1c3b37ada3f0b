//! `plexus eval FILE` on a terminal: the eval runs in a child process of this binary
//! (the same command, headless, its output kept in files), and the Eval screen follows
//! it from the database. `q` asks first, then stops the eval (it stays resumable, as
//! with Ctrl-C headless); once it has ended, `q` closes the screen. The eval's report
//! is printed after the screen closes, and its exit code is this command's.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use color_eyre::eyre::{eyre, Result, WrapErr};

use crate::cli::launch::Globals;
use crate::cli::open::UiSetup;
use crate::data::store::Store;
use crate::features::eval::read::find_eval;
use crate::tui::eval_ui::marks::marks_file;
use crate::tui::eval_ui::run::run;
use crate::tui::eval_ui::{EvalModel, EvalScreen};

/// The eval id the headless eval names first on standard error, once it is stored.
fn eval_id_in(text: &str) -> Option<String> {
    text.lines().find_map(|l| {
        let rest = l.strip_prefix("eval E")?;
        let id: String = rest.chars().take_while(|c| *c != ':').collect();
        (id.len() >= 20 && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'))
            .then(|| format!("E{id}"))
    })
}

fn exit_of(child: &mut Child) -> Option<ExitCode> {
    child
        .try_wait()
        .ok()
        .flatten()
        .map(|st| ExitCode::from(st.code().unwrap_or(1).clamp(0, 255) as u8))
}

/// The files the child's output goes to, beside the database.
fn logs(db: &Path) -> (PathBuf, PathBuf) {
    let dir = db
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    let stem = format!(".plexus-eval-{}", std::process::id());
    (
        dir.join(format!("{stem}.out")),
        dir.join(format!("{stem}.err")),
    )
}

/// The eval's process. Dropped before it was settled (an error, a panic), it is
/// stopped as Ctrl-C stops it (resumable), waited for, and its output files removed.
struct EvalChild {
    child: Arc<Mutex<Child>>,
    pid: nix::unistd::Pid,
    stop_sent: AtomicBool,
    files: (PathBuf, PathBuf),
    settled: bool,
}

impl EvalChild {
    /// Asks the eval to stop, once (a second signal would end it at once).
    fn stop(&self) {
        if !self.stop_sent.swap(true, Ordering::SeqCst) {
            let _ = nix::sys::signal::kill(self.pid, nix::sys::signal::Signal::SIGINT);
        }
    }

    /// Its exit code, once it has ended (within two minutes of a stop, else killed).
    fn wait(&self) -> Option<ExitCode> {
        let started = Instant::now();
        loop {
            let mut c = self.child.lock().ok()?;
            if let Some(code) = exit_of(&mut c) {
                return Some(code);
            }
            if started.elapsed() > Duration::from_secs(120) {
                let _ = c.kill();
                let _ = c.wait();
                return None;
            }
            drop(c);
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Prints the last words of the eval's standard error (how it ended, an error; not
    /// its progress or the notice of the stop this screen sent), then its report last,
    /// removes its files and gives its exit code.
    fn finish(&mut self, code: Option<ExitCode>) -> ExitCode {
        let (out_path, err_path) = &self.files;
        let out = std::fs::read_to_string(out_path).unwrap_or_default();
        let err = std::fs::read_to_string(err_path).unwrap_or_default();
        for l in closing_lines(&err) {
            crate::errln!("{l}");
        }
        crate::base::out::stdout_text(&out);
        let _ = std::fs::remove_file(out_path);
        let _ = std::fs::remove_file(err_path);
        self.settled = true;
        code.unwrap_or(ExitCode::FAILURE)
    }
}

impl Drop for EvalChild {
    fn drop(&mut self) {
        if !self.settled {
            self.stop();
            let _ = self.wait();
            let _ = std::fs::remove_file(&self.files.0);
            let _ = std::fs::remove_file(&self.files.1);
        }
    }
}

/// What of the headless eval's standard error is shown once the screen closes: its
/// notes (`note: …`, said when it started and hidden under the screen), then its last
/// three lines that are not running talk (how it ended, an error).
fn closing_lines(err: &str) -> Vec<&str> {
    let mut tail: Vec<&str> = err
        .lines()
        .rev()
        .filter(|l| !is_chatter(l))
        .take(3)
        .collect();
    tail.reverse();
    let mut out: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("note: ") && !tail.contains(l))
        .collect();
    out.extend(tail);
    out
}

/// Whether a line of the headless eval's standard error is its running talk, which the
/// screen has shown already: its progress (`eval E…: 3/12 samples …`), its status line,
/// or the notice of a stop signal (the one the screen sent).
fn is_chatter(line: &str) -> bool {
    let progress = line.starts_with("eval E") && line.contains(" samples (");
    progress
        || line.starts_with("status: ")
        || (line.starts_with("SIG") && line.contains(": stopping"))
        || line.trim().is_empty()
}

/// The status line (calls in flight) the headless eval printed last, without its
/// `status: ` label, when it is the last thing it printed; else empty.
fn latest_status(err_path: &std::path::Path) -> String {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(mut f) = std::fs::File::open(err_path) else {
        return String::new();
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let mut tail = Vec::new();
    if f.seek(SeekFrom::Start(len.saturating_sub(4096))).is_err()
        || f.read_to_end(&mut tail).is_err()
    {
        return String::new();
    }
    let text = String::from_utf8_lossy(&tail);
    text.lines()
        .last()
        .and_then(|l| l.strip_prefix("status: "))
        .unwrap_or_default()
        .to_string()
}

/// Runs this command again headless as a child and shows the Eval screen on it.
pub fn run_with_screen(g: &Globals, setup: UiSetup) -> Result<ExitCode> {
    let (out_path, err_path) = logs(&g.db);
    let mut args: Vec<OsString> = std::env::args_os().skip(1).collect();
    args.push("--headless".into());
    let child = Command::new(std::env::current_exe()?)
        .args(&args)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path)?)
        .stderr(std::fs::File::create(&err_path)?)
        .spawn()
        .wrap_err("cannot start the eval")?;
    let mut eval = EvalChild {
        pid: nix::unistd::Pid::from_raw(child.id() as i32),
        child: Arc::new(Mutex::new(child)),
        stop_sent: AtomicBool::new(false),
        files: (out_path.clone(), err_path.clone()),
        settled: false,
    };
    // The eval's id, once it is stored (or the child's end: a refused spec, whose
    // messages are shown as they are).
    let id = loop {
        let err = std::fs::read_to_string(&err_path).unwrap_or_default();
        if let Some(id) = eval_id_in(&err) {
            break id;
        }
        let ended = eval
            .child
            .lock()
            .map_err(|_| eyre!("the eval's process is lost"))
            .map(|mut c| exit_of(&mut c))?;
        if let Some(code) = ended {
            let out = std::fs::read_to_string(&out_path).unwrap_or_default();
            crate::base::out::stdout_text(&out);
            eprint!("{err}");
            let _ = std::fs::remove_file(&out_path);
            let _ = std::fs::remove_file(&err_path);
            eval.settled = true;
            return Ok(code);
        }
        if crate::base::signals::pending().is_some() {
            // Stopped before the screen opened: the guard stops the eval.
            return Ok(ExitCode::from(crate::data::exit::RUN_FAILED));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let store = Store::open(&g.db)?;
    let row = find_eval(store.conn(), &id)?;
    let mut screen = EvalScreen::new(EvalModel::load(store.conn(), row)?);
    // The marks a past session left in the marks file are taken back.
    let marks = crate::features::eval::marks::read_marks(&marks_file(&screen.model));
    screen.restore_marks(marks);
    if let Some(w) = setup.warning {
        screen.flash = Some((w, true));
    }
    // Whether the child is alive, for the screen's readings (watched from a thread).
    let alive = Arc::new(AtomicBool::new(true));
    screen.follow = Some(alive.clone());
    let calls = Arc::new(Mutex::new(String::new()));
    screen.calls = Some(calls.clone());
    let watch = {
        let (alive, child) = (alive.clone(), eval.child.clone());
        let err_path = err_path.clone();
        std::thread::spawn(move || {
            for tick in 0u64.. {
                let done = child
                    .lock()
                    .map(|mut c| c.try_wait().ok().flatten().is_some())
                    .unwrap_or(true);
                if done {
                    alive.store(false, Ordering::SeqCst);
                    return;
                }
                if tick % 10 == 0 {
                    if let Ok(mut c) = calls.lock() {
                        *c = latest_status(&err_path);
                    }
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        })
    };
    let resume = crate::cli::launch::plexus_command(&g.db, &format!("eval resume {id}"));
    let mut asked = false;
    let mut may_quit = |s: &mut EvalScreen| -> bool {
        if !alive.load(Ordering::SeqCst) {
            return true;
        }
        if !asked {
            asked = true;
            s.say(format!("q again stops it · resume: {resume}"), true);
            return false;
        }
        eval.stop();
        true
    };
    drop(store);
    // Called inside `block_in_place`: the screen's loop runs on this thread.
    let shown = tokio::runtime::Handle::current()
        .block_on(run(
            &mut screen,
            &g.db,
            &setup.theme,
            &setup.keys,
            &mut may_quit,
        ))
        .wrap_err("the terminal UI failed");
    // The screen closed on a signal, a terminal gone or an error: the eval stops too.
    if alive.load(Ordering::SeqCst) {
        eval.stop();
        crate::errln!("stopping the eval (it stays resumable: {resume}) …");
    }
    let code = eval.wait();
    let _ = watch.join();
    shown?;
    if !screen.marked.is_empty() {
        crate::outln!(
            "{} sample(s) marked for rerun: plexus eval rerun {} --samples {}",
            screen.marked.len(),
            screen.model.row.eval_id,
            marks_file(&screen.model).display()
        );
    }
    Ok(eval.finish(code))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_eval_id_is_read_from_the_first_line_that_names_it() {
        let text = "warning: x\neval E20261128-150036-9960: 12 samples × 1 epoch(s) in run R1\n";
        assert_eq!(eval_id_in(text).as_deref(), Some("E20261128-150036-9960"));
        assert_eq!(eval_id_in("eval Ebad: no"), None);
        assert_eq!(eval_id_in("error: spec.json: checks"), None);
    }

    /// The child's notes are shown with how it ended, its running talk is not.
    #[test]
    fn the_closing_lines_keep_the_notes_and_the_end() {
        let note = "note: t/execution_outputs holds iteration 1 written from another database; this eval is iteration 2";
        let err = format!(
            "eval E20261203-120000-0001: 12 samples × 1 epoch(s) in run R1; database e.db; tree t\n\
             {note}\n\
             eval E20261203-120000-0001: 3/12 samples (3 passed, 0 failed, 0 errors) · 4.0/s\n\
             status: 2 calls\n\
             warning: the judge answered late\n\
             SIGINT: stopping; the run stays resumable (another signal within 2 s exits at once)\n\
             warning: 2 samples were not scored\n\
             the eval stopped before its end; resume with: plexus eval resume E20261203-120000-0001\n"
        );
        assert_eq!(
            closing_lines(&err),
            vec![
                note,
                "warning: the judge answered late",
                "warning: 2 samples were not scored",
                "the eval stopped before its end; resume with: plexus eval resume E20261203-120000-0001",
            ]
        );
    }
}
