//! `plexus init-context`: an Init→Execute context written from the shell, its size
//! checked; the same file `plexus failures FILE` opens.

use std::path::PathBuf;
use std::process::ExitCode;

use color_eyre::eyre::{eyre, Result};

use crate::base::tokens::TokenCounter;
use crate::cli::args::InitContextArgs;
use crate::data::exit;
use crate::data::failures::{build_init_context, write_init_context, InitSpec};

/// `plexus init-context REQUIREMENT --design ROLE=PATH… [-o FILE]`.
pub fn init_context(args: &InitContextArgs) -> Result<ExitCode> {
    let mut design = Vec::with_capacity(args.design.len());
    for d in &args.design {
        let (role, path) = d
            .split_once('=')
            .filter(|(r, p)| !r.trim().is_empty() && !p.is_empty())
            .ok_or_else(|| {
                eyre!("--design `{d}`: give ROLE=PATH (e.g. business_rules_path=BusinessRules.md)")
            })?;
        design.push((role.trim().to_string(), PathBuf::from(path)));
    }
    let spec = InitSpec {
        user_requirement: args.requirement.clone(),
        design_artifacts: design,
        design_rationale: args.rationale.clone(),
        known_constraints: args.constraints.clone(),
        timestamp: String::new(),
    };
    let ctx = build_init_context(&spec, &args.output)?;
    let check = write_init_context(&args.output, &ctx, &TokenCounter::default())?;
    crate::outln!(
        "wrote {} · {} design file(s) · {} tokens",
        args.output.display(),
        ctx.design_artifacts.len(),
        check.tokens
    );
    if let Some(w) = check.warning {
        crate::errln!("warning: {w}");
    }
    Ok(ExitCode::from(exit::OK))
}
