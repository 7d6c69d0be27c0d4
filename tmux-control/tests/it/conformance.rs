//! Conformance: every transcript recorded from real tmux (3.3a and every
//! version under `other-versions/`) decodes to exactly the events of its
//! `.events.jsonl` sidecar, every field and every byte; the decoded `%output`
//! streams of 06 and 07 equal their `.pane0.bin` files.
//!
//! The fixtures are read at run time from `tests/fixtures/control-mode` in
//! this crate, where the repository carries them (override with
//! `TMUX_CONTROL_FIXTURES`). A missing folder fails the test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};

use bytes::Bytes;
use serde_json::{Value, json};
use tmux_control::proto::{DecodeError, Decoder, Frame, Mode, Notification};

fn fixtures_root() -> PathBuf {
    let root = std::env::var_os("TMUX_CONTROL_FIXTURES")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/control-mode")
        });
    assert!(
        root.join("01-attach-new-session.bin").is_file(),
        "control-mode fixtures not found at {} (set TMUX_CONTROL_FIXTURES)",
        root.display()
    );
    root
}

/// Every transcript's `.bin` (not the `.stdin.bin` or `.pane0.bin` sidecars).
fn transcripts() -> Vec<PathBuf> {
    let root = fixtures_root();
    let mut dirs = vec![root.clone()];
    let mut others: Vec<PathBuf> = std::fs::read_dir(root.join("other-versions"))
        .expect("other-versions folder")
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    others.sort();
    assert!(
        others.len() >= 5,
        "expected the other-versions folders, found {others:?}"
    );
    dirs.extend(others);
    let mut out = Vec::new();
    for dir in dirs {
        let mut bins: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| {
                let name = p.file_name().unwrap().to_string_lossy().into_owned();
                name.ends_with(".bin") && name.matches('.').count() == 1
            })
            .collect();
        bins.sort();
        out.extend(bins);
    }
    out
}

fn mode_of(data: &[u8]) -> Mode {
    if data.starts_with(b"\x1bP1000p") {
        Mode::Dcs
    } else {
        Mode::Plain
    }
}

fn text(b: &Bytes) -> Value {
    Value::String(String::from_utf8(b.to_vec()).expect("field is UTF-8 in the fixtures"))
}

