//! Drives tmux inside a container through one `docker exec -i` channel: the
//! container's `tmux -C` client is started by docker, and the library runs
//! the connection over its stdin and stdout (`Tmux::connect_stream`). One
//! process for the whole session, instead of one `docker exec` per
//! keystroke and a `capture-pane` poll to see what happened.
//!
//! ```text
//! cargo run -p tmux-control --example docker_exec -- CONTAINER [COMMAND]
//! ```
//!
//! The container needs tmux. The example uses its own socket name inside
//! the container (`-L tmux-control-example`), never the container's default
//! server, and kills that server at the end.

use std::process::Stdio;
use std::time::Duration;

use tmux_control::command::{NewWindow, Raw};
use tmux_control::{ConnectOptions, Pattern, Tmux};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let Some(container) = args.next() else {
        eprintln!("usage: docker_exec CONTAINER [COMMAND]");
        std::process::exit(2);
    };
    let command = args.next().unwrap_or_else(|| "uname -a".to_owned());

    let mut child = tokio::process::Command::new("docker")
        .args(["exec", "-i", &container])
        // Its own socket name (-L), never the container's default server.
        .args(["tmux", "-L", "tmux-control-example"])
        .args(["-C", "new-session", "-A", "-s", "example"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()?;
    let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
        return Err("docker exec gave no pipes".into());
    };
    let tmux = Tmux::connect_stream(
        stdout,
        stdin,
        format!("docker {container}"),
        ConnectOptions::default(),
    )
    .await?;
    println!("tmux {} in container {container}", tmux.version());

    // The command's output, from its first byte, pushed as it arrives.
    let started = tmux
        .spawn(NewWindow::new().command(format!("{command}; echo '--- done'; exec sleep 60")))
        .await?;
    started
        .output
        .expect_from(Pattern::literal("--- done"), started.start)
        .wait(Duration::from_secs(30))
        .await?;
    let (_, bytes) = started.output.read_from(started.start, 1 << 20);
    let mut text = Vec::new();
    tmux_control::PlainText::new().feed(&bytes, &mut text);
    print!("{}", String::from_utf8_lossy(&text));

    let _ = tmux.run(Raw::new("kill-server")).await;
    let _ = child.wait().await;
    Ok(())
}
