//! Text of a PDF file, for `file` references with `format: "pdf"`. The extractor is a
//! third-party parser fed untrusted bytes: a panic inside it is caught and reported as
//! REF_FORMAT_ERROR.

use super::RefFailure;
use crate::base::protocol::refs::RefErrorCode;

/// Extracts the text of a PDF held in memory.
pub fn extract(bytes: &[u8], path: &str) -> Result<String, RefFailure> {
    if !bytes.starts_with(b"%PDF") {
        return Err(RefFailure {
            code: RefErrorCode::RefFormatError,
            message: format!("`{path}` is not a PDF (no %PDF header)"),
        });
    }
    let result = crate::base::panic_guard::guarded(|| pdf_extract::extract_text_from_mem(bytes));
    match result {
        Ok(Ok(text)) => Ok(text),
        Ok(Err(e)) => Err(RefFailure {
            code: RefErrorCode::RefFormatError,
            message: format!("`{path}`: cannot read the PDF: {e}"),
        }),
        Err(_) => Err(RefFailure {
            code: RefErrorCode::RefFormatError,
            message: format!("`{path}`: the PDF parser failed on this file"),
        }),
    }
}
