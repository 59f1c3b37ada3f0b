//! The prompt's own parts in the context budget: besides its data inputs, a user prompt
//! carries the task's instruction (with its output requirements and the plan's context)
//! and two lists the engine fills in, the upstream tasks it depends on and the existing
//! assets (atom ids) it builds on. They are trimming items like any input (§6.3); a list
//! shrinks by dropping its tail. A prompt that still does not fit fails its task.

use serde::Serialize;

use super::trim::Item;

/// Priority of `existing_assets`: important (2). These are the atoms the task builds on,
/// the upstream outputs it does not receive as data references; the agent needs their
/// ids to relate its atoms to them (its delta audit), so they are kept while there is
/// room and cut to their head (the plan's own ids first, then the upstream ones in
/// dependency order) when there is not, as the §6.3 algorithm summarises an important
/// item.
pub const EXISTING_ASSETS_PRIORITY: u8 = 2;

/// Priority of `dependencies`: supplementary (3). An entry only names an upstream task
/// and which part of its output counts; the output itself reaches the prompt as
/// existing assets or data references. It is metadata (3 in the §6.3 table), left out
/// past 90 % of the limit.
pub const DEPENDENCIES_PRIORITY: u8 = 3;

/// Tokens allowed for a list's key, brackets and the note saying it was cut short.
pub const LIST_FRAMING_TOKENS: u64 = 24;

/// A list of the task's context as the budget sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptList {
    /// Name in the report (`existing_assets`, `dependencies`).
    pub name: String,
    /// Priority 1–4.
    pub priority: u8,
    /// Tokens of each entry with its separator, in the order they are sent.
    pub entries: Vec<u64>,
}

impl PromptList {
    /// Tokens of the first `n` entries with the list's framing (none for no entries).
    pub fn tokens_of(&self, n: usize) -> u64 {
        if n == 0 {
            return 0;
        }
        LIST_FRAMING_TOKENS + self.entries.iter().take(n).sum::<u64>()
    }

    /// Tokens of the whole list.
    pub fn tokens(&self) -> u64 {
        self.tokens_of(self.entries.len())
    }

    /// How many leading entries fit in `tokens`, framing included.
    pub fn kept_within(&self, tokens: u64) -> usize {
        if tokens < LIST_FRAMING_TOKENS {
            return 0;
        }
        let mut room = tokens - LIST_FRAMING_TOKENS;
        let mut n = 0;
        for &e in &self.entries {
            if e > room {
                break;
            }
            room -= e;
            n += 1;
        }
        n
    }

    /// The list as a trimming item: compressible by dropping its tail.
    pub fn item(&self) -> Item {
        Item {
            name: self.name.clone(),
            priority: self.priority,
            tokens: self.tokens(),
            parts: Vec::new(),
            compressible: true,
            truncatable: true,
        }
    }
}

/// The parts of a prompt outside `context.inputs`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PromptParts {
    /// Tokens of the agent's system prompt (critical, sent whole).
    pub system_tokens: u64,
    /// Tokens of the user prompt without the lists and inputs: the instruction, output
    /// requirements and the plan's context (critical, sent whole).
    pub instruction_tokens: u64,
    /// The context's lists.
    pub lists: Vec<PromptList>,
}

/// A prompt too large for its agent: the task fails before any call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OverLimit {
    /// Task.
    pub task_id: String,
    /// Agent.
    pub agent: String,
    /// Tokens of the whole prompt.
    pub tokens: u64,
    /// What the tokens are made of (`system prompt`, `instruction`, …).
    pub breakdown: Vec<(&'static str, u64)>,
    /// Whether the figure is after trimming (planned) rather than the prompt as sent.
    pub trimmed: bool,
    /// The agent's input limit.
    pub limit: u64,
}

impl std::fmt::Display for OverLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = self
            .breakdown
            .iter()
            .map(|(name, n)| format!("{name} {}", thousands(*n)))
            .collect();
        write!(
            f,
            "task `{}`: the prompt for {} is {} tokens{} ({}), over the agent's input limit of {} tokens; nothing was sent to the provider",
            self.task_id,
            self.agent,
            thousands(self.tokens),
            if self.trimmed { " after trimming" } else { "" },
            parts.join(", "),
            thousands(self.limit)
        )
    }
}

/// `1234567` as `1,234,567`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Bytes of a value's JSON text, written to no buffer. Every token is at least one byte,
/// so this bounds the tokens of the text from above.
pub fn json_bytes<T: Serialize + ?Sized>(v: &T) -> u64 {
    struct Count(u64);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len() as u64;
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut c = Count(0);
    match serde_json::to_writer(&mut c, v) {
        Ok(()) => c.0,
        // A value that does not serialise is not sent: it takes no room.
        Err(_) => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(entries: Vec<u64>) -> PromptList {
        PromptList {
            name: "existing_assets".into(),
            priority: EXISTING_ASSETS_PRIORITY,
            entries,
        }
    }

    #[test]
    fn a_list_keeps_the_head_that_fits() {
        let l = list(vec![5, 5, 5, 5]);
        assert_eq!(l.tokens(), LIST_FRAMING_TOKENS + 20);
        assert_eq!(l.kept_within(l.tokens()), 4);
        assert_eq!(l.kept_within(LIST_FRAMING_TOKENS + 12), 2);
        assert_eq!(l.kept_within(LIST_FRAMING_TOKENS - 1), 0);
        assert_eq!(l.tokens_of(0), 0);
        assert!(l.item().truncatable);
    }

    #[test]
    fn bytes_and_figures() {
        assert_eq!(json_bytes(&"a\"b"), 6);
        assert_eq!(json_bytes(&vec!["x", "y"]), 9);
        assert_eq!(thousands(6_512_345), "6,512,345");
        assert_eq!(thousands(100), "100");
        assert_eq!(thousands(100_000), "100,000");
        let e = OverLimit {
            task_id: "A".into(),
            agent: "Scholar_Internalizer".into(),
            tokens: 1_200_000,
            breakdown: vec![("system prompt", 1_000), ("instruction", 1_199_000)],
            trimmed: true,
            limit: 100_000,
        };
        assert_eq!(
            e.to_string(),
            "task `A`: the prompt for Scholar_Internalizer is 1,200,000 tokens after trimming \
             (system prompt 1,000, instruction 1,199,000), over the agent's input limit of \
             100,000 tokens; nothing was sent to the provider"
        );
    }
}
