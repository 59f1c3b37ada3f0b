//! Errors of loading skills (bad files, unknown names, resource escapes) and refusals of
//! activations (cycles, depth). Every message names the file, and the line when known.

use std::path::PathBuf;

/// A skill that cannot be listed or loaded. The messages start with the file (and line,
/// when known) so they can be shown or logged as they are.
#[derive(Debug, thiserror::Error)]
pub enum SkillError {
    /// No folder `skills/NAME/` with a SKILL.md.
    #[error("unknown skill `{name}`: no {}", path.display())]
    Unknown {
        /// Name asked for.
        name: String,
        /// The SKILL.md that would hold it.
        path: PathBuf,
    },
    /// A name that cannot be a skill folder (empty, a path, too long, odd characters).
    #[error("`{name}` is not a valid skill name: {reason}")]
    InvalidName {
        /// Name asked for.
        name: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The file could not be read.
    #[error("{}: {source}", path.display())]
    Io {
        /// File read.
        path: PathBuf,
        /// Cause.
        source: std::io::Error,
    },
    /// The file is over the size limit.
    #[error("{}: {size} bytes, over the limit of {limit} bytes", path.display())]
    TooLarge {
        /// File read.
        path: PathBuf,
        /// Its size in bytes.
        size: u64,
        /// The limit in bytes.
        limit: u64,
    },
    /// The file is not UTF-8 text.
    #[error("{}:{line}: not UTF-8 text", path.display())]
    NotUtf8 {
        /// File read.
        path: PathBuf,
        /// First line that is not UTF-8 (1-based).
        line: usize,
    },
    /// The front matter is missing, unclosed or not valid: the message says which.
    #[error("{}:{line}: {message}", path.display())]
    FrontMatter {
        /// The SKILL.md.
        path: PathBuf,
        /// Line of the problem (1-based).
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// The front matter's `name` is not the folder's name.
    #[error("{}:{line}: name `{name}` differs from the folder name `{folder}`", path.display())]
    NameMismatch {
        /// The SKILL.md.
        path: PathBuf,
        /// Line of the `name` field (1-based).
        line: usize,
        /// Name written in the front matter.
        name: String,
        /// Name of the skill's folder.
        folder: String,
    },
    /// A resource name that would leave the skill's folder (`..`, absolute, a symlink out).
    #[error("skill `{skill}`: resource `{resource}` refused: {reason}")]
    ResourceEscape {
        /// Skill asked.
        skill: String,
        /// Resource name asked for.
        resource: String,
        /// Why it is refused.
        reason: String,
    },
    /// A resource that does not exist or is not a file.
    #[error("skill `{skill}`: no resource file `{resource}` ({})", path.display())]
    ResourceNotFound {
        /// Skill asked.
        skill: String,
        /// Resource name asked for.
        resource: String,
        /// Path looked at.
        path: PathBuf,
    },
}

/// Why an activation was not made. The engine logs it as an event; [`chain`](Self::chain)
/// names the activation path that was refused, outermost skill first.
#[derive(Debug, thiserror::Error)]
pub enum ActivationRefused {
    /// The skill is already on the activation chain (A → A, or A → B → C → A).
    #[error("activation of `{skill}` refused: cycle {chain}")]
    Cycle {
        /// Skill whose activation was refused.
        skill: String,
        /// The cycle, e.g. `A → B → C → A`.
        chain: String,
    },
    /// The activation would be deeper than the limit.
    #[error("activation of `{skill}` refused: depth {depth} over the limit {max_depth} ({chain})")]
    TooDeep {
        /// Skill whose activation was refused.
        skill: String,
        /// Depth the activation would have had.
        depth: u32,
        /// The limit (`max_depth` of the parent request).
        max_depth: u32,
        /// The refused path, e.g. `A → B → C → D → E`.
        chain: String,
    },
    /// The skill could not be loaded (unknown, bad file).
    #[error("activation of `{skill}` refused ({chain}): {source}")]
    Skill {
        /// Skill whose activation was refused.
        skill: String,
        /// The refused path.
        chain: String,
        /// Why the skill could not be loaded.
        source: Box<SkillError>,
    },
    /// Neither offered to the task nor used by a skill active in its loop.
    #[error("activation of `{skill}` refused: it is not offered to this task ({offered}) and no active skill uses it")]
    NotOffered {
        /// Skill whose activation was refused.
        skill: String,
        /// The skills the task offers, comma-separated (`none` when none).
        offered: String,
        /// The refused path (the skill alone).
        chain: String,
    },
    /// One `activate_with_uses` call made as many activations as it may.
    #[error("activation of `{skill}` refused: {limit} activations already made ({chain})")]
    TooMany {
        /// Skill whose activation was refused.
        skill: String,
        /// The limit.
        limit: usize,
        /// The refused path.
        chain: String,
    },
}

impl ActivationRefused {
    /// The refused activation path, outermost skill first (`A → B → A`).
    pub fn chain(&self) -> &str {
        match self {
            ActivationRefused::Cycle { chain, .. }
            | ActivationRefused::TooDeep { chain, .. }
            | ActivationRefused::Skill { chain, .. }
            | ActivationRefused::NotOffered { chain, .. }
            | ActivationRefused::TooMany { chain, .. } => chain,
        }
    }

    /// The skill whose activation was refused.
    pub fn skill(&self) -> &str {
        match self {
            ActivationRefused::Cycle { skill, .. }
            | ActivationRefused::TooDeep { skill, .. }
            | ActivationRefused::Skill { skill, .. }
            | ActivationRefused::NotOffered { skill, .. }
            | ActivationRefused::TooMany { skill, .. } => skill,
        }
    }
}
