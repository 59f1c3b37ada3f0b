//! The Atoms screen's rows: every graded atom, filtered and sorted by the table state.

use std::cmp::Ordering;

use super::ui_state::{AtomSort, AtomsTable};
use crate::model::state::{AtomView, RunState};

/// Indices into `run.atoms` that pass the table's filters, in its sort order.
pub fn atom_view(run: &RunState, t: &AtomsTable) -> Vec<usize> {
    let q = t.query.to_lowercase();
    let mut rows: Vec<usize> = run
        .atoms
        .iter()
        .enumerate()
        .filter(|(_, a)| t.grade.is_none_or(|g| a.grade == g))
        .filter(|(_, a)| t.agent.is_none_or(|g| a.agent == g))
        .filter(|(_, a)| t.atom_type.as_ref().is_none_or(|ty| &a.atom_type == ty))
        .filter(|(_, a)| q.is_empty() || matches_query(run, a, &q))
        .map(|(i, _)| i)
        .collect();
    let key = |i: &usize, j: &usize| -> Ordering {
        let (a, b) = (&run.atoms[*i], &run.atoms[*j]);
        let o = match t.sort {
            AtomSort::Order => Ordering::Equal,
            AtomSort::Id => a.id.cmp(&b.id),
            AtomSort::Type => a.atom_type.cmp(&b.atom_type),
            AtomSort::Agent => agent_name(run, a).cmp(agent_name(run, b)),
            AtomSort::Grade => a.grade.cmp(&b.grade),
            AtomSort::Score => b.score.total_cmp(&a.score),
            AtomSort::Confidence => b
                .confidence
                .unwrap_or(-1.0)
                .total_cmp(&a.confidence.unwrap_or(-1.0)),
        };
        o.then(i.cmp(j))
    };
    rows.sort_by(key);
    if t.reverse {
        rows.reverse();
    }
    rows
}

fn agent_name<'a>(run: &'a RunState, a: &AtomView) -> &'a str {
    run.agents.get(a.agent).map_or("", |x| &x.name)
}

fn matches_query(run: &RunState, a: &AtomView, q: &str) -> bool {
    a.id.to_lowercase().contains(q)
        || a.atom_type.to_lowercase().contains(q)
        || agent_name(run, a).to_lowercase().contains(q)
        || run
            .tasks
            .get(a.task)
            .is_some_and(|t| t.id.to_lowercase().contains(q))
}
