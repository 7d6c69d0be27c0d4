//! The emulated screen (feature `emulator`) against tmux's own
//! (`capture-pane -p` and the cursor) after real programs in a real pane:
//! a shell with prompts, colours and a `\r` progress bar, wide CJK, emoji
//! and combining marks, `seq` scrolling, `tput` cursor motion and a scroll
//! region, `less`, `vim`, `top -b`, `ls --color`, long wrapped lines, a
//! resize (tmux reflows), and a pane followed when it already had content
//! (seeded from tmux). Every differing cell is listed in the failure.

use std::time::Duration;

use tmux_control::command::{CapturePane, DisplayMessage, NewWindow, ResizeWindow, SendKeys};
use tmux_control::{IsolatedServer, PaneOutput, Pattern, Tmux};

use crate::common::{bounded, ok};

/// The shell every case runs: no rc files, a fixed prompt, a private HOME.
fn shell(home: &std::path::Path) -> String {
    format!(
        "env -i HOME='{}' TERM=\"$TERM\" PATH=/usr/bin:/bin LANG=C.UTF-8 PS1='fid$ ' bash --norc --noprofile",
        home.display()
    )
}

struct Pane {
    tmux: Tmux,
    out: PaneOutput,
    n: usize,
}

impl Pane {
    /// Types `line` and Enter, then waits for its end marker and a quiet
    /// moment (the prompt drawn).
    async fn run(&mut self, line: &str) {
        self.n += 1;
        // The marker is split in the command line, so only the output has it whole.
        let marker = format!("fid-done-{}", self.n);
        let split = format!("fid-do''ne-{}", self.n);
        let done = self.out.expect(Pattern::literal(&marker));
        self.keys(&format!("{line}; printf '%s\\n' {split}")).await;
        done.wait(Duration::from_secs(30)).await.unwrap();
        self.quiet().await;
    }

    /// Types `text` then Enter, without waiting for anything but quiet.
    async fn keys(&self, text: &str) {
        let pane = self.out.pane();
        self.tmux.run(SendKeys::literal(pane, text)).await.unwrap();
        self.tmux.run(SendKeys::hex(pane, [b'\r'])).await.unwrap();
    }

    /// Types `text` without Enter and waits for quiet.
    async fn type_only(&self, text: &str) {
        self.tmux
            .run(SendKeys::literal(self.out.pane(), text))
            .await
            .unwrap();
        self.quiet().await;
    }

    async fn quiet(&self) {
        // A true timer: the programs here draw in well under 300 ms.
        self.out
            .wait_idle(Duration::from_millis(300), Duration::from_secs(30))
            .await
            .unwrap();
    }

    /// Compares the emulated screen with tmux's, cell by cell; returns
    /// every difference.
    async fn differences(&self, case: &str) -> Vec<String> {
        let pane = self.out.pane();
        let cursor = DisplayMessage::format("#{cursor_x} #{cursor_y}").target(pane);
        loop {
            let before = self.out.end_offset();
            let emulated = self
                .out
                .emulated_screen()
                .unwrap_or_else(|| panic!("{case}: the emulator is not in sync"));
            let (lines, at) = tokio::join!(
                self.tmux.run(CapturePane::new(pane)),
                self.tmux.run(cursor.clone())
            );
            if self.out.end_offset() != before || emulated.offset != before {
                continue; // the pane wrote meanwhile: compare again
            }
            let tmux: Vec<String> = lines
                .unwrap()
                .iter()
                .map(|l| String::from_utf8_lossy(l).into_owned())
                .collect();
            let mut diffs = Vec::new();
            let rows = tmux.len().max(emulated.lines.len());
            for row in 0..rows {
                let t: Vec<char> = tmux.get(row).map_or(vec![], |l| l.chars().collect());
                let e: Vec<char> = emulated
                    .lines
                    .get(row)
                    .map_or(vec![], |l| l.chars().collect());
                for col in 0..t.len().max(e.len()) {
                    let (a, b) = (t.get(col), e.get(col));
                    if a != b {
                        diffs.push(format!(
                            "{case}: row {row} cell {col}: tmux {a:?}, emulator {b:?} \
                             (tmux row {:?}, emulator row {:?})",
                            tmux.get(row),
                            emulated.lines.get(row)
                        ));
                    }
                }
            }
            let at = String::from_utf8_lossy(&at.unwrap()).trim().to_owned();
            let mine = format!("{} {}", emulated.cursor_x, emulated.cursor_y);
            if at != mine {
                diffs.push(format!("{case}: cursor: tmux {at}, emulator {mine}"));
            }
            return diffs;
        }
    }
}

