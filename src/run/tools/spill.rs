//! Large or `full` results go to a file in the run's data folder; the observation names
//! the file and sums the data up (seed 003: data ≥ 1 MB or level full).

use std::io::Write;
use std::path::{Path, PathBuf};

use super::context::safe_file_part;
use super::error::ToolError;
use super::tool::ToolData;
use crate::base::protocol::messages::OutputLevel;

/// Data this large (bytes) or larger is stored in a file, whatever the level.
pub const SPILL_THRESHOLD_BYTES: u64 = 1 << 20;

/// Whether data of `size` bytes shown at `level` goes to a file.
pub fn should_spill(size: u64, level: OutputLevel) -> bool {
    size >= SPILL_THRESHOLD_BYTES || level == OutputLevel::Full
}

/// 64-bit FNV-1a of `bytes` (stable across builds, unlike std's hasher).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Writes `data` to `<dir>/<tool_call_id>_<hash8>.<json|txt>` (the call id reduced to
/// file-name-safe characters, the hash of the content) through a temporary file renamed
/// into place, so a reader never sees half a file. Returns the file's path.
pub fn write_data_file(
    dir: &Path,
    tool_call_id: &str,
    data: &ToolData,
) -> Result<PathBuf, ToolError> {
    let raw = data.raw();
    let hash8 = format!("{:016x}", fnv1a(raw.as_bytes()));
    let name = format!(
        "{}_{}.{}",
        safe_file_part(tool_call_id),
        &hash8[..8],
        data.extension()
    );
    std::fs::create_dir_all(dir)
        .map_err(|e| ToolError::io(&format!("data folder {}", dir.display()), &e))?;
    let path = dir.join(&name);
    let tmp = dir.join(format!(
        ".{name}.{}.{}.tmp",
        std::process::id(),
        fastrand::u32(..)
    ));
    let written = std::fs::File::create(&tmp)
        .and_then(|mut f| {
            f.write_all(raw.as_bytes())?;
            f.sync_all()
        })
        .and_then(|()| std::fs::rename(&tmp, &path));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(ToolError::io(&format!("data file {}", path.display()), &e));
    }
    Ok(path)
}

/// The observation of stored data: where it is, its size, and the brief summary.
pub fn stored_observation(path: &Path, size: u64, summary: &str) -> String {
    format!(
        "Data stored in file: {}\nSize: {size} bytes\nSummary: {summary}",
        path.display()
    )
}

/// The observation of data that should have been stored but the run has no data folder:
/// the summary, and why the rest is missing.
pub fn unstored_observation(size: u64, summary: &str) -> String {
    format!(
        "{summary}\n(The complete data, {size} bytes, is too large to show and this run has no data folder to store it in; narrow the request.)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threshold_is_inclusive() {
        assert!(should_spill(SPILL_THRESHOLD_BYTES, OutputLevel::Standard));
        assert!(!should_spill(
            SPILL_THRESHOLD_BYTES - 1,
            OutputLevel::Standard
        ));
        assert!(!should_spill(SPILL_THRESHOLD_BYTES - 1, OutputLevel::Brief));
        assert!(should_spill(0, OutputLevel::Full));
    }

    #[test]
    fn writes_atomically_under_a_safe_name() {
        let dir = tempfile::tempdir().expect("tempdir");
        let data = ToolData::text("hello", "5 bytes", "hello");
        let p = write_data_file(dir.path(), "../../etc/passwd", &data).expect("written");
        assert_eq!(p.parent(), Some(dir.path()));
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        assert!(
            name.starts_with("______etc_passwd_") && name.ends_with(".txt"),
            "{name}"
        );
        assert_eq!(std::fs::read_to_string(&p).ok().as_deref(), Some("hello"));
        let left: Vec<_> = std::fs::read_dir(dir.path()).expect("dir").collect();
        assert_eq!(left.len(), 1, "no temporary file is left behind");
    }
}
