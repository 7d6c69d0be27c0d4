//! Helpers shared by the end-to-end tests.
//!
//! # Finding the `tmux-mcp` binary
//!
//! Cargo sets `CARGO_BIN_EXE_<name>` only for the integration tests of the
//! package that owns the binary, and a package cannot depend on another
//! package's binary on stable Cargo. So the tests in this crate get the binary
//! through [`tmux_mcp_bin`], which works like this:
//!
//! 1. If the environment variable [`TMUX_MCP_BIN_ENV`] (`TMUX_MCP_BIN`) is set,
//!    its value is the binary to test, as is. Use it to test a binary built
//!    elsewhere (a release artifact, another target).
//! 2. Otherwise it runs `cargo build -p tmux-control-mcp --bin tmux-mcp` with
//!    the profile, target directory and target triple of the running test
//!    executable, all read from the test executable's own path
//!    (`<target-dir>[/<triple>]/<profile-dir>/deps/<test>-<hash>`), and returns
//!    `<profile-dir>/tmux-mcp`. Cargo decides whether anything is stale, so an
//!    up-to-date binary costs one no-op `cargo build` (well under a second),
//!    and an edited `tmux-mcp/src` is always rebuilt before it is tested: no
//!    modification-time heuristics that could test a stale binary. This also
//!    honours `CARGO_TARGET_DIR`, `--target-dir`, `--release` and custom
//!    profiles without looking at them separately.
//!
//! The build runs at most once per test process; concurrent test processes are
//! serialised by Cargo's own build-directory lock. The first build of a cold
//! target directory takes as long as `cargo build -p tmux-control-mcp`, so
//! tests call [`tmux_mcp_bin`] before starting any timeout.

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// Environment variable that names a prebuilt `tmux-mcp` binary to test
/// instead of building one.
pub const TMUX_MCP_BIN_ENV: &str = "TMUX_MCP_BIN";

/// Package that owns the `tmux-mcp` binary.
const MCP_PACKAGE: &str = "tmux-control-mcp";

/// Name of the MCP server binary.
const MCP_BIN: &str = "tmux-mcp";

/// Returns the path of an up-to-date `tmux-mcp` binary, building it first if
/// needed.
///
/// See the [crate documentation](crate) for how the binary is found. The
/// result is computed once per process and then reused.
///
/// # Errors
///
/// Fails when `TMUX_MCP_BIN` names no file, when the test executable is not in
/// a Cargo target directory, or when `cargo build` fails (the error carries
/// Cargo's output).
pub fn tmux_mcp_bin() -> io::Result<PathBuf> {
    static BIN: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    BIN.get_or_init(locate_or_build)
        .clone()
        .map_err(io::Error::other)
}

/// Root of the Cargo workspace this crate belongs to.
pub fn workspace_root() -> &'static Path {
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest_dir.parent().unwrap_or(manifest_dir)
}

fn locate_or_build() -> Result<PathBuf, String> {
    if let Some(path) = std::env::var_os(TMUX_MCP_BIN_ENV) {
        let path = PathBuf::from(path);
        return if path.is_file() {
            Ok(path)
        } else {
            Err(format!(
                "{TMUX_MCP_BIN_ENV}={} does not name a file",
                path.display()
            ))
        };
    }

    let exe = std::env::current_exe()
        .map_err(|err| format!("cannot find the running test executable: {err}"))?;
    let layout = BuildLayout::from_test_exe(&exe)?;
    layout.build()?;

    let bin = layout
        .profile_dir
        .join(format!("{MCP_BIN}{}", std::env::consts::EXE_SUFFIX));
    if bin.is_file() {
        Ok(bin)
    } else {
        Err(format!(
            "cargo build succeeded but {} does not exist",
            bin.display()
        ))
    }
}

/// Where the running test executable was built, and so where and how to build
/// `tmux-mcp` to match it.
#[derive(Debug)]
struct BuildLayout {
    /// The Cargo target directory (the one holding `CACHEDIR.TAG`).
    target_dir: PathBuf,
    /// `--target` triple, when the tests were built for an explicit target.
    target_triple: Option<OsString>,
    /// `<target-dir>[/<triple>]/<profile-dir>`, where the binary will be.
    profile_dir: PathBuf,
    /// The Cargo profile whose output directory is `profile_dir`.
    profile: OsString,
}

impl BuildLayout {
    /// Reads the layout from `<target-dir>[/<triple>]/<profile-dir>/deps/<exe>`.
    fn from_test_exe(exe: &Path) -> Result<Self, String> {
        let not_in_target = || {
            format!(
                "{} is not in a Cargo target directory (<target>/<profile>/deps/); \
                 set {TMUX_MCP_BIN_ENV} to the tmux-mcp binary to test",
                exe.display()
            )
        };
        let deps = exe
            .parent()
            .filter(|dir| dir.file_name().is_some_and(|name| name == "deps"))
            .ok_or_else(not_in_target)?;
        let profile_dir = deps.parent().ok_or_else(not_in_target)?;
        let profile_dir_name = profile_dir.file_name().ok_or_else(not_in_target)?;
        let above = profile_dir.parent().ok_or_else(not_in_target)?;

        // Cargo puts `CACHEDIR.TAG` in the target directory itself; a triple
        // directory between it and the profile directory has none.
        let (target_dir, target_triple) = match above.parent() {
            Some(grandparent) if !is_target_dir(above) && is_target_dir(grandparent) => {
                (grandparent, above.file_name().map(OsString::from))
            }
            _ => (above, None),
        };

        // The `dev` and `test` profiles write to `debug/`; every other
        // profile (`release`, `bench` → `release/`, custom ones) writes to a
        // directory of the profile's own name.
        let profile = if profile_dir_name == "debug" {
            OsString::from("dev")
        } else {
            profile_dir_name.to_os_string()
        };

        Ok(Self {
            target_dir: target_dir.to_path_buf(),
            target_triple,
            profile_dir: profile_dir.to_path_buf(),
            profile,
        })
    }

    /// Runs `cargo build` for the binary with this layout.
    fn build(&self) -> Result<(), String> {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| OsString::from(env!("CARGO")));
        let mut cmd = Command::new(&cargo);
        cmd.arg("build")
            .arg("--manifest-path")
            .arg(workspace_root().join("Cargo.toml"))
            .args(["-p", MCP_PACKAGE, "--bin", MCP_BIN])
            .arg("--profile")
            .arg(&self.profile)
            .arg("--target-dir")
            .arg(&self.target_dir);
        if let Some(triple) = &self.target_triple {
            cmd.arg("--target").arg(triple);
        }
        let output = cmd
            .output()
            .map_err(|err| format!("cannot run {}: {err}", Path::new(&cargo).display()))?;
        if output.status.success() {
            Ok(())
        } else {
            Err(format!(
                "`{cmd:?}` failed with {}:\n{}",
                output.status,
                String::from_utf8_lossy(&output.stderr)
            ))
        }
    }
}

fn is_target_dir(dir: &Path) -> bool {
    dir.join("CACHEDIR.TAG").is_file()
}
