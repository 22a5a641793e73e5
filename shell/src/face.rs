//! Which face a binary runs as: the one [`Face`] of the library (which names the program in status
//! lines and the commands it suggests), found from the name the binary was started by, and the command
//! line named after it ([`named`]).

use std::path::Path;

pub use cozyhr::support::output::Face;

/// The file name (without extension) the process was started as (`argv[0]`, not a link's target).
fn started_as() -> Option<String> {
    let argv0 = std::env::args_os().next()?;
    Path::new(&argv0).file_stem().map(|s| s.to_string_lossy().into_owned())
}

/// kubectl-cozyhr's face: flux's when started as the flux CLI's plugin (`flux-cozyhr`, which `flux
/// cozyhr` runs), else kubectl's (`kubectl-cozyhr`, also under krew).
pub fn of_kubectl_plugin() -> Face {
    if started_as().is_some_and(|n| n.starts_with("flux-")) { Face::Flux } else { Face::Kubectl }
}

/// helm-cozy's face: `cozyhr` when started by that name (a link to the binary, or a copy under that
/// name) or with `COZYHR_FACE=cozyhr` (the launcher a release archive carries,
/// scripts/cozyhr-launcher.sh), else `helm cozy`.
pub fn of_helm_plugin() -> Face {
    let cozyhr = Face::Cozyhr.program();
    let by_env = std::env::var_os("COZYHR_FACE").is_some_and(|f| f == cozyhr);
    if by_env || started_as().as_deref() == Some(cozyhr) { Face::Cozyhr } else { Face::Helm }
}

/// The command line `cmd` under the names of `face`: the program (`kubectl-cozyhr`, `helm-cozy`, ...) and
/// the command as the user types it (`kubectl cozyhr`, `helm cozy`, ...), with the version every face
/// prints, on every subcommand too. Help, usage errors, completion and `version` say the name it was
/// called by.
pub fn named(cmd: clap::Command, face: Face) -> clap::Command {
    cmd.name(face.program()).bin_name(face.command_name()).version(cozyhr::VERSION).propagate_version(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_named_command_line_says_the_face_and_the_version_in_every_subcommand() {
        let mut cmd = named(clap::Command::new("derived").subcommand(clap::Command::new("get")), Face::Flux);
        cmd.build();
        assert_eq!((cmd.get_name(), cmd.get_bin_name()), ("flux-cozyhr", Some("flux cozyhr")));
        let get = cmd.find_subcommand("get").expect("get");
        assert_eq!((get.get_bin_name(), get.get_version()), (Some("flux cozyhr get"), Some(cozyhr::VERSION)));
    }
}
