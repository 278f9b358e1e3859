//! Shared by the tests that use the C library from outside.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// `target/<profile>`: the test binary lives in `target/<profile>/deps`.
pub fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    exe.parent()
        .and_then(Path::parent)
        .expect("the test binary is in target/<profile>/deps")
        .to_owned()
}

/// The directory holding this build's `libquarry.so` and `libquarry.a`.
///
/// `cargo test` compiles the library for the test binaries but does not
/// link the cdylib and staticlib into `target/<profile>`, so the first call
/// runs `cargo build --lib` for the same profile and target directory
/// (cargo rebuilds only what is stale, so the libraries always match the
/// sources under test).
pub fn built_library_dir() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let profile = profile_dir();
            let target = profile.parent().expect("target/<profile>").to_owned();
            let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
            let mut cmd = Command::new(cargo);
            cmd.args(["build", "--lib", "--quiet"])
                .current_dir(env!("CARGO_MANIFEST_DIR"))
                .env("CARGO_TARGET_DIR", &target);
            if profile.file_name().is_some_and(|n| n == "release") {
                cmd.arg("--release");
            }
            let o = cmd.output().expect("run cargo build --lib");
            assert!(
                o.status.success(),
                "cargo build --lib failed:\n{}",
                String::from_utf8_lossy(&o.stderr)
            );
            for lib in ["libquarry.so", "libquarry.a"] {
                assert!(
                    profile.join(lib).exists(),
                    "{lib} is missing: the [lib] crate-type must include cdylib and staticlib"
                );
            }
            profile
        })
        .clone()
}
