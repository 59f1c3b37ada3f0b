//! The help overlay: every action with its keys, grouped, from the live keymap.

use crate::tui::app::keymap::Keymap;
use crate::tui::app::Action;

/// What an action does, for the help overlay.
pub fn describe(a: Action) -> &'static str {
    match a {
        Action::Quit => "quit (asks while the run is live; it stays resumable)",
        Action::Confirm => "answer yes to a question",
        Action::Back => "close / leave the focused pane / back to the live run",
        Action::NextScreen => "next screen",
        Action::PrevScreen => "previous screen",
        Action::ScreenRun => "Run screen",
        Action::ScreenAtoms => "Atoms screen",
        Action::ScreenRuns => "Runs screen",
        Action::ScreenFailures => "Failures screen",
        Action::Up => "up: previous layer / scroll / previous row",
        Action::Down => "down: next layer / scroll / next row",
        Action::Left => "left: previous task in the layer / debate round",
        Action::Right => "right: next task in the layer / debate round",
        Action::PageUp => "page up",
        Action::PageDown => "page down",
        Action::Top => "to the top",
        Action::Bottom => "to the bottom (output follows the tail again)",
        Action::Open => "open: focus the output / a loop's step (in the output) / atom detail / a run / a failure's attempt",
        Action::FocusNext => "cycle pane focus / debate: round or report",
        Action::ViewRaw => "output: raw stream",
        Action::ViewAtoms => "output: parsed atoms",
        Action::ViewRequest => "output: the full request",
        Action::ViewIssues => "output: quality issues and errors",
        Action::ViewContext => "output: context plan (inputs, modes, trimming)",
        Action::LoopConversation => {
            "output: the tool-using loop's conversation, every message with role and tokens"
        }
        Action::TogglePause => "pause / resume dispatch; in a replay: play / pause",
        Action::Cancel => "cancel the run / stop the debate (asks)",
        Action::Retry => "retry the selected failed task",
        Action::Help => "this help",
        Action::CommandLine => ": command line — any action by name, :goto T, :retry T, :theme light, :filter grade=D (Tab completes)",
        Action::Messages => "the message log (the last few hundred messages, with times)",
        Action::Search => "search (task id on Run, atoms on Atoms); filter (Runs, Failures)",
        Action::Sort => "atoms, failures: next sort column",
        Action::SortReverse => "atoms, failures: reverse the sort",
        Action::FilterGrade => "atoms: filter by grade; failures: by error code",
        Action::FilterAgent => "atoms, failures: filter by agent",
        Action::FilterType => "atoms: filter by type; failures: by status",
        Action::FilterRun => "failures: this run → every run → each run in turn",
        Action::FilterTime => "failures: last hour, day, week / any time",
        Action::ClearFilters => "atoms, runs, failures: clear filters and search",
        Action::Compare => "runs: mark a run; on another run, compare the two",
        Action::ReviewQueue => {
            "failures: the review queue (hallucinations waiting for a person) / the list"
        }
        Action::ReviewAccept => "review queue: accept the task's atoms (its dependents run)",
        Action::ReviewReject => "review queue: reject the task's atoms, with a reason",
        Action::ExportHandoff => "failure trees: write the handoff of the marked samples",
        Action::ProblemsView => "failure trees: the problems report (enter opens a typical case)",
        Action::UnfoldAll => "failure trees: unfold every folded turn and JSON level / fold back",
        Action::PrevAttempt => {
            "output: the task's previous attempt (stream, request, atoms, issues)"
        }
        Action::NextAttempt => {
            "output: the task's next attempt (the last one follows new attempts)"
        }
        Action::Follow => {
            "run: follow the work (selection on the front running task or the latest failure)"
        }
        Action::NextRunning => "run: the next running task",
        Action::NextBlocked => "run: the next blocked task",
        Action::LayerPageLeft => "run: a page to the left within the layer",
        Action::LayerPageRight => "run: a page to the right within the layer",
        Action::NextFailure => "next failed, timed-out, partial or retried task / failure row",
        Action::PrevFailure => "previous failed, timed-out, partial or retried task / failure row",
        Action::ReplayStepBack => "replay: one event back",
        Action::ReplayStepForward => "replay: one event forward",
        Action::ReplayPrevStart => "replay: previous task start",
        Action::ReplayNextStart => "replay: next task start",
        Action::ReplayPrevFailure => "replay: previous failure",
        Action::ReplayNextFailure => "replay: next failure",
        Action::ReplaySlower => "replay: slower (down to ×0.25)",
        Action::ReplayFaster => "replay: faster (×64, then as fast as possible)",
        Action::ReplayStart => "replay: to the first event",
        Action::ReplayEnd => "replay: to the last event / the live edge (follows it)",
        Action::ReplaySeek => "replay: seek to 40%, an event (1234), a time (14:03:21, +1:30)",
    }
}

/// The help text: one line per action, `keys  description`.
pub fn lines(keys: &Keymap) -> Vec<String> {
    let mut out = vec![
        "Keys (rebind them in plexus.toml under [keys]; Esc or ? closes)".to_string(),
        String::new(),
    ];
    for &a in Action::ALL {
        let k = keys.keys_for(a).join(" ");
        out.push(format!("{k:>18}  {}", describe(a)));
    }
    out.push(String::new());
    out.extend(debate_lines(keys));
    out.push(String::new());
    out.push("Mouse wheel scrolls the output, lists and this help.".into());
    out
}

/// The Debate screen's keys, for the help overlay.
fn debate_lines(keys: &Keymap) -> Vec<String> {
    let k = |a: Action| keys.keys_for(a).join(" ");
    vec![
        "On the Debate screen (a debate session):".to_string(),
        format!(
            "{:>18}  previous / next round",
            format!("{} {}", k(Action::Left), k(Action::Right))
        ),
        format!(
            "{:>18}  the round's positions / the final report",
            k(Action::FocusNext)
        ),
        format!(
            "{:>18}  scroll the positions or the report",
            format!("{} {}", k(Action::Up), k(Action::Down))
        ),
        format!(
            "{:>18}  stop the live session (asks; it ends cancelled)",
            k(Action::Cancel)
        ),
    ]
}
