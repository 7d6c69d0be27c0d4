//! The wrapped form of the `run` tool, for shells without shell
//! integration (sh, dash, ksh, or any shell when integration is off).
//!
//! The command is typed into the pane's shell between two OSC 133 marks
//! that carry a fresh nonce, in the same form the library's shell hooks
//! use, so one [`ShellTracker`](tmux_control::shell::ShellTracker) reads both:
//!
//! ```text
//!  printf '\033]133;C;nonce=N\007'; eval 'COMMAND'; printf '\033]133;D;%s;nonce=N\007' "$?"
//! ```
//!
//! The shell echoes the line as typed, with `\033` as four visible
//! characters and `%s` unexpanded, so the echo can never look like a mark:
//! only the bytes `printf` writes (a real ESC, a real number) can. `eval`
//! runs the command in the current shell (so `cd` and variables persist)
//! and keeps a trailing `&`, `;` or `# comment` in the command from
//! breaking the wrapper. The line starts with a space so that shells set
//! to ignore such lines keep it out of their history.
//!
//! fish (with its integration off) gets the same line in its own syntax:
//! the status is `$status` (fish refuses `$?` as an error, and would run
//! nothing), and inside single quotes a backslash and a quote are escaped
//! with a backslash.

/// The line typed for `command`, marked with `nonce` (hex digits), for a
/// POSIX shell, or for fish when `fish` is true.
pub(crate) fn wrapper_line(command: &str, nonce: &str, fish: bool) -> String {
    let (quoted, status) = if fish {
        (command.replace('\\', r"\\").replace('\'', r"\'"), "$status")
    } else {
        (command.replace('\'', r"'\''"), "$?")
    };
    format!(
        " printf '\\033]133;C;nonce={nonce}\\007'; eval '{quoted}'; printf '\\033]133;D;%s;nonce={nonce}\\007' \"{status}\""
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use tmux_control::shell::{ShellEvent, ShellTracker};

    const N: &str = "0123456789abcdef";

    #[test]
    fn the_echo_never_matches_and_the_printed_marks_do() {
        let line = wrapper_line("echo hi; exit 7 # x", N, false);
        assert!(line.starts_with(" printf '\\033]133;C;"));
        assert!(line.contains("eval 'echo hi; exit 7 # x'"));
        let mut t = ShellTracker::new(N, 0);
        assert!(t.feed(0, line.as_bytes()).is_empty());
        // What the two printf calls write, around the command's output.
        let printed = format!("\x1b]133;C;nonce={N}\x07hi\r\n\x1b]133;D;7;nonce={N}\x07");
        let at = line.len() as u64;
        let events = t.feed(at, printed.as_bytes());
        let Some(ShellEvent::Finished(f)) = events.last() else {
            panic!("{events:?}")
        };
        assert_eq!(f.status, Some(7));
        let out = &printed.as_bytes()[(f.output_start - at) as usize..(f.output_end - at) as usize];
        assert_eq!(out, b"hi\r\n");
    }

    #[test]
    fn quotes_in_commands() {
        assert!(wrapper_line("echo 'a'", N, false).contains(r"eval 'echo '\''a'\'''"));
        let fish = wrapper_line(r"echo 'a\b'", N, true);
        assert!(fish.contains(r"eval 'echo \'a\\b\''"), "{fish}");
        assert!(fish.ends_with("\"$status\""), "{fish}");
    }
}
