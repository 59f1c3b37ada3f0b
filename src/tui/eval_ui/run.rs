//! The Eval screen's terminal loop: draw, wait for a key, apply it, and do what it asks
//! that needs the database (open a sample, read a metadata field, write the handoff or
//! the marks). A running eval is read again every second, so the screen follows an
//! eval that another plexus process is running on the same database.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers, MouseEventKind};

use super::detail;
use super::model::EvalModel;
use super::state::{EvalScreen, Request};
use crate::data::store::Store;
use crate::features::eval::finish::{write_end, ToolsByRun};
use crate::features::eval::read::find_eval;
use crate::tui::app::input::InputKey;
use crate::tui::app::keymap::Keymap;
use crate::tui::app::Action;
use crate::tui::terminal::TerminalGuard;
use crate::tui::ui::theme::Theme;

/// How often a running eval is read again.
const REREAD: Duration = Duration::from_secs(1);

/// The file the marks for a rerun are written to: beside the eval's failure tree.
pub fn marks_file(model: &EvalModel) -> PathBuf {
    PathBuf::from(model.row.out_dir.as_deref().unwrap_or("."))
        .join(format!("rerun_{}.txt", model.row.eval_id))
}

/// An id as a line of the marks file: as it is, or as a JSON string when it would
/// not read back so (a `#` or `"` first, spaces around it, a line break).
pub fn marks_line(id: &str) -> String {
    let plain = !id.is_empty()
        && id.trim() == id
        && !id.starts_with(['#', '"'])
        && !id.contains(['\n', '\r']);
    if plain {
        format!("{id}\n")
    } else {
        format!("{}\n", serde_json::Value::String(id.to_string()))
    }
}

/// Does what the last key asked that needs the database.
pub fn serve(s: &mut EvalScreen, store: &Store, tools: &mut ToolsByRun) {
    let Some(req) = s.request.take() else {
        return;
    };
    match req {
        Request::Open(i) => {
            let id = s.model.samples[i].id.clone();
            // A running eval's log grows: its tool calls are read again.
            if s.model.running() || s.followed() {
                tools.clear();
            }
            match detail::load(store, tools, &s.model.row, &s.model.scoring, &id) {
                Ok(d) => {
                    let tab = s.detail.as_ref().map_or(0, |o| o.tab);
                    s.detail = Some(detail::Detail { tab, ..d });
                }
                Err(e) => s.say(format!("cannot open {id}: {e}"), true),
            }
        }
        Request::Meta(k, v) => match s.model.metadata_values(store.conn(), &k) {
            Ok(values) => {
                let found = values
                    .iter()
                    .filter(|x| x.as_deref() == Some(v.as_str()))
                    .count();
                s.meta_values = Some((k.clone(), values));
                s.refresh();
                if found == 0 {
                    s.say(format!("no sample has meta.{k}={v}"), true);
                }
            }
            Err(e) => s.say(format!("cannot read the metadata: {e}"), true),
        },
        Request::Handoff => {
            if s.model.running() || s.followed() {
                s.say(
                    "the eval is running: it writes its handoff when it ends (or stops)",
                    true,
                );
                return;
            }
            let Some(out) = s.model.row.out_dir.clone() else {
                s.say(
                    "this eval has no failure tree to write the handoff into",
                    true,
                );
                return;
            };
            let at = crate::base::clock::now_rfc3339();
            let incomplete = s.model.row.status != "finished";
            // `out_dir` is as the eval was given it: relative to where it ran, which is
            // where this screen was opened in the common case.
            match write_end(
                store.conn(),
                crate::features::eval::finish::SampleFiles::Written,
                &s.model.row,
                out.as_ref(),
                &at,
                incomplete,
            ) {
                Ok(_) => s.say(
                    format!(
                        "handoff written: {}{}",
                        PathBuf::from(&out)
                            .join(crate::features::eval::tree::HANDOFF_FILE)
                            .display(),
                        if incomplete {
                            " (incomplete: the eval has not finished)"
                        } else {
                            ""
                        }
                    ),
                    false,
                ),
                Err(e) => s.say(format!("cannot write the handoff: {e}"), true),
            }
        }
        Request::SaveMarks => {
            let path = marks_file(&s.model);
            let text: String = s.marked.iter().map(|id| marks_line(id)).collect();
            match crate::data::failures::write::write_bytes_atomic(&path, text.as_bytes()) {
                Ok(()) => s.say(
                    format!(
                        "{} marked · plexus eval rerun {} --samples {}",
                        s.marked.len(),
                        s.model.row.eval_id,
                        path.display()
                    ),
                    false,
                ),
                Err(e) => s.say(format!("cannot write {}: {e}", path.display()), true),
            }
        }
    }
}

