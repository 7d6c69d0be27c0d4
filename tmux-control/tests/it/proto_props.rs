//! Property tests of the protocol layer: chunking never matters, escaping
//! round-trips, encode/decode round-trips for arbitrary frames, and garbage
//! never panics nor grows memory past the limits.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use bytes::{Bytes, BytesMut};
use proptest::collection::vec;
use proptest::prelude::*;
use tmux_control::proto::{
    DecodeError, Decoder, Encoder, Frame, FrameError, Limits, Mode, Notification, Reply,
    escape_output, unescape_output,
};
use tmux_control::{PaneId, SessionId, WindowId};

/// Bytes biased towards the ones that matter to the framing.
fn interesting_byte() -> impl Strategy<Value = u8> {
    prop_oneof![
        3 => any::<u8>(),
        1 => prop::sample::select(vec![b'%', b' ', b'\\', b'\r', b':', b'-', 0x1b, b'$', b'@', b'0']),
    ]
}

fn bytes_without(forbidden: &'static [u8], max: usize) -> impl Strategy<Value = Bytes> {
    vec(interesting_byte(), 0..max).prop_map(move |v| {
        Bytes::from(
            v.into_iter()
                .filter(|b| !forbidden.contains(b))
                .collect::<Vec<u8>>(),
        )
    })
}

fn rest() -> impl Strategy<Value = Bytes> {
    bytes_without(b"\n", 24)
}

fn word() -> impl Strategy<Value = Bytes> {
    bytes_without(b"\n ", 12)
}

fn word1() -> impl Strategy<Value = Bytes> {
    word().prop_map(|w| {
        if w.is_empty() || &w[..] == b":" {
            Bytes::from_static(b"w")
        } else {
            w
        }
    })
}

fn data() -> impl Strategy<Value = Bytes> {
    vec(any::<u8>(), 0..64).prop_map(Bytes::from)
}

fn pane() -> impl Strategy<Value = PaneId> {
    any::<u32>().prop_map(PaneId)
}

fn window() -> impl Strategy<Value = WindowId> {
    any::<u32>().prop_map(WindowId)
}

fn session() -> impl Strategy<Value = SessionId> {
    any::<u32>().prop_map(SessionId)
}

fn notification() -> impl Strategy<Value = Notification> {
    use Notification as N;
    prop_oneof![
        (pane(), data()).prop_map(|(pane, data)| N::Output { pane, data }),
        (pane(), any::<u64>(), vec(word1(), 0..2), data()).prop_map(
            |(pane, age_ms, extra, data)| N::ExtendedOutput {
                pane,
                age_ms,
                extra,
                data
            }
        ),
        pane().prop_map(|pane| N::Pause { pane }),
        pane().prop_map(|pane| N::Continue { pane }),
        pane().prop_map(|pane| N::PaneModeChanged { pane }),
        window().prop_map(|window| N::WindowAdd { window }),
        window().prop_map(|window| N::UnlinkedWindowAdd { window }),
        window().prop_map(|window| N::WindowClose { window }),
        window().prop_map(|window| N::UnlinkedWindowClose { window }),
        (window(), rest()).prop_map(|(window, name)| N::WindowRenamed { window, name }),
        (window(), rest()).prop_map(|(window, name)| N::UnlinkedWindowRenamed { window, name }),
        (window(), pane()).prop_map(|(window, pane)| N::WindowPaneChanged { window, pane }),
        (
            window(),
            word(),
            prop::option::of((word(), prop::option::of(rest())))
        )
            .prop_map(|(window, layout, v)| N::LayoutChange {
                window,
                layout,
                visible_layout: v.as_ref().map(|v| v.0.clone()),
                flags: v.and_then(|v| v.1),
            }),
        (session(), rest()).prop_map(|(session, name)| N::SessionChanged { session, name }),
        (session(), rest()).prop_map(|(session, name)| N::SessionRenamed { session, name }),
        (word1(), session(), rest()).prop_map(|(client, session, name)| N::ClientSessionChanged {
            client,
            session,
            name
        }),
        word1().prop_map(|client| N::ClientDetached { client }),
        Just(N::SessionsChanged),
        (session(), window())
            .prop_map(|(session, window)| N::SessionWindowChanged { session, window }),
        (
            word1(),
            prop::option::of(session()),
            prop::option::of(window()),
            prop::option::of(any::<u32>()),
            prop::option::of(pane()),
            vec(word1(), 0..2),
            rest()
        )
            .prop_map(
                |(name, session, window, window_index, pane, extra, value)| {
                    N::SubscriptionChanged {
                        name,
                        session,
                        window,
                        window_index,
                        pane,
                        extra,
                        value,
                    }
                }
            ),
        prop::option::of(rest()).prop_map(|reason| N::Exit { reason }),
        rest().prop_map(|text| N::ConfigError { text }),
        rest().prop_map(|text| N::Message { text }),
        rest().prop_map(|name| N::PasteBufferChanged { name }),
        rest().prop_map(|name| N::PasteBufferDeleted { name }),
        (word(), rest()).prop_map(|(name, args)| N::Other { name, args }),
    ]
}

