//! Help text: the examples at the end of each command's `--help`, and the width help
//! is wrapped to.

use std::ffi::OsString;
use std::io::IsTerminal;

use clap::{CommandFactory, FromArgMatches};

use super::Cli;

/// Width help is wrapped to: `COLUMNS` when set, else the terminal's width, else 80
/// (help piped to a file or a pager); never more than 100.
pub fn help_width() -> usize {
    let columns = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|&c| c > 0);
    let terminal = || {
        std::io::stdout()
            .is_terminal()
            .then(crossterm::terminal::size)
            .and_then(Result::ok)
            .map(|(w, _)| usize::from(w))
    };
    columns.or_else(terminal).unwrap_or(80).min(100)
}

/// The clap command with help wrapped to [`help_width`].
pub fn command() -> clap::Command {
    Cli::command().term_width(help_width())
}

/// Parses `args` (the program name first); on `--help`, `--version` or an error
/// clap prints and exits, as usual.
pub fn parse<I, T>(args: I) -> Cli
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let matches = command().get_matches_from(args);
    Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit())
}

/// Examples of `plexus --help`.
pub const MAIN_EXAMPLES: &str = "\
Examples:
  plexus demo                        the demo plan, offline, in the terminal UI
  plexus run plan.json               run your own plan
  plexus run plan.json --provider openai
  plexus runs                        what the database holds
  plexus replay latest               watch the last run again
  plexus failures                    every failed attempt, newest first

Docs: README.md and docs/ in the repository; `plexus COMMAND --help` for one command.";

/// Examples of `plexus demo --help`.
pub const DEMO: &str = "\
Examples:
  plexus demo
  plexus demo --faults none --headless > summary.txt
  plexus demo --provider openai --concurrency 4";

/// Examples of `plexus run --help`.
pub const RUN: &str = "\
Examples:
  plexus run plan.json
  plexus run plan.json --provider local --concurrency 16
  plexus run plan.json --faults demo --seed 3 --headless";

/// Examples of `plexus resume --help`.
pub const RESUME: &str = "\
Examples:
  plexus resume latest
  plexus resume R-20261126-1 --headless
  plexus resume latest --chunk-ms 0 --first-chunk-ms 0";

/// Examples of `plexus validate --help`.
pub const VALIDATE: &str = "\
Example:
  plexus validate plan.json";

/// Examples of `plexus runs --help`.
pub const RUNS: &str = "\
Examples:
  plexus runs
  plexus runs --json";

/// Examples of `plexus show --help`.
pub const SHOW: &str = "\
Examples:
  plexus show latest
  plexus show R-20261126-1 --json";

/// Examples of `plexus log --help`.
pub const LOG: &str = "\
Examples:
  plexus log latest --kind task_finished
  plexus log latest --task TASK_PLANNER_01 --since +30s
  plexus log latest --follow";

/// Examples of `plexus browse --help`.
pub const BROWSE: &str = "\
Examples:
  plexus browse
  plexus browse latest --theme light";

/// Examples of `plexus replay --help`.
pub const REPLAY: &str = "\
Examples:
  plexus replay latest
  plexus replay latest --speed 4 --max-gap 0.5
  plexus replay R-20261126-1 --at end --paused";

/// Examples of `plexus diff --help`.
pub const DIFF: &str = "\
Examples:
  plexus diff R-20261126-1 R-20261126-2
  plexus diff R-20261126-1 latest --json";

/// Examples of `plexus rerun --help`.
pub const RERUN: &str = "\
Examples:
  plexus rerun latest --instant --headless
  plexus rerun latest --plan changed.json
  plexus rerun R-20261126-1 --from colleague.db";

/// Examples of `plexus debate --help`.
pub const DEBATE: &str = "\
Examples:
  plexus debate \"Plan three months of IELTS preparation\"
  plexus debate \"Move our service to Rust?\" --max-rounds 3 --headless
  plexus debate \"Plan a product launch\" --events sse > events.txt";

/// Examples of `plexus serve --help`.
pub const SERVE: &str = "\
Examples:
  plexus serve --port 8080
  plexus serve --port 0 --provider openai
  plexus serve --allow-origin http://localhost:5173
  PLEXUS_SERVE_TOKEN=$(openssl rand -hex 16) plexus serve --host 0.0.0.0";

