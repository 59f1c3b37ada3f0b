//! Activating skills (seed 003 `SkillActivationRequest`): the request of a nested
//! activation, the cycle and depth rule, and the depth-first activation of `uses:` lists.
//!
//! # The rule
//!
//! A root activation (no parent) has depth 0, an empty chain and the library's
//! `max_depth` (3 by default). Activating `X` from inside a parent activation `P` builds
//! the child request with
//!
//! - `activation_chain` = `P.activation_chain` + `[P.skill_name]` (outermost first),
//! - `activation_depth` = `P.activation_depth + 1`, `max_depth` = `P.max_depth`,
//!
//! and is allowed exactly when [`SkillActivationRequest::can_activate_nested`] holds for
//! `X` on the parent's depth with the child's chain: `X` is not on the child chain (so
//! neither `P` itself, a direct cycle `A → A`, nor any ancestor, an indirect cycle
//! `A → B → C → A`), and `P.activation_depth < P.max_depth`, i.e. the child's depth is at
//! most `max_depth`. With `max_depth` 3, `A → B → C → D` (D at depth 3) is the deepest
//! chain allowed; `A → B → C → D → E` (E at depth 4) is refused. A cycle is reported
//! before depth when both apply.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::error::ActivationRefused;
use super::library::{SkillDoc, SkillLibrary};
use crate::base::protocol::messages::{LoadLevel, SkillActivationRequest};

/// Most activations one [`SkillLibrary::activate_with_uses`] call makes (the root
/// included); further ones are refused with [`ActivationRefused::TooMany`].
pub const MAX_ACTIVATIONS_PER_CALL: usize = 64;

/// Separator of skill names in chain strings.
pub const CHAIN_ARROW: &str = " → ";

/// One activation made: the request (depth, chain) and the skill's whole SKILL.md.
#[derive(Debug, Clone, PartialEq)]
pub struct Activation {
    /// The request, as logged (`load_level` 2).
    pub request: SkillActivationRequest,
    /// The skill at level 2.
    pub skill: Arc<SkillDoc>,
}

impl Activation {
    /// The activation path ending in this skill, e.g. `A → B`.
    pub fn chain(&self) -> String {
        chain_string(&self.request.activation_chain, &self.request.skill_name)
    }
}

/// What [`SkillLibrary::activate_with_uses`] did: the activations made, depth-first in
/// `uses:` order (the root first), and the refusals met on the way.
#[derive(Debug, Default)]
pub struct ActivationTree {
    /// Activations, depth-first pre-order.
    pub activations: Vec<Activation>,
    /// Refused nested activations, in the order met; they did not stop the others.
    pub refusals: Vec<ActivationRefused>,
}

impl ActivationTree {
    /// The chain of every activation, in order (`A`, `A → B`, `A → B → C`, `A → D`).
    pub fn chains(&self) -> Vec<String> {
        self.activations.iter().map(Activation::chain).collect()
    }
}

/// `chain` then `last`, joined by [`CHAIN_ARROW`].
fn chain_string(chain: &[String], last: &str) -> String {
    let mut s = String::new();
    for name in chain {
        s.push_str(name);
        s.push_str(CHAIN_ARROW);
    }
    s.push_str(last);
    s
}

impl SkillLibrary {
    /// The same library with another depth limit for root activations.
    pub fn with_max_depth(mut self, max_depth: u32) -> SkillLibrary {
        self.max_depth = max_depth;
        self
    }

    /// The request activating `name` under `parent` (see the module's rule), or the
    /// refusal; reads no file.
    pub fn request(
        &self,
        name: &str,
        parent: Option<&SkillActivationRequest>,
    ) -> Result<SkillActivationRequest, ActivationRefused> {
        let id = format!("act_{:06}", self.next_id.fetch_add(1, Ordering::Relaxed));
        let Some(parent) = parent else {
            return Ok(SkillActivationRequest {
                skill_name: name.to_string(),
                activation_id: id,
                load_level: LoadLevel::Full,
                activation_depth: 0,
                max_depth: self.max_depth,
                activation_chain: Vec::new(),
            });
        };
        let mut chain = parent.activation_chain.clone();
        chain.push(parent.skill_name.clone());
        let probe = SkillActivationRequest {
            activation_chain: chain,
            ..parent.clone()
        };
        if !probe.can_activate_nested(name) {
            let shown = chain_string(&probe.activation_chain, name);
            return Err(if probe.activation_chain.iter().any(|s| s == name) {
                ActivationRefused::Cycle {
                    skill: name.to_string(),
                    chain: shown,
                }
            } else {
                ActivationRefused::TooDeep {
                    skill: name.to_string(),
                    depth: parent.activation_depth.saturating_add(1),
                    max_depth: parent.max_depth,
                    chain: shown,
                }
            });
        }
        Ok(SkillActivationRequest {
            skill_name: name.to_string(),
            activation_id: id,
            load_level: LoadLevel::Full,
            activation_depth: parent.activation_depth + 1,
            max_depth: parent.max_depth,
            activation_chain: probe.activation_chain,
        })
    }

    /// Activates skill `name` (level 2: its whole SKILL.md, read and cached on first use)
    /// under `parent`, or as a root activation when `parent` is `None`. Refused: a cycle,
    /// a depth over the limit (see the module's rule), an unknown or bad skill.
    pub fn activate(
        &self,
        name: &str,
        parent: Option<&SkillActivationRequest>,
    ) -> Result<Activation, ActivationRefused> {
        let request = self.request(name, parent)?;
        match self.load(name) {
            Ok(skill) => Ok(Activation { request, skill }),
            Err(source) => Err(ActivationRefused::Skill {
                skill: name.to_string(),
                chain: chain_string(&request.activation_chain, name),
                source: Box::new(source),
            }),
        }
    }

    /// Activates skill `name` as a root, then, depth-first and in order, every skill its
    /// `uses:` lists, and theirs. A refused nested activation (cycle, depth, bad skill)
    /// is recorded in `refusals` and the rest goes on; only the root's refusal is an error.
    pub fn activate_with_uses(&self, name: &str) -> Result<ActivationTree, ActivationRefused> {
        let root = self.activate(name, None)?;
        let mut tree = ActivationTree::default();
        tree.activations.push(root.clone());
        self.expand(&root, &mut tree);
        Ok(tree)
    }

    /// Activates what `parent`'s skill uses, recursively.
    fn expand(&self, parent: &Activation, tree: &mut ActivationTree) {
        for used in &parent.skill.front.uses {
            if tree.activations.len() >= MAX_ACTIVATIONS_PER_CALL {
                let mut chain = parent.request.activation_chain.clone();
                chain.push(parent.request.skill_name.clone());
                tree.refusals.push(ActivationRefused::TooMany {
                    skill: used.clone(),
                    limit: MAX_ACTIVATIONS_PER_CALL,
                    chain: chain_string(&chain, used),
                });
                continue;
            }
            match self.activate(used, Some(&parent.request)) {
                Ok(child) => {
                    tree.activations.push(child.clone());
                    self.expand(&child, tree);
                }
                Err(refused) => tree.refusals.push(refused),
            }
        }
    }
}
