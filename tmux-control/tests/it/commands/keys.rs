//! Keys: `send-keys` literal, named and hex keys arrive at the pane's
//! program byte for byte, every control key the library accepts, and the
//! keys seen again through the followed output.

use std::time::Duration;

use super::{command_error, connect, eventually, invalid, read_file, sink, wait_command};
use crate::common::bounded;
use tmux_control::command::{CapturePane, Key, NamedKey, NewWindow, SendKeys};
use tmux_control::{IsolatedServer, PaneId, Pattern};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn send_keys_literal_named_and_hex_arrive_exactly() {
    let iso = IsolatedServer::new().unwrap();
    bounded(async {
        let (tmux, _) = connect(&iso).await;
        let file = iso.dir().join("keys.bin");
        let pane = sink(&tmux, &file).await;
        let mut expected = Vec::new();

        let text = "-x ;#{pane_id} $HOME ~ 'q' \"d\" \\ é ✓ 日本 😀 %1 ;";
        tmux.run(SendKeys::literal(pane, text)).await.unwrap();
        expected.extend_from_slice(text.as_bytes());

        let keys: Vec<(Key, &[u8])> = vec![
            (Key::ENTER, b"\r"),
            (Key::TAB, b"\t"),
            (Key::ESCAPE, b"\x1b"),
            (Key::BACKSPACE, b"\x7f"),
            (Key::SPACE, b" "),
            (Key::char(';').unwrap(), b";"),
            (Key::char('é').unwrap(), "é".as_bytes()),
            (Key::ctrl('c').unwrap(), b"\x03"),
            (Key::ctrl('A').unwrap(), b"\x01"),
            (Key::meta('x').unwrap(), b"\x1bx"),
            (Key::UP, b"\x1b[A"),
            (Key::DOWN, b"\x1b[B"),
            (Key::RIGHT, b"\x1b[C"),
            (Key::LEFT, b"\x1b[D"),
            (NamedKey::Home.into(), b"\x1b[1~"),
            (NamedKey::End.into(), b"\x1b[4~"),
            (NamedKey::Insert.into(), b"\x1b[2~"),
            (NamedKey::Delete.into(), b"\x1b[3~"),
            (NamedKey::PageUp.into(), b"\x1b[5~"),
            (NamedKey::PageDown.into(), b"\x1b[6~"),
            (NamedKey::BackTab.into(), b"\x1b[Z"),
            (NamedKey::F1.into(), b"\x1bOP"),
            (NamedKey::F4.into(), b"\x1bOS"),
            (NamedKey::F5.into(), b"\x1b[15~"),
            (NamedKey::F12.into(), b"\x1b[24~"),
            (Key::UP.with_shift(), b"\x1b[1;2A"),
            (Key::LEFT.with_ctrl().unwrap(), b"\x1b[1;5D"),
            ("M-Right".parse().unwrap(), b"\x1b[1;3C"),
            ("C-M-x".parse().unwrap(), b"\x1b\x18"),
        ];
        for (key, bytes) in &keys {
            // One command per key, so a wrong byte sequence names its key.
            let from = expected.len();
            tmux.run(SendKeys::keys(pane, [*key])).await.unwrap();
            expected.extend_from_slice(bytes);
            let got = read_file(&file, expected.len()).await;
            assert_eq!(
                String::from_utf8_lossy(&got[from..]),
                String::from_utf8_lossy(bytes),
                "key {key}"
            );
        }
        // Every printable ASCII character and some others as a key, alone
        // and with Meta, in one command.
        let chars: Vec<char> = (b'!'..=b'~')
            .map(char::from)
            .chain("é日😀".chars())
            .collect();
        let mut keys_sent = Vec::new();
        let from = expected.len();
        for &c in &chars {
            let key = Key::char(c).unwrap();
            keys_sent.extend([key, key.with_meta()]);
            let mut utf8 = [0; 4];
            let utf8 = c.encode_utf8(&mut utf8).as_bytes();
            expected.extend_from_slice(utf8);
            expected.push(0x1b);
            expected.extend_from_slice(utf8);
        }
        tmux.run(SendKeys::keys(pane, keys_sent)).await.unwrap();
        let got = read_file(&file, expected.len()).await;
        assert_eq!(
            String::from_utf8_lossy(&got[from..]),
            String::from_utf8_lossy(&expected[from..])
        );
        // Ctrl with the characters that have a control byte.
        let ctrl: &[(char, u8)] = &[
            ('@', 0x00),
            (' ', 0x00),
            ('2', 0x00),
            ('[', 0x1b),
            ('\\', 0x1c),
            (']', 0x1d),
            ('^', 0x1e),
            ('6', 0x1e),
            ('_', 0x1f),
            ('-', 0x1f),
            ('/', 0x1f),
            ('?', 0x7f),
            ('z', 0x1a),
            ('M', 0x0d),
        ];
        let from = expected.len();
        tmux.run(SendKeys::keys(
            pane,
            ctrl.iter().map(|&(c, _)| Key::ctrl(c).unwrap()),
        ))
        .await
        .unwrap();
        expected.extend(ctrl.iter().map(|&(_, b)| b));
        let got = read_file(&file, expected.len()).await;
        assert_eq!(got[from..], expected[from..]);

        // Several keys in one command.
        tmux.run(SendKeys::keys(pane, keys.iter().map(|(k, _)| *k)))
            .await
            .unwrap();
        for (_, bytes) in &keys {
            expected.extend_from_slice(bytes);
        }

        // Exact bytes, invalid UTF-8 and controls included, also chunked.
        let raw = b"\x00\x01\r\n\xff\xfe\xc3(\x1b[31m\x7f".to_vec();
        tmux.run(SendKeys::hex(pane, &raw)).await.unwrap();
        expected.extend_from_slice(&raw);
        let long: Vec<u8> = (0..=255u8).rev().collect();
        for cmd in SendKeys::hex_chunks(pane, &long, 100) {
            tmux.run(cmd).await.unwrap();
        }
        expected.extend_from_slice(&long);

        assert_eq!(read_file(&file, expected.len()).await, expected);

        // Refused before anything is sent.
        invalid(tmux.run(SendKeys::literal(pane, "a\nb")).await);
        invalid(tmux.run(SendKeys::literal(pane, "tab\there")).await);
        invalid(tmux.run(SendKeys::keys(pane, [])).await);
        invalid(tmux.run(SendKeys::hex(pane, b"")).await);
        command_error(
            tmux.run(SendKeys::literal(PaneId(9999), "x")).await,
            "send-keys",
        );
        assert_eq!(read_file(&file, expected.len()).await, expected);
    })
    .await;
}

