//! Rail: no test, example, benchmark or script in this repository may start
//! tmux without naming a private socket (`-L` or `-S`). A test suite that
//! reaches the user's default tmux server can destroy their sessions.
//!
//! The scan is deliberately simple and strict: every place that spawns a
//! program named `tmux` from Rust, and every shell or Python line that runs
//! a `tmux` subcommand, must name `-L` or `-S` in the same statement, or go
//! through the library's `IsolatedServer` / `Server` types (which always do).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};

/// Folders whose files are tests, examples, benchmarks or scripts.
fn is_checked(rel: &Path) -> bool {
    let s = rel.to_string_lossy();
    let parts: Vec<&str> = s.split('/').collect();
    let in_dir = parts.iter().any(|p| {
        matches!(
            *p,
            "tests" | "examples" | "benches" | "fuzz" | "fuzz_targets" | "scripts" | ".ci"
        )
    });
    let name = parts.last().copied().unwrap_or("");
    let top = parts.first().copied().unwrap_or("");
    let script = name.ends_with(".sh")
        || name.ends_with(".py")
        || ((top == "scripts" || top == ".ci") && !name.contains('.'));
    in_dir && (name.ends_with(".rs") || script)
}

/// The folder of recorded control-mode transcripts, not scanned.
const RECORDED: &str = "tmux-control/tests/fixtures/control-mode";

fn walk(dir: &Path, root: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            if matches!(
                name.as_str(),
                "target" | ".git" | "node_modules" | "corpus" | "artifacts" | ".venv"
            ) {
                continue;
            }
            // The transcripts recorded from real tmux and their recorder,
            // kept byte for byte as recorded (see
            // tmux-control/tests/fixtures/README.md): the recorder runs
            // tmux through a variable, on `-L ctlref-*` sockets only, and
            // its docstrings read as tmux commands to this scan.
            if path.strip_prefix(root).unwrap() == Path::new(RECORDED) {
                continue;
            }
            walk(&path, root, out);
        } else if is_checked(path.strip_prefix(root).unwrap()) {
            out.push(path);
        }
    }
}

/// Every `.rs` file under `dir`, however deep.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The statement that starts at `at`: up to the first `;` outside brackets
/// and strings, or 600 bytes.
fn statement(src: &str, at: usize) -> &str {
    let bytes = src.as_bytes();
    let mut depth = 0i32;
    let mut in_str = false;
    let mut i = at;
    while i < bytes.len() && i < at + 600 {
        let c = bytes[i];
        if in_str {
            if c == b'\\' {
                i += 1;
            } else if c == b'"' {
                in_str = false;
            }
        } else {
            match c {
                b'"' => in_str = true,
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' => depth -= 1,
                b';' if depth <= 0 => return &src[at..=i],
                _ => {}
            }
        }
        i += 1;
    }
    &src[at..i.min(src.len())]
}

fn names_socket(s: &str) -> bool {
    s.contains("\"-L\"") || s.contains("\"-S\"") || s.contains("-L ") || s.contains("-S ")
}

/// Whether the word after `tmux` makes it a run against some server: a
/// tmux command (or alias) or a flag that leads to one. `tmux -V`, package
/// names after `apt-get install tmux` and redirections do not count.
fn is_tmux_invocation(next: &str) -> bool {
    const STARTS: &[&str] = &["-C", "-CC", "-f", "-u", "-c", "-N", "-2", "-v"];
    const COMMANDS: &[&str] = &[
        "new",
        "new-session",
        "kill-server",
        "kill-session",
        "attach",
        "attach-session",
        "a",
        "ls",
        "list-sessions",
        "list-windows",
        "lsw",
        "list-panes",
        "lsp",
        "list-clients",
        "send",
        "send-keys",
        "display",
        "display-message",
        "capture-pane",
        "capturep",
        "split-window",
        "splitw",
        "new-window",
        "neww",
        "start",
        "start-server",
        "has",
        "has-session",
        "set",
        "set-option",
        "setw",
        "source",
        "source-file",
        "run",
        "run-shell",
        "kill-pane",
        "killp",
        "kill-window",
        "killw",
        "wait",
        "wait-for",
        "switch",
        "switch-client",
        "detach",
        "detach-client",
        "select-pane",
        "selectp",
        "select-window",
        "selectw",
        "respawn-pane",
        "respawnp",
        "set-buffer",
        "setb",
        "show-buffer",
        "showb",
        "paste-buffer",
        "pasteb",
        "rename-session",
        "rename-window",
        "resize-pane",
        "resize-window",
        "refresh-client",
        "show-options",
        "show",
        "set-environment",
        "setenv",
        "show-environment",
        "showenv",
    ];
    STARTS.contains(&next) || COMMANDS.contains(&next)
}

