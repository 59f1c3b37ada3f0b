//! A strict server-sent-events decoder: bytes in, `(event, data)` out. Lines end in
//! `\n`, `\r\n` or `\r`; `data:` lines join with `\n`; a blank line ends an event;
//! comments (`:`) and `id:`/`retry:` are skipped. Anything else — an unknown field, bytes
//! that are not UTF-8, a line longer than the cap — is an error naming the line, because
//! the providers plexus speaks to never send it and silently skipping it would hide a
//! broken proxy.

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// `event:` name, empty when not given.
    pub event: String,
    /// Joined `data:` lines.
    pub data: String,
}

/// Incremental decoder.
#[derive(Debug, Default)]
pub struct SseDecoder {
    buf: Vec<u8>,
    event: String,
    data: String,
    has_data: bool,
    line_no: usize,
    skip_lf: bool,
    started: bool,
}

/// Longest line accepted (bytes).
const MAX_LINE: usize = 4 * 1024 * 1024;

impl SseDecoder {
    /// A fresh decoder.
    pub fn new() -> SseDecoder {
        SseDecoder::default()
    }

    /// Feeds bytes; complete events go to `out`.
    pub fn feed(&mut self, bytes: &[u8], out: &mut Vec<SseEvent>) -> Result<(), String> {
        let mut rest = bytes;
        if rest.is_empty() {
            return Ok(());
        }
        if !self.started {
            // A byte-order mark at the start of the stream is dropped (as the SSE
            // standard says); a partial one waits for more bytes.
            const BOM: &[u8] = b"\xEF\xBB\xBF";
            self.buf.extend_from_slice(rest);
            if self.buf.len() < BOM.len() && BOM.starts_with(&self.buf) {
                return Ok(());
            }
            self.started = true;
            let mut all = std::mem::take(&mut self.buf);
            if all.starts_with(BOM) {
                all.drain(..BOM.len());
            }
            return self.feed(&all, out);
        }
        if self.skip_lf {
            if let Some((&b'\n', tail)) = rest.split_first() {
                rest = tail;
            }
            self.skip_lf = false;
        }
        while let Some(pos) = memchr::memchr2(b'\n', b'\r', rest) {
            let (head, tail) = rest.split_at(pos);
            let line = if self.buf.is_empty() {
                std::borrow::Cow::Borrowed(head)
            } else {
                self.buf.extend_from_slice(head);
                std::borrow::Cow::Owned(std::mem::take(&mut self.buf))
            };
            self.line(&line, out)?;
            let cr = tail[0] == b'\r';
            rest = &tail[1..];
            if cr {
                match rest.first() {
                    Some(b'\n') => rest = &rest[1..],
                    Some(_) => {}
                    None => self.skip_lf = true,
                }
            }
        }
        self.buf.extend_from_slice(rest);
        if self.buf.len() > MAX_LINE {
            return Err(format!(
                "SSE line {} is longer than {MAX_LINE} bytes",
                self.line_no + 1
            ));
        }
        Ok(())
    }

    /// Bytes of an unfinished line at the end of the stream, if any.
    pub fn pending(&self) -> usize {
        self.buf.len() + self.data.len()
    }

    fn line(&mut self, raw: &[u8], out: &mut Vec<SseEvent>) -> Result<(), String> {
        self.line_no += 1;
        let n = self.line_no;
        let line = std::str::from_utf8(raw).map_err(|_| format!("SSE line {n} is not UTF-8"))?;
        if line.is_empty() {
            if self.has_data {
                out.push(SseEvent {
                    event: std::mem::take(&mut self.event),
                    data: std::mem::take(&mut self.data),
                });
            }
            self.event.clear();
            self.has_data = false;
            return Ok(());
        }
        if line.starts_with(':') {
            return Ok(());
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "event" => self.event = value.to_string(),
            "id" | "retry" => {}
            _ => {
                let shown = crate::base::text::cut::cut_chars(line, 60);
                return Err(format!("invalid SSE line {n}: {shown:?}"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(parts: &[&[u8]]) -> Result<Vec<SseEvent>, String> {
        let mut d = SseDecoder::new();
        let mut out = Vec::new();
        for p in parts {
            d.feed(p, &mut out)?;
        }
        Ok(out)
    }

    #[test]
    fn events_split_anywhere_decode_the_same() {
        let text = b"event: a\r\ndata: {\"x\":1}\r\n\r\n: keepalive\n\ndata: l1\ndata: l2\n\n";
        let whole = decode(&[text]).expect("should succeed");
        assert_eq!(whole.len(), 2);
        assert_eq!(whole[0].event, "a");
        assert_eq!(whole[0].data, "{\"x\":1}");
        assert_eq!(whole[1].data, "l1\nl2");
        for cut in 0..text.len() {
            let (a, b) = text.split_at(cut);
            assert_eq!(
                decode(&[a, b]).expect("should succeed"),
                whole,
                "cut at {cut}"
            );
        }
    }

    #[test]
    fn empty_reads_boms_and_lone_crs() {
        let ev = |data: &str| SseEvent {
            event: String::new(),
            data: data.into(),
        };
        // An empty read between \r and \n does not end a line twice.
        assert_eq!(
            decode(&[b"data: a\r", b"", b"\ndata: b\r\n\r\n"]).expect("ok"),
            vec![ev("a\nb")]
        );
        // A BOM at the start, even split, is dropped.
        assert_eq!(
            decode(&[b"\xEF", b"\xBB", b"\xBFdata: x\n\n"]).expect("ok"),
            vec![ev("x")]
        );
        // CR-only line ends.
        assert_eq!(decode(&[b"data: y\r\r"]).expect("ok"), vec![ev("y")]);
        // A line over the cap is an error, not unbounded memory.
        let long = vec![b'a'; MAX_LINE + 10];
        assert!(decode(&[b"data: ", &long]).is_err());
    }

    #[test]
    fn junk_is_an_error_naming_the_line() {
        let e = decode(&[b"data: ok\n\nHTTP/1.1 200 OK\n"]).expect_err("should fail");
        assert_eq!(e, "invalid SSE line 3: \"HTTP/1.1 200 OK\"");
        let e = decode(&[b"data: \xff\xfe\n"]).expect_err("should fail");
        assert!(e.contains("not UTF-8"), "{e}");
    }
}
