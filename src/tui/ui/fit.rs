//! Fitting a line of parts (a pane title, the status bar, the hints) into a width: when
//! space runs out, the least important part is shortened to its next form or left out
//! whole, so what matters stays and no word is ever cut.

use crate::base::text::sanitize::{display_width, sanitize};

/// One piece of a line: its forms, longest first, and how much it matters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    /// The forms, longest first; the first is shown when there is room.
    pub forms: Vec<String>,
    /// How much it matters: the lowest rank is shortened, then left out, first (ties:
    /// the rightmost first).
    pub rank: u8,
    /// What goes before it when the part before it is of the same group.
    pub sep: &'static str,
    /// Parts of one group are joined by their `sep`; two groups by `fit`'s `between`.
    pub group: u8,
}

impl Part {
    /// A part shown as `text`, joined to the one before by ` · `.
    pub fn new(text: impl Into<String>, rank: u8) -> Part {
        Part {
            forms: vec![sanitize(&text.into())],
            rank,
            sep: " · ",
            group: 0,
        }
    }

    /// Adds a shorter form, used before the part is left out.
    pub fn or(mut self, shorter: impl Into<String>) -> Part {
        self.forms.push(sanitize(&shorter.into()));
        self
    }

    /// Sets the separator before it.
    pub fn sep(mut self, sep: &'static str) -> Part {
        self.sep = sep;
        self
    }

    /// Sets its group.
    pub fn group(mut self, group: u8) -> Part {
        self.group = group;
        self
    }
}

/// A part kept by [`fit`]: its index in the parts, the separator drawn before it and the
/// form shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kept<'a> {
    /// Index in the parts given.
    pub index: usize,
    /// The separator before it (empty for the first part kept).
    pub sep: &'a str,
    /// The form shown.
    pub text: &'a str,
}

/// The parts that fit in `width` columns, in their order: while the line is too wide, the
/// part of lowest rank (the rightmost of equal ranks) takes its next shorter form, or is
/// left out when it has none; so no part shows while a more important one is left out.
/// `between` joins two parts of different groups.
pub fn fit<'a>(parts: &'a [Part], width: usize, between: &'a str) -> Vec<Kept<'a>> {
    // The form shown per part; `forms.len()` means left out.
    let mut form = vec![0usize; parts.len()];
    while used(parts, &form, between) > width {
        let Some(i) = (0..parts.len())
            .filter(|&i| form[i] < parts[i].forms.len())
            .min_by_key(|&i| (parts[i].rank, std::cmp::Reverse(i)))
        else {
            return Vec::new();
        };
        form[i] += 1;
    }
    line(parts, &form, between)
}

fn used(parts: &[Part], form: &[usize], between: &str) -> usize {
    line(parts, form, between)
        .iter()
        .map(|k| display_width(k.sep) + display_width(k.text))
        .sum()
}

/// [`fit`] joined into one string.
pub fn fit_line(parts: &[Part], width: usize, between: &str) -> String {
    fit(parts, width, between)
        .iter()
        .map(|k| format!("{}{}", k.sep, k.text))
        .collect()
}

fn line<'a>(parts: &'a [Part], form: &[usize], between: &'a str) -> Vec<Kept<'a>> {
    let mut out: Vec<Kept<'a>> = Vec::new();
    let mut last_group = None;
    for (i, p) in parts.iter().enumerate() {
        let Some(text) = p.forms.get(form[i]) else {
            continue;
        };
        let sep = match last_group {
            None => "",
            Some(g) if g == p.group => p.sep,
            Some(_) => between,
        };
        last_group = Some(p.group);
        out.push(Kept {
            index: i,
            sep,
            text,
        });
    }
    out
}

