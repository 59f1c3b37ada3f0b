//! The tree browser on the driver loop: keys applied at once, and what they ask that
//! needs the files (a sample's documents, a design file, the handoff written) sent to
//! the browser's reader thread, whose answers arrive as messages.

use crossterm::event::{Event, KeyEvent, KeyEventKind, MouseEventKind};
use tokio::time::Instant;

use super::reader::{serve, TreeAnswer, TreeRequest};
use super::state::Browser;
use crate::tui::app::input::InputKey;
use crate::tui::app::keymap::Keymap;
use crate::tui::app::Action;
use crate::tui::driver::{drive, Screen};
use crate::tui::terminal::TerminalGuard;
use crate::tui::ui::theme::Theme;
use crate::tui::worker::Worker;

/// The browser on the driver: the browser and its reader thread.
struct TreeProgram<'a> {
    b: &'a mut Browser,
    theme: &'a Theme,
    keys: &'a Keymap,
    reader: Worker<TreeRequest>,
    /// A stop signal or a lost terminal closed the browser.
    stopped: bool,
}

impl TreeProgram<'_> {
    /// A key: the browser's own keys, then what it asked for.
    fn on_key(&mut self, k: KeyEvent) {
        if self.b.input.is_some() {
            if let Some(key) = InputKey::from_key(&k) {
                self.b.input_key(key);
            }
        } else {
            self.b.flash = None;
            if let Some(a) = self.keys.lookup(&k) {
                self.b.act(a);
            }
        }
        if let Some(req) = self.b.request.take() {
            if !self.reader.ask(req) {
                self.b
                    .say("the file reader stopped; nothing can be read", true);
            }
        }
    }
}

impl Screen for TreeProgram<'_> {
    type Msg = TreeAnswer;

    fn on_terminal(&mut self, ev: Event) -> bool {
        match ev {
            Event::Key(k) if k.kind != KeyEventKind::Release => self.on_key(k),
            Event::Mouse(m) => match m.kind {
                MouseEventKind::ScrollUp => (0..3).for_each(|_| self.b.act(Action::Up)),
                MouseEventKind::ScrollDown => (0..3).for_each(|_| self.b.act(Action::Down)),
                _ => return false,
            },
            Event::Resize(..) => {}
            _ => return false,
        }
        true
    }

    fn on_msg(&mut self, a: TreeAnswer) -> bool {
        self.b.apply(a);
        true
    }

    fn on_time(&mut self, _now: Instant, _last_frame: Instant) -> (bool, Option<Instant>) {
        (false, None)
    }

    fn draw(&mut self, f: &mut ratatui::Frame) {
        let area = f.area();
        super::draw::draw(f.buffer_mut(), area, self.b, self.theme, self.keys);
    }

    fn done(&self) -> bool {
        self.b.quitting || self.stopped
    }

    fn stop(&mut self) {
        self.stopped = true;
    }
}

/// Runs the browser until the person quits, a stop signal arrives or the terminal
/// goes away.
pub async fn run(b: &mut Browser, theme: &Theme, keys: &Keymap) -> std::io::Result<()> {
    let mut guard = TerminalGuard::enter()?;
    let (tx, mut answers) = tokio::sync::mpsc::unbounded_channel();
    let tree = b.tree.clone();
    let reader = Worker::spawn(
        "plexus-tree-reader",
        tx,
        move || tree,
        |tree, req| Some(serve(tree, req)),
    );
    let mut program = TreeProgram {
        b,
        theme,
        keys,
        reader,
        stopped: false,
    };
    drive(&mut guard, &mut program, &mut answers).await?;
    drop(guard);
    Ok(())
}
