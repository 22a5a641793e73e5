//! The exit codes of every face, decided here so that `helm cozy`, `kubectl cozyhr`, `flux cozyhr` and
//! `cozyhr` end alike: scripts and CI read them.

/// How a run ends, as a number the shell sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Done (with `--detailed-exitcode`: nothing differs); help and version printed.
    Success = 0,
    /// A command's error or bad usage (one `error:` line), as kubectl and helm exit; `get` of a name that
    /// is not there, as kubectl's.
    Failure = 1,
    /// With `--detailed-exitcode`: there are changes (`diff`, `review`) or drift (`drift`), as helm-diff
    /// and terraform say it.
    Changes = 2,
    /// Stopped by SIGINT/SIGTERM (a command that changes nothing, or a second Ctrl-C during `apply`), as
    /// shells report a process stopped by SIGINT.
    Interrupted = 130,
}

impl Exit {
    /// [`Exit::Changes`] when asked for (`--detailed-exitcode`) and something differs, else success.
    pub fn changes_if(detailed: bool, changed: bool) -> Exit {
        if detailed && changed { Exit::Changes } else { Exit::Success }
    }

    /// Ends the process now, for where nothing is left to drop (usage errors, before any command runs).
    pub fn exit(self) -> ! {
        std::process::exit(self as i32)
    }
}

impl From<Exit> for std::process::ExitCode {
    fn from(exit: Exit) -> Self {
        std::process::ExitCode::from(exit as u8)
    }
}
