//! The Atoms screen: every graded atom in a table (id, type, agent, grade, score,
//! confidence, task) with sort, filters and search; and the atom detail overlay.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;

use super::text::{fill, put};
use super::theme::Theme;
use crate::base::text::wrap::pad_or_truncate;
use crate::model::state::RunState;
use crate::tui::app::atoms_view::atom_view;
use crate::tui::app::UiState;

/// Draws the table into `inner`; returns the title describing sort and filters.
pub fn draw(buf: &mut Buffer, inner: Rect, run: &RunState, ui: &mut UiState, theme: &Theme) {
    let view = atom_view(run, &ui.atoms);
    if inner.height < 2 {
        return;
    }
    let mut y = inner.y;
    let filters = describe_filters(run, &ui.atoms, view.len());
    put(buf, inner.x, y, inner.width, &filters, theme.muted());
    y += 1;
    let cols = Cols::new(inner.width as usize);
    put(
        buf,
        inner.x,
        y,
        inner.width,
        &cols.header(),
        theme.title().add_modifier(Modifier::BOLD),
    );
    y += 1;
    let rows = inner.bottom().saturating_sub(y) as usize;
    ui.list_rows = rows;
    let t = &mut ui.atoms;
    if view.is_empty() {
        let msg = if run.atoms.is_empty() {
            "no atoms graded yet"
        } else {
            "no atom matches the filters (x clears them)"
        };
        put(buf, inner.x, y, inner.width, msg, theme.muted());
        return;
    }
    t.selected = t.selected.min(view.len() - 1);
    t.top = super::text::keep_visible(t.selected, t.top, rows);
    let list_area = Rect::new(inner.x, y, inner.width, rows as u16);
    let list_top = t.top;
    ui.layout.list = Some((list_area, list_top));
    let t = &ui.atoms;
    for (k, &ai) in view.iter().enumerate().skip(t.top).take(rows) {
        let row = Rect { y, ..inner };
        draw_row(buf, row, run, ai, k == t.selected, &cols, theme);
        y += 1;
    }
}

/// Widths of the table's flexible columns.
struct Cols {
    /// The atom's id.
    id_w: usize,
    /// The atom's type.
    type_w: usize,
    /// The agent that wrote it.
    agent_w: usize,
    /// The task it came from.
    task_w: usize,
}

impl Cols {
    /// The columns of a table `w` wide.
    fn new(w: usize) -> Self {
        // id, type, agent and task share what the fixed columns leave.
        let fixed = 3 + 6 + 7 + 7 + 2;
        let flex = w.saturating_sub(fixed);
        let id_w = (flex * 30 / 100).max(6);
        let type_w = (flex * 18 / 100).max(5);
        let agent_w = (flex * 26 / 100).max(5);
        let task_w = flex.saturating_sub(id_w + type_w + agent_w).max(4);
        Cols {
            id_w,
            type_w,
            agent_w,
            task_w,
        }
    }

    /// The header row naming the columns.
    fn header(&self) -> String {
        format!(
            "{} {} {} {:<6}{:>7}{:>7}  {}",
            pad_or_truncate("id", self.id_w),
            pad_or_truncate("type", self.type_w),
            pad_or_truncate("agent", self.agent_w),
            "grade",
            "score",
            "conf",
            pad_or_truncate("task", self.task_w)
        )
    }
}

