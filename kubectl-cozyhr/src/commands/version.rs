use std::process::ExitCode;

pub fn run() -> anyhow::Result<ExitCode> {
    super::print(&format!("kubectl-cozyhr {}\n", cozyhr::VERSION))?;
    Ok(ExitCode::SUCCESS)
}