/// Examples of `plexus failures --help`.
pub const FAILURES: &str = "\
Examples:
  plexus failures
  plexus failures latest --json
  plexus failures ./execute-output --budget 20000";

/// Examples of `plexus review --help`.
pub const REVIEW: &str = "\
Examples:
  plexus review
  plexus review latest TASK_VALIDATOR_DIFF_01
  plexus review latest TASK_VALIDATOR_DIFF_01 --accept --note checked
  plexus review latest TASK_VALIDATOR_DIFF_01 --reject --reason 'no such asset'";

/// Examples of `plexus export --help`.
pub const EXPORT: &str = "\
Examples:
  plexus export latest -o run.jsonl
  plexus export latest | gzip > run.jsonl.gz";

/// Examples of `plexus import --help`.
pub const IMPORT: &str = "\
Examples:
  plexus import run.jsonl
  plexus import run.jsonl --rename-auto";

/// Examples of `plexus export-failures --help`.
pub const EXPORT_FAILURES: &str = "\
Example:
  plexus export-failures latest ./failures-of-latest";

/// Examples of `plexus init-context --help`.
pub const INIT_CONTEXT: &str = "\
Examples:
  plexus init-context '生成请假样本' --design business_rules_path=BR.md
  plexus init-context \"$(cat need.txt)\" --design design_path=d.yaml -o ctx.json";

/// Examples of `plexus providers --help`.
pub const PROVIDERS: &str = "\
Examples:
  plexus providers
  plexus providers --json";

/// Examples of `plexus mcp --help`.
pub const MCP: &str = "\
Examples:
  plexus mcp list
  plexus mcp list files --json
  plexus mcp call files read_file --args '{\"path\": \"README.md\"}'";

/// Examples of `plexus mcp list --help`.
pub const MCP_LIST: &str = "\
Examples:
  plexus mcp list
  plexus mcp list files --json";

/// Examples of `plexus mcp call --help`.
pub const MCP_CALL: &str = "\
Examples:
  plexus mcp call files list_directory --args '{\"path\": \".\"}'
  plexus mcp call time get_current_time --json";

/// Examples of `plexus ping --help`.
pub const PING: &str = "\
Examples:
  plexus ping simulated
  plexus ping openai --timeout 10";

/// Examples of `plexus check --help`.
pub const CHECK: &str = "\
Examples:
  plexus check
  plexus check --upgrade";

/// Examples of `plexus schema --help`.
pub const SCHEMA: &str = "\
Examples:
  plexus schema plan > plan.schema.json
  plexus schema config > plexus.schema.json
  plexus schema response --task T1 plan.json   (the answer task T1 asks for)

Then, in a plan:              \"$schema\": \"./plan.schema.json\",
or in .vscode/settings.json:  \"json.schemas\": [{\"fileMatch\": [\"plans/*.json\"],
                                               \"url\": \"./plan.schema.json\"}]
and atop plexus.toml:         #:schema ./plexus.schema.json";

/// Examples of `plexus completions --help`.
pub const COMPLETIONS: &str = "\
Examples:
  plexus completions bash > ~/.local/share/bash-completion/completions/plexus
  plexus completions zsh > ~/.zfunc/_plexus
  plexus completions fish > ~/.config/fish/completions/plexus.fish";

/// Examples of `plexus man --help`.
pub const MAN: &str = "\
Examples:
  plexus man > plexus.1 && man ./plexus.1";

/// Examples of `plexus bench engine --help`.
pub const BENCH_ENGINE: &str = "\
Examples:
  cargo run --release -- bench engine
  cargo run --release -- bench engine --tasks 1000 --json";

/// Examples of `plexus bench tokens --help`.
pub const BENCH_TOKENS: &str = "\
Example:
  cargo run --release -- bench tokens";

/// Examples of `plexus bench ui --help`.
pub const BENCH_UI: &str = "\
Example:
  cargo run --release -- bench ui --frames 300";

/// Examples of `plexus bench http --help`.
pub const BENCH_HTTP: &str = "\
Example:
  cargo run --release -- bench http --api anthropic";

