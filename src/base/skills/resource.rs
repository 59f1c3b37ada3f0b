//! Level 3: a skill's resource files (any file of `skills/NAME/` but its SKILL.md), read
//! on demand. A resource name is relative to the skill's folder and may not leave it:
//! `..`, absolute paths and symlinks that resolve outside the folder are refused.

use std::path::{Component, Path, PathBuf};

use super::error::SkillError;
use super::library::{SkillLibrary, MAX_SKILL_BYTES, SKILL_FILE};

/// Most resource names [`SkillLibrary::resources`] lists.
pub const MAX_LISTED_RESOURCES: usize = 200;
/// Deepest folder nesting [`SkillLibrary::resources`] walks.
const MAX_LIST_DEPTH: usize = 4;

/// A resource file of a skill, read at level 3.
#[derive(Debug, Clone, PartialEq)]
pub struct SkillResource {
    /// Skill it belongs to.
    pub skill: String,
    /// Name asked for (relative to the skill's folder).
    pub name: String,
    /// The file read (resolved, symlinks followed).
    pub path: PathBuf,
    /// Its text.
    pub text: String,
    /// Tokens of `text`.
    pub tokens: u64,
}

impl SkillLibrary {
    /// Reads resource `resource` of skill `skill` (level 3). Refused: an empty name, an
    /// absolute path, any `..`, and a path that resolves (through symlinks) outside the
    /// skill's folder. The file must be UTF-8 text of at most [`MAX_SKILL_BYTES`].
    pub fn resource(&self, skill: &str, resource: &str) -> Result<SkillResource, SkillError> {
        let refuse = |reason: &str| SkillError::ResourceEscape {
            skill: skill.to_string(),
            resource: resource.to_string(),
            reason: reason.to_string(),
        };
        if resource.is_empty() || resource.contains('\0') {
            return Err(refuse("not a usable file name"));
        }
        let rel = Path::new(resource);
        for c in rel.components() {
            match c {
                Component::Normal(_) | Component::CurDir => {}
                Component::ParentDir => return Err(refuse("`..` is not allowed")),
                Component::RootDir | Component::Prefix(_) => {
                    return Err(refuse("absolute paths are not allowed"))
                }
            }
        }
        let dir = self.skill_dir(skill)?;
        let root = dir.canonicalize().map_err(|_| SkillError::Unknown {
            name: skill.to_string(),
            path: dir.join(SKILL_FILE),
        })?;
        let joined = root.join(rel);
        let not_found = || SkillError::ResourceNotFound {
            skill: skill.to_string(),
            resource: resource.to_string(),
            path: joined.clone(),
        };
        let real = joined.canonicalize().map_err(|_| not_found())?;
        if !real.starts_with(&root) {
            return Err(refuse("it resolves outside the skill's folder"));
        }
        if !real.is_file() {
            return Err(not_found());
        }
        let io = |source| SkillError::Io {
            path: real.clone(),
            source,
        };
        let size = std::fs::metadata(&real).map_err(io)?.len();
        if size > MAX_SKILL_BYTES {
            return Err(SkillError::TooLarge {
                path: real,
                size,
                limit: MAX_SKILL_BYTES,
            });
        }
        let bytes = std::fs::read(&real).map_err(io)?;
        let text = String::from_utf8(bytes).map_err(|e| SkillError::NotUtf8 {
            line: super::frontmatter::line_of(e.as_bytes(), e.utf8_error().valid_up_to()),
            path: real.clone(),
        })?;
        Ok(SkillResource {
            skill: skill.to_string(),
            name: resource.to_string(),
            tokens: self.counter.count(&text),
            path: real,
            text,
        })
    }

    /// Names of the resource files of skill `skill` (relative, `/`-separated, sorted):
    /// regular files under its folder but its SKILL.md, symlinks and hidden entries
    /// skipped, at most [`MAX_LISTED_RESOURCES`] and 4 folders deep.
    pub fn resources(&self, skill: &str) -> Result<Vec<String>, SkillError> {
        let dir = self.skill_dir(skill)?;
        if !dir.join(SKILL_FILE).is_file() {
            return Err(SkillError::Unknown {
                name: skill.to_string(),
                path: dir.join(SKILL_FILE),
            });
        }
        let mut out = Vec::new();
        walk(&dir, "", 0, &mut out);
        out.sort();
        Ok(out)
    }
}

/// Collects file names under `dir` (prefixed with `prefix`) into `out`.
fn walk(dir: &Path, prefix: &str, depth: usize, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        if out.len() >= MAX_LISTED_RESOURCES {
            return;
        }
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        if name.starts_with('.') || (depth == 0 && name == SKILL_FILE) {
            continue;
        }
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let rel = format!("{prefix}{name}");
        if kind.is_file() {
            out.push(rel);
        } else if kind.is_dir() && depth + 1 < MAX_LIST_DEPTH {
            walk(&entry.path(), &format!("{rel}/"), depth + 1, out);
        }
    }
}
