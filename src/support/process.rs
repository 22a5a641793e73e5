//! Other programs, signals and private temporary files, in one place, because they share the rules every
//! command keeps: programs run with an argument vector (never through a shell), arguments are never logged
//! (they can carry values), a child never outlives the command that started it, SIGINT and SIGTERM stop
//! children gracefully, and files that may hold values are private (0600, in 0700 directories) and
//! removed on every exit path (dropped, also on error and on a signal).

use crate::support::error::RenderError;

/// A private temporary directory (mode 0700) named `<prefix>…`, removed when dropped.
pub fn private_dir(prefix: &str) -> std::io::Result<tempfile::TempDir> {
    tempfile::Builder::new().prefix(prefix).tempdir()
}

/// As [`private_dir`], on a file system in memory when `TMPDIR` names no other place and there is one
/// (`$XDG_RUNTIME_DIR`, else `/dev/shm`): a tree of many small files (a fleet's staged side) is written
/// and removed there in a fraction of the time a disk takes.
pub fn private_memory_dir(prefix: &str) -> std::io::Result<tempfile::TempDir> {
    let memory = match std::env::var_os("TMPDIR") {
        Some(_) => None,
        None => std::env::var_os("XDG_RUNTIME_DIR")
            .map(std::path::PathBuf::from)
            .into_iter()
            .chain([std::path::PathBuf::from("/dev/shm")])
            .find(|d| d.is_dir()),
    };
    match memory {
        Some(dir) => tempfile::Builder::new().prefix(prefix).tempdir_in(dir).or_else(|_| private_dir(prefix)),
        None => private_dir(prefix),
    }
}

/// A private temporary file (mode 0600) named `<prefix>…<suffix>`, removed when dropped.
pub fn private_file(prefix: &str, suffix: &str) -> std::io::Result<tempfile::NamedTempFile> {
    tempfile::Builder::new().prefix(prefix).suffix(suffix).tempfile()
}

/// A future that resolves with the signal's name when the process gets SIGINT or SIGTERM. The handlers
/// are installed when this is called, not when the future is first polled: from then on the signals no
/// longer kill the process, so whoever awaits the future decides how to stop (and what to clean up).
pub fn interrupted() -> impl std::future::Future<Output = String> {
    #[cfg(unix)]
    let streams = {
        use tokio::signal::unix::{SignalKind, signal};
        (signal(SignalKind::interrupt()), signal(SignalKind::terminate()))
    };
    async move {
        #[cfg(unix)]
        if let (Ok(mut int), Ok(mut term)) = streams {
            return tokio::select! {
                _ = int.recv() => "SIGINT".to_string(),
                _ = term.recv() => "SIGTERM".to_string(),
            };
        }
        let _ = tokio::signal::ctrl_c().await;
        "SIGINT".to_string()
    }
}

/// Runs a program with an argument vector (never through a shell), feeding `stdin`, and returns stdout.
/// A non-zero exit becomes [`RenderError::Failed`] carrying the program's stderr.
pub async fn run_program(
    program: &std::path::Path,
    args: &[std::ffi::OsString],
    envs: &[(String, std::ffi::OsString)],
    stdin: Option<&[u8]>,
) -> Result<Vec<u8>, RenderError> {
    run_program_until(program, args, envs, stdin, std::future::pending()).await
}

/// How long a program asked to stop may take to clean up (Helm marks its release failed) before it is
/// killed.
const GRACE: std::time::Duration = std::time::Duration::from_secs(30);

/// [`run_program`], stopped gracefully when `cancel` resolves (with the signal's name): the child gets
/// SIGTERM and up to `GRACE` to finish, so that Helm records the release as failed instead of leaving it
/// pending, and callers still run their own clean-up after it.
pub async fn run_program_until(
    program: &std::path::Path,
    args: &[std::ffi::OsString],
    envs: &[(String, std::ffi::OsString)],
    stdin: Option<&[u8]>,
    cancel: impl std::future::Future<Output = String>,
) -> Result<Vec<u8>, RenderError> {
    let child = spawn_program(program, args, envs, &[], stdin.is_some())?;
    finish_program(child, stdin, cancel).await
}

