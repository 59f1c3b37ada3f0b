//! The Eval screen on the driver loop: keys applied at once, and what they ask that
//! needs the database (open a sample, read a metadata field, write the handoff or the
//! marks) sent to the screen's reader thread, whose answers arrive as messages. A
//! running eval is read again every second (a large one less often), also on the
//! reader, so the screen follows an eval that another plexus process is running on
//! the same database while keys keep being answered.

use std::path::Path;
use std::time::Duration;

use crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEventKind};
use tokio::time::Instant;

use super::reader::{serve, EvalAnswer, EvalQuery, Reader};
use super::state::EvalScreen;
use crate::tui::app::input::InputKey;
use crate::tui::app::keymap::Keymap;
use crate::tui::app::Action;
use crate::tui::driver::{drive, Screen};
use crate::tui::terminal::TerminalGuard;
use crate::tui::ui::theme::Theme;
use crate::tui::worker::Worker;

/// How often a running eval is read again, at least.
const REREAD: Duration = Duration::from_secs(1);
/// A reading that takes longer than this is shown in the head (unless
/// `PLEXUS_EVAL_READING_SHOWN_MS` says otherwise: the tests show every reading).
const SHOW_READING: Duration = Duration::from_millis(250);

/// How long a reading goes on before the head says so.
fn show_reading_after() -> Duration {
    std::env::var("PLEXUS_EVAL_READING_SHOWN_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(SHOW_READING, Duration::from_millis)
}

/// The Eval screen on the driver: the screen, its reader thread and when it reads the
/// eval again.
struct EvalProgram<'a> {
    s: &'a mut EvalScreen,
    theme: &'a Theme,
    keys: &'a Keymap,
    reader: Worker<EvalQuery>,
    may_quit: &'a mut dyn FnMut(&mut EvalScreen) -> bool,
    /// When the last reading was asked for.
    read_at: Instant,
    /// Time between readings: longer for a large eval (at most a fifth of the time
    /// reading).
    reread: Duration,
    /// A reading in flight: when it was asked for, and the seconds since the one before.
    reading: Option<(Instant, f64)>,
    /// The followed process was alive at the last reading.
    was_followed: bool,
    /// A stop signal or a lost terminal closed the screen.
    stopped: bool,
    /// How long a reading goes on before the head says so.
    show_after: Duration,
}

impl EvalProgram<'_> {
    /// Sends what the last key (or answer) asked for to the reader.
    fn ask(&mut self) {
        if let Some(q) = self.s.take_query() {
            if !self.reader.ask(q) {
                self.s
                    .say("the database reader stopped; nothing can be read", true);
            }
        }
    }

    /// A key: the screen's own keys, then what it asked for.
    fn on_key(&mut self, k: KeyEvent) {
        if self.s.input.is_some() {
            if let Some(key) = InputKey::from_key(&k) {
                self.s.input_key(key);
            }
        } else {
            self.s.flash = None;
            // `h` writes the handoff from the lists (in a sample it is a tab).
            let handoff = k.code == KeyCode::Char('h')
                && k.modifiers == KeyModifiers::NONE
                && self.s.detail.is_none()
                && !self.s.help;
            if handoff {
                self.s.act(Action::ExportHandoff);
            } else if let Some(a) = self.keys.lookup(&k) {
                self.s.act(a);
            }
        }
        self.ask();
        if self.s.quitting && !(self.may_quit)(self.s) {
            self.s.quitting = false;
        }
    }
}

impl Screen for EvalProgram<'_> {
    type Msg = EvalAnswer;

    fn on_terminal(&mut self, ev: Event) -> bool {
        match ev {
            Event::Key(k) if k.kind != KeyEventKind::Release => self.on_key(k),
            Event::Mouse(m) => match m.kind {
                MouseEventKind::ScrollUp => (0..3).for_each(|_| self.s.act(Action::Up)),
                MouseEventKind::ScrollDown => (0..3).for_each(|_| self.s.act(Action::Down)),
                _ => return false,
            },
            Event::Resize(..) => {}
            _ => return false,
        }
        true
    }

    fn on_msg(&mut self, a: EvalAnswer) -> bool {
        let mut seconds = 0.0;
        if let EvalAnswer::Reread(_, took) = &a {
            seconds = self.reading.take().map_or(0.0, |(_, s)| s);
            self.s.reading = false;
            self.reread = REREAD.max(*took * 5);
        }
        self.s.apply(a, seconds);
        self.ask();
        true
    }

    fn on_time(&mut self, now: Instant, _last_frame: Instant) -> (bool, Option<Instant>) {
        if let Some((asked, _)) = self.reading {
            let show = now.duration_since(asked) >= self.show_after;
            let changed = show != self.s.reading;
            self.s.reading = show;
            return (changed, (!show).then_some(asked + self.show_after));
        }
        // Read again while the eval runs, and once after the process that ran it ended.
        let followed = self.s.followed();
        let going = self.s.model.running() || followed || self.was_followed;
        if !going {
            return (false, None);
        }
        let due = self.read_at + self.reread;
        if now < due {
            // The followed process may end meanwhile: look again then.
            return (false, Some(due));
        }
        self.was_followed = followed;
        let seconds = now.duration_since(self.read_at).as_secs_f64();
        self.read_at = now;
        let q = EvalQuery::Reread {
            eval_id: self.s.model.row.eval_id.clone(),
            parent_side: self.s.model.parent_side.clone(),
        };
        if self.reader.ask(q) {
            self.reading = Some((now, seconds));
            (false, Some(now + self.show_after))
        } else {
            self.s.say(
                "the database reader stopped; the eval is not read again",
                true,
            );
            self.was_followed = false;
            (true, None)
        }
    }

    fn draw(&mut self, f: &mut ratatui::Frame) {
        let area = f.area();
        super::draw::draw(f.buffer_mut(), area, self.s, self.theme);
    }

    fn done(&self) -> bool {
        self.s.quitting || self.stopped
    }

    fn stop(&mut self) {
        self.stopped = true;
    }
}

/// Runs the screen over database `db` until the person quits (and `may_quit` lets
/// them: it may ask first), a stop signal arrives or the terminal goes away.
pub async fn run(
    s: &mut EvalScreen,
    db: &Path,
    theme: &Theme,
    keys: &Keymap,
    may_quit: &mut dyn FnMut(&mut EvalScreen) -> bool,
) -> color_eyre::Result<()> {
    let mut guard = TerminalGuard::enter()?;
    let (tx, mut answers) = tokio::sync::mpsc::unbounded_channel();
    let db = db.to_path_buf();
    let reader = Worker::spawn(
        "plexus-eval-reader",
        tx,
        move || Reader::open(&db),
        |r, q| Some(serve(r, q)),
    );
    let mut program = EvalProgram {
        s,
        theme,
        keys,
        reader,
        may_quit,
        read_at: Instant::now(),
        reread: REREAD,
        reading: None,
        was_followed: false,
        stopped: false,
        show_after: show_reading_after(),
    };
    drive(&mut guard, &mut program, &mut answers).await?;
    drop(guard);
    Ok(())
}
