use std::process::ExitCode;

pub fn run() -> anyhow::Result<ExitCode> {
    println!("kubectl-cozyhr {}", cozyhr::VERSION);
    Ok(ExitCode::SUCCESS)
}