/// A started program whose output is collected by [`finish_program`].
pub(crate) struct Running {
    name: String,
    child: tokio::process::Child,
}

/// Starts a program with an argument vector (never through a shell), stdout and stderr piped, stdin piped
/// when `stdin` (else empty). Dropping the result kills the program.
pub(crate) fn spawn_program(
    program: &std::path::Path,
    args: &[std::ffi::OsString],
    envs: &[(String, std::ffi::OsString)],
    unset: &[&str],
    stdin: bool,
) -> Result<Running, RenderError> {
    let name = program.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let mut cmd = tokio::process::Command::new(program);
    for var in unset {
        cmd.env_remove(var);
    }
    cmd.args(args)
        .envs(envs.iter().map(|(k, v)| (k, v)))
        .stdin(if stdin { std::process::Stdio::piped() } else { std::process::Stdio::null() })
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        // Ctrl-C or an error in the caller drops the future: do not leave the child running.
        .kill_on_drop(true);
    // Only the subcommand: arguments can carry values (`--set`), which are never logged.
    tracing::debug!(program = %program.display(), command = ?args.first(), "running");
    let child = cmd.spawn().map_err(|reason| RenderError::Spawn { program: program.display().to_string(), reason })?;
    Ok(Running { name, child })
}

/// Feeds a started program `stdin` (then closes it) and waits for it; see [`run_program_until`].
pub(crate) async fn finish_program(
    running: Running,
    stdin: Option<&[u8]>,
    cancel: impl std::future::Future<Output = String>,
) -> Result<Vec<u8>, RenderError> {
    finish_program_watching(running, stdin, cancel, |_| {}).await
}

/// How long a program's output must stay as it is for [`finish_program_watching`] to show it.
const QUIET: std::time::Duration = std::time::Duration::from_millis(1);

/// [`finish_program`], showing `on_quiet` the standard output so far each time it has stopped growing for
/// [`QUIET`] (and has grown since it was last shown). helm prints its whole output in one write and then
/// takes 5-15 ms to exit (a Go runtime of some 70 MB handing its memory back): only its exit, which closes
/// the pipe, says the output is complete, but work on what it printed can start meanwhile.
pub(crate) async fn finish_program_watching(
    running: Running,
    stdin: Option<&[u8]>,
    cancel: impl std::future::Future<Output = String>,
    on_quiet: impl FnMut(&[u8]),
) -> Result<Vec<u8>, RenderError> {
    let Running { name, mut child } = running;
    let stdout = child.stdout.take().ok_or_else(|| RenderError::PostRender("stdout not piped".into()))?;
    let read_stdout = read_watching(stdout, on_quiet);
    feed_stdin(&mut child, stdin)?;
    let pid = child.id();
    // stderr is read and the exit awaited by wait_with_output, stdout (taken above) here, side by side.
    let output = async move {
        let (stdout, output) = tokio::join!(read_stdout, child.wait_with_output());
        let mut output = output?;
        output.stdout = stdout?;
        Ok::<_, std::io::Error>(output)
    };
    tokio::pin!(output);
    let out = tokio::select! {
        out = &mut output => out?,
        signal = cancel => return Err(stop(pid, &name, &mut output, signal).await),
    };
    tracing::debug!(program = %name, status = %out.status, "finished");
    succeeded(name, out)
}

/// Reads `stdout` to its end and returns it, showing `on_quiet` what was read so far each time nothing
/// more came for [`QUIET`]: a read waits only that long while some output is unshown, else as long as
/// it takes, so output is shown once per pause and never before there is any.
async fn read_watching(
    mut stdout: tokio::process::ChildStdout,
    mut on_quiet: impl FnMut(&[u8]),
) -> std::io::Result<Vec<u8>> {
    use tokio::io::AsyncReadExt;
    let mut out = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    let mut shown = 0;
    loop {
        let n = if out.len() > shown {
            match tokio::time::timeout(QUIET, stdout.read(&mut chunk)).await {
                Ok(read) => read?,
                Err(_) => {
                    on_quiet(&out);
                    shown = out.len();
                    continue;
                }
            }
        } else {
            stdout.read(&mut chunk).await?
        };
        if n == 0 {
            return Ok(out);
        }
        out.extend_from_slice(&chunk[..n]);
    }
}

