use std::process::ExitCode;

pub fn run() -> anyhow::Result<ExitCode> {
    crate::commands::write_stdout(format!("helm-cozy {}\n", cozyhr::VERSION).as_bytes())?;
    Ok(ExitCode::SUCCESS)
}