/// Problems in one file's text.
fn scan(name: &str, src: &str) -> Vec<String> {
    let mut problems = Vec::new();
    if name.ends_with(".rs") {
        for (at, _) in src.match_indices("Command::new(") {
            let stmt = statement(src, at);
            let program = stmt["Command::new(".len()..]
                .split(')')
                .next()
                .unwrap_or("");
            if program.to_ascii_lowercase().contains("tmux") && !names_socket(stmt) {
                let line = src[..at].lines().count() + 1;
                problems.push(format!(
                    "{name}:{line}: tmux started without -L/-S: {}",
                    stmt.lines().next().unwrap_or("")
                ));
            }
        }
    } else {
        for (n, line) in src.lines().enumerate() {
            let code = line.split(" #").next().unwrap_or(line).trim_start();
            if code.starts_with('#') {
                continue;
            }
            let runs_tmux = code
                .split(|c: char| {
                    c.is_whitespace() || c == '(' || c == '[' || c == '\'' || c == '"' || c == ','
                })
                .filter(|t| !t.is_empty())
                .collect::<Vec<_>>()
                .windows(2)
                .any(|w| (w[0] == "tmux" || w[0].ends_with("/tmux")) && is_tmux_invocation(w[1]));
            if runs_tmux && !(code.contains("-L") || code.contains("-S")) {
                problems.push(format!("{name}:{}: tmux run without -L/-S: {line}", n + 1));
            }
        }
    }
    problems
}

#[test]
fn no_test_example_or_bench_runs_tmux_without_a_private_socket() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut files = Vec::new();
    walk(root, root, &mut files);
    assert!(files.len() >= 3, "the scan found almost nothing: {files:?}");
    // Each package's integration tests are one test binary whose modules
    // live in folders (`tests/it/commands/…`): every file of them, however
    // deep, is scanned.
    let mut packages = 0;
    for entry in std::fs::read_dir(root).unwrap() {
        let package = entry.unwrap().path();
        let tests = package.join("tests");
        if !package.join("Cargo.toml").is_file() || !tests.is_dir() {
            continue;
        }
        packages += 1;
        let mut sources = Vec::new();
        rust_files(&tests, &mut sources);
        for source in &sources {
            assert!(
                files.contains(source),
                "the scan missed {}",
                source.display()
            );
        }
    }
    assert!(packages >= 3, "found the tests of only {packages} packages");
    let this = Path::new(file!()).file_name().unwrap();
    let mut problems = Vec::new();
    for f in &files {
        if f.file_name() == Some(this) {
            continue;
        }
        let src = std::fs::read_to_string(f).unwrap_or_default();
        problems.extend(scan(&f.strip_prefix(root).unwrap().to_string_lossy(), &src));
    }
    assert!(
        problems.is_empty(),
        "default tmux server at risk:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_scan_catches_what_it_must() {
    let bad_rs = "let s = std::process::Command::new(\"tmux\").arg(\"kill-server\").status();";
    assert_eq!(scan("x.rs", bad_rs).len(), 1);
    let good_rs = "let s = std::process::Command::new(\"tmux\").arg(\"-S\").arg(&sock).arg(\"kill-server\").status();";
    assert!(scan("x.rs", good_rs).is_empty());
    let multi_line_bad =
        "Command::new(TMUX_BIN)\n    .args([\"new-session\", \"-d\"])\n    .status();";
    assert_eq!(scan("x.rs", multi_line_bad).len(), 1);
    assert_eq!(scan("x.sh", "tmux kill-server\n").len(), 1);
    assert_eq!(scan("x.sh", "  tmux new-session -d -s x\n").len(), 1);
    assert!(scan("x.sh", "tmux -L test-$$ kill-server\n").is_empty());
    assert!(scan("x.sh", "tmux -V\n# tmux kill-server in a comment\n").is_empty());
    assert!(
        scan(
            "x.sh",
            "apt-get install -y tmux openssh-server\ncommand -v tmux >/dev/null\n"
        )
        .is_empty()
    );
    assert_eq!(
        scan("x.py", "subprocess.run(['tmux', 'kill-server'])\n").len(),
        1
    );
    assert!(
        scan(
            "x.py",
            "subprocess.run(['tmux', '-L', name, 'kill-server'])\n"
        )
        .is_empty()
    );
}