/// Writes `stdin`, when there is one, to the child's standard input and then closes it.
fn feed_stdin(child: &mut tokio::process::Child, stdin: Option<&[u8]>) -> Result<(), RenderError> {
    use tokio::io::AsyncWriteExt;
    if let Some(input) = stdin {
        let mut pipe = child.stdin.take().ok_or_else(|| RenderError::PostRender("stdin not piped".into()))?;
        let input = input.to_vec();
        // Write from a task so a child that fills its stdout pipe before reading all input cannot deadlock us.
        tokio::spawn(async move {
            let _ = pipe.write_all(&input).await;
        });
    }
    Ok(())
}

/// Stops the child (`pid`, its `output` still to come) because of `signal`: SIGTERM and up to [`GRACE`]
/// to finish, so that Helm records the release as failed instead of leaving it pending. The error adds
/// what the program said on stderr, or that it did not stop in time.
async fn stop(
    pid: Option<u32>,
    name: &str,
    output: impl std::future::Future<Output = std::io::Result<std::process::Output>> + Unpin,
    signal: String,
) -> RenderError {
    if let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()) {
        // SAFETY: kill(2) on the pid of our own child, which we have not reaped yet.
        unsafe {
            libc::kill(pid, libc::SIGTERM);
        }
    }
    let detail = match tokio::time::timeout(GRACE, output).await {
        Ok(Ok(out)) => {
            let stderr = String::from_utf8_lossy(&out.stderr).trim().to_string();
            if stderr.is_empty() { String::new() } else { format!(" ({name}: {stderr})") }
        }
        // Still running after the grace period: dropping the future kills it (kill_on_drop).
        _ => format!(" ({name} did not stop within {}s and was killed)", GRACE.as_secs()),
    };
    RenderError::Interrupted { signal, detail }
}

/// The standard output of a program that exited 0. Any other exit is [`RenderError::Failed`] with its
/// stderr, or, when it printed nothing there, its exit code or what ended it, so that the error is
/// never empty.
fn succeeded(name: String, out: std::process::Output) -> Result<Vec<u8>, RenderError> {
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr).trim().to_string();
        let stderr = match out.status.code() {
            _ if !stderr.is_empty() => stderr,
            Some(code) => format!("exited with code {code} and printed nothing on stderr"),
            None => format!("ended by {}", out.status),
        };
        return Err(RenderError::Failed { program: name, stderr });
    }
    Ok(out.stdout)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn output_that_pauses_is_shown_as_it_stands_and_then_whole() {
        let args: Vec<std::ffi::OsString> =
            ["-c", "printf first; sleep 0.2; printf ' second'; sleep 0.2"].iter().map(Into::into).collect();
        let running = spawn_program(std::path::Path::new("/bin/sh"), &args, &[], &[], false).expect("sh starts");
        let mut shown = Vec::new();
        let out = finish_program_watching(running, None, std::future::pending(), |so_far| shown.push(so_far.to_vec()))
            .await
            .expect("sh succeeds");
        assert_eq!(out, b"first second");
        // Each pause once, with all the output so far; nothing before there is any.
        assert_eq!(shown, vec![b"first".to_vec(), b"first second".to_vec()]);
    }

    #[tokio::test]
    async fn a_failure_after_output_is_still_a_failure() {
        let args: Vec<std::ffi::OsString> =
            ["-c", "printf partial; sleep 0.1; echo broken >&2; exit 3"].iter().map(Into::into).collect();
        let running = spawn_program(std::path::Path::new("/bin/sh"), &args, &[], &[], false).expect("sh starts");
        let mut shown = 0;
        let err = finish_program_watching(running, None, std::future::pending(), |_| shown += 1).await.unwrap_err();
        assert!(matches!(&err, RenderError::Failed { stderr, .. } if stderr == "broken"), "{err:?}");
        assert_eq!(shown, 1);
    }
}
