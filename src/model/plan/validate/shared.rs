//! Parts of tasks that the tasks of a large plan repeat (the same agent, the same
//! context, the same output requirements), held once in memory and shared by every task
//! that gives them.

use std::sync::Arc;

use crate::base::protocol::{OutputRequirements, RequestContext};

/// How many distinct values of each part are remembered for sharing.
const REMEMBERED: usize = 16;

/// The distinct parts seen most recently while a plan is parsed.
#[derive(Default)]
pub(super) struct SharedParts {
    agents: Vec<Arc<str>>,
    contexts: Vec<Arc<RequestContext>>,
    requirements: Vec<Arc<OutputRequirements>>,
}

impl SharedParts {
    /// The agent name `name`, shared with the tasks before that named the same.
    pub(super) fn agent(&mut self, name: &str) -> Arc<str> {
        if let Some(s) = self.agents.iter().find(|s| ***s == *name) {
            return s.clone();
        }
        if self.agents.len() == REMEMBERED {
            self.agents.remove(0);
        }
        let s: Arc<str> = Arc::from(name);
        self.agents.push(s.clone());
        s
    }

    /// `context`, shared with the tasks before that gave the same.
    pub(super) fn context(&mut self, context: RequestContext) -> Arc<RequestContext> {
        share(&mut self.contexts, context)
    }

    /// `requirements`, shared with the tasks before that gave the same.
    pub(super) fn requirements(
        &mut self,
        requirements: OutputRequirements,
    ) -> Arc<OutputRequirements> {
        share(&mut self.requirements, requirements)
    }
}

/// The remembered value equal to `value`, or `value` newly remembered (the oldest one
/// forgotten once [`REMEMBERED`] are).
fn share<T: PartialEq>(seen: &mut Vec<Arc<T>>, value: T) -> Arc<T> {
    if let Some(s) = seen.iter().find(|s| ***s == value) {
        return s.clone();
    }
    if seen.len() == REMEMBERED {
        seen.remove(0);
    }
    let s = Arc::new(value);
    seen.push(s.clone());
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_parts_are_held_once_and_different_ones_apart() {
        let mut parts = SharedParts::default();
        let a = parts.context(RequestContext::default());
        let b = parts.context(RequestContext::default());
        assert!(Arc::ptr_eq(&a, &b));
        let other = RequestContext {
            existing_assets: Some(vec!["X".into()]),
            ..Default::default()
        };
        let c = parts.context(other.clone());
        assert!(!Arc::ptr_eq(&a, &c));
        assert_eq!(*c, other);
        let a = parts.agent("Code_Architect");
        assert!(Arc::ptr_eq(&a, &parts.agent("Code_Architect")));
        assert_eq!(&*parts.agent("Strategic_Critic"), "Strategic_Critic");
    }
}
