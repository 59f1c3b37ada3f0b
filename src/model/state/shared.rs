//! `Chunked<T>`: an append-only list kept in shared chunks, so a clone of a run's state
//! (a replay's snapshot) shares everything but the newest chunk with the original.

use std::sync::Arc;

/// Items per chunk.
const CHUNK: usize = 1024;

/// An append-only list in chunks of [`CHUNK`] items; full chunks are shared.
#[derive(Debug, Clone, PartialEq)]
pub struct Chunked<T> {
    chunks: Vec<Arc<Vec<T>>>,
    len: usize,
}

impl<T> Default for Chunked<T> {
    fn default() -> Self {
        Chunked {
            chunks: Vec::new(),
            len: 0,
        }
    }
}

impl<T: Clone> Chunked<T> {
    /// Appends an item (copies the newest chunk first if a clone shares it).
    pub fn push(&mut self, item: T) {
        match self.chunks.last_mut() {
            Some(c) if c.len() < CHUNK => Arc::make_mut(c).push(item),
            _ => {
                let mut c = Vec::with_capacity(CHUNK);
                c.push(item);
                self.chunks.push(Arc::new(c));
            }
        }
        self.len += 1;
    }
}

impl<T> Chunked<T> {
    /// Items held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Item `i`.
    pub fn get(&self, i: usize) -> Option<&T> {
        self.chunks.get(i / CHUNK).and_then(|c| c.get(i % CHUNK))
    }

    /// Every item, in order.
    pub fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        self.chunks.iter().flat_map(|c| c.iter())
    }
}

impl<T: serde::Serialize> serde::Serialize for Chunked<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

impl<'de, T: serde::Deserialize<'de> + Clone> serde::Deserialize<'de> for Chunked<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let items: Vec<T> = serde::Deserialize::deserialize(d)?;
        let mut c = Chunked::default();
        for item in items {
            c.push(item);
        }
        Ok(c)
    }
}

impl<T> std::ops::Index<usize> for Chunked<T> {
    type Output = T;

    fn index(&self, i: usize) -> &T {
        &self.chunks[i / CHUNK][i % CHUNK]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_read_back_and_clones_share_full_chunks() {
        let mut a: Chunked<usize> = Chunked::default();
        for i in 0..3000 {
            a.push(i);
        }
        assert_eq!(a.len(), 3000);
        assert_eq!(a[2999], 2999);
        assert_eq!(a.get(3000), None);
        assert_eq!(
            a.iter().copied().sum::<usize>(),
            (0..3000usize).sum::<usize>()
        );
        let b = a.clone();
        a.push(3000);
        assert!(Arc::ptr_eq(&a.chunks[0], &b.chunks[0]));
        assert_eq!((a.len(), b.len()), (3001, 3000));
        assert_eq!(b.iter().count(), 3000);
    }
}
