//! Writing trees and files atomically: a tree is built in a hidden temporary directory
//! beside its destination and renamed into place when complete (a reader never sees
//! half a tree); a single file is written beside itself and renamed.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;

/// Why a tree or file could not be written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// A file system error, with the path concerned.
    #[error("{}: {source}", .path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The destination exists and is not an empty directory.
    #[error("{} already exists and is not empty; choose another directory or remove it", .0.display())]
    Exists(PathBuf),
    /// A value could not be serialised.
    #[error("cannot serialise {what}: {source}")]
    Json {
        /// What.
        what: String,
        /// Why.
        source: serde_json::Error,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> WriteError + '_ {
    move |source| WriteError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// A name beside `path` no other writer uses: `.NAME.tmp-PID-RANDOM`.
fn temp_beside(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    let tmp = format!(
        ".{name}.tmp-{}-{:08x}",
        std::process::id(),
        fastrand::u32(..)
    );
    match path.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(p) => p.join(tmp),
        None => PathBuf::from(tmp),
    }
}

/// The process that writes temporary file `name` (`.NAME.tmp-PID-RANDOM`), if it is one.
fn temp_writer(name: &str) -> Option<u32> {
    let rest = name.strip_prefix('.')?;
    let (_, tail) = rest.rsplit_once(".tmp-")?;
    let (pid, random) = tail.split_once('-')?;
    (random.len() == 8 && random.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| pid.parse().ok())
        .flatten()
}

/// Removes from `dir` the temporary files of writers that are gone (a process killed
/// in the middle of a write leaves its half-written file beside the document); returns
/// how many.
pub fn remove_stale_temps(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = temp_writer(&name.to_string_lossy()) else {
            continue;
        };
        if pid != std::process::id()
            && !crate::data::store::lease::process_alive(pid)
            && std::fs::remove_file(e.path()).is_ok()
        {
            removed += 1;
        }
    }
    removed
}

/// Writes `value` as pretty JSON to `path` through a temporary file and a rename. The
/// JSON goes to the file as it is made: a large document is not held in memory whole.
pub fn write_json_atomic<T: Serialize + ?Sized>(path: &Path, value: &T) -> Result<(), WriteError> {
    let mut failed: Option<serde_json::Error> = None;
    let written = write_with(path, true, |f| {
        let mut w = std::io::BufWriter::new(f);
        serde_json::to_writer_pretty(&mut w, value).map_err(|e| {
            let io = std::io::Error::other(e.to_string());
            failed = Some(e);
            io
        })?;
        w.flush()
    });
    match failed {
        Some(source) => Err(WriteError::Json {
            what: path.display().to_string(),
            source,
        }),
        None => written,
    }
}

/// Writes `value` as pretty JSON to `path` through a temporary file and a rename, without
/// waiting for the disk: a reader never sees half a file, but a crash may lose the
/// newest ones. For files written by the thousand from a record kept elsewhere (an
/// eval's sample documents, which the database holds).
pub fn write_json_swap<T: Serialize + ?Sized>(path: &Path, value: &T) -> Result<(), WriteError> {
    let bytes = serde_json::to_vec_pretty(value).map_err(|source| WriteError::Json {
        what: path.display().to_string(),
        source,
    })?;
    write_bytes(path, &bytes, false)
}

/// Writes `bytes` to `path` through a temporary file, flushed to disk, and a rename.
pub fn write_bytes_atomic(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    write_bytes(path, bytes, true)
}

fn write_bytes(path: &Path, bytes: &[u8], sync: bool) -> Result<(), WriteError> {
    write_with(path, sync, |f| f.write_all(bytes))
}

/// Writes to `path` through a temporary file that `fill` writes, flushed to disk when
/// `sync`, and a rename; the temporary file is removed when anything fails.
fn write_with(
    path: &Path,
    sync: bool,
    fill: impl FnOnce(&mut std::fs::File) -> std::io::Result<()>,
) -> Result<(), WriteError> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(io(parent))?;
    }
    let tmp = temp_beside(path);
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        fill(&mut f)?;
        if sync {
            f.sync_all()?;
        }
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(io(path))
}

/// A tree being written into a temporary directory; [`TreeWriter::finish`] renames it
/// into place, and dropping it unfinished removes it.
#[derive(Debug)]
pub struct TreeWriter {
    target: PathBuf,
    tmp: PathBuf,
    done: bool,
}

