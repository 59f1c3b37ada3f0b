//! What each command does, as the binary must know before it runs it: whether it writes
//! the database, reads the config, stops gracefully on a signal, opens the terminal UI.

use super::{Command, EvalArgs, EvalCommand};

impl Command {
    /// Whether the command writes the database (and so may create it and its log).
    pub fn writes_database(&self) -> bool {
        self.stops_gracefully()
            || matches!(
                self,
                Command::Check { upgrade: true } | Command::Import { .. }
            )
            || matches!(self, Command::Review(r) if r.accept || r.reject)
            || matches!(self, Command::Eval(a) if eval_writes(a))
    }

    /// Whether the command uses the database at all.
    pub fn uses_database(&self) -> bool {
        self.writes_database()
            || matches!(
                self,
                Command::Runs { .. }
                    | Command::Show { .. }
                    | Command::Log { .. }
                    | Command::Check { .. }
                    | Command::Browse { .. }
                    | Command::Replay { .. }
                    | Command::Export { .. }
                    | Command::Review { .. }
                    | Command::ExportFailures { .. }
                    | Command::Eval(..)
            )
    }

    /// Whether the command runs something (a run, a debate, a server) and so stops gracefully
    /// on SIGINT, SIGTERM or SIGHUP (a run it executes stays resumable) rather than dying on
    /// the spot.
    pub fn stops_gracefully(&self) -> bool {
        matches!(
            self,
            Command::Demo { .. }
                | Command::Debate(..)
                | Command::Serve(..)
                | Command::Run { .. }
                | Command::Resume { .. }
                | Command::Rerun { .. }
        ) || matches!(self, Command::Eval(a) if eval_runs(a))
    }

    /// Whether the command reads the configuration file (and so stops on its errors).
    pub fn reads_config(&self) -> bool {
        self.stops_gracefully()
            || matches!(
                self,
                Command::Browse { .. }
                    | Command::Replay { .. }
                    | Command::Failures { .. }
                    | Command::Providers { .. }
                    | Command::Ping { .. }
                    | Command::Mcp(..)
                    | Command::Review { .. }
            )
            || matches!(self, Command::Eval(a) if eval_opens(a))
    }

    /// Whether the command opens the terminal UI when it has a terminal.
    pub fn has_tui(&self) -> bool {
        matches!(
            self,
            Command::Demo { .. }
                | Command::Debate(..)
                | Command::Run { .. }
                | Command::Resume { .. }
                | Command::Rerun { .. }
                | Command::Browse { .. }
                | Command::Replay { .. }
                | Command::Failures { json: false, .. }
        ) || matches!(self, Command::Eval(a) if eval_opens(a))
    }
}

/// Whether an eval command writes the database (all but compare, show, list, open,
/// export-tree and an estimate).
fn eval_writes(a: &EvalArgs) -> bool {
    use EvalCommand as E;
    if a.command.is_none() && a.run.estimate {
        return false;
    }
    !matches!(
        a.command,
        Some(
            E::Compare { .. }
                | E::Show { .. }
                | E::List { .. }
                | E::ExportTree { .. }
                | E::Open { .. }
        )
    )
}

/// Whether an eval command runs a plan (a new eval, a resume, a rerun).
fn eval_runs(a: &EvalArgs) -> bool {
    use EvalCommand as E;
    matches!(a.command, None | Some(E::Resume { .. } | E::Rerun { .. }))
}

/// Whether an eval command opens the Eval screen: `eval open`, and an eval run on a
/// terminal unless asked not to.
fn eval_opens(a: &EvalArgs) -> bool {
    match &a.command {
        Some(EvalCommand::Open { .. }) => true,
        None => !a.run.headless && !a.run.json && !a.run.estimate,
        Some(_) => false,
    }
}
