//! Typed text: the search, the command line, the seek prompt and a rejection's reason,
//! one key at a time.

use super::action::Screen;
use super::effect::Effect;
use super::select::select_task;
use super::ui_state::UiState;
use super::{command_line, follow};
use crate::model::state::RunState;

/// A key while a search is being typed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKey {
    /// A character.
    Char(char),
    /// Delete the last character.
    Backspace,
    /// Accept.
    Enter,
    /// Abandon.
    Esc,
    /// Complete the word being typed (the command line).
    Tab,
    /// Clear the line (Ctrl-U).
    Clear,
}

impl InputKey {
    /// The typing key a terminal key is, if it is one: Ctrl-U clears the line, and a
    /// letter held with Ctrl or Alt types nothing (it is not put in the text).
    pub fn from_key(k: &crossterm::event::KeyEvent) -> Option<InputKey> {
        use crossterm::event::{KeyCode, KeyModifiers};
        let held = k
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
        match k.code {
            KeyCode::Char('u') if k.modifiers.contains(KeyModifiers::CONTROL) => {
                Some(InputKey::Clear)
            }
            KeyCode::Char(_) if held => None,
            code => InputKey::from_code(code),
        }
    }

    /// The typing key a terminal key's code is, if it is one.
    pub fn from_code(code: crossterm::event::KeyCode) -> Option<InputKey> {
        use crossterm::event::KeyCode;
        Some(match code {
            KeyCode::Char(c) => InputKey::Char(c),
            KeyCode::Backspace => InputKey::Backspace,
            KeyCode::Enter => InputKey::Enter,
            KeyCode::Esc => InputKey::Esc,
            KeyCode::Tab => InputKey::Tab,
            _ => return None,
        })
    }
}

/// Handles a key while a search is typed. On the Atoms screen the table filters as you
/// type; on the Run screen Enter selects the next task whose id contains the text.
pub fn input(ui: &mut UiState, run: &RunState, key: InputKey) -> Vec<Effect> {
    let Some(mut text) = ui.input.take() else {
        return Vec::new();
    };
    if ui.command_prompt {
        return command_input(ui, run, text, key);
    }
    match key {
        InputKey::Tab => {}
        InputKey::Char(c) if !c.is_control() => {
            if text.chars().count() < 200 {
                text.push(c);
            }
        }
        InputKey::Char(_) => {}
        InputKey::Backspace => {
            text.pop();
        }
        InputKey::Clear => text.clear(),
        InputKey::Esc => {
            escape(ui);
            return Vec::new();
        }
        InputKey::Enter => return enter(ui, run, &text),
    }
    if ui.seek_prompt || ui.reason_for.is_some() {
        ui.input = Some(text);
        return Vec::new();
    }
    filter(ui, &text);
    ui.input = Some(text);
    Vec::new()
}

/// A key typed on the command line (`text` so far): Enter runs it, Tab completes it.
fn command_input(ui: &mut UiState, run: &RunState, mut text: String, key: InputKey) -> Vec<Effect> {
    if key != InputKey::Tab {
        ui.completions = None;
    }
    match key {
        InputKey::Esc => ui.command_prompt = false,
        InputKey::Enter => {
            ui.command_prompt = false;
            return command_line::run(ui, run, &text);
        }
        InputKey::Tab => {
            let (done, hits) = command_line::complete(&text, run);
            ui.completions = command_line::Completions::of(&done, hits);
            ui.input = Some(done);
        }
        InputKey::Backspace => {
            text.pop();
            ui.input = Some(text);
        }
        InputKey::Clear => {
            ui.completions = None;
            ui.input = Some(String::new());
        }
        InputKey::Char(c) if !c.is_control() && text.chars().count() < 200 => {
            text.push(c);
            ui.input = Some(text);
        }
        InputKey::Char(_) => ui.input = Some(text),
    }
    Vec::new()
}

/// Esc: abandons a rejection, the seek prompt, or the screen's search (clearing it).
fn escape(ui: &mut UiState) {
    if ui.reason_for.is_some() {
        ui.reason_for = None;
        ui.flash("not rejected", false);
    } else if ui.seek_prompt {
        ui.seek_prompt = false;
    } else if ui.screen == Screen::Atoms {
        ui.atoms.query.clear();
    } else if ui.screen == Screen::Runs {
        ui.runs.query.clear();
        ui.runs.selected = 0;
    } else if ui.screen == Screen::Failures {
        ui.failures.query.text.clear();
        let now = ui.now_ms;
        ui.failures.refilter(now);
    }
}

/// Enter on `text`: rejects with it as the reason, seeks the replay to it, or (on the Run
/// screen) finds the next task it names.
fn enter(ui: &mut UiState, run: &RunState, text: &str) -> Vec<Effect> {
    let mut fx = Vec::new();
    if ui.reason_for.is_some() {
        let (run, task) = ui.reason_for.take().unwrap_or_default();
        if text.trim().is_empty() {
            ui.flash("a rejection needs a reason: X again to write one", true);
        } else {
            ui.flash(format!("rejecting {task}…"), false);
            fx.push(Effect::Review {
                run,
                task,
                verdict: crate::run::review::Verdict::Reject {
                    reason: text.trim().to_string(),
                },
            });
        }
    } else if ui.seek_prompt {
        ui.seek_prompt = false;
        if let Some(t) = ui.replay.as_mut() {
            match t.parse_target(text) {
                Ok(to) => fx.push(t.seek(to)),
                Err(e) => ui.flash(e, true),
            }
        }
    } else if ui.screen == Screen::Run {
        find_task(ui, run, text, &mut fx);
    }
    fx
}

/// Filters the current screen's list by `text` as it is typed, from its first row.
fn filter(ui: &mut UiState, text: &str) {
    if ui.screen == Screen::Atoms {
        ui.atoms.query = text.to_string();
        ui.atoms.selected = 0;
    } else if ui.screen == Screen::Runs {
        ui.runs.query = text.to_string();
        ui.runs.selected = 0;
    } else if ui.screen == Screen::Failures {
        ui.failures.query.text = text.to_string();
        ui.failures.selected = 0;
        let now = ui.now_ms;
        ui.failures.refilter(now);
    }
}

fn find_task(ui: &mut UiState, run: &RunState, text: &str, fx: &mut Vec<Effect>) {
    let needle = text.to_lowercase();
    if needle.is_empty() {
        return;
    }
    let n = run.tasks.len();
    let found = (1..=n)
        .map(|k| (ui.task + k) % n)
        .find(|&i| run.tasks[i].id.to_lowercase().contains(&needle));
    match found {
        Some(i) => {
            follow::stop(ui);
            select_task(ui, run, i, fx)
        }
        None => ui.flash(format!("no task matches `{text}`"), true),
    }
}
