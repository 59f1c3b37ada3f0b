//! `plexus completions SHELL` and `plexus man`: generated from the same command-line
//! definition the binary parses, so they never drift from it.

use std::io::Write;

use color_eyre::eyre::{Result, WrapErr};

/// Writes the completion script for `shell` to standard output.
pub fn completions(shell: clap_complete::Shell) -> Result<()> {
    let mut cmd = crate::cli::args::command();
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut cmd, "plexus", &mut buf);
    write_stdout(&buf)
}

/// Writes the manual page (roff) of plexus and every command to standard output.
pub fn man() -> Result<()> {
    let mut buf = Vec::new();
    man_page(&mut buf)?;
    write_stdout(&buf)
}

/// The manual page: plexus's own page, then a section per command (and per command of
/// `bench` and `dev`) with its synopsis, description and options.
pub fn man_page(out: &mut Vec<u8>) -> Result<()> {
    let cmd = crate::cli::args::command();
    let man = clap_mangen::Man::new(cmd.clone());
    man.render_title(out)?;
    man.render_name_section(out)?;
    man.render_synopsis_section(out)?;
    man.render_description_section(out)?;
    man.render_options_section(out)?;
    man.render_subcommands_section(out)?;
    for sub in cmd.get_subcommands() {
        section(out, &format!("plexus {}", sub.get_name()), sub)?;
        for nested in sub.get_subcommands() {
            let name = format!("plexus {} {}", sub.get_name(), nested.get_name());
            section(out, &name, nested)?;
        }
    }
    man.render_version_section(out)?;
    man.render_authors_section(out)?;
    Ok(())
}

/// One command's section: its name as a heading, then its synopsis, description,
/// options and examples.
fn section(out: &mut Vec<u8>, name: &str, cmd: &clap::Command) -> Result<()> {
    writeln!(out, ".SH \"{}\"", name.to_uppercase())?;
    let man = clap_mangen::Man::new(cmd.clone().name(name.replace(' ', "-")));
    let mut body = Vec::new();
    man.render_synopsis_section(&mut body)?;
    man.render_description_section(&mut body)?;
    man.render_options_section(&mut body)?;
    man.render_extra_section(&mut body)?;
    // Each command's sections become sub-headings of the command's own.
    let body = String::from_utf8_lossy(&body).replace(".SH ", ".SS ");
    out.write_all(body.as_bytes())?;
    Ok(())
}

fn write_stdout(buf: &[u8]) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(buf).and_then(|()| out.flush()) {
        // A reader that stopped early (`| head`) is not an error.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other.wrap_err("cannot write to standard output"),
    }
}
