//! `OutputBuffer`: a task's streamed text as append-only lines, with a cap after which
//! the oldest lines are dropped (they stay in the database's log and can be loaded back).
//!
//! Lines live in blocks of about [`BLOCK_BYTES`]: finished blocks are sealed and shared
//! (`Arc`), only the newest is written to. Cloning a buffer — a replay keeps snapshots of
//! whole run states — copies the block list and the newest block, not the text.

use std::sync::Arc;

/// One block of whole lines (the newest block also holds the open, unfinished line).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Block {
    text: String,
    /// Byte offset where each line starts.
    starts: Vec<u32>,
}

impl Block {
    /// Bytes of text and line table: counted by length, not allocation, so the same
    /// text counts the same however it arrived (a replayed state equals the live one).
    fn bytes(&self) -> usize {
        self.text.len() + self.starts.len() * 4
    }
}

/// Streamed text of one task, split into lines.
///
/// A task that holds no text (most tasks of a large run, whose text stays in the log)
/// costs two words: the text lives behind a box made on the first write.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OutputBuffer {
    /// The text held; `None` when there is none.
    text: Option<Box<Text>>,
    /// Lines dropped from the front to respect the cap (or evicted).
    dropped: u64,
}

/// The text of a buffer that holds some.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Text {
    /// Sealed blocks, oldest first, each with the index (among the lines held) of its
    /// first line.
    sealed: Vec<(usize, Arc<Block>)>,
    /// Lines in `sealed`.
    sealed_lines: usize,
    /// Bytes held by `sealed`.
    sealed_bytes: usize,
    /// The block being written; its last line is the open one. Shared until it is
    /// written to again (a clone of a finished task's buffer copies no text at all).
    open: Arc<Block>,
}

impl Text {
    fn new() -> Text {
        Text {
            sealed: Vec::new(),
            sealed_lines: 0,
            sealed_bytes: 0,
            open: Arc::new(Block {
                text: String::new(),
                starts: vec![0],
            }),
        }
    }

    /// Moves the whole lines of the open block into a sealed block of their own.
    fn seal(&mut self) {
        let open = Arc::make_mut(&mut self.open);
        let Some(&open_start) = open.starts.last() else {
            return;
        };
        let cut = open_start as usize;
        if cut == 0 {
            // No whole line yet: nothing to seal.
            return;
        }
        let rest = open.text.split_off(cut);
        let mut starts = std::mem::replace(&mut open.starts, vec![0]);
        starts.pop();
        let mut text = std::mem::replace(&mut open.text, rest);
        text.shrink_to_fit();
        starts.shrink_to_fit();
        let block = Block { text, starts };
        let lines = block.starts.len();
        self.sealed_bytes += block.bytes();
        self.sealed.push((self.sealed_lines, Arc::new(block)));
        self.sealed_lines += lines;
    }

    fn open_line(&self) -> &str {
        let start = self.open.starts.last().copied().unwrap_or(0) as usize;
        self.open.text.get(start..).unwrap_or("")
    }

    fn len(&self) -> usize {
        let open = match self.open.starts.len() {
            0 => 0,
            n if self.open_line().is_empty() => n - 1,
            n => n,
        };
        self.sealed_lines + open
    }

    fn bytes(&self) -> usize {
        self.sealed_bytes + self.open.bytes()
    }
}

/// Most bytes one buffer keeps before it drops its oldest half.
pub const BUFFER_CAP_BYTES: usize = 32 << 20;

/// Size at which the block being written is sealed (at a line's end).
pub const BLOCK_BYTES: usize = 64 << 10;

impl OutputBuffer {
    /// An empty buffer (it allocates nothing until written to: a run of many tasks
    /// holds nothing for the text of those not streaming).
    pub fn new() -> OutputBuffer {
        OutputBuffer::default()
    }

    /// Appends streamed text; `\n` ends a line, `\r\n` counts as one newline.
    pub fn push(&mut self, s: &str) {
        if s.is_empty() {
            return;
        }
        let text = self.text.get_or_insert_with(|| Box::new(Text::new()));
        let open = Arc::make_mut(&mut text.open);
        if open.starts.is_empty() {
            open.starts.push(0);
        }
        let base = open.text.len();
        open.text.push_str(s);
        for (i, b) in s.bytes().enumerate() {
            if b == b'\n' {
                open.starts.push((base + i + 1) as u32);
            }
        }
        if open.text.len() >= BLOCK_BYTES && open.starts.len() > 1 {
            text.seal();
        }
        if self.bytes() > BUFFER_CAP_BYTES {
            self.drop_oldest_half();
        }
    }

    /// Starts a new line unless the open line is empty.
    pub fn break_line(&mut self) {
        if !self.open_line().is_empty() {
            self.push("\n");
        }
    }

    /// Appends a whole line of its own (a marker such as a retry note).
    pub fn push_line(&mut self, line: &str) {
        self.break_line();
        self.push(line);
        self.push("\n");
    }

    fn open_line(&self) -> &str {
        self.text.as_deref().map_or("", Text::open_line)
    }

    /// Drops the oldest half of the text (whole sealed blocks; all the text when it is
    /// one long line).
    pub fn drop_oldest_half(&mut self) {
        let Some(text) = self.text.as_deref_mut() else {
            return;
        };
        if text.sealed.is_empty() {
            // Everything is in the block being written: seal its whole lines first.
            text.seal();
            if text.sealed.is_empty() {
                self.evict();
                return;
            }
        }
        let target = (text.sealed_bytes + text.open.bytes()) / 2;
        let mut freed = 0;
        let mut blocks = 0;
        let mut lines = 0;
        for (_, b) in &text.sealed {
            if freed >= target && blocks > 0 {
                break;
            }
            freed += b.bytes();
            lines += b.starts.len();
            blocks += 1;
        }
        text.sealed.drain(..blocks);
        for (first, _) in &mut text.sealed {
            *first -= lines;
        }
        text.sealed_lines -= lines;
        text.sealed_bytes -= freed;
        self.dropped += lines as u64;
        if freed == 0 {
            // Sealed blocks held nothing to free: the text is one long open line.
            self.evict();
        }
    }

