//! The build script of both binaries (`build = "../link/release.rs"` in their Cargo.toml). A shipped build
//! (a release profile without debug information, on Linux) links
//! - without unwind tables (`.eh_frame`, `.eh_frame_hdr`, and the exception tables they point into),
//!   through `no-unwind-tables.ld`. The tables serve unwinding and backtraces. The release profile aborts
//!   on panic (`panic = "abort"` in the workspace's Cargo.toml; build scripts are not told), so nothing
//!   unwinds and the panic message is still printed; its binaries are stripped, so a backtrace would name
//!   no function. The tables were about 760 KB of helm-cozy's 6.2 MB.
//! - with identical code folded (`--icf=all`, on x86_64, where rustc links with its lld: one copy of
//!   functions the compiler emitted twice; 66 KB of helm-cozy, 37 KB of kubectl-cozyhr). Rust makes no
//!   promise that two functions have two addresses.
//! - as a position-dependent executable (`-no-pie`), as Go links kubectl and helm: the code is
//!   position-independent anyway, and a fixed load address lets the linker resolve the relative
//!   relocations a PIE leaves to the loader (`.rela.dyn`, about 8,000 of them: 205 KB of helm-cozy, 176 KB
//!   of kubectl-cozyhr). What is given up is the randomised address of the executable image itself; its
//!   heap, stack and shared libraries stay randomised.
//!
//! Builds with debug information (the `profiling` profile, which perf unwinds through), dev and test
//! builds (which unwind on panic) link as usual, as does any target but Linux.

fn main() {
    println!("cargo:rerun-if-changed=../link/no-unwind-tables.ld");
    println!("cargo:rerun-if-changed=../link/release.rs");
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let shipped = var("PROFILE") == "release"
        && matches!(var("DEBUG").as_str(), "false" | "0" | "none")
        && var("CARGO_CFG_TARGET_OS") == "linux";
    if shipped {
        let script = std::path::Path::new(&var("CARGO_MANIFEST_DIR")).join("../link/no-unwind-tables.ld");
        println!("cargo:rustc-link-arg-bins=-Wl,-T,{}", script.display());
        // rustc links x86_64 Linux with its own lld, which folds; a cross linker (GNU ld) may not know
        // the flag.
        if var("CARGO_CFG_TARGET_ARCH") == "x86_64" {
            println!("cargo:rustc-link-arg-bins=-Wl,--icf=all");
        }
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}