fn reply() -> impl Strategy<Value = Reply> {
    (
        any::<u32>(),
        any::<u32>(),
        0u32..3,
        any::<bool>(),
        vec(rest(), 0..4),
    )
        .prop_map(|(time, number, flags, error, body)| Reply {
            time: i64::from(time),
            number,
            flags,
            error,
            body,
        })
}

fn frame() -> impl Strategy<Value = Frame> {
    prop_oneof![
        3 => notification().prop_map(Frame::Notification),
        2 => reply().prop_map(Frame::Reply),
        // A stray line cannot start with `%` (it would be a notification) or,
        // in -CC, with ESC; keep the generator to lines that can exist.
        1 => rest().prop_map(|l| {
            let start = l.iter().position(|&b| b != b'%' && b != 0x1b).unwrap_or(l.len());
            Frame::Stray(l.slice(start..))
        }),
    ]
}

fn decode_all(dec: &mut Decoder, input: &[u8]) -> Vec<Result<Frame, FrameError>> {
    dec.push(input);
    let mut out = Vec::new();
    loop {
        match dec.decode() {
            Ok(f) => out.push(Ok(f)),
            Err(DecodeError::Incomplete) => return out,
            Err(DecodeError::Failed(e)) => out.push(Err(e)),
        }
    }
}

fn decode_chunked(
    mode: Mode,
    limits: Limits,
    input: &[u8],
    cuts: &[usize],
) -> Vec<Result<Frame, FrameError>> {
    let mut dec = Decoder::with_mode(mode).with_limits(limits);
    let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (input.len() + 1)).collect();
    cuts.sort_unstable();
    let mut out = Vec::new();
    let mut at = 0;
    for cut in cuts.into_iter().chain([input.len()]) {
        out.extend(decode_all(&mut dec, &input[at..cut]));
        at = cut;
    }
    out
}

/// Keeps only frames the encoder accepts, encoding them as one stream.
fn encode_stream(mode: Mode, frames: Vec<Frame>) -> (Vec<Frame>, BytesMut) {
    let enc = Encoder::with_mode(mode);
    let mut wire = BytesMut::new();
    let mut kept = Vec::new();
    if mode == Mode::Dcs {
        enc.encode(&Frame::DcsStart, &mut wire).unwrap();
        kept.push(Frame::DcsStart);
    }
    for f in frames {
        if mode == Mode::Dcs && matches!(f, Frame::Notification(Notification::Exit { .. })) {
            continue; // In -CC an exit ends the DCS; it goes last, below.
        }
        if enc.encode(&f, &mut wire).is_ok() {
            kept.push(f);
        }
    }
    if mode == Mode::Dcs {
        for f in [
            Frame::Notification(Notification::Exit { reason: None }),
            Frame::DcsEnd,
        ] {
            enc.encode(&f, &mut wire).unwrap();
            kept.push(f);
        }
    }
    (kept, wire)
}

