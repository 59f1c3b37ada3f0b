//! Options of `plexus review` and of `plexus log`: which tasks or events, and what to
//! do with them.

use clap::Args;

/// What `plexus review` was asked: the queue, one task's evidence, or a decision.
#[derive(Args, Debug, Clone, Default)]
pub struct ReviewArgs {
    /// Run id (or `latest`, or a prefix); without it, the queue of every run.
    pub run: Option<String>,
    /// The task to show whole or to decide on.
    pub task: Option<String>,
    /// Accept the task's atoms.
    #[arg(long, requires = "task", conflicts_with = "reject")]
    pub accept: bool,
    /// Reject the task's atoms (with --reason).
    #[arg(long, requires = "task")]
    pub reject: bool,
    /// Why the atoms are rejected (required with --reject).
    #[arg(long, value_name = "TEXT", requires = "reject")]
    pub reason: Option<String>,
    /// A note kept with an acceptance.
    #[arg(long, value_name = "TEXT", requires = "accept")]
    pub note: Option<String>,
    /// Who decides [default: $USER].
    // The argument keeps the id `by`, its long name.
    #[arg(
        id = "by",
        long = "by",
        visible_alias = "reviewer",
        value_name = "NAME"
    )]
    pub reviewer: Option<String>,
    /// JSON output.
    #[arg(long)]
    pub json: bool,
}

/// Which events of a run's log `plexus log` prints, and whether it waits for more.
#[derive(Args, Debug, Clone, Default, PartialEq, Eq)]
pub struct LogFilter {
    /// Only events of these kinds (repeat, or separate with commas), e.g.
    /// `invocation_started,task_finished`.
    // As the envelope's `kind` names them; empty: every kind. (The argument keeps the
    // id `kind`, its long name.)
    #[arg(id = "kind", long = "kind", value_name = "KIND")]
    pub kinds: Vec<String>,
    /// Only events of this task.
    #[arg(long, value_name = "TASK")]
    pub task: Option<String>,
    /// Only events from this point on: an RFC 3339 time, a time of day `HH:MM[:SS]`,
    /// an offset from the run's start like `+90s` or `+1h30m`, or an event number
    /// `#N`.
    // A time of day is UTC, on the run's start date.
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
    /// Keep printing new events as they are written, until the run ends.
    // (Or stop at once when no live process is writing it.)
    #[arg(long, short = 'f')]
    pub follow: bool,
}
