//! tmux formats: escaping literal text for them, decoding tmux's "vis"
//! escaping, and reading `-F` rows without ever confusing data with
//! structure.
//!
//! This file holds the helpers that turn reply bodies into bytes, paths
//! and strings; [`vis`] holds tmux's "vis" escaping of names and its
//! decoding ([`unvis`]), [`escape`] the escaping of literal text for
//! format expansion ([`escape_format`]), [`armour`] the wrapping of
//! formats and the decoding of reply lines that tmux 3.4 and 3.5 escape,
//! and [`rows`] the `-F` rows ([`RowSpec`], [`Row`](rows::Row)).

use std::path::PathBuf;

use bytes::Bytes;

mod armour;
mod escape;
mod rows;
mod vis;

pub(crate) use armour::{armour, unarmour, unvis_reply};
pub use escape::escape_format;
pub(crate) use rows::{RowSpec, session_id};
pub use vis::unvis;
pub(crate) use vis::{buffer_lookup_name, vis_name, window_name_arg};

/// Joins reply body lines with LF: the bytes tmux printed, minus the final
/// newline.
pub(crate) fn join_lines(body: &[Bytes]) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.iter().map(|l| l.len() + 1).sum());
    for (n, line) in body.iter().enumerate() {
        if n > 0 {
            out.push(b'\n');
        }
        out.extend_from_slice(line);
    }
    out
}

/// Turns raw bytes into a path (exact on Unix).
pub(crate) fn bytes_to_path(bytes: &[u8]) -> PathBuf {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        PathBuf::from(std::ffi::OsStr::from_bytes(bytes))
    }
    #[cfg(not(unix))]
    {
        PathBuf::from(String::from_utf8_lossy(bytes).into_owned())
    }
}

/// Turns a decoded name into a `String`, replacing invalid UTF-8.
pub(crate) fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}
