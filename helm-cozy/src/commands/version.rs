use std::process::ExitCode;

pub fn run() -> anyhow::Result<ExitCode> {
    println!("helm-cozy {}", cozyhr::VERSION);
    Ok(ExitCode::SUCCESS)
}