/// The end of `text` that fits in `width` columns, with `…` in front when cut (what is
/// being typed keeps its end, where the cursor is, in view).
pub fn tail(text: &str, width: usize) -> String {
    let clean = sanitize(text);
    if display_width(&clean) <= width {
        return clean;
    }
    if width == 0 {
        return String::new();
    }
    let mut used = 0;
    let mut start = clean.len();
    for (i, c) in clean.char_indices().rev() {
        let w = display_width(&c.to_string());
        if used + w > width - 1 {
            break;
        }
        used += w;
        start = i;
    }
    format!("…{}", &clean[start..])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn title() -> Vec<Part> {
        vec![
            Part::new("Plan DAG", 9),
            Part::new("follow", 3),
            Part::new("5 tasks", 6),
            Part::new("5 layers", 4),
            Part::new("▶1 ✔3 ✘1", 8),
        ]
    }

    #[test]
    fn everything_shows_when_it_fits() {
        assert_eq!(
            fit_line(&title(), 80, " "),
            "Plan DAG · follow · 5 tasks · 5 layers · ▶1 ✔3 ✘1"
        );
    }

    #[test]
    fn the_lowest_rank_goes_first_and_whole() {
        // 50 columns in all; one column less drops `follow` (rank 3) whole.
        assert_eq!(
            fit_line(&title(), 48, " "),
            "Plan DAG · 5 tasks · 5 layers · ▶1 ✔3 ✘1"
        );
        assert_eq!(fit_line(&title(), 30, " "), "Plan DAG · 5 tasks · ▶1 ✔3 ✘1");
        assert_eq!(fit_line(&title(), 20, " "), "Plan DAG · ▶1 ✔3 ✘1");
        assert_eq!(fit_line(&title(), 8, " "), "Plan DAG");
        assert_eq!(fit_line(&title(), 3, " "), "");
    }

    #[test]
    fn equal_ranks_drop_from_the_right() {
        let hints = vec![
            Part::new("? help", 9),
            Part::new("space pause", 5),
            Part::new("c cancel", 5),
            Part::new("r retry", 5),
        ];
        assert_eq!(fit_line(&hints, 30, " "), "? help · space pause");
        // A hint put first with a high rank stays longest.
        let mut first = vec![Part::new("4 v review", 10)];
        first.extend(hints);
        assert_eq!(fit_line(&first, 20, " "), "4 v review · ? help");
        assert_eq!(fit_line(&first, 12, " "), "4 v review");
    }

    #[test]
    fn a_shorter_form_comes_before_leaving_out() {
        let parts = vec![
            Part::new("Output", 9),
            Part::new("attempt 2/3 ([ ])", 5).or("attempt 2/3"),
            Part::new("raw", 4),
        ];
        assert_eq!(
            fit_line(&parts, 40, " "),
            "Output · attempt 2/3 ([ ]) · raw"
        );
        assert_eq!(fit_line(&parts, 26, " "), "Output · attempt 2/3 ([ ])");
        assert_eq!(fit_line(&parts, 20, " "), "Output · attempt 2/3");
        assert_eq!(fit_line(&parts, 10, " "), "Output");
    }

    #[test]
    fn groups_join_with_their_separators() {
        let parts = vec![
            Part::new("failed", 9).sep("│"),
            Part::new("0:02", 5).sep("│"),
            Part::new("? help", 7).group(1),
            Part::new("q quit", 6).group(1),
        ];
        assert_eq!(fit_line(&parts, 80, "  "), "failed│0:02  ? help · q quit");
        assert_eq!(fit_line(&parts, 20, "  "), "failed  ? help");
        let kept = fit(&parts, 20, "  ");
        assert_eq!(kept.iter().map(|k| k.index).collect::<Vec<_>>(), vec![0, 2]);
    }

    #[test]
    fn tail_keeps_the_end() {
        assert_eq!(tail("bad refs", 20), "bad refs");
        assert_eq!(tail("a reason that is long", 10), "…t is long");
        assert_eq!(tail("无效的引用", 5), "…引用");
        assert_eq!(tail("abc", 0), "");
    }
}
