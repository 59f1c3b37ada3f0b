//! The plan as a graph: every dependency exists, no cycles (each reported once with its
//! members), and every `task_output` reference points at a task upstream.

use std::collections::{HashMap, HashSet};

use super::{Collector, K};
use crate::base::protocol::DataReference;
use crate::model::plan::Task;

/// Dependencies exist, no cycles, task_output references point upstream.
pub(super) fn check_graph(c: &mut Collector<'_>, tasks: &[Task]) {
    let index: HashMap<&str, usize> = tasks
        .iter()
        .enumerate()
        .map(|(i, t)| (t.task_id.as_str(), i))
        .collect();
    let edges = edges_of(c, tasks, &index);
    check_cycles(c, tasks, &edges);
    check_upstream_refs(c, tasks, &index, &edges);
}

/// Each task's dependencies as indices into `tasks`; a dependency that is not a task is
/// reported.
fn edges_of(
    c: &mut Collector<'_>,
    tasks: &[Task],
    index: &HashMap<&str, usize>,
) -> Vec<Vec<usize>> {
    let mut edges: Vec<Vec<usize>> = vec![Vec::new(); tasks.len()];
    for (i, t) in tasks.iter().enumerate() {
        for (j, d) in t.depends_on.iter().enumerate() {
            match index.get(&**d) {
                Some(&k) => edges[i].push(k),
                None => c.push(
                    Some(&t.task_id),
                    format!("depends_on[{j}]"),
                    K::MissingDependency,
                    format!("depends on `{d}`, which is not a task of this plan"),
                ),
            }
        }
    }
    edges
}

/// Cycles: iterative DFS with colours; report each cycle once, naming its members.
fn check_cycles(c: &mut Collector<'_>, tasks: &[Task], edges: &[Vec<usize>]) {
    let mut colour = vec![0u8; tasks.len()]; // 0 new, 1 on stack, 2 done
    let mut reported: HashSet<Vec<usize>> = HashSet::new();
    for start in 0..tasks.len() {
        if colour[start] != 0 {
            continue;
        }
        let mut stack: Vec<(usize, usize)> = vec![(start, 0)];
        colour[start] = 1;
        while let Some(&mut (node, ref mut next)) = stack.last_mut() {
            let Some(&child) = edges[node].get(*next) else {
                colour[node] = 2;
                stack.pop();
                continue;
            };
            *next += 1;
            match colour[child] {
                0 => {
                    colour[child] = 1;
                    stack.push((child, 0));
                }
                1 => report_cycle(c, tasks, &stack, child, &mut reported),
                _ => {}
            }
        }
    }
}

/// Reports the cycle that closes at `child` (on the DFS `stack`), unless a cycle of the
/// same members was reported already.
fn report_cycle(
    c: &mut Collector<'_>,
    tasks: &[Task],
    stack: &[(usize, usize)],
    child: usize,
    reported: &mut HashSet<Vec<usize>>,
) {
    let pos = stack.iter().position(|(n, _)| *n == child).unwrap_or(0);
    let members: Vec<usize> = stack[pos..].iter().map(|(n, _)| *n).collect();
    let mut key = members.clone();
    key.sort_unstable();
    if !reported.insert(key) {
        return;
    }
    // stack order is dependent -> dependency; show it as "depends on" chain
    let mut names: Vec<&str> = members.iter().map(|&n| tasks[n].task_id.as_str()).collect();
    names.push(&tasks[child].task_id);
    c.push(
        Some(&tasks[child].task_id),
        "depends_on",
        K::Cycle,
        format!("dependency cycle: {}", names.join(" -> ")),
    );
}

/// task_output references must point at an upstream task.
fn check_upstream_refs(
    c: &mut Collector<'_>,
    tasks: &[Task],
    index: &HashMap<&str, usize>,
    edges: &[Vec<usize>],
) {
    for t in tasks {
        for (j, r) in t.options().data_references.iter().enumerate() {
            let DataReference::TaskOutput(o) = r else {
                continue;
            };
            let Some(&target) = index.get(o.task_id.as_str()) else {
                c.push(
                    Some(&t.task_id),
                    format!("data_references[{j}].task_id"),
                    K::RefNotUpstream,
                    format!(
                        "references the output of `{}`, which is not a task of this plan",
                        o.task_id
                    ),
                );
                continue;
            };
            if !is_upstream(edges, index[t.task_id.as_str()], target) {
                c.push(
                    Some(&t.task_id),
                    format!("data_references[{j}].task_id"),
                    K::RefNotUpstream,
                    format!(
                        "references the output of `{}`, which is not upstream (add it to depends_on, directly or through another task)",
                        o.task_id
                    ),
                );
            }
        }
    }
}

fn is_upstream(edges: &[Vec<usize>], from: usize, target: usize) -> bool {
    let mut seen = vec![false; edges.len()];
    let mut stack = edges[from].clone();
    while let Some(n) = stack.pop() {
        if n == target {
            return true;
        }
        if !std::mem::replace(&mut seen[n], true) {
            stack.extend(edges[n].iter().copied());
        }
    }
    false
}
