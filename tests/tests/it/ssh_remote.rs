//! A remote tmux server over ssh: the test starts its own sshd on loopback
//! (private host key, private authorized_keys, nothing global changed),
//! then drives a tmux server on a private socket through `ssh -T`.
//!
//! `SetEnv SHLVL=1` keeps bash from reading the user's `~/.bashrc` for the
//! remote command (bash does so for ssh sessions only at shell level 1), so
//! a slow or broken shell start-up file cannot make the test hang.
//!
//! Needs `sshd` and `ssh` (scripts/setup installs openssh-server) and root
//! (sshd's privilege separation). It fails, never skips, when they are
//! missing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use tmux_control::{Pattern, Server, Tmux};

struct Sshd {
    child: Child,
    dir: PathBuf,
    port: u16,
    socket: String,
}

impl Sshd {
    fn start() -> Sshd {
        let sshd = ["/usr/sbin/sshd", "/usr/bin/sshd"]
            .into_iter()
            .find(|p| Path::new(p).exists())
            .expect("sshd is not installed (scripts/setup installs openssh-server)");
        let dir = std::env::temp_dir().join(format!("tmux-control-sshd-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let keygen = |path: &Path| {
            let status = Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", "", "-f"])
                .arg(path)
                .status()
                .unwrap();
            assert!(status.success());
        };
        keygen(&dir.join("host_key"));
        keygen(&dir.join("client_key"));
        std::fs::copy(dir.join("client_key.pub"), dir.join("authorized_keys")).unwrap();
        std::fs::create_dir_all("/run/sshd").unwrap();
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let config = format!(
            "Port {port}\nListenAddress 127.0.0.1\nHostKey {d}/host_key\nAuthorizedKeysFile {d}/authorized_keys\n\
             PidFile {d}/sshd.pid\nStrictModes no\nUsePAM no\nPasswordAuthentication no\n\
             KbdInteractiveAuthentication no\nPermitRootLogin prohibit-password\nPubkeyAuthentication yes\nLogLevel ERROR\n\
             SetEnv SHLVL=1\n",
            d = dir.display()
        );
        std::fs::write(dir.join("sshd_config"), config).unwrap();
        let child = Command::new(sshd)
            .args(["-D", "-e", "-f"])
            .arg(dir.join("sshd_config"))
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        // Wait until it accepts connections.
        for _ in 0..200 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                break;
            }
            std::thread::sleep(Duration::from_millis(25));
        }
        let socket = format!("tmux-control-ssh-{}", std::process::id());
        Sshd {
            child,
            dir,
            port,
            socket,
        }
    }

    fn ssh_args(&self) -> Vec<String> {
        vec![
            "-p".into(),
            self.port.to_string(),
            "-i".into(),
            self.dir.join("client_key").display().to_string(),
            "-o".into(),
            "StrictHostKeyChecking=no".into(),
            "-o".into(),
            "UserKnownHostsFile=/dev/null".into(),
            "-o".into(),
            "LogLevel=ERROR".into(),
            "-o".into(),
            "ConnectTimeout=10".into(),
            "root@127.0.0.1".into(),
        ]
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        // The "remote" server runs on this machine: make sure it is gone.
        let _ = Command::new("tmux") // this test's private socket, next line
            .arg("-L")
            .arg(&self.socket)
            .arg("kill-server")
            .stderr(Stdio::null())
            .status();
        // tmux leaves its socket file behind: remove it too.
        use std::os::unix::fs::MetadataExt as _;
        if let Ok(uid) = std::fs::metadata("/proc/self").map(|m| m.uid()) {
            let base = std::env::var_os("TMUX_TMPDIR").unwrap_or_else(|| "/tmp".into());
            let _ = std::fs::remove_file(
                PathBuf::from(base)
                    .join(format!("tmux-{uid}"))
                    .join(&self.socket),
            );
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The absolute path of the first `tmux` on PATH.
fn local_tmux() -> std::path::PathBuf {
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join("tmux")) // a path lookup on PATH, not a tmux invocation
        .find(|p| p.is_file())
        .expect("tmux is on PATH")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_command_and_wait_all_through_ssh() {
    let sshd = Sshd::start();
    // The remote end runs the tmux this test runs with (the first on PATH,
    // as scripts/test-matrix sets it), not whatever sshd's PATH finds.
    let local = local_tmux();
    let server = Server::named(sshd.socket.clone())
        .program(&local)
        .over_ssh(sshd.ssh_args());
    tokio::time::timeout(Duration::from_secs(60), async {
        let tmux = Tmux::connect(&server)
            .await
            .unwrap_or_else(|e| panic!("connect over ssh: {e}"));
        let version = Command::new(&local).arg("-V").output().unwrap();
        let version = String::from_utf8_lossy(&version.stdout).into_owned();
        assert_eq!(
            tmux.version(),
            &tmux_control::Version::parse(&version),
            "the remote tmux is {}",
            local.display()
        );
        let r = tmux
            .raw_line(format!("new-session -d -s remote -P -F '#{{pane_id}}' '{} wait-for go; printf \"over %s\\n\" ssh; sleep 30'", local.display()))
            .await
            .unwrap();
        assert!(!r.error, "{:?}", r.body);
        let pane = String::from_utf8_lossy(&r.body[0]).parse().unwrap();
        let out = tmux.follow(pane).await.unwrap();
        let wait = out.expect(Pattern::literal("over ssh"));
        let r = tmux.raw_line("wait-for -S go").await.unwrap();
        assert!(!r.error);
        let m = wait.wait(Duration::from_secs(20)).await.unwrap();
        assert_eq!(m.text, "over ssh");
        let screen = out.screen().await.unwrap();
        assert!(screen.lines.iter().any(|l| l.contains("over ssh")), "{screen:?}");
        let _ = tmux.raw_line("kill-server").await;
        let closed = tmux.closed().await;
        assert!(closed.stderr.is_empty() || !closed.stderr.contains("denied"), "{closed}");
    })
    .await
    .expect("ssh test timed out");
}
