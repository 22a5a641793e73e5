use std::process::ExitCode;

pub fn run() -> anyhow::Result<ExitCode> {
    cozyhr::output::write_stdout(format!("kubectl-cozyhr {}\n", cozyhr::VERSION))?;
    Ok(ExitCode::SUCCESS)
}
