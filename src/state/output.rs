//! `OutputBuffer`: a task's streamed text as append-only lines, stored as one string and
//! a table of line starts, with a cap after which the oldest lines are dropped (they stay
//! in the database's log and can be loaded back).

/// Streamed text of one task, split into lines.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OutputBuffer {
    text: String,
    /// Byte offset where each line starts; the last line is the open (unfinished) one.
    starts: Vec<u32>,
    /// Lines dropped from the front to respect the cap.
    dropped: u64,
}

/// Most bytes one buffer keeps before it drops its oldest half.
pub const BUFFER_CAP_BYTES: usize = 32 << 20;

impl OutputBuffer {
    /// An empty buffer.
    pub fn new() -> OutputBuffer {
        OutputBuffer {
            text: String::new(),
            starts: vec![0],
            dropped: 0,
        }
    }

    /// Appends streamed text; `\n` ends a line, `\r\n` counts as one newline.
    pub fn push(&mut self, s: &str) {
        if self.starts.is_empty() {
            self.starts.push(0);
        }
        let base = self.text.len();
        self.text.push_str(s);
        for (i, b) in s.bytes().enumerate() {
            if b == b'\n' {
                self.starts.push((base + i + 1) as u32);
            }
        }
        if self.text.len() > BUFFER_CAP_BYTES {
            self.drop_front(self.starts.len() / 2);
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
        let start = self.starts.last().copied().unwrap_or(0) as usize;
        &self.text[start..]
    }

    /// Drops the oldest half of the lines (or all text when there is one long line).
    pub fn drop_oldest_half(&mut self) {
        let n = self.starts.len();
        if n > 2 {
            self.drop_front(n / 2);
        } else {
            self.evict();
        }
    }

    fn drop_front(&mut self, lines: usize) {
        let lines = lines.min(self.starts.len().saturating_sub(1));
        if lines == 0 {
            return;
        }
        let cut = self.starts[lines] as usize;
        self.text.drain(..cut);
        self.starts.drain(..lines);
        self.text.shrink_to(self.text.len() + self.text.len() / 4);
        self.starts
            .shrink_to(self.starts.len() + self.starts.len() / 4);
        for s in &mut self.starts {
            *s -= cut as u32;
        }
        self.dropped += lines as u64;
    }

    /// Lines held, counting the open line when it has text.
    pub fn len(&self) -> usize {
        match self.starts.len() {
            0 => 0,
            n if self.open_line().is_empty() => n - 1,
            n => n,
        }
    }

    /// Whether there is no text.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Line `i` (0-based among the lines held), without its newline.
    pub fn line(&self, i: usize) -> &str {
        let Some(&start) = self.starts.get(i) else {
            return "";
        };
        let end = self
            .starts
            .get(i + 1)
            .map(|&e| e as usize - 1)
            .unwrap_or(self.text.len());
        let line = &self.text[start as usize..end];
        line.strip_suffix('\r').unwrap_or(line)
    }

    /// Lines dropped from the front because of the cap.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Bytes of memory held (allocated capacity, not just text).
    pub fn bytes(&self) -> usize {
        self.text.capacity() + self.starts.capacity() * 4
    }

    /// Frees the text (it stays in the log), remembering how many lines there were.
    pub fn evict(&mut self) {
        self.dropped += self.len() as u64;
        self.text = String::new();
        self.starts = vec![0];
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
}
