//! The error of a tool call: a seed 003 error type (which decides retries) plus a code
//! and a message, all three shown to the model in the unified error observation.

use crate::base::protocol::messages::ToolErrorType;
use crate::base::protocol::refs::RefErrorCode;
use crate::data::resolve::RefFailure;

/// What went wrong, as the `Error Code` line of an observation writes it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ToolErrorCode {
    /// No tool of that name is registered.
    UnknownTool,
    /// The arguments do not match the tool's input schema.
    InvalidArguments,
    /// The arguments' JSON is larger than the input limit.
    InputTooLarge,
    /// A path or pattern tries to leave the workspace.
    PermissionDenied,
    /// A file, directory or database does not exist.
    NotFound,
    /// The file is larger than the tool reads.
    FileTooLarge,
    /// The file holds binary data, not text.
    BinaryFile,
    /// The file is not in the encoding asked for.
    EncodingError,
    /// The call has no database to query.
    NoDatabase,
    /// The database refused or failed the query.
    DatabaseError,
    /// Not an IANA time zone name.
    InvalidTimeZone,
    /// A date that does not exist or is out of range.
    InvalidDate,
    /// The tool ran over its time limit.
    Timeout,
    /// A resource was busy or exhausted (a locked database, too many open files).
    ResourceBusy,
    /// The tool itself failed unexpectedly (e.g. it panicked).
    ToolFailed,
    /// A code of a tool defined elsewhere.
    Custom(String),
}

impl ToolErrorCode {
    /// The code as written in the observation (`INVALID_ARGUMENTS`, …).
    pub fn as_str(&self) -> &str {
        match self {
            ToolErrorCode::UnknownTool => "UNKNOWN_TOOL",
            ToolErrorCode::InvalidArguments => "INVALID_ARGUMENTS",
            ToolErrorCode::InputTooLarge => "INPUT_TOO_LARGE",
            ToolErrorCode::PermissionDenied => "PERMISSION_DENIED",
            ToolErrorCode::NotFound => "NOT_FOUND",
            ToolErrorCode::FileTooLarge => "FILE_TOO_LARGE",
            ToolErrorCode::BinaryFile => "BINARY_FILE",
            ToolErrorCode::EncodingError => "ENCODING_ERROR",
            ToolErrorCode::NoDatabase => "NO_DATABASE",
            ToolErrorCode::DatabaseError => "DATABASE_ERROR",
            ToolErrorCode::InvalidTimeZone => "INVALID_TIME_ZONE",
            ToolErrorCode::InvalidDate => "INVALID_DATE",
            ToolErrorCode::Timeout => "TIMEOUT",
            ToolErrorCode::ResourceBusy => "RESOURCE_BUSY",
            ToolErrorCode::ToolFailed => "TOOL_FAILED",
            ToolErrorCode::Custom(s) => s,
        }
    }
}

impl std::fmt::Display for ToolErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A failed tool call: its error type (retried or not by the policy), code and message.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{} {code}: {message}", .error_type.as_str())]
pub struct ToolError {
    /// Seed 003 error type: `timeout` and `resource_error` are retried by default.
    pub error_type: ToolErrorType,
    /// What went wrong.
    pub code: ToolErrorCode,
    /// Explanation for the model.
    pub message: String,
}

/// Error type of bad arguments, paths and names: the model's mistake, never retried.
pub const VALIDATION_ERROR: &str = "validation_error";
/// Error type of a refused path or pattern.
pub const PERMISSION_ERROR: &str = "permission_denied";
/// Error type of a missing file or database.
pub const NOT_FOUND_ERROR: &str = "not_found";
/// Error type of a tool that failed for a reason of its own.
pub const EXECUTION_ERROR: &str = "execution_error";

impl ToolError {
    /// An error of any type.
    pub fn new(error_type: ToolErrorType, code: ToolErrorCode, message: impl Into<String>) -> Self {
        ToolError {
            error_type,
            code,
            message: message.into(),
        }
    }

    /// A `validation_error` (bad arguments, names, dates): not retried.
    pub fn invalid(code: ToolErrorCode, message: impl Into<String>) -> Self {
        Self::new(ToolErrorType::Other(VALIDATION_ERROR.into()), code, message)
    }

    /// `INVALID_ARGUMENTS`, a `validation_error`.
    pub fn arguments(message: impl Into<String>) -> Self {
        Self::invalid(ToolErrorCode::InvalidArguments, message)
    }

    /// `PERMISSION_DENIED`: a path or pattern leaving the workspace.
    pub fn denied(message: impl Into<String>) -> Self {
        Self::new(
            ToolErrorType::Other(PERMISSION_ERROR.into()),
            ToolErrorCode::PermissionDenied,
            message,
        )
    }

    /// A `not_found` error with the given code.
    pub fn not_found(code: ToolErrorCode, message: impl Into<String>) -> Self {
        Self::new(ToolErrorType::Other(NOT_FOUND_ERROR.into()), code, message)
    }

    /// A `resource_error` (retried by default).
    pub fn resource(code: ToolErrorCode, message: impl Into<String>) -> Self {
        Self::new(ToolErrorType::ResourceError, code, message)
    }

    /// A `timeout` (retried by default).
    pub fn timeout(message: impl Into<String>) -> Self {
        Self::new(ToolErrorType::Timeout, ToolErrorCode::Timeout, message)
    }

    /// An `execution_error` with the given code (not retried).
    pub fn failed(code: ToolErrorCode, message: impl Into<String>) -> Self {
        Self::new(ToolErrorType::Other(EXECUTION_ERROR.into()), code, message)
    }

    /// An I/O error on `what`: running out of descriptors, memory or space is a
    /// `resource_error`, a missing file `not_found`, a refused one `permission_denied`.
    pub fn io(what: &str, e: &std::io::Error) -> Self {
        use std::io::ErrorKind as K;
        let message = format!("{what}: {e}");
        match e.kind() {
            K::NotFound => Self::not_found(ToolErrorCode::NotFound, message),
            K::PermissionDenied => Self::denied(message),
            K::OutOfMemory | K::StorageFull | K::WouldBlock | K::Interrupted => {
                Self::resource(ToolErrorCode::ResourceBusy, message)
            }
            // EMFILE / ENFILE: too many open files.
            _ if matches!(e.raw_os_error(), Some(23 | 24)) => {
                Self::resource(ToolErrorCode::ResourceBusy, message)
            }
            _ => Self::failed(ToolErrorCode::ToolFailed, message),
        }
    }
}

impl From<RefFailure> for ToolError {
    /// The file-reference errors of [`crate::data::resolve::file`], mapped to tool errors.
    fn from(f: RefFailure) -> Self {
        match f.code {
            RefErrorCode::RefPermissionDenied => ToolError::denied(f.message),
            RefErrorCode::RefNotFound => ToolError::not_found(ToolErrorCode::NotFound, f.message),
            RefErrorCode::RefTimeout => ToolError::timeout(f.message),
            RefErrorCode::RefFormatError => {
                ToolError::invalid(ToolErrorCode::EncodingError, f.message)
            }
            RefErrorCode::RefPathInvalid | RefErrorCode::RefFilterError => {
                ToolError::arguments(f.message)
            }
        }
    }
}
