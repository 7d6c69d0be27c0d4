//! Paste buffers: `set-buffer`, `show-buffer`, appending, `list-buffers`,
//! `delete-buffer` and `paste-buffer` (newlines, separator, delete,
//! bracketed paste).

use super::{command_error, connect, eventually, invalid, read_file, sink, sink_with};
use crate::common::bounded;
use tmux_control::IsolatedServer;
use tmux_control::command::{
    CapturePane, DeleteBuffer, ListBuffers, PasteBuffer, SetBuffer, ShowBuffer,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn buffers_set_show_append_list_and_delete() {
    let iso = IsolatedServer::new().unwrap();
    bounded(async {
        let (tmux, _) = connect(&iso).await;
        assert!(tmux.run(ListBuffers::new()).await.unwrap().is_empty());

        let name = "buf one: ✓ #{x} ;";
        tmux.run(SetBuffer::new("first").buffer(name))
            .await
            .unwrap();
        assert_eq!(
            &tmux.run(ShowBuffer::named(name)).await.unwrap()[..],
            b"first"
        );
        tmux.run(
            SetBuffer::new(" + more\n\ttab \\ $HOME")
                .buffer(name)
                .append(),
        )
        .await
        .unwrap();
        let want = b"first + more\n\ttab \\ $HOME";
        assert_eq!(&tmux.run(ShowBuffer::named(name)).await.unwrap()[..], want);
        // Appending nothing is allowed and changes nothing.
        tmux.run(SetBuffer::new("").buffer(name).append())
            .await
            .unwrap();
        assert_eq!(&tmux.run(ShowBuffer::named(name)).await.unwrap()[..], want);

        // Automatic names; `latest` is the most recent automatic buffer.
        tmux.run(SetBuffer::new("auto 1")).await.unwrap();
        tmux.run(SetBuffer::new(b"auto 2 \xff\x01")).await.unwrap();
        assert_eq!(
            &tmux.run(ShowBuffer::latest()).await.unwrap()[..],
            b"auto 2 \xff\x01"
        );

        let list = tmux.run(ListBuffers::new()).await.unwrap();
        let names: Vec<&str> = list.iter().map(|b| b.name.as_str()).collect();
        assert_eq!(names, ["buffer1", "buffer0", name], "{list:?}");
        assert_eq!(list[2].size, want.len() as u64);
        assert_eq!(list[1].size, 6);
        assert_eq!(list[0].size, 9);
        assert!(list.iter().all(|b| b.created > 1_600_000_000));

        tmux.run(DeleteBuffer::new(name)).await.unwrap();
        command_error(tmux.run(ShowBuffer::named(name)).await, "show-buffer");
        command_error(tmux.run(DeleteBuffer::new(name)).await, "delete-buffer");
        tmux.run(DeleteBuffer::new("buffer1")).await.unwrap();
        assert_eq!(
            &tmux.run(ShowBuffer::latest()).await.unwrap()[..],
            b"auto 1"
        );
        let names: Vec<String> = tmux
            .run(ListBuffers::new())
            .await
            .unwrap()
            .into_iter()
            .map(|b| b.name)
            .collect();
        assert_eq!(names, ["buffer0"]);
        invalid(tmux.run(SetBuffer::new("")).await);
        invalid(tmux.run(SetBuffer::new("a\0b")).await);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paste_buffer_newlines_separator_delete_and_bracketed_paste() {
    let iso = IsolatedServer::new().unwrap();
    bounded(async {
        let (tmux, _) = connect(&iso).await;
        let file = iso.dir().join("paste.bin");
        let pane = sink(&tmux, &file).await;
        let mut expected = Vec::new();
        tmux.run(SetBuffer::new("l1 ;#\nl2 \\\n").buffer("p"))
            .await
            .unwrap();

        // LF becomes CR by default.
        tmux.run(PasteBuffer::new(pane).buffer("p")).await.unwrap();
        expected.extend_from_slice(b"l1 ;#\rl2 \\\r");
        assert_eq!(read_file(&file, expected.len()).await, expected);
        tmux.run(PasteBuffer::new(pane).buffer("p").keep_newlines())
            .await
            .unwrap();
        expected.extend_from_slice(b"l1 ;#\nl2 \\\n");
        assert_eq!(read_file(&file, expected.len()).await, expected);
        tmux.run(PasteBuffer::new(pane).buffer("p").separator("\r\n;"))
            .await
            .unwrap();
        expected.extend_from_slice(b"l1 ;#\r\n;l2 \\\r\n;");
        assert_eq!(read_file(&file, expected.len()).await, expected);
        // The program did not ask for bracketed paste: no markers.
        tmux.run(PasteBuffer::new(pane).buffer("p").bracketed())
            .await
            .unwrap();
        expected.extend_from_slice(b"l1 ;#\rl2 \\\r");
        assert_eq!(read_file(&file, expected.len()).await, expected);
        // The latest automatic buffer, deleted after pasting.
        tmux.run(SetBuffer::new(b"auto\xff")).await.unwrap();
        tmux.run(PasteBuffer::new(pane).delete()).await.unwrap();
        expected.extend_from_slice(b"auto\xff");
        assert_eq!(read_file(&file, expected.len()).await, expected);
        let names: Vec<String> = tmux
            .run(ListBuffers::new())
            .await
            .unwrap()
            .into_iter()
            .map(|b| b.name)
            .collect();
        assert_eq!(names, ["p"]);
        command_error(
            tmux.run(PasteBuffer::new(pane).buffer("nope")).await,
            "paste-buffer",
        );

        // A program that turned bracketed paste on gets the markers.
        let file2 = iso.dir().join("bracketed.bin");
        let pane2 = sink_with(&tmux, &file2, "printf '\\033[?2004hREADY';").await;
        // tmux handles a pane's output in order: once READY is on the
        // screen, the mode change before it was seen too.
        eventually("READY on the screen", || async {
            let lines = tmux.run(CapturePane::new(pane2)).await.unwrap();
            (&lines[0][..] == b"READY").then_some(())
        })
        .await;
        // The terminal is raw since before READY, so what is pasted now
        // waits in it for `cat` even if the shell has not exec'd it yet
        // (tmux can still name the shell as the pane's command then).
        tmux.run(PasteBuffer::new(pane2).buffer("p").bracketed())
            .await
            .unwrap();
        let want = b"\x1b[200~l1 ;#\rl2 \\\r\x1b[201~".to_vec();
        assert_eq!(read_file(&file2, want.len()).await, want);
        // Without -p, even then no markers.
        tmux.run(PasteBuffer::new(pane2).buffer("p").delete())
            .await
            .unwrap();
        let mut want2 = want.clone();
        want2.extend_from_slice(b"l1 ;#\rl2 \\\r");
        assert_eq!(read_file(&file2, want2.len()).await, want2);
        assert!(tmux.run(ListBuffers::new()).await.unwrap().is_empty());
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paste_that_fails_part_way_leaves_no_buffer() {
    let iso = IsolatedServer::new().unwrap();
    bounded(async {
        let (tmux, session) = connect(&iso).await;
        // The second chunk holds a NUL, which no tmux argument can carry:
        // the first chunk is in a buffer by then.
        let text = format!("{}\0tail", "x".repeat(1500));
        assert!(tmux.paste(session, &text, false).await.is_err());
        assert!(tmux.run(ListBuffers::new()).await.unwrap().is_empty());
        // A paste that works leaves none either.
        tmux.paste(session, "fine", true).await.unwrap();
        assert!(tmux.run(ListBuffers::new()).await.unwrap().is_empty());
    })
    .await;
}
