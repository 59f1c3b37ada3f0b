//! The tree browser's terminal loop: draw, wait for a key, apply it. Documents are
//! read when a sample is opened, in the loop (a sample's four files are small, and
//! larger ones are refused by the size cap).

use std::time::Duration;

use crossterm::event::{self, Event, KeyEventKind, MouseEventKind};

use super::state::Browser;
use crate::tui::app::input::InputKey;
use crate::tui::app::keymap::Keymap;
use crate::tui::app::Action;
use crate::tui::terminal::TerminalGuard;
use crate::tui::ui::theme::Theme;

/// Runs the browser until the person quits or the terminal goes away.
pub fn run(b: &mut Browser, theme: &Theme, keys: &Keymap) -> std::io::Result<()> {
    let mut guard = TerminalGuard::enter()?;
    let mut dirty = true;
    while !b.quitting {
        if dirty {
            guard
                .terminal
                .draw(|f| {
                    let area = f.area();
                    super::draw::draw(f.buffer_mut(), area, b, theme, keys);
                })
                .map(|_| ())?;
            dirty = false;
        }
        if !event::poll(Duration::from_millis(250))? {
            if crate::tui::terminal::terminal_gone() {
                break;
            }
            continue;
        }
        dirty = true;
        match event::read()? {
            Event::Key(k) if k.kind != KeyEventKind::Release => {
                if b.input.is_some() {
                    let Some(key) = InputKey::from_code(k.code) else {
                        continue;
                    };
                    b.input_key(key);
                    continue;
                }
                b.flash = None;
                if let Some(a) = keys.lookup(&k) {
                    b.act(a);
                }
            }
            Event::Mouse(m) => match m.kind {
                MouseEventKind::ScrollUp => (0..3).for_each(|_| b.act(Action::Up)),
                MouseEventKind::ScrollDown => (0..3).for_each(|_| b.act(Action::Down)),
                _ => dirty = false,
            },
            Event::Resize(..) => {}
            _ => dirty = false,
        }
    }
    drop(guard);
    Ok(())
}