impl TreeWriter {
    /// Starts a tree for `target`, which must not exist or be an empty directory.
    pub fn new(target: &Path) -> Result<TreeWriter, WriteError> {
        if target.exists() {
            let empty = std::fs::read_dir(target)
                .map(|mut d| d.next().is_none())
                .unwrap_or(false);
            if !empty {
                return Err(WriteError::Exists(target.to_path_buf()));
            }
        }
        if let Some(parent) = target.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(io(parent))?;
        }
        let tmp = temp_beside(target);
        std::fs::create_dir(&tmp).map_err(io(&tmp))?;
        Ok(TreeWriter {
            target: target.to_path_buf(),
            tmp,
            done: false,
        })
    }

    /// The temporary directory files go into.
    pub fn root(&self) -> &Path {
        &self.tmp
    }

    /// Writes `bytes` at `rel` (directories created as needed).
    pub fn write_bytes(&self, rel: &str, bytes: &[u8]) -> Result<(), WriteError> {
        let p = self.tmp.join(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).map_err(io(parent))?;
        }
        std::fs::write(&p, bytes).map_err(io(&p))
    }

    /// Writes `value` as pretty JSON at `rel`.
    pub fn write_json<T: Serialize + ?Sized>(
        &self,
        rel: &str,
        value: &T,
    ) -> Result<(), WriteError> {
        let bytes = serde_json::to_vec_pretty(value).map_err(|source| WriteError::Json {
            what: rel.to_string(),
            source,
        })?;
        self.write_bytes(rel, &bytes)
    }

    /// Creates the directory `rel` (empty directories are part of a layout too).
    pub fn mkdir(&self, rel: &str) -> Result<(), WriteError> {
        let p = self.tmp.join(rel);
        std::fs::create_dir_all(&p).map_err(io(&p))
    }

    /// Renames the finished tree into place; returns its path.
    pub fn finish(mut self) -> Result<PathBuf, WriteError> {
        if self.target.is_dir() {
            // Checked empty in `new`; a directory that filled since is not replaced.
            std::fs::remove_dir(&self.target)
                .map_err(|_| WriteError::Exists(self.target.clone()))?;
        }
        std::fs::rename(&self.tmp, &self.target).map_err(io(&self.target))?;
        self.done = true;
        Ok(self.target.clone())
    }
}

impl Drop for TreeWriter {
    fn drop(&mut self) {
        if !self.done {
            let _ = std::fs::remove_dir_all(&self.tmp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_temporary_files_of_gone_writers_are_removed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path();
        // A pid beyond any this host hands out is a writer that is gone.
        let gone = ".failure_summary.json.tmp-4194999-0a1b2c3d";
        let mine = format!(".x.json.tmp-{}-0a1b2c3d", std::process::id());
        for name in [gone, mine.as_str(), "q1.json", ".hidden", ".y.tmp-12-zz"] {
            std::fs::write(d.join(name), "{").expect("write");
        }
        assert_eq!(remove_stale_temps(d), 1);
        assert!(!d.join(gone).exists());
        for kept in [mine.as_str(), "q1.json", ".hidden", ".y.tmp-12-zz"] {
            assert!(d.join(kept).exists(), "{kept} is kept");
        }
    }

    #[test]
    fn a_tree_appears_whole_or_not_at_all() {
        let d = tempfile::tempdir().expect("tmp");
        let target = d.path().join("out");
        {
            let w = TreeWriter::new(&target).expect("new");
            w.write_json("a/b.json", &serde_json::json!({"x": 1}))
                .expect("write");
            assert!(!target.exists());
        }
        assert!(!target.exists());
        assert_eq!(std::fs::read_dir(d.path()).expect("ls").count(), 0);
        let w = TreeWriter::new(&target).expect("new");
        w.write_json("a/b.json", &serde_json::json!({"x": 1}))
            .expect("write");
        w.finish().expect("finish");
        assert!(target.join("a/b.json").is_file());
        assert!(matches!(
            TreeWriter::new(&target),
            Err(WriteError::Exists(_))
        ));
        let f = d.path().join("c.json");
        write_json_atomic(&f, &serde_json::json!([1])).expect("atomic");
        assert_eq!(std::fs::read_to_string(&f).expect("read"), "[\n  1\n]");
    }
}
