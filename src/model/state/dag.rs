//! Dependency layers of a DAG: each task sits one layer below its deepest dependency.

/// Layers of task indices (roots first) given each task's upstream indices. Tasks caught
/// in a cycle (plans are validated, but logs are untrusted) go to one last layer.
pub fn layers_of(deps: &[Vec<usize>]) -> (Vec<Vec<usize>>, Vec<usize>) {
    let n = deps.len();
    let mut layer = vec![usize::MAX; n];
    let mut remaining: Vec<usize> = deps.iter().map(|d| d.len()).collect();
    let mut dependents = vec![Vec::new(); n];
    for (i, ds) in deps.iter().enumerate() {
        for &d in ds {
            if d < n {
                dependents[d].push(i);
            } else {
                remaining[i] -= 1;
            }
        }
    }
    let mut frontier: Vec<usize> = (0..n).filter(|&i| remaining[i] == 0).collect();
    for &i in &frontier {
        layer[i] = 0;
    }
    while let Some(i) = frontier.pop() {
        for &d in &dependents[i] {
            layer[d] = if layer[d] == usize::MAX {
                layer[i] + 1
            } else {
                layer[d].max(layer[i] + 1)
            };
            remaining[d] -= 1;
            if remaining[d] == 0 {
                frontier.push(d);
            }
        }
    }
    let depth = layer
        .iter()
        .filter(|&&l| l != usize::MAX)
        .max()
        .map_or(0, |m| m + 1);
    let stuck = layer.contains(&usize::MAX);
    let mut layers = vec![Vec::new(); depth + usize::from(stuck)];
    for (i, l) in layer.iter_mut().enumerate() {
        if *l == usize::MAX {
            *l = depth;
        }
        layers[*l].push(i);
    }
    (layers, layer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diamond_has_three_layers() {
        let deps = vec![vec![], vec![0], vec![0], vec![1, 2], vec![0, 3]];
        let (layers, of) = layers_of(&deps);
        assert_eq!(layers, vec![vec![0], vec![1, 2], vec![3], vec![4]]);
        assert_eq!(of, vec![0, 1, 1, 2, 3]);
    }

    #[test]
    fn cycles_and_bad_indices_do_not_hang() {
        let deps = vec![vec![], vec![2], vec![1], vec![99]];
        let (layers, _) = layers_of(&deps);
        assert_eq!(layers, vec![vec![0, 3], vec![1, 2]]);
    }
}