/// Every Ctrl key the library accepts reaches the pane as a byte; the
/// characters tmux would silently drop are refused up front.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_ctrl_key_the_library_accepts_reaches_the_pane() {
    let iso = IsolatedServer::new().unwrap();
    bounded(async {
        let (tmux, _) = connect(&iso).await;
        let file = iso.dir().join("ctrl.bin");
        let pane = sink(&tmux, &file).await;
        let mut len = 0;
        let mut lost = Vec::new();
        let mut refused = Vec::new();
        for c in "abz@[\\]^_? !#()+,-.:;<=>'`/0123456789".chars() {
            let key = match Key::ctrl(c) {
                Ok(key) => key,
                Err(tmux_control::Error::InvalidArgument(_)) => {
                    refused.push(c);
                    continue;
                }
                Err(e) => panic!("{e}"),
            };
            // The key, then a marker byte.
            tmux.run(SendKeys::keys(pane, [key])).await.unwrap();
            tmux.run(SendKeys::hex(pane, b"|")).await.unwrap();
            let got = eventually("the marker", || async {
                std::fs::read(&file)
                    .ok()
                    .filter(|b| b.len() > len && b.ends_with(b"|"))
            })
            .await;
            if got.len() == len + 1 {
                lost.push(key.to_string());
            }
            len = got.len();
        }
        assert!(
            lost.is_empty(),
            "accepted but nothing reached the pane: {lost:?}"
        );
        assert_eq!(refused.iter().collect::<String>(), "!#()+,.:;<=>'`01345789");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn send_keys_seen_through_the_followed_output() {
    let iso = IsolatedServer::new().unwrap();
    bounded(async {
        let (tmux, _) = connect(&iso).await;
        // `cat -vT` prints what it reads once a line is complete, control
        // characters (TAB included) in ^X notation; the terminal does not
        // echo.
        let created = tmux
            .run(NewWindow::new().command("stty -echo; exec cat -vT"))
            .await
            .unwrap();
        let pane = created.pane;
        wait_command(&tmux, pane, "cat").await;
        let out = tmux.follow(pane).await.unwrap();

        let text = "lit ;#{pane_id} $HOME 'q' \"d\" \\ ~";
        let wait = out.expect(Pattern::literal(&format!("{text}^A^[[A^I|")));
        tmux.run(SendKeys::literal(pane, text)).await.unwrap();
        tmux.run(SendKeys::keys(
            pane,
            [Key::ctrl('a').unwrap(), Key::UP, Key::TAB],
        ))
        .await
        .unwrap();
        tmux.run(SendKeys::hex(pane, b"|\r")).await.unwrap();
        let m = wait.wait(Duration::from_secs(10)).await.unwrap();
        assert!(m.after.starts_with('\n') || m.after.is_empty(), "{m:?}");

        // The same line is on the screen.
        let screen = tmux.run(CapturePane::new(pane)).await.unwrap();
        assert_eq!(
            String::from_utf8_lossy(&screen[0]),
            format!("{text}^A^[[A^I|")
        );
    })
    .await;
}
