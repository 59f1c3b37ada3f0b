//! Skills (seed 003, progressive disclosure): instructions an agent activates by name.
//!
//! A skill lives in the workspace at `skills/NAME/SKILL.md`: YAML front matter between
//! two `---` lines (`name`, equal to the folder's name; `description`; optional `uses:`,
//! the skills it activates in turn), then a Markdown body. Other files of `skills/NAME/`
//! are its resources. Three load levels:
//!
//! 1. the front matter only, for every skill: [`SkillLibrary::catalog`] lists them in a
//!    compact text block for the agent's system prompt (bodies are not read);
//! 2. the whole SKILL.md, on activation ([`SkillLibrary::activate`]);
//! 3. a named resource file, on demand ([`SkillLibrary::resource`]), never outside the
//!    skill's folder.
//!
//! Loading is lazy and cached per library. Nested activations follow the cycle and depth
//! rule documented in [`activation`]. SKILL.md files are untrusted input: every problem
//! is a [`SkillError`] naming the file (and line), never a panic.

pub mod activation;
pub mod error;
pub mod frontmatter;
pub mod library;
pub mod resource;

pub use activation::{Activation, ActivationTree, CHAIN_ARROW, MAX_ACTIVATIONS_PER_CALL};
pub use error::{ActivationRefused, SkillError};
pub use frontmatter::FrontMatter;
pub use library::{
    Catalog, SkillDoc, SkillLibrary, SkillMeta, DEFAULT_MAX_DEPTH, MAX_FRONT_MATTER_BYTES,
    MAX_SKILL_BYTES, SKILL_FILE,
};
pub use resource::SkillResource;
