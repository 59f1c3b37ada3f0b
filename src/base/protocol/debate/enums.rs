//! The debate's string enums (roles, output types, host actions, …), which keep
//! unknown values so documents round-trip, and the three-step `Level`.

use serde::{Deserialize, Serialize};

/// Declares a string enum whose unknown values are kept as `Other(String)`, so documents
/// that write a placeholder (the seed's `"string"`) or a future value still round-trip.
macro_rules! open_string_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident => $text:literal, )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(from = "String", into = "String")]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )*
            /// Any other value, as written.
            Other(String),
        }

        impl $name {
            /// The value as written in JSON.
            pub fn as_str(&self) -> &str {
                match self {
                    $( $name::$variant => $text, )*
                    $name::Other(s) => s,
                }
            }
        }

        impl From<String> for $name {
            fn from(s: String) -> Self {
                match s.as_str() {
                    $( $text => $name::$variant, )*
                    _ => $name::Other(s),
                }
            }
        }

        impl From<$name> for String {
            fn from(v: $name) -> Self {
                match v {
                    $name::Other(s) => s,
                    known => known.as_str().to_string(),
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

open_string_enum! {
    /// An agent of the debate (`agent_id`, `agent`, `target_agent`, …).
    pub enum AgentRole {
        /// Flow control, consensus detection, round management.
        Host => "host",
        /// Breaks the user's goal into a structured plan.
        Planner => "planner",
        /// Finds faults, checks feasibility, proposes fixes.
        Critic => "critic",
        /// Turns the final plan into readable text.
        Reporter => "reporter",
    }
}

open_string_enum! {
    /// Kind of an agent output (`output_type`).
    pub enum OutputType {
        /// A position only.
        Position => "position",
        /// A plan (planner).
        Plan => "plan",
        /// A critique (critic).
        Critique => "critique",
        /// The final report (reporter).
        Report => "report",
        /// A flow-control decision (host).
        Control => "control",
    }
}

open_string_enum! {
    /// Action decided by the host (`decision.action`, §5 `action`, SSE `host_decision`).
    pub enum HostAction {
        /// Another round with the named agents.
        Continue => "continue",
        /// Consensus reached: gather uncertainties, then report.
        Converge => "converge",
        /// Make an agent argue the opposite side.
        ForceOpposition => "force_opposition",
        /// Stop the discussion.
        Terminate => "terminate",
        /// Give a stubborn agent a new command.
        UpdateCommand => "update_command",
    }
}

open_string_enum! {
    /// Status of one agent inside a session.
    pub enum AgentStatus {
        /// Not involved yet.
        Idle => "idle",
        /// Waiting for its turn.
        Waiting => "waiting",
        /// Answering now.
        Running => "running",
        /// Produced its output for the round.
        Completed => "completed",
        /// Gave no valid output (every try refused, or the provider failed).
        Failed => "failed",
        /// Did not answer in time.
        TimedOut => "timed_out",
        /// Stopped with the session.
        Cancelled => "cancelled",
    }
}

open_string_enum! {
    /// Status of a debate session.
    pub enum SessionStatus {
        /// Rounds are going on.
        InProgress => "in_progress",
        /// Consensus reached.
        Converged => "converged",
        /// Stopped (by the host or the user).
        Terminated => "terminated",
        /// Stopped at `max_rounds` (§7.2).
        MaxRoundsReached => "max_rounds_reached",
        /// Stopped by the user before it ended (a stop key, a client that went away).
        Cancelled => "cancelled",
        /// Ended without a result: no agent gave a valid position in the first round.
        Failed => "failed",
        /// Its process stopped before it ended (killed, crashed): the record keeps
        /// what it reached; a debate is not resumed (`plexus debate` starts another).
        Interrupted => "interrupted",
    }
}

/// A three-step rating: risk severity, suggestion priority, reported consensus level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// High.
    High,
    /// Medium.
    Medium,
    /// Low.
    Low,
}
