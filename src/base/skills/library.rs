//! The skills of a workspace (`skills/NAME/SKILL.md`), loaded lazily and cached: level 1
//! (front matter) once per skill, level 2 (the whole file) on the first activation.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, MutexGuard};

use super::error::SkillError;
use super::frontmatter::{self, FrontMatter};
use crate::base::tokens::TokenCounter;

/// File name of a skill's instructions inside its folder.
pub const SKILL_FILE: &str = "SKILL.md";
/// Largest SKILL.md or resource file read (1 MiB).
pub const MAX_SKILL_BYTES: u64 = 1 << 20;
/// Level 1 reads at most this many bytes of a SKILL.md to find its front matter (64 KiB).
pub const MAX_FRONT_MATTER_BYTES: u64 = 64 << 10;
/// Deepest nesting of activations (seed 003 `max_depth` default).
pub const DEFAULT_MAX_DEPTH: u32 = 3;

/// Level 1 of a skill: its front matter, as listed in the catalog.
#[derive(Debug, Clone, PartialEq)]
pub struct SkillMeta {
    /// Name, description and `uses` list.
    pub front: FrontMatter,
    /// The SKILL.md.
    pub path: PathBuf,
    /// Tokens of the skill's catalog line.
    pub tokens: u64,
}

impl SkillMeta {
    /// The skill's line in the catalog: `- NAME: DESCRIPTION`, the description on one line.
    pub fn catalog_line(&self) -> String {
        let description: Vec<&str> = self.front.description.split_whitespace().collect();
        format!("- {}: {}", self.front.name, description.join(" "))
    }
}

/// Level 2 of a skill: the whole SKILL.md, read on activation.
#[derive(Debug, Clone, PartialEq)]
pub struct SkillDoc {
    /// Name, description and `uses` list, parsed from this text.
    pub front: FrontMatter,
    /// The SKILL.md.
    pub path: PathBuf,
    /// The whole file, front matter included.
    pub text: String,
    /// Byte offset of the body (after the closing `---` line) in `text`.
    pub body_start: usize,
    /// Tokens of `text`.
    pub tokens: u64,
}

impl SkillDoc {
    /// The Markdown body, without the front matter.
    pub fn body(&self) -> &str {
        self.text.get(self.body_start..).unwrap_or("")
    }
}

/// Every skill at level 1, for the agent's system prompt.
#[derive(Debug, Default)]
pub struct Catalog {
    /// Skills listed, sorted by name.
    pub skills: Vec<Arc<SkillMeta>>,
    /// The compact text block for the system prompt (empty when there is no skill).
    pub text: String,
    /// Tokens of `text`.
    pub tokens: u64,
    /// Skills left out because their SKILL.md is bad, one error each.
    pub errors: Vec<SkillError>,
}

/// The skills of one workspace. Shared by reference (`&self` everywhere; caches behind
/// mutexes), so one library can serve every agent of a run.
#[derive(Debug)]
pub struct SkillLibrary {
    pub(super) dir: PathBuf,
    pub(super) counter: TokenCounter,
    pub(super) max_depth: u32,
    level1: Mutex<HashMap<String, Arc<SkillMeta>>>,
    level2: Mutex<HashMap<String, Arc<SkillDoc>>>,
    pub(super) next_id: AtomicU64,
}

/// Locks a cache; a poisoned lock still holds usable maps (entries are inserted whole).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Reads at most `limit` bytes of `path`; the file must not be larger than
/// [`MAX_SKILL_BYTES`]. Returns the bytes and whether the file goes on past them.
fn read_head(
    path: &Path,
    limit: u64,
    missing: impl Fn() -> SkillError,
) -> Result<(Vec<u8>, bool), SkillError> {
    let io = |source| SkillError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(missing()),
        Err(e) => return Err(io(e)),
    };
    let size = file.metadata().map_err(io)?.len();
    if size > MAX_SKILL_BYTES {
        return Err(SkillError::TooLarge {
            path: path.to_path_buf(),
            size,
            limit: MAX_SKILL_BYTES,
        });
    }
    let mut bytes = Vec::with_capacity(size.min(limit) as usize);
    // one byte more than asked tells whether the file goes on (or grew past the limit)
    file.take(limit + 1).read_to_end(&mut bytes).map_err(io)?;
    let more = bytes.len() as u64 > limit;
    bytes.truncate(limit as usize);
    Ok((bytes, more))
}

impl SkillLibrary {
    /// The skills of `workspace` (its `skills/` folder; none when it does not exist),
    /// counted with `counter`, nested activations limited to [`DEFAULT_MAX_DEPTH`].
    pub fn new(workspace: &Path, counter: TokenCounter) -> SkillLibrary {
        SkillLibrary::in_dir(workspace.join("skills"), counter)
    }

