//! Folding the steps of a tool-using loop in the output pane: a folded step shows as its
//! action line alone (its thought and its observation lines hidden), with how many
//! lines it hides.

use std::borrow::Cow;

use crate::tui::app::folds::Folds;

/// The step number of an action line (`▸ step N · action: …`).
fn action_step(line: &str) -> Option<u32> {
    let rest = line.strip_prefix("▸ step ")?;
    rest.split(' ').next()?.parse().ok()
}

/// A line that belongs to the step before it: an observation, a skill, a compression.
fn follows_action(line: &str) -> bool {
    ["◂ ", "✦ ", "⚠ skill ", "⇣ "]
        .iter()
        .any(|p| line.starts_with(p))
}

/// The lines of `count` logical lines (`get(i)`) with `folds` applied.
pub fn fold_lines<'a>(
    count: usize,
    get: impl Fn(usize) -> &'a str,
    folds: &Folds,
) -> Vec<Cow<'a, str>> {
    let mut out: Vec<Cow<'a, str>> = Vec::with_capacity(count);
    // Start of the current step's lines (its thought comes before its action).
    let mut start = 0;
    let mut i = 0;
    while i < count {
        let line = get(i);
        let Some(n) = action_step(line) else {
            i += 1;
            continue;
        };
        let mut end = i + 1;
        while end < count && follows_action(get(end)) {
            end += 1;
        }
        if folds.folded(n) {
            let hidden = (end - start).saturating_sub(1);
            out.push(Cow::Owned(format!("{line}  ⊞ {hidden} line(s) folded")));
        } else {
            out.extend((start..end).map(|k| Cow::Borrowed(get(k))));
        }
        start = end;
        i = end;
    }
    out.extend((start..count).map(|k| Cow::Borrowed(get(k))));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: [&str; 9] = [
        "Thought: first.",
        "▸ step 1 · action: get_now({})",
        "◂ observation · get_now · standard · 0 ms · 5 tokens: now",
        "Thought: second,",
        "over two lines.",
        "▸ step 2 · action: file_search({})",
        "◂ observation · file_search · standard · 1 ms · 9 tokens: found",
        "{\"output\": {}}",
        "■ loop ended (answer): 3 steps",
    ];

    fn folded(folds: &Folds) -> Vec<String> {
        fold_lines(LOG.len(), |i| LOG[i], folds)
            .into_iter()
            .map(Cow::into_owned)
            .collect()
    }

    #[test]
    fn nothing_folded_is_the_log_itself() {
        assert_eq!(folded(&Folds::default()), LOG);
    }

    #[test]
    fn a_folded_step_is_its_action_line_with_what_it_hides() {
        let mut f = Folds::default();
        f.set(Some(2), true);
        let got = folded(&f);
        assert_eq!(got[..3], LOG[..3]);
        assert_eq!(
            got[3],
            "▸ step 2 · action: file_search({})  ⊞ 3 line(s) folded"
        );
        assert_eq!(got[4..], LOG[7..]);
    }

    #[test]
    fn all_folded_keeps_the_answer() {
        let mut f = Folds::default();
        f.set(None, true);
        let got = folded(&f);
        assert_eq!(got.len(), 4, "{got:?}");
        assert!(got[0].ends_with("⊞ 2 line(s) folded"));
        assert_eq!(got[2..], LOG[7..]);
        // One step opened again of all folded.
        f.set(Some(1), false);
        let got = folded(&f);
        assert_eq!(got[..3], LOG[..3]);
        assert!(got[3].ends_with("⊞ 3 line(s) folded"));
        f.set(None, false);
        assert!(!f.any());
        assert_eq!(folded(&f), LOG);
    }
}
