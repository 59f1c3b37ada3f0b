//! The `:` command line: any action by its name (`:next_failure`, `:help`), and a few
//! commands with an argument — `:retry TASK`, `:goto TASK`, `:theme NAME`,
//! `:filter grade=D` (also `agent=`, `type=`), `:screen NAME`. Tab completes the word
//! being typed; an error is said on the status line.

use super::action::{Action, Screen};
use super::effect::Effect;
use super::select::select_task;
use super::ui_state::UiState;
use super::update::update;
pub use super::views::Completions;
use crate::base::protocol::Grade;
use crate::model::state::RunState;

/// Commands that take an argument.
const COMMANDS: [&str; 7] = [
    "retry", "goto", "theme", "filter", "screen", "fold", "unfold",
];

/// Built-in theme names, for completion.
const THEMES: [&str; 3] = ["dark", "light", "high-contrast"];

/// Every word the first position completes to: the commands and every action name.
fn first_words() -> Vec<&'static str> {
    let mut v: Vec<&'static str> = COMMANDS.to_vec();
    v.extend(Action::ALL.iter().map(|a| a.name()));
    v.sort_unstable();
    v.dedup();
    v
}

/// Completes the last word of `text`: to the one candidate that starts with it, or to
/// the longest prefix the candidates share. Returns the new text and the candidates.
pub fn complete(text: &str, run: &RunState) -> (String, Vec<String>) {
    let words: Vec<&str> = text.split(' ').collect();
    let last = words.last().copied().unwrap_or("");
    let candidates: Vec<String> = if words.len() <= 1 {
        first_words().into_iter().map(str::to_string).collect()
    } else {
        match words[0] {
            "retry" | "goto" => run.tasks.iter().map(|t| t.id.to_string()).collect(),
            "theme" => THEMES.iter().map(|s| s.to_string()).collect(),
            "filter" => ["grade=", "agent=", "type="]
                .iter()
                .map(|s| s.to_string())
                .collect(),
            "screen" => Screen::ALL
                .iter()
                .map(|s| s.title().to_lowercase())
                .collect(),
            _ => Vec::new(),
        }
    };
    let hits: Vec<String> = candidates
        .into_iter()
        .filter(|c| c.starts_with(last))
        .collect();
    let Some(first) = hits.first() else {
        return (text.to_string(), hits);
    };
    let mut common = first.clone();
    for h in &hits[1..] {
        let n = common
            .chars()
            .zip(h.chars())
            .take_while(|(a, b)| a == b)
            .count();
        common = common.chars().take(n).collect();
    }
    let mut out = words[..words.len() - 1].join(" ");
    if !out.is_empty() {
        out.push(' ');
    }
    out.push_str(&common);
    if hits.len() == 1 && !common.ends_with('=') {
        out.push(' ');
    }
    (out, hits)
}

/// Runs a command line; an error is said on the status line.
pub fn run(ui: &mut UiState, run: &RunState, line: &str) -> Vec<Effect> {
    let mut fx = Vec::new();
    let mut parts = line.split_whitespace();
    let Some(cmd) = parts.next() else {
        return fx;
    };
    let arg = parts.collect::<Vec<_>>().join(" ");
    let find = |id: &str| run.tasks.iter().position(|t| &*t.id == id);
    match cmd {
        "goto" | "retry" if arg.is_empty() => ui.flash(format!(":{cmd} needs a task id (Tab completes)"), true),
        "goto" => match find(&arg) {
            Some(i) => {
                ui.screen = Screen::Run;
                super::follow::stop(ui);
                select_task(ui, run, i, &mut fx);
            }
            None => ui.flash(format!(":goto: no task `{arg}`"), true),
        },
        "retry" => match find(&arg) {
            Some(i) => {
                ui.task = i;
                fx = update(ui, run, Action::Retry);
            }
            None => ui.flash(format!(":retry: no task `{arg}`"), true),
        },
        "theme" if arg.is_empty() => ui.flash(":theme needs a name: dark, light, high-contrast or a file", true),
        "theme" => fx.push(Effect::SetTheme(arg)),
        "screen" => match Screen::ALL.iter().find(|s| s.title().eq_ignore_ascii_case(&arg)) {
            Some(&s) => {
                let a = match s {
                    Screen::Run => Action::ScreenRun,
                    Screen::Atoms => Action::ScreenAtoms,
                    Screen::Runs => Action::ScreenRuns,
                    Screen::Failures => Action::ScreenFailures,
                };
                fx = update(ui, run, a);
            }
            None => ui.flash(format!(":screen: no screen `{arg}` (run, atoms, runs, failures)"), true),
        },
        "filter" => filter(ui, run, &arg),
        "fold" | "unfold" => fold(ui, cmd == "fold", &arg),
        name => match Action::from_name(name) {
            Some(Action::CommandLine) => {}
            Some(a) if arg.is_empty() => fx = update(ui, run, a),
            Some(_) => ui.flash(format!(":{name} takes no argument"), true),
            None => ui.flash(
                format!("unknown command `{name}`: Tab completes; try :goto, :retry, :theme, :filter or an action of ? help"),
                true,
            ),
        },
    }
    fx
}

/// `:filter grade=D`, `agent=NAME`, `type=TYPE` on the Atoms screen; `:filter` clears.
/// `:fold N|all` and `:unfold N|all`: the selected task's loop steps in the output pane.
fn fold(ui: &mut UiState, fold: bool, arg: &str) {
    let step = match arg {
        "all" | "" => None,
        n => match n.parse::<u32>() {
            Ok(n) => Some(n),
            Err(_) => {
                let cmd = if fold { "fold" } else { "unfold" };
                ui.flash(format!(":{cmd} takes a step number or `all`"), true);
                return;
            }
        },
    };
    ui.folds.entry(ui.task).or_default().set(step, fold);
}

fn filter(ui: &mut UiState, run: &RunState, arg: &str) {
    let t = &mut ui.atoms;
    if arg.is_empty() {
        t.grade = None;
        t.agent = None;
        t.atom_type = None;
        ui.flash("filters cleared", false);
        return;
    }
    for part in arg.split_whitespace() {
        let Some((k, v)) = part.split_once('=') else {
            ui.flash(
                format!(":filter: `{part}` is not KEY=VALUE (grade=, agent=, type=)"),
                true,
            );
            return;
        };
        match k {
            "grade" => match Grade::parse(v) {
                Some(g) => t.grade = Some(g),
                None => {
                    ui.flash(format!(":filter: no grade `{v}` (A, B, C, D)"), true);
                    return;
                }
            },
            "agent" => match run
                .agents
                .iter()
                .position(|a| a.name.eq_ignore_ascii_case(v))
            {
                Some(i) => t.agent = Some(i),
                None => {
                    ui.flash(format!(":filter: no agent `{v}`"), true);
                    return;
                }
            },
            "type" => t.atom_type = Some(v.into()),
            _ => {
                ui.flash(
                    format!(":filter: unknown key `{k}` (grade, agent, type)"),
                    true,
                );
                return;
            }
        }
    }
    t.selected = 0;
    ui.screen = Screen::Atoms;
}