    /// The skills of the folder `dir` itself (`dir/NAME/SKILL.md`).
    pub fn in_dir(dir: PathBuf, counter: TokenCounter) -> SkillLibrary {
        SkillLibrary {
            dir,
            counter,
            max_depth: DEFAULT_MAX_DEPTH,
            level1: Mutex::new(HashMap::new()),
            level2: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(1),
        }
    }

    /// The folder holding the skills.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The folder of skill `name` (the name checked first, so it is never a path).
    pub fn skill_dir(&self, name: &str) -> Result<PathBuf, SkillError> {
        frontmatter::check_name(name).map_err(|reason| SkillError::InvalidName {
            name: name.to_string(),
            reason,
        })?;
        Ok(self.dir.join(name))
    }

    /// Names of the folders holding a SKILL.md, sorted; none when the folder is missing.
    /// Folders whose name is not a valid skill name are reported as errors.
    pub fn names(&self) -> Result<(Vec<String>, Vec<SkillError>), SkillError> {
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok((Vec::new(), Vec::new()))
            }
            Err(source) => {
                return Err(SkillError::Io {
                    path: self.dir.clone(),
                    source,
                })
            }
        };
        let mut names = Vec::new();
        let mut errors = Vec::new();
        for entry in entries.flatten() {
            let path = entry.path();
            if !path.join(SKILL_FILE).is_file() {
                continue;
            }
            let name = entry.file_name().to_string_lossy().into_owned();
            match frontmatter::check_name(&name) {
                Ok(()) => names.push(name),
                Err(reason) => errors.push(SkillError::InvalidName { name, reason }),
            }
        }
        names.sort();
        Ok((names, errors))
    }

    /// Level 1 of skill `name`: its front matter, read once (only the file's first
    /// [`MAX_FRONT_MATTER_BYTES`]) and cached.
    pub fn meta(&self, name: &str) -> Result<Arc<SkillMeta>, SkillError> {
        if let Some(m) = lock(&self.level1).get(name) {
            return Ok(m.clone());
        }
        let path = self.skill_dir(name)?.join(SKILL_FILE);
        let (bytes, more) = read_head(&path, MAX_FRONT_MATTER_BYTES, || SkillError::Unknown {
            name: name.to_string(),
            path: path.clone(),
        })?;
        let split = frontmatter::split(&bytes, more, &path)?;
        let front = frontmatter::parse(split.yaml, &path, name)?;
        let mut meta = SkillMeta {
            front,
            path,
            tokens: 0,
        };
        meta.tokens = self.counter.count(&meta.catalog_line());
        let meta = Arc::new(meta);
        lock(&self.level1).insert(name.to_string(), meta.clone());
        Ok(meta)
    }

    /// Level 2 of skill `name`: the whole SKILL.md, read on first use and cached.
    pub fn load(&self, name: &str) -> Result<Arc<SkillDoc>, SkillError> {
        if let Some(d) = lock(&self.level2).get(name) {
            return Ok(d.clone());
        }
        let path = self.skill_dir(name)?.join(SKILL_FILE);
        let (bytes, _) = read_head(&path, MAX_SKILL_BYTES, || SkillError::Unknown {
            name: name.to_string(),
            path: path.clone(),
        })?;
        let split = frontmatter::split(&bytes, false, &path)?;
        let front = frontmatter::parse(split.yaml, &path, name)?;
        let body_start = split.body_start;
        let text = String::from_utf8(bytes).map_err(|e| SkillError::NotUtf8 {
            line: frontmatter::line_of(e.as_bytes(), e.utf8_error().valid_up_to()),
            path: path.clone(),
        })?;
        let doc = Arc::new(SkillDoc {
            tokens: self.counter.count(&text),
            front,
            path,
            text,
            body_start,
        });
        lock(&self.level2).insert(name.to_string(), doc.clone());
        Ok(doc)
    }

    /// Every skill at level 1 and the text block listing them for the system prompt:
    ///
    /// ```text
    /// Skills (activate one by name to load its full instructions):
    /// - NAME: DESCRIPTION
    /// ```
    ///
    /// Bodies are not read. Bad skills are left out and reported in `errors`.
    pub fn catalog(&self) -> Catalog {
        let (names, mut errors) = match self.names() {
            Ok(found) => found,
            Err(e) => {
                return Catalog {
                    errors: vec![e],
                    ..Catalog::default()
                }
            }
        };
        let mut skills = Vec::with_capacity(names.len());
        for name in names {
            match self.meta(&name) {
                Ok(m) => skills.push(m),
                Err(e) => errors.push(e),
            }
        }
        let text = if skills.is_empty() {
            String::new()
        } else {
            let mut text =
                String::from("Skills (activate one by name to load its full instructions):\n");
            for s in &skills {
                text.push_str(&s.catalog_line());
                text.push('\n');
            }
            text
        };
        Catalog {
            tokens: self.counter.count(&text),
            skills,
            text,
            errors,
        }
    }
}