fn text_or_hex(obj: &mut serde_json::Map<String, Value>, key: &str, b: &Bytes) {
    match std::str::from_utf8(b) {
        Ok(s) => obj.insert(key.into(), Value::String(s.into())),
        Err(_) => obj.insert(format!("{key}_hex"), Value::String(hex(b))),
    };
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn opt_num(v: Option<u32>) -> Value {
    v.map_or(Value::Null, |n| json!(n))
}

/// The sidecar's JSON form of one frame.
fn event(frame: &Frame) -> Value {
    use Notification as N;
    match frame {
        Frame::Reply(r) => {
            let mut o = json!({"type": "reply", "time": r.time, "number": r.number, "flags": r.flags, "error": r.error});
            let strings: Option<Vec<&str>> =
                r.body.iter().map(|l| std::str::from_utf8(l).ok()).collect();
            match strings {
                Some(s) => o["body"] = json!(s),
                None => o["body_hex"] = json!(r.body.iter().map(|l| hex(l)).collect::<Vec<_>>()),
            }
            o
        }
        Frame::Stray(line) => {
            let mut o = serde_json::Map::new();
            o.insert("type".into(), json!("stray"));
            text_or_hex(&mut o, "line", line);
            Value::Object(o)
        }
        Frame::DcsStart => json!({"type": "dcs-start"}),
        Frame::DcsEnd => json!({"type": "dcs-end"}),
        Frame::Notification(n) => {
            let ty = String::from_utf8_lossy(n.name()).into_owned();
            let mut o = match n {
                N::Output { pane, data } => json!({"pane": pane.0, "data_hex": hex(data)}),
                N::ExtendedOutput {
                    pane,
                    age_ms,
                    extra,
                    data,
                } => json!({"pane": pane.0, "age_ms": age_ms, "data_hex": hex(data),
                    "extra": extra.iter().map(text).collect::<Vec<_>>()}),
                N::Pause { pane } | N::Continue { pane } | N::PaneModeChanged { pane } => {
                    json!({"pane": pane.0})
                }
                N::WindowAdd { window }
                | N::UnlinkedWindowAdd { window }
                | N::WindowClose { window }
                | N::UnlinkedWindowClose { window } => json!({"window": window.0}),
                N::WindowRenamed { window, name } | N::UnlinkedWindowRenamed { window, name } => {
                    json!({"window": window.0, "name": text(name)})
                }
                N::WindowPaneChanged { window, pane } => {
                    json!({"window": window.0, "pane": pane.0})
                }
                N::LayoutChange {
                    window,
                    layout,
                    visible_layout,
                    flags,
                } => json!({"window": window.0, "layout": text(layout),
                    "visible_layout": visible_layout.as_ref().map(text),
                    "flags": flags.as_ref().map(text)}),
                N::SessionChanged { session, name } | N::SessionRenamed { session, name } => {
                    json!({"session": session.0, "name": text(name)})
                }
                N::ClientSessionChanged {
                    client,
                    session,
                    name,
                } => json!({"client": text(client), "session": session.0, "name": text(name)}),
                N::ClientDetached { client } => json!({"client": text(client)}),
                N::SessionsChanged => json!({}),
                N::SessionWindowChanged { session, window } => {
                    json!({"session": session.0, "window": window.0})
                }
                N::SubscriptionChanged {
                    name,
                    session,
                    window,
                    window_index,
                    pane,
                    extra,
                    value,
                } => json!({"name": text(name), "session": opt_num(session.map(|s| s.0)),
                    "window": opt_num(window.map(|w| w.0)), "window_index": opt_num(*window_index),
                    "pane": opt_num(pane.map(|p| p.0)), "extra": extra.iter().map(text).collect::<Vec<_>>(),
                    "value": text(value)}),
                N::Exit { reason } => json!({"reason": reason.as_ref().map(text)}),
                N::ConfigError { text: t } | N::Message { text: t } => json!({"text": text(t)}),
                N::PasteBufferChanged { name } | N::PasteBufferDeleted { name } => {
                    json!({"name": text(name)})
                }
                N::Other { name, args } => {
                    let mut line = b"%".to_vec();
                    line.extend_from_slice(name);
                    if !args.is_empty() {
                        line.push(b' ');
                        line.extend_from_slice(args);
                    }
                    return json!({"type": "unknown", "line": String::from_utf8_lossy(&line)});
                }
                other => panic!("no sidecar form for {other:?}"),
            };
            o["type"] = Value::String(ty);
            o
        }
        other => panic!("no sidecar form for {other:?}"),
    }
}

/// Decodes the whole input, chunked as given; fails on any frame error.
fn decode_all(data: &[u8], mode: Mode, chunk: usize) -> Vec<Frame> {
    let mut dec = Decoder::with_mode(mode);
    let mut frames = Vec::new();
    for piece in data.chunks(chunk.max(1)) {
        dec.push(piece);
        loop {
            match dec.decode() {
                Ok(f) => frames.push(f),
                Err(DecodeError::Incomplete) => break,
                Err(DecodeError::Failed(e)) => panic!("frame error: {e}"),
            }
        }
    }
    dec.finish().expect("stream ends cleanly");
    frames
}

#[test]
fn every_transcript_matches_its_sidecar() {
    let files = transcripts();
    assert!(
        files.len() >= 27 + 5 * 7,
        "too few transcripts: {}",
        files.len()
    );
    let mut events_checked = 0;
    for bin in &files {
        let data = std::fs::read(bin).unwrap();
        let sidecar = bin.with_extension("events.jsonl");
        let expected: Vec<Value> = std::fs::read_to_string(&sidecar)
            .unwrap_or_else(|e| panic!("{}: {e}", sidecar.display()))
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let got: Vec<Value> = decode_all(&data, mode_of(&data), usize::MAX)
            .iter()
            .map(event)
            .collect();
        for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
            assert_eq!(g, e, "{}: event {i} differs", bin.display());
        }
        assert_eq!(got.len(), expected.len(), "{}: event count", bin.display());
        events_checked += got.len();
    }
    assert!(events_checked > 700, "only {events_checked} events checked");
}

#[test]
fn chunking_does_not_change_the_frames() {
    for bin in transcripts() {
        let data = std::fs::read(&bin).unwrap();
        let whole = decode_all(&data, mode_of(&data), usize::MAX);
        for chunk in [1, 2, 3, 7, 64, 4096] {
            assert_eq!(
                decode_all(&data, mode_of(&data), chunk),
                whole,
                "{} with {chunk}-byte chunks",
                bin.display()
            );
        }
    }
}

#[test]
fn decoded_pane_output_equals_the_recorded_stream() {
    let root = fixtures_root();
    for name in ["06-output-bytes", "07-output-burst"] {
        let data = std::fs::read(root.join(format!("{name}.bin"))).unwrap();
        let expected = std::fs::read(root.join(format!("{name}.pane0.bin"))).unwrap();
        let mut got = Vec::new();
        for frame in decode_all(&data, Mode::Plain, 4096) {
            if let Frame::Notification(Notification::Output { pane, data }) = frame
                && pane.0 == 0
            {
                got.extend_from_slice(&data);
            }
        }
        assert_eq!(got.len(), expected.len(), "{name}: length");
        assert!(got == expected, "{name}: decoded bytes differ");
    }
}
