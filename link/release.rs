//! The build script of both binaries (`build = "../link/release.rs"` in their Cargo.toml): the release
//! build links without unwind tables (`.eh_frame`, `.eh_frame_hdr`), through `no-unwind-tables.ld`.
//!
//! The tables serve unwinding and backtraces. The release profile aborts on panic (`panic = "abort"` in
//! the workspace's Cargo.toml; build scripts are not told), so nothing unwinds and the panic message is
//! still printed; its binaries are stripped, so a backtrace would name no function. The tables were about
//! 760 KB of helm-cozy's 6.2 MB. Builds with debug information (the `profiling` profile, which perf
//! unwinds through), dev and test builds (which unwind on panic) keep them, as does any target but Linux.

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
    }
}