/// The transcripts recorded from real tmux 3.3a, 3.7c and next-3.8, read from
/// `tests/fixtures/control-mode` in this crate, where the repository carries
/// them (or from `$TMUX_CONTROL_FIXTURES`, as in the conformance test).
fn fixtures() -> Vec<Vec<u8>> {
    let root = std::env::var_os("TMUX_CONTROL_FIXTURES")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/control-mode")
        });
    let mut out = Vec::new();
    for dir in [
        root.clone(),
        root.join("other-versions/3.7c"),
        root.join("other-versions/next-3.8"),
    ] {
        for e in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            if name.ends_with(".bin") && name.matches('.').count() == 1 {
                out.push(std::fs::read(&p).unwrap());
            }
        }
    }
    assert!(out.len() > 30);
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn escape_round_trips(data in vec(any::<u8>(), 0..512)) {
        let mut wire = BytesMut::new();
        escape_output(&data, &mut wire);
        prop_assert!(!wire.contains(&b'\n') && !wire.contains(&b'\r'));
        prop_assert_eq!(&unescape_output(&wire).unwrap()[..], &data[..]);
    }

    #[test]
    fn frames_round_trip(frames in vec(frame(), 0..12), dcs in any::<bool>(), cuts in vec(any::<usize>(), 0..6)) {
        let mode = if dcs { Mode::Dcs } else { Mode::Plain };
        let total = frames.len();
        let (kept, wire) = encode_stream(mode, frames);
        // The generators aim at encodable frames; most must be kept.
        prop_assert!(kept.len() + total / 2 >= total, "encoder refused too many frames");
        let got = decode_chunked(mode, Limits::default(), &wire, &cuts);
        let got: Vec<Frame> = got.into_iter().map(|r| r.unwrap()).collect();
        prop_assert_eq!(got, kept);
    }

    #[test]
    fn transcript_splits_do_not_matter(which in any::<prop::sample::Index>(), cuts in vec(any::<usize>(), 1..40)) {
        let all = fixtures();
        let data = which.get(&all);
        let mode = if data.starts_with(b"\x1bP1000p") { Mode::Dcs } else { Mode::Plain };
        let whole = decode_chunked(mode, Limits::default(), data, &[]);
        prop_assert_eq!(decode_chunked(mode, Limits::default(), data, &cuts), whole);
    }

    #[test]
    fn garbage_never_panics_and_stays_bounded(
        chunks in vec(vec(prop_oneof![
            4 => interesting_byte(),
            1 => Just(b'\n'),
        ], 0..300), 0..40),
        prefix in prop::sample::select(vec![&b""[..], b"%begin 1 2 1\n", b"\x1bP1000p", b"%output %1 "]),
        dcs in any::<bool>(),
    ) {
        let limits = Limits::default().max_line(128).max_block(512);
        let mode = if dcs { Mode::Dcs } else { Mode::Plain };
        let mut dec = Decoder::with_mode(mode).with_limits(limits);
        dec.push(prefix);
        for chunk in &chunks {
            let _ = decode_all(&mut dec, chunk);
            prop_assert!(dec.buffered() <= limits.max_line + limits.max_block,
                "holding {} bytes", dec.buffered());
        }
        let _ = dec.finish();
        prop_assert_eq!(dec.buffered(), 0);
    }
}

#[test]
fn oversized_line_fails_one_frame_then_resyncs() {
    let limits = Limits::default().max_line(100);
    for chunk in [1usize, 7, 1000] {
        let mut input = b"%output %1 ".to_vec();
        input.extend(std::iter::repeat_n(b'x', 500));
        input.extend_from_slice(b"\n%sessions-changed\n");
        let got = decode_chunked(
            Mode::Plain,
            limits,
            &input,
            &(0..input.len()).step_by(chunk).collect::<Vec<_>>(),
        );
        assert_eq!(got.len(), 2, "{got:?}");
        assert_eq!(got[0], Err(FrameError::LineTooLong { limit: 100 }));
        assert_eq!(
            got[1],
            Ok(Frame::Notification(Notification::SessionsChanged))
        );
    }
}