/// Draws atom `ai` of the run on line `area.y`, highlighted when `selected`.
fn draw_row(
    buf: &mut Buffer,
    area: Rect,
    run: &RunState,
    ai: usize,
    selected: bool,
    cols: &Cols,
    theme: &Theme,
) {
    let y = area.y;
    let a = &run.atoms[ai];
    let current = run.atom_is_current(a);
    let base = if selected {
        theme.selected()
    } else if current {
        theme.style_base()
    } else {
        theme.muted()
    };
    fill(buf, area.x, y, area.width, base);
    let agent = run.agents.get(a.agent).map_or("", |x| &x.name);
    let task = run.tasks.get(a.task).map_or("", |x| &x.id);
    let mut x = area.x;
    let line = format!(
        "{} {} {} ",
        pad_or_truncate(
            &crate::base::text::wrap::middle_cut(
                &crate::base::text::sanitize::sanitize(&a.id),
                cols.id_w
            ),
            cols.id_w
        ),
        pad_or_truncate(&a.atom_type, cols.type_w),
        pad_or_truncate(agent, cols.agent_w)
    );
    x += put(buf, x, y, area.width, &line, base);
    let g = a.grade.as_str();
    let gstyle = if selected {
        base
    } else {
        theme.grade(g.chars().next().unwrap_or('D'))
    };
    x += put(buf, x, y, 6, &format!("{g:<6}"), gstyle);
    let conf = a.confidence.map_or("—".to_string(), |c| format!("{c:.2}"));
    // Atoms of an attempt that was retried are dimmed and marked ↻.
    let task_label = if current {
        task.to_string()
    } else {
        format!("↻ {task}")
    };
    let rest = format!(
        "{:>7.2}{:>7}  {}",
        a.score,
        conf,
        pad_or_truncate(&task_label, cols.task_w)
    );
    put(buf, x, y, area.right().saturating_sub(x), &rest, base);
}

fn describe_filters(
    run: &RunState,
    t: &crate::tui::app::ui_state::AtomsTable,
    shown: usize,
) -> String {
    let mut parts = vec![format!(
        "sort {}{}",
        t.sort.name(),
        if t.reverse { " ↑" } else { "" }
    )];
    if let Some(g) = t.grade {
        parts.push(format!("grade {}", g.as_str()));
    }
    if let Some(a) = t.agent.and_then(|i| run.agents.get(i)) {
        parts.push(format!("agent {}", a.name));
    }
    if let Some(ty) = &t.atom_type {
        parts.push(format!("type {ty}"));
    }
    if !t.query.is_empty() {
        parts.push(format!("search “{}”", t.query));
    }
    let count = if shown == run.atoms.len() {
        format!("{shown} atoms")
    } else {
        format!("{shown} of {} atoms", run.atoms.len())
    };
    format!(
        "{count} · {} · ↻ = from a retried attempt   (s sort · S reverse · f grade · A agent · t type · / search · x clear · enter detail)",
        parts.join(" · ")
    )
}

/// Lines of the atom detail overlay.
pub fn detail_lines(run: &RunState, ui: &UiState, atom: usize) -> Vec<String> {
    let Some(a) = run.atoms.get(atom) else {
        return vec!["no such atom".into()];
    };
    let mut out = vec![
        format!("asset_id    {}", a.id),
        format!("atom_type   {}", a.atom_type),
        format!(
            "agent       {}",
            run.agents.get(a.agent).map_or("", |x| &x.name)
        ),
        format!(
            "task        {}",
            run.tasks.get(a.task).map_or("", |x| &x.id)
        ),
        format!(
            "invocation  {}{}",
            a.invocation.as_deref().unwrap_or("—"),
            if run.atom_is_current(a) {
                ""
            } else {
                " (superseded by a retry)"
            }
        ),
        format!(
            "grade       {}   score {:.3}   confidence {}",
            a.grade.as_str(),
            a.score,
            a.confidence.map_or("—".into(), |c| format!("{c:.2}"))
        ),
        format!("issues      {}", a.issues),
        String::new(),
    ];
    let key = a
        .invocation
        .clone()
        .map(|inv| crate::tui::app::ui_state::DocKey::Atom(inv, a.id.clone()));
    match key.as_ref().and_then(|k| ui.docs.get(k)) {
        Some(crate::tui::app::ui_state::Doc::Ready(t)) => out.extend(t.lines().map(str::to_string)),
        Some(crate::tui::app::ui_state::Doc::Missing(w)) => out.push(w.clone()),
        _ => out.push("loading…".into()),
    }
    out
}
