use std::process::ExitCode;

pub fn run() -> anyhow::Result<ExitCode> {
    cozyhr::output::write_stdout(format!("helm-cozy {}\n", cozyhr::VERSION))?;
    Ok(ExitCode::SUCCESS)
}
