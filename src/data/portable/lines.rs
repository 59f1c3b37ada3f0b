//! Reading an export line by line: numbered from 1, each at most [`MAX_LINE`] bytes,
//! UTF-8, ending with `\n` (a last line without one means the file was cut short).

use std::io::BufRead;

use super::PortableError;

/// Longest line read (a record holding a large plan or response); longer is an error.
pub const MAX_LINE: usize = 1 << 30;

/// The lines of the input, numbered from 1.
pub(super) struct Lines<R> {
    input: R,
    buf: Vec<u8>,
    /// The number of the line last read.
    pub(super) line: u64,
    file: String,
}

impl<R: BufRead> Lines<R> {
    /// Lines of `input`, named `file` in messages.
    pub(super) fn new(input: R, file: &str) -> Lines<R> {
        Lines {
            input,
            buf: Vec::new(),
            line: 0,
            file: file.to_string(),
        }
    }

    /// The next line's number and text without its `\n`; `None` at the end. A last
    /// line without `\n` means the file was cut short.
    pub(super) fn next(&mut self) -> Result<Option<(u64, &str)>, PortableError> {
        self.buf.clear();
        self.line += 1;
        let mut ended = false;
        loop {
            let avail = match self.input.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(source) => {
                    return Err(PortableError::Read {
                        file: self.file.clone(),
                        source,
                    })
                }
            };
            if avail.is_empty() {
                break;
            }
            let (take, nl) = match memchr::memchr(b'\n', avail) {
                Some(i) => (i + 1, true),
                None => (avail.len(), false),
            };
            if self.buf.len() + take > MAX_LINE {
                return Err(
                    self.error_at(self.line, format!("a line longer than {MAX_LINE} bytes"))
                );
            }
            self.buf.extend_from_slice(&avail[..take]);
            self.input.consume(take);
            if nl {
                ended = true;
                break;
            }
        }
        if self.buf.is_empty() {
            return Ok(None);
        }
        if !ended {
            return Err(self.error_at(
                self.line,
                "the file ends in the middle of a line (is it cut short?)".into(),
            ));
        }
        let text = &self.buf[..self.buf.len() - 1];
        std::str::from_utf8(text)
            .map(|t| Some((self.line, t)))
            .map_err(|e| PortableError::Input {
                file: self.file.clone(),
                line: self.line,
                message: format!("not UTF-8 (byte {})", e.valid_up_to() + 1),
            })
    }

    /// A bad-input error at `line`.
    pub(super) fn error_at(&self, line: u64, message: String) -> PortableError {
        PortableError::Input {
            file: self.file.clone(),
            line,
            message,
        }
    }
}
