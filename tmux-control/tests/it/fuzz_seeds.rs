//! Replays the fuzz seeds through the fuzz targets' property checks
//! (`tmux_control::fuzzing`): every recorded transcript under
//! `tests/fixtures/control-mode` (all tmux versions), every input in
//! `fuzz/corpus/<target>/` when a local fuzzing run left one, and every saved
//! crash in `fuzz/regressions/`.
//!
//! The fixtures are read at run time from `tests/fixtures/control-mode` in
//! this crate, where the repository carries them (override with
//! `TMUX_CONTROL_FIXTURES`). A missing folder fails the test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::fs;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use tmux_control::fuzzing::{check_decode, check_roundtrip};

/// `$TMUX_CONTROL_FIXTURES`, or `tests/fixtures/control-mode` in this crate.
fn fixtures_dir() -> PathBuf {
    std::env::var_os("TMUX_CONTROL_FIXTURES")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/control-mode")
        })
}

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz")
}

/// Files under `dir` (recursively), sorted, that `keep` accepts.
fn files(dir: &Path, keep: &dyn Fn(&Path) -> bool) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).unwrap_or_else(|e| panic!("reading {}: {e}", d.display())) {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if keep(&path) {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The recorded transcripts (and their sidecar `.bin` files).
fn fixture_bins() -> Vec<PathBuf> {
    let dir = fixtures_dir();
    assert!(
        dir.is_dir(),
        "fixture folder {} is missing: the fuzz seeds cannot be replayed",
        dir.display()
    );
    let bins = files(&dir, &|p| p.extension().is_some_and(|e| e == "bin"));
    let transcripts = bins
        .iter()
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            !name.ends_with(".stdin.bin") && !name.contains(".pane")
        })
        .count();
    assert!(
        transcripts >= 27,
        "expected at least 27 transcripts under {}, found {transcripts}",
        dir.display()
    );
    bins
}

/// Runs `check` on every file and fails with the list of files it panicked on.
fn replay(paths: &[PathBuf], check: fn(&[u8])) {
    let mut failed = Vec::new();
    for path in paths {
        let data = fs::read(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
        if catch_unwind(AssertUnwindSafe(|| check(&data))).is_err() {
            failed.push(path.display().to_string());
        }
    }
    assert!(
        failed.is_empty(),
        "the property check failed on {} of {} inputs (panic messages above):\n  {}",
        failed.len(),
        paths.len(),
        failed.join("\n  ")
    );
}

#[test]
fn fixtures_decode() {
    replay(&fixture_bins(), check_decode);
}

#[test]
fn fixtures_roundtrip() {
    replay(&fixture_bins(), check_roundtrip);
}

#[test]
fn regressions() {
    let dir = fuzz_dir().join("regressions");
    assert!(dir.is_dir(), "{} is missing", dir.display());
    let inputs = files(&dir, &|p| {
        !p.file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("README")
    });
    replay(&inputs, check_decode);
    replay(&inputs, check_roundtrip);
}

#[test]
fn local_corpus() {
    for (target, check) in [
        ("decode", check_decode as fn(&[u8])),
        ("roundtrip", check_roundtrip),
    ] {
        let dir = fuzz_dir().join("corpus").join(target);
        if dir.is_dir() {
            replay(&files(&dir, &|_| true), check);
        }
    }
}
