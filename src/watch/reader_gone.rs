//! Standard output's reader going away (`| head` ended, `less` quit), noticed while the loop waits for a
//! change rather than at its next write.

/// Resolves when standard output is a pipe whose reader has gone: the kernel reports an error on the
/// pipe's write end, so this waits on epoll, without polling, and the loop ends then rather than at its
/// next write. Never resolves when standard output is a terminal or a file.
pub(super) async fn stdout_reader_gone() {
    use std::os::fd::{AsFd, OwnedFd};
    use std::os::unix::fs::FileTypeExt;
    use tokio::io::{Interest, unix::AsyncFd};
    // A duplicate of standard output: the same pipe, and a descriptor this function owns.
    let pipe = std::io::stdout()
        .as_fd()
        .try_clone_to_owned()
        .map(std::fs::File::from)
        .ok()
        .filter(|f| f.metadata().is_ok_and(|m| m.file_type().is_fifo()));
    let Some(fd) = pipe.map(OwnedFd::from) else {
        return std::future::pending().await;
    };
    // SAFETY: `fd` is owned by the AsyncFd for its whole life, so it stays open and names the same pipe.
    match unsafe { AsyncFd::register_with_interest(fd, Interest::ERROR) } {
        Ok(fd) => {
            let _ = fd.ready(Interest::ERROR).await;
        }
        Err(_) => std::future::pending().await,
    }
}