    /// Lines held, counting the open line when it has text.
    pub fn len(&self) -> usize {
        self.text.as_deref().map_or(0, Text::len)
    }

    /// Whether there is no text.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Line `i` (0-based among the lines held), without its newline.
    pub fn line(&self, i: usize) -> &str {
        let Some(text) = self.text.as_deref() else {
            return "";
        };
        let (block, j) = if i >= text.sealed_lines {
            (&*text.open, i - text.sealed_lines)
        } else {
            let k = text.sealed.partition_point(|(first, _)| *first <= i) - 1;
            let (first, b) = &text.sealed[k];
            (&**b, i - first)
        };
        let Some(&start) = block.starts.get(j) else {
            return "";
        };
        let end = block
            .starts
            .get(j + 1)
            .map(|&e| e as usize - 1)
            .unwrap_or(block.text.len());
        let line = block.text.get(start as usize..end).unwrap_or("");
        // A sealed block's last line still has its newline.
        let line = line.strip_suffix('\n').unwrap_or(line);
        line.strip_suffix('\r').unwrap_or(line)
    }

    /// Lines dropped from the front because of the cap.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Bytes held: the text and its line table.
    pub fn bytes(&self) -> usize {
        self.text.as_deref().map_or(0, Text::bytes)
    }

    /// Frees the text (it stays in the log), remembering how many lines there were.
    pub fn evict(&mut self) {
        self.dropped += self.len() as u64;
        self.text = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_split_across_chunks() {
        let mut b = OutputBuffer::new();
        b.push("hel");
        b.push("lo\nwor");
        assert_eq!(b.len(), 2);
        assert_eq!(b.line(0), "hello");
        assert_eq!(b.line(1), "wor");
        b.push("ld\r\n");
        assert_eq!(b.len(), 2);
        assert_eq!(b.line(1), "world");
        b.push_line("── retry ──");
        assert_eq!(b.len(), 3);
        assert_eq!(b.line(2), "── retry ──");
        assert_eq!(b.line(9), "");
    }

    #[test]
    fn markers_start_their_own_line() {
        let mut b = OutputBuffer::new();
        b.push("{\"atoms\": [");
        b.push_line("marker");
        assert_eq!(b.line(0), "{\"atoms\": [");
        assert_eq!(b.line(1), "marker");
        assert_eq!(b.len(), 2);
    }

    #[test]
    fn cap_drops_the_oldest_half() {
        let mut b = OutputBuffer::new();
        let line = "x".repeat(1023) + "\n";
        for _ in 0..(BUFFER_CAP_BYTES / 1024 + 1) {
            b.push(&line);
        }
        assert!(b.bytes() <= BUFFER_CAP_BYTES + 8192 * 4 + 2048);
        assert!(b.dropped() > 0);
        assert_eq!(b.line(0).len(), 1023);
        let before = b.len() as u64 + b.dropped();
        assert_eq!(before, (BUFFER_CAP_BYTES / 1024 + 1) as u64);
    }

    #[test]
    fn evict_frees_and_counts() {
        let mut b = OutputBuffer::new();
        b.push("a\nb\nc");
        b.evict();
        assert!(b.is_empty());
        assert_eq!(b.dropped(), 3);
        b.push("d");
        assert_eq!(b.line(0), "d");
    }

    #[test]
    fn lines_across_sealed_blocks_read_back_and_clones_are_independent() {
        let mut b = OutputBuffer::new();
        let mut want = Vec::new();
        for i in 0..20_000 {
            let line = format!("line {i} {}", "x".repeat(i % 37));
            // Lines arrive in pieces that straddle block boundaries.
            let (head, tail) = line.split_at(line.len() / 2);
            b.push(head);
            b.push(tail);
            b.push("\n");
            want.push(line);
        }
        let blocks = b.text.as_ref().map_or(0, |t| t.sealed.len());
        assert!(blocks > 5, "{blocks} blocks");
        assert_eq!(b.len(), want.len());
        for (i, w) in want.iter().enumerate() {
            assert_eq!(b.line(i), w, "line {i}");
        }
        let snapshot = b.clone();
        let first = |b: &OutputBuffer| b.text.as_ref().map(|t| t.sealed[0].1.clone());
        assert!(
            matches!((first(&snapshot), first(&b)), (Some(x), Some(y)) if Arc::ptr_eq(&x, &y)),
            "text shared"
        );
        b.push("more\n");
        assert_eq!(snapshot.len(), want.len());
        assert_eq!(b.len(), want.len() + 1);
        assert_eq!(b.line(want.len()), "more");
        b.drop_oldest_half();
        assert!(b.dropped() > 0);
        assert_eq!(b.len() as u64 + b.dropped(), want.len() as u64 + 1);
        assert_eq!(b.line(b.len() - 1), "more");
        assert_eq!(snapshot.line(0), "line 0 ");
    }

    #[test]
    fn one_endless_line_is_cut_at_the_cap() {
        let mut b = OutputBuffer::new();
        let piece = "y".repeat(1 << 16);
        for _ in 0..(BUFFER_CAP_BYTES / piece.len() + 8) {
            b.push(&piece);
        }
        assert!(b.bytes() <= BUFFER_CAP_BYTES, "{} bytes held", b.bytes());
        assert!(b.dropped() > 0);
    }
}
