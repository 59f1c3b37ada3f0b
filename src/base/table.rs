//! The column-aligned tables of the human output (`runs`, `show`, `providers`, the
//! review queue, the headless summary), laid out by comfy-table so that columns line up
//! by display width: a Chinese character takes two columns, a combining mark none.
//!
//! Every cell is sanitised before it is measured (text from the database, a plan or a
//! config file is untrusted: no control character or bidi override reaches the
//! terminal), and a cell wider than its column's limit is cut to it with `…`. The look
//! is borderless: a header row, two spaces between columns, no trailing spaces. No
//! ANSI styling is possible (comfy-table is built without its terminal feature) and the
//! layout never depends on the terminal: nothing is wrapped.

use comfy_table::{presets::NOTHING, Cell, CellAlignment, ContentArrangement, Row, Table};

use crate::base::text::sanitize::sanitize;

/// Widest a cell is shown, in display columns, unless its column says otherwise.
pub const DEFAULT_MAX: usize = 48;

/// Spaces between two columns.
const GAP: u16 = 2;

/// How one column is laid out: its header, alignment and widest cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Col {
    header: &'static str,
    right: bool,
    max: usize,
}

impl Col {
    /// A left-aligned column (text).
    pub const fn left(header: &'static str) -> Col {
        Col {
            header,
            right: false,
            max: DEFAULT_MAX,
        }
    }

    /// A right-aligned column (numbers).
    pub const fn right(header: &'static str) -> Col {
        Col {
            header,
            right: true,
            max: DEFAULT_MAX,
        }
    }

    /// Cells wider than `width` display columns are cut to it, ending in `…`.
    pub const fn max(mut self, width: usize) -> Col {
        self.max = if width == 0 { 1 } else { width };
        self
    }
}

/// A table being filled: columns, then rows of cells, then [`TextTable::render`].
#[derive(Debug, Clone)]
pub struct TextTable {
    cols: Vec<Col>,
    rows: Vec<Vec<String>>,
    header: bool,
    indent: usize,
}

impl TextTable {
    /// A table with these columns and a header row of their names.
    pub fn new(cols: &[Col]) -> TextTable {
        TextTable {
            cols: cols.to_vec(),
            rows: Vec::new(),
            header: true,
            indent: 0,
        }
    }

    /// No header row.
    pub fn without_header(mut self) -> TextTable {
        self.header = false;
        self
    }

    /// Every line starts with `spaces` spaces.
    pub fn indent(mut self, spaces: usize) -> TextTable {
        self.indent = spaces;
        self
    }

    /// Adds a row: one cell per column (missing cells are empty, extra ones dropped).
    /// Each cell is sanitised and cut to its column's width here.
    pub fn row<I, S>(&mut self, cells: I)
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut cells: Vec<String> = cells
            .into_iter()
            .zip(&self.cols)
            .map(|(c, col)| fit(&sanitize(c.as_ref()), col.max))
            .collect();
        cells.resize(self.cols.len(), String::new());
        self.rows.push(cells);
    }

    /// Rows added so far.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether no row was added.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The table as lines (no trailing spaces, no newline at the end of the last).
    pub fn render(&self) -> String {
        let mut t = Table::new();
        t.load_style(NOTHING)
            .set_content_arrangement(ContentArrangement::Disabled);
        if self.header {
            t.set_header(Row::from(
                self.cols
                    .iter()
                    .map(|c| Cell::new(fit(c.header, c.max)))
                    .collect::<Vec<_>>(),
            ));
        }
        for r in &self.rows {
            t.add_row(Row::from(r.iter().map(Cell::new).collect::<Vec<_>>()));
        }
        let last = self.cols.len().saturating_sub(1);
        for (i, col) in self.cols.iter().enumerate() {
            if let Some(c) = t.column_mut(i) {
                c.set_padding((0, if i == last { 0 } else { GAP }));
                c.set_cell_alignment(if col.right {
                    CellAlignment::Right
                } else {
                    CellAlignment::Left
                });
            }
        }
        let pad = " ".repeat(self.indent);
        t.lines()
            .map(|l| format!("{pad}{}", l.trim_end()))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Prints the table on standard output.
    pub fn print(&self) {
        if self.cols.is_empty() || (!self.header && self.rows.is_empty()) {
            return;
        }
        crate::outln!("{}", self.render());
    }
}

/// `text` (already sanitised) cut to at most `max` display columns, at a word, ending in
/// `…` when something was cut.
pub fn fit(text: &str, max: usize) -> String {
    crate::base::text::cut::cut_width(text, max).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::text::sanitize::display_width;

    fn starts(line: &str, cells: &[&str]) -> Vec<usize> {
        let mut from = 0;
        cells
            .iter()
            .map(|c| {
                let at = from + line[from..].find(c).expect("cell in line");
                from = at + c.len();
                display_width(&line[..at])
            })
            .collect()
    }

    #[test]
    fn columns_line_up_by_display_width() {
        let mut t = TextTable::new(&[Col::left("TASK"), Col::left("AGENT"), Col::right("N")]);
        t.row(["调研论文", "学者", "7"]);
        t.row(["ascii", "x", "12345"]);
        let text = t.render();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert_eq!(starts(lines[1], &["调研论文", "学者"]), vec![0, 10]);
        assert_eq!(starts(lines[2], &["ascii", "x"]), vec![0, 10]);
        assert_eq!(starts(lines[0], &["TASK", "AGENT"]), vec![0, 10]);
        // Right-aligned numbers end in the same column.
        let ends: Vec<usize> = lines.iter().map(|l| display_width(l)).collect();
        assert_eq!(ends, vec![ends[0]; 3], "{text}");
        assert!(lines.iter().all(|l| !l.ends_with(' ')));
    }

    #[test]
    fn cells_are_sanitised_and_cut_by_display_width() {
        let mut t = TextTable::new(&[Col::left("A").max(5), Col::left("B")]);
        t.row(["\u{1b}[31mred\u{202E}", "x\u{7}"]);
        t.row(["汉字汉字汉字", "y"]);
        let text = t.render();
        assert!(!text.contains('\u{1b}') && !text.contains('\u{7}') && !text.contains('\u{202E}'));
        assert!(text.contains("汉字…"), "{text}");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(starts(lines[1], &["␛red", "x␇"]), vec![0, 7], "{text}");
        assert_eq!(starts(lines[2], &["汉字…", "y"]), vec![0, 7], "{text}");
    }

    #[test]
    fn fit_never_exceeds_the_width() {
        for max in 1..8 {
            for s in ["汉字汉字汉字", "abcdefghij", "a汉b字c"] {
                let f = fit(s, max);
                assert!(display_width(&f) <= max, "{s} {max} {f}");
            }
        }
        assert_eq!(fit("short", 10), "short");
    }

    #[test]
    fn indent_and_no_header() {
        let mut t = TextTable::new(&[Col::left("K"), Col::right("N")])
            .without_header()
            .indent(2);
        t.row(["run_started", "1"]);
        t.row(["chunk", "120"]);
        assert_eq!(t.render(), "  run_started    1\n  chunk        120");
    }
}
