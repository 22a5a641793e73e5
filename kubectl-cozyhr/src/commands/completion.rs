use std::process::ExitCode;

use crate::cli::{CompletionArgs, Face};

/// The script for the program `face` names (`kubectl-cozyhr`, or `flux-cozyhr` run on its own).
pub fn run(face: Face, args: &CompletionArgs) -> anyhow::Result<ExitCode> {
    // Generated into memory first: clap_complete's own writes would panic on a closed pipe.
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut face.command(), face.program(), &mut script);
    cozyhr::output::write_stdout(&script)?;
    Ok(ExitCode::SUCCESS)
}