#[test]
fn oversized_block_keeps_its_header() {
    let limits = Limits::default().max_line(100).max_block(200);
    let mut input = b"%begin 5 6 1\n".to_vec();
    for _ in 0..10 {
        input.extend(std::iter::repeat_n(b'y', 50));
        input.push(b'\n');
    }
    input.extend(std::iter::repeat_n(b'z', 300));
    input.extend_from_slice(b"\n%error 5 6 1\n%begin 5 7 1\nok\n%end 5 7 1\n");
    let got = decode_chunked(Mode::Plain, limits, &input, &[3, 90, 400]);
    assert_eq!(got.len(), 2, "{got:?}");
    match &got[0] {
        Err(FrameError::BlockTooLarge { header, error, .. }) => {
            assert_eq!(
                (header.time, header.number, header.flags, *error),
                (5, 6, 1, true)
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(&got[1], Ok(Frame::Reply(r)) if r.number == 7 && r.body == vec![&b"ok"[..]]));
}

#[test]
fn malformed_lines_are_errors_with_the_line() {
    let got = decode_chunked(
        Mode::Plain,
        Limits::default(),
        b"%output %x abc\n%output %1 bad\\9\n%window-add @1\n",
        &[],
    );
    assert!(
        matches!(&got[0], Err(FrameError::Malformed { line, .. }) if &line[..] == b"%output %x abc")
    );
    assert!(matches!(&got[1], Err(FrameError::Malformed { .. })));
    assert_eq!(
        got[2],
        Ok(Frame::Notification(Notification::WindowAdd {
            window: WindowId(1)
        }))
    );
}

#[test]
fn end_of_stream_reports_unfinished_input() {
    let mut dec = Decoder::new();
    dec.push(b"%begin 1 2 1\npartial body\n");
    assert_eq!(dec.decode(), Err(DecodeError::Incomplete));
    assert!(
        matches!(dec.finish(), Err(FrameError::UnterminatedBlock { body, .. }) if body.len() == 1)
    );
    dec.push(b"%exit");
    assert_eq!(dec.decode(), Err(DecodeError::Incomplete));
    assert!(
        matches!(dec.finish(), Err(FrameError::PartialLine { bytes }) if &bytes[..] == b"%exit")
    );
}

/// Regression: a stream that ends inside an open reply *and* in the middle
/// of a line used to report the block and drop the partial line.
#[test]
fn end_inside_a_block_and_a_line_keeps_both() {
    for chunks in [&[40][..], &[1], &[13, 2]] {
        let mut dec = Decoder::new();
        let input = b"%begin 1 2 1\nfirst\nsecond, unfinish";
        let mut rest = &input[..];
        for &n in chunks.iter().cycle() {
            if rest.is_empty() {
                break;
            }
            let (head, tail) = rest.split_at(n.min(rest.len()));
            dec.push(head);
            assert_eq!(dec.decode(), Err(DecodeError::Incomplete));
            rest = tail;
        }
        match dec.finish() {
            Err(FrameError::UnterminatedBlock {
                header,
                body,
                partial,
            }) => {
                assert_eq!((header.time, header.number, header.flags), (1, 2, 1));
                assert_eq!(body, vec![Bytes::from_static(b"first")]);
                assert_eq!(&partial[..], b"second, unfinish");
            }
            other => panic!("expected UnterminatedBlock, got {other:?}"),
        }
        assert_eq!(dec.buffered(), 0);
        assert_eq!(dec.finish(), Ok(()));
    }
    // Ending on a line boundary inside a block: nothing partial.
    let mut dec = Decoder::new();
    dec.push(b"%begin 1 2 1\nfirst\n");
    assert_eq!(dec.decode(), Err(DecodeError::Incomplete));
    assert!(
        matches!(dec.finish(), Err(FrameError::UnterminatedBlock { partial, .. }) if partial.is_empty())
    );
}

/// Regression: in `-CC` mode a notification after `%exit` and before the
/// final ST came out as a stray line, and the ST as a partial line.
#[test]
fn dcs_notification_after_exit_is_a_notification() {
    let input = b"\x1bP1000p%exit\r\n%sessions-changed\r\n%window-close @3\r\n\x1b\\";
    let every: Vec<usize> = (1..input.len()).collect();
    for cuts in [&[][..], &[3, 7], &[16, 17, 18, 50, 51], &every] {
        let got: Vec<Frame> = decode_chunked(Mode::Dcs, Limits::default(), input, cuts)
            .into_iter()
            .map(Result::unwrap)
            .collect();
        assert_eq!(
            got,
            vec![
                Frame::DcsStart,
                Frame::Notification(Notification::Exit { reason: None }),
                Frame::Notification(Notification::SessionsChanged),
                Frame::Notification(Notification::WindowClose {
                    window: WindowId(3)
                }),
                Frame::DcsEnd,
            ],
            "cuts {cuts:?}"
        );
    }
    let mut dec = Decoder::with_mode(Mode::Dcs);
    dec.push(input);
    while dec.decode().is_ok() {}
    assert_eq!(dec.finish(), Ok(()), "the ST is not left as a partial line");
}

#[test]
fn dcs_preamble_is_kept_as_stray_lines() {
    let input =
        b"$ tmux -L work -CC\r\nprompt\x1bP1000p%begin 1 2 0\r\n%end 1 2 0\r\n%exit\r\n\x1b\\";
    let got: Vec<Frame> = decode_chunked(Mode::Dcs, Limits::default(), input, &[5, 13, 20])
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        got[0],
        Frame::Stray(Bytes::from_static(b"$ tmux -L work -CC"))
    );
    assert_eq!(got[1], Frame::Stray(Bytes::from_static(b"prompt")));
    assert_eq!(got[2], Frame::DcsStart);
    assert!(matches!(&got[3], Frame::Reply(r) if r.flags == 0 && r.body.is_empty()));
    assert_eq!(
        got[4],
        Frame::Notification(Notification::Exit { reason: None })
    );
    assert_eq!(got[5], Frame::DcsEnd);
    assert_eq!(got.len(), 6);
}