/// Examples of `plexus bench replay --help`.
pub const BENCH_REPLAY: &str = "\
Example:
  cargo run --release -- bench replay --events 200000";

/// Examples of `plexus bench open --help`.
pub const BENCH_OPEN: &str = "\
Examples:
  cargo run --release -- bench open --tasks 20000 --width 200
  cargo run --release -- bench open --db-file .plexus/plexus.db --run latest";

/// Examples of `plexus bench react --help`.
pub const BENCH_REACT: &str = "\
Example:
  cargo run --release -- bench react --tasks 100";

/// Examples of `plexus bench debate --help`.
pub const BENCH_DEBATE: &str = "\
Example:
  cargo run --release -- bench debate --runs 101";

/// Examples of `plexus bench failures --help`.
pub const BENCH_FAILURES: &str = "\
Example:
  cargo run --release -- bench failures --samples 10000 --invocations 0";

/// Examples of `plexus dev gen-plan --help`.
pub const GEN_PLAN: &str = "\
Example:
  plexus dev gen-plan --tasks 200 --width 20 > big.json && plexus run big.json";

/// Examples of `plexus dev gen-failures --help`.
pub const GEN_FAILURES: &str = "\
Example:
  plexus dev gen-failures ./sample-tree && plexus failures ./sample-tree";

/// Examples of `plexus dev mock-server --help`.
pub const MOCK_SERVER: &str = "\
Examples:
  plexus dev mock-server --port 8089 --stream-ms 300
  plexus dev mock-server --port 0 --script turns.json   (a scripted model)";

/// Examples of `plexus eval --help`.
pub const EVAL: &str = "\
Examples:
  plexus eval fixtures/eval/arith.eval.json
  plexus eval fixtures/eval/arith.eval.json --limit 5 --epochs 3 --reducer majority
  plexus eval fixtures/eval/arith.eval.json --where meta.level=hard --fail-under format=0.9
  plexus eval list
  plexus eval compare E20261128-120000-1a2b latest";

/// Examples of `plexus eval resume --help`.
pub const EVAL_RESUME: &str = "\
Example:
  plexus eval resume latest";

/// Examples of `plexus eval rerun --help`.
pub const EVAL_RERUN: &str = "\
Examples:
  plexus eval rerun latest --errors
  plexus eval rerun latest --failing --check answer
  plexus eval rerun latest --samples evals/rerun_E20261128-120000-1a2b.txt";

/// Examples of `plexus eval rescore --help`.
pub const EVAL_RESCORE: &str = "\
Example:
  plexus eval rescore latest --checks looser.eval.json";

/// Examples of `plexus eval compare --help`.
pub const EVAL_COMPARE: &str = "\
Examples:
  plexus eval compare E20261128-120000-1a2b latest
  plexus eval compare E20261128-120000-1a2b latest --by meta.level --gate answer --json";

/// Examples of `plexus eval show --help`.
pub const EVAL_SHOW: &str = "\
Examples:
  plexus eval show latest
  plexus eval show latest --sample q7 --json";

/// Examples and keys of `plexus eval open --help`.
pub const EVAL_OPEN: &str = "\
Keys: tab moves between the check table and the sample list; enter opens a sample
(its checks' expected and found side by side, then its four documents on 1-4);
f cycles the status shown, t the check whose misses are listed, d shows the samples
that flipped against the parent iteration, / searches ids (meta.K=V filters on a
metadata field), x clears; r marks a sample for rerun (the ids are written beside
the failure tree, for `eval rerun --samples`); E or h writes the handoff; ? lists
the keys; q quits.

Examples:
  plexus eval open
  plexus eval open E20261128-120000-1a2b";

/// Examples of `plexus eval list --help`.
pub const EVAL_LIST: &str = "\
Examples:
  plexus eval list
  plexus eval list --json";

/// Examples of `plexus eval export-tree --help`.
pub const EVAL_EXPORT_TREE: &str = "\
Example:
  plexus eval export-tree latest ./tree-again";

/// Examples of `plexus bench eval --help`.
pub const BENCH_EVAL: &str = "\
Examples:
  plexus bench eval --samples 10000
  plexus bench eval --runs 3 --json";