/// A pane at 80×24 on an isolated server running the shell, followed
/// from before its first byte.
async fn pane(server: &IsolatedServer) -> Pane {
    let tmux = Tmux::connect(server.server()).await.unwrap();
    let started = tmux
        .spawn(NewWindow::new().command(shell(server.dir())))
        .await
        .unwrap();
    tmux.run(ResizeWindow::new(started.window).size(80, 24))
        .await
        .unwrap();
    let p = Pane {
        tmux,
        out: started.output,
        n: 0,
    };
    p.quiet().await;
    p
}

fn files(dir: &std::path::Path) {
    let text: String = (1..=300)
        .map(|i| format!("line {i} of the text\n"))
        .collect();
    std::fs::write(dir.join("text"), text).unwrap();
    let d = dir.join("lsdir");
    std::fs::create_dir_all(d.join("sub")).unwrap();
    for f in ["a.tar.gz", "b.png", "plain"] {
        std::fs::write(d.join(f), "x").unwrap();
    }
    std::fs::write(d.join("run.sh"), "#!/bin/sh\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(d.join("run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::symlink("a.tar.gz", d.join("link")).unwrap();
}

fn have(program: &str) -> bool {
    std::process::Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .stdout(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shell_programs_match_tmux_cell_for_cell() {
    bounded(async {
        let server = IsolatedServer::new().unwrap();
        files(server.dir());
        let mut p = pane(&server).await;
        let mut diffs = p.differences("prompt").await;
        let cases: &[(&str, &str)] = &[
            ("echo", "echo hello; cd /tmp"),
            (
                "colours",
                r"printf '\033[1;31mred\033[0m \033[38;5;208m256\033[0m \033[48;2;1;2;3mtrue\033[0m \033[4;7munder\033[0m\n'",
            ),
            (
                "progress",
                r"for i in 1 2 3 4 5; do printf '\r[%-10s] %3d%%' $(printf '#%.0s' $(seq $((i*2)))) $((i*20)); sleep 0.02; done; echo",
            ),
            ("wide", r"printf '漢字かな混じり 😀 é cafe\u0301 end\n'"),
            ("wide-at-edge", r"printf '%079d漢x\n' 0"),
            ("tab", r"printf 'a\tb\tc\n12345678\tx\n'"),
            ("seq", "seq 1 200"),
            (
                "tput",
                "tput cup 5 10; printf X; tput cup 2 3; printf Y; tput el; tput cup 12 0",
            ),
            (
                "scroll-region",
                r"printf '\033[3;10r\033[10;1H\nscrolled\n\n\n\033[r\033[20;1H'",
            ),
            ("wrap", r"printf '%0200d\n' 7; printf 'abc%077dZ\rq\n' 1"),
            ("ls", "ls --color=always -la ~/lsdir | sed 's/ [A-Z][a-z][a-z] .. ..:.. / DATE /'"),
            ("top", "top -b -n1 -w 80 | head -30"),
            ("clear", "clear"),
        ];
        for (case, line) in cases {
            p.run(line).await;
            diffs.extend(p.differences(case).await);
        }

        // A readline edit with cursor motion (left arrow, insert).
        p.type_only("echo abd").await;
        p.tmux
            .run(SendKeys::hex(p.out.pane(), *b"\x1b[D"))
            .await
            .unwrap();
        p.type_only("c").await;
        diffs.extend(p.differences("readline-edit").await);
        p.run("").await;

        // Full-screen programs on the alternate screen.
        p.keys("less ~/text").await;
        p.quiet().await;
        diffs.extend(p.differences("less").await);
        p.type_only(" ").await;
        diffs.extend(p.differences("less-page").await);
        p.type_only("q").await;
        diffs.extend(p.differences("less-quit").await);
        if have("vim") {
            p.keys("vim -u NONE -N -i NONE ~/text").await;
            p.quiet().await;
            diffs.extend(p.differences("vim").await);
            p.keys(":set number").await;
            p.quiet().await;
            p.type_only("5Gdd").await;
            diffs.extend(p.differences("vim-edit").await);
            p.keys(":q!").await;
            p.quiet().await;
            diffs.extend(p.differences("vim-quit").await);
        }

        // A resize: tmux reflows wrapped lines, and so does the emulator.
        p.run(r"clear; printf '%0150d\n' 9; seq 1 3").await;
        p.tmux
            .run(ResizeWindow::new(p.out.pane()).size(60, 20))
            .await
            .unwrap();
        p.quiet().await;
        diffs.extend(p.differences("resize-narrower").await);
        p.run("seq 1 30").await;
        diffs.extend(p.differences("after-resize").await);
        p.tmux
            .run(ResizeWindow::new(p.out.pane()).size(100, 30))
            .await
            .unwrap();
        p.quiet().await;
        diffs.extend(p.differences("resize-wider").await);

        assert_no_differences(&diffs);
    })
    .await;
}

/// Fails with every differing cell listed.
fn assert_no_differences(diffs: &[String]) {
    assert!(
        diffs.is_empty(),
        "{} cells differ:\n{}",
        diffs.len(),
        diffs.join("\n")
    );
}

/// An 80×24 pane running `draw`, followed only once `draw` has signalled
/// `drawn` (so the emulator starts from tmux's seed, not from the bytes).
async fn followed_after_drawing(server: &IsolatedServer, draw: &str) -> Pane {
    let tmux = Tmux::connect(server.server()).await.unwrap();
    let window = tmux.run(NewWindow::new().command(draw)).await.unwrap();
    tmux.run(ResizeWindow::new(window.window).size(80, 24))
        .await
        .unwrap();
    ok(&tmux, "wait-for drawn").await;
    let out = tmux.follow(window.pane).await.unwrap();
    Pane { tmux, out, n: 0 }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pane_followed_mid_stream_is_seeded_from_tmux() {
    bounded(async {
        let server = IsolatedServer::new().unwrap();
        // The pane draws colours, a region and a cursor position before it
        // is followed, then signals and waits.
        let draw = r"printf '\033[2J\033[Hbefore \033[1;32mgreen\033[0m 漢字\n\033[5;20Hmiddle\033[3;1H'; tmux -S ${TMUX%%,*} wait-for -S drawn; exec cat";
        let p = followed_after_drawing(&server, draw).await;
        let mut diffs = p.differences("seeded").await;
        // And it goes on from there in order.
        p.type_only("typed after").await;
        diffs.extend(p.differences("after-seed").await);
        assert_no_differences(&diffs);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pane_followed_on_the_alternate_screen_is_right_after_it() {
    bounded(async {
        let server = IsolatedServer::new().unwrap();
        // Normal-screen text, then a full-screen program that is on the
        // alternate screen when the pane is followed, and leaves it on a
        // key: the normal screen must come back as tmux shows it.
        let draw = r"printf 'normal one\nnormal \033[1mtwo\033[0m\n'; printf '\033[?1049h\033[Halt screen'; tmux -S ${TMUX%%,*} wait-for -S drawn; read x; printf '\033[?1049lback\n'; exec cat";
        let p = followed_after_drawing(&server, draw).await;
        let mut diffs = p.differences("seeded-on-alternate").await;
        let back = p.out.expect(Pattern::literal("back"));
        p.tmux
            .run(SendKeys::hex(p.out.pane(), [b'\r']))
            .await
            .unwrap();
        back.wait(Duration::from_secs(10)).await.unwrap();
        p.quiet().await;
        let screen = p.out.emulated_screen().unwrap();
        assert_eq!(&screen.lines[..3], ["normal one", "normal two", "back"]);
        diffs.extend(p.differences("after-alternate").await);
        assert_no_differences(&diffs);
    })
    .await;
}
