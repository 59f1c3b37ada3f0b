//! Lists a task's view keeps at their exact length: most are empty or short and never
//! grow again, so a boxed slice (two words, no spare capacity) holds them; the few that
//! do grow are rebuilt one item longer.

/// Appends `item` to `list`, reallocating it one item longer.
pub(crate) fn push<T>(list: &mut Box<[T]>, item: T) {
    let mut v = std::mem::take(list).into_vec();
    v.reserve_exact(1);
    v.push(item);
    *list = v.into_boxed_slice();
}

/// Runs `f` on `list` as a vector, then stores it back at its exact length.
pub(crate) fn edit<T, R>(list: &mut Box<[T]>, f: impl FnOnce(&mut Vec<T>) -> R) -> R {
    let mut v = std::mem::take(list).into_vec();
    let r = f(&mut v);
    *list = v.into_boxed_slice();
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pushes_keep_the_list_at_its_length() {
        let mut l: Box<[u32]> = Box::default();
        push(&mut l, 1);
        push(&mut l, 2);
        assert_eq!(&*l, &[1, 2]);
        let n = edit(&mut l, |v| {
            v.retain(|&x| x > 1);
            v.len()
        });
        assert_eq!((n, &*l), (1, &[2][..]));
    }
}