/// Runs the screen until the person quits (and `may_quit` lets them: it may ask first)
/// or the terminal goes away.
pub fn run(
    s: &mut EvalScreen,
    store: &Store,
    theme: &Theme,
    keys: &Keymap,
    may_quit: &mut dyn FnMut(&mut EvalScreen) -> bool,
) -> color_eyre::Result<()> {
    let mut guard = TerminalGuard::enter()?;
    let mut tools = ToolsByRun::new();
    let mut read_at = Instant::now();
    let mut was_followed = false;
    let mut reread = REREAD;
    let mut dirty = true;
    while !s.quitting {
        if dirty {
            guard
                .terminal
                .draw(|f| {
                    let area = f.area();
                    super::draw::draw(f.buffer_mut(), area, s, theme);
                })
                .map(|_| ())?;
            dirty = false;
        }
        // Read again while the eval runs, and once after the process that ran it ended.
        let followed = s.followed();
        let going = s.model.running() || followed || was_followed;
        if going && read_at.elapsed() >= reread {
            was_followed = followed;
            let seconds = read_at.elapsed().as_secs_f64();
            read_at = Instant::now();
            let t = Instant::now();
            let fresh = find_eval(store.conn(), &s.model.row.eval_id)
                .and_then(|row| s.model.reload(store.conn(), row));
            // A large eval is read less often: at most a fifth of the time reading.
            reread = REREAD.max(t.elapsed() * 5);
            match fresh {
                Ok(m) => s.replace(m, seconds),
                Err(e) => s.say(format!("cannot read the eval again: {e}"), true),
            }
            serve(s, store, &mut tools);
            dirty = true;
        }
        // A stop signal (SIGTERM, SIGINT from outside) closes the screen.
        if crate::base::signals::pending().is_some() {
            break;
        }
        if !event::poll(Duration::from_millis(200))? {
            if crate::tui::terminal::terminal_gone() {
                break;
            }
            continue;
        }
        dirty = true;
        match event::read()? {
            Event::Key(k) if k.kind != KeyEventKind::Release => {
                if s.input.is_some() {
                    let Some(key) = InputKey::from_code(k.code) else {
                        continue;
                    };
                    s.input_key(key);
                } else {
                    s.flash = None;
                    // `h` writes the handoff from the lists (in a sample it is a tab).
                    let handoff = k.code == KeyCode::Char('h')
                        && k.modifiers == KeyModifiers::NONE
                        && s.detail.is_none()
                        && !s.help;
                    if handoff {
                        s.act(Action::ExportHandoff);
                    } else if let Some(a) = keys.lookup(&k) {
                        s.act(a);
                    }
                }
                serve(s, store, &mut tools);
                if s.quitting && !may_quit(s) {
                    s.quitting = false;
                }
            }
            Event::Mouse(m) => match m.kind {
                MouseEventKind::ScrollUp => (0..3).for_each(|_| s.act(Action::Up)),
                MouseEventKind::ScrollDown => (0..3).for_each(|_| s.act(Action::Down)),
                _ => dirty = false,
            },
            Event::Resize(..) => {}
            _ => dirty = false,
        }
    }
    drop(guard);
    Ok(())
}
