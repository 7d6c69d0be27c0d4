//! `tmux-mcp serve --unix PATH`: one MCP server shared by several clients
//! over a unix socket.
//!
//! Each accepted connection is one MCP session, newline-delimited JSON-RPC
//! in both directions, framed by the same guard as stdio
//! ([`crate::transport::stdio::guard`]: every line is answered). All sessions share one
//! [`TmuxMcp`]: the same tmux connection, terminals, runs, audit log and
//! per-pane actors (`crate::mcp::actors`); each has its own resource
//! subscriptions ([`TmuxMcp::for_session`]). Stdio clients join through
//! `tmux-mcp bridge` ([`crate::transport::bridge`]).
//!
//! Who can connect is decided by the file system ([`bind`]): the socket is
//! mode 0600, in a directory that only its owner can write (created with
//! mode 0700 when missing; one that others can write is refused). One
//! server runs per state directory: it holds an `flock` on
//! `STATE_DIR/serve.lock`, which holds its pid (so a second one is refused
//! with that pid) and, on the next line, its socket's absolute path (so
//! `tmux-mcp call` finds it: [`serving`]). A socket file left by a server that died is replaced; a
//! socket with a live server behind it is not.
//!
//! On SIGTERM or SIGINT ([`serve`]'s [`Shutdown`]) the server stops
//! accepting and removes its socket file at once, answers every call in
//! flight on every connection (see [`crate::transport::stdio`]: within a bounded drain
//! time), syncs the audit log, and only then clears its pid from the lock
//! file and releases the lock (the file itself stays: removing a file
//! others may be about to lock would let two servers lock two files).

use std::fs::File;
use std::io::{Read as _, Seek as _, Write as _};
use std::os::unix::fs::{FileTypeExt as _, PermissionsExt as _};
use std::os::unix::fs::{MetadataExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};

use rmcp::ServiceExt as _;
use tokio::net::{UnixListener, UnixStream};

use crate::mcp::server::TmuxMcp;
use crate::transport::stdio::{self, Draining, Shutdown};

/// The lock file's name in the state directory.
pub const LOCK_FILE: &str = "serve.lock";

/// Why `serve --unix` cannot start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SharedError {
    /// Another server holds the state directory's lock.
    #[error(
        "another tmux-mcp server (pid {pid}) already serves the state directory {} (it holds the lock {}); \
         stop it first, or start this one with another --state-dir",
        dir.display(), lock.display()
    )]
    Locked {
        /// The pid written in the lock file (or a note that it cannot be read).
        pid: String,
        /// The state directory.
        dir: PathBuf,
        /// The lock file.
        lock: PathBuf,
    },
    /// The socket's directory is not private enough.
    #[error(
        "refusing the socket directory {}: {why}; use a directory that only you can write \
         (a missing one is created with mode 0700)",
        dir.display()
    )]
    UnsafeDirectory {
        /// The directory.
        dir: PathBuf,
        /// What is wrong with it.
        why: String,
    },
    /// A live server answers on the socket already.
    #[error(
        "a server is already listening on {} (under another state directory); \
         stop it, or choose another --unix path",
        path.display()
    )]
    InUse {
        /// The socket.
        path: PathBuf,
    },
    /// The socket path holds something that is not a socket.
    #[error("{} exists and is not a socket; choose another --unix path or remove it", path.display())]
    NotASocket {
        /// The path.
        path: PathBuf,
    },
    /// A file-system call failed.
    #[error("cannot {what} {}: {source}", path.display())]
    Io {
        /// What was being done.
        what: &'static str,
        /// On what.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
}

fn io(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> SharedError + use<> {
    let path = path.to_owned();
    move |source| SharedError::Io { what, path, source }
}

/// A bound socket, ready to [`serve`]: the listener, the state directory's
/// lock (held until dropped, its pid cleared then) and the socket file
/// (removed when dropped, if it is still this one).
#[derive(Debug)]
pub struct Bound {
    listener: UnixListener,
    path: PathBuf,
    state_dir: PathBuf,
    /// The socket file's device and inode, to remove only our own.
    inode: (u64, u64),
    /// `None` once [`serve`] took it to hold past the listener.
    lock: Option<File>,
}

impl Bound {
    /// The socket's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The state directory whose lock this server holds.
    pub fn state_dir(&self) -> &Path {
        &self.state_dir
    }
}

impl Drop for Bound {
    fn drop(&mut self) {
        let ours =
            std::fs::symlink_metadata(&self.path).is_ok_and(|m| (m.dev(), m.ino()) == self.inode);
        if ours && let Err(e) = std::fs::remove_file(&self.path) {
            tracing::debug!("cannot remove {}: {e}", self.path.display());
        }
        release(self.lock.take());
    }
}

/// Clears this process's pid from the lock file, then releases the lock
/// (by closing the file).
fn release(lock: Option<File>) {
    if let Some(lock) = lock
        && let Err(e) = lock.set_len(0)
    {
        tracing::debug!("cannot clear the lock file: {e}");
    }
}

/// Takes the state directory's lock, checks the socket's directory, and
/// binds the socket at `path` (mode 0600). Must be called inside a Tokio
/// runtime.
pub fn bind(path: &Path, state_dir: &Path) -> Result<Bound, SharedError> {
    crate::terminal::backend::private_dir(state_dir)
        .map_err(io("prepare the state directory", state_dir))?;
    let lock = lock_state_dir(state_dir)?;
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
        _ => PathBuf::from("."),
    };
    socket_dir(&dir)?;
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_socket() => {
            // Only a dead server's socket is replaced.
            match std::os::unix::net::UnixStream::connect(path) {
                Ok(_) => {
                    return Err(SharedError::InUse {
                        path: path.to_owned(),
                    });
                }
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                    tracing::info!("replacing the stale socket {}", path.display());
                }
                Err(e) => return Err(io("check the existing socket", path)(e)),
            }
        }
        Ok(_) => {
            return Err(SharedError::NotASocket {
                path: path.to_owned(),
            });
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(io("look at", path)(e)),
    }
    // Bound under a temporary name, narrowed to 0600, then renamed into
    // place: nobody can connect before the mode is right, and a stale
    // socket is replaced in one step.
    let temporary = dir.join(format!(".tmux-mcp-{}", std::process::id()));
    match std::fs::remove_file(&temporary) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(io("remove", &temporary)(e)),
    }
    let listener = UnixListener::bind(&temporary).map_err(io("bind the socket", &temporary))?;
    let placed = std::fs::set_permissions(&temporary, std::fs::Permissions::from_mode(0o600))
        .map_err(io("set the mode of", &temporary))
        .and_then(|()| std::fs::rename(&temporary, path).map_err(io("move the socket to", path)))
        .and_then(|()| std::fs::symlink_metadata(path).map_err(io("look at", path)));
    let meta = match placed {
        Ok(meta) => meta,
        Err(e) => {
            let _ = std::fs::remove_file(&temporary);
            return Err(e);
        }
    };
    let mut lock = lock;
    let absolute = std::fs::canonicalize(&dir)
        .map(|d| d.join(path.file_name().unwrap_or_default()))
        .unwrap_or_else(|_| path.to_owned());
    writeln!(lock, "{}", absolute.display())
        .map_err(io("write the lock file", &state_dir.join(LOCK_FILE)))?;
    Ok(Bound {
        listener,
        path: path.to_owned(),
        state_dir: state_dir.to_owned(),
        inode: (meta.dev(), meta.ino()),
        lock: Some(lock),
    })
}

/// The socket of the `serve --unix` server that serves `state_dir`, if one
/// answers on it: the path its lock file names, when a connection to it
/// is accepted. Takes no lock (a server starting meanwhile is not
/// disturbed); a server that died left a path nobody answers on.
pub fn serving(state_dir: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(state_dir.join(LOCK_FILE)).ok()?;
    let socket = PathBuf::from(text.lines().nth(1)?.trim());
    std::os::unix::net::UnixStream::connect(&socket).ok()?;
    Some(socket)
}

/// Takes `STATE_DIR/serve.lock` (an `flock`, released when the process
/// ends, however it ends) and writes this process's pid into it.
fn lock_state_dir(state_dir: &Path) -> Result<File, SharedError> {
    use rustix::fs::{FlockOperation, flock};
    let path = state_dir.join(LOCK_FILE);
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(&path)
        .map_err(io("open the lock file", &path))?;
    match flock(&file, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => {}
        Err(rustix::io::Errno::WOULDBLOCK) => {
            let mut holder = String::new();
            let pid = match file.read_to_string(&mut holder) {
                Ok(_) if !holder.trim().is_empty() => {
                    holder.lines().next().unwrap_or_default().trim().to_owned()
                }
                _ => "unknown: the lock file holds no pid yet".to_owned(),
            };
            return Err(SharedError::Locked {
                pid,
                dir: state_dir.to_owned(),
                lock: path,
            });
        }
        Err(e) => return Err(io("lock", &path)(e.into())),
    }
    file.set_len(0)
        .and_then(|()| file.rewind())
        .and_then(|()| writeln!(file, "{}", std::process::id()))
        .map_err(io("write the lock file", &path))?;
    Ok(file)
}

/// Creates the socket's directory with mode 0700 if it is missing; refuses
/// one that is not a directory, belongs to another user, or that others
/// can write (they could replace the socket).
fn socket_dir(dir: &Path) -> Result<(), SharedError> {
    let unsafe_dir = |why: String| SharedError::UnsafeDirectory {
        dir: dir.to_owned(),
        why,
    };
    crate::terminal::backend::create_dir_0700(dir)
        .map_err(io("create the socket directory", dir))?;
    let meta = std::fs::metadata(dir).map_err(io("look at the socket directory", dir))?;
    if !meta.is_dir() {
        return Err(unsafe_dir("it is not a directory".into()));
    }
    let me = crate::terminal::guard::current_uid();
    if meta.uid() != me {
        return Err(unsafe_dir(format!(
            "it belongs to user {}, not to you (user {me})",
            meta.uid()
        )));
    }
    let mode = meta.permissions().mode() & 0o7777;
    if mode & 0o022 != 0 {
        return Err(unsafe_dir(format!(
            "its mode is {mode:04o}: {} can write to it",
            if mode & 0o002 != 0 {
                "every user"
            } else {
                "its group"
            }
        )));
    }
    Ok(())
}

/// A pause after a failed `accept` (out of file descriptors, say).
const ACCEPT_BACKOFF: std::time::Duration = std::time::Duration::from_millis(100);

/// Serves every connection to `bound` as one MCP session of `server`
/// until `shutdown` stops; then removes the socket file, waits for every
/// session to answer its calls in flight and end, syncs the audit log and
/// releases the state directory's lock.
pub async fn serve(mut bound: Bound, server: TmuxMcp, shutdown: Shutdown) -> Result<(), String> {
    tracing::info!(socket = %bound.path.display(), "tmux-mcp serving on a unix socket");
    let mut sessions = tokio::task::JoinSet::new();
    loop {
        tokio::select! {
            biased;
            () = shutdown.stopped() => break,
            accepted = bound.listener.accept() => match accepted {
                Ok((stream, _)) => {
                    let session = server.for_session();
                    sessions.spawn(serve_connection(session, stream, shutdown.clone()));
                }
                Err(e) => {
                    tracing::error!("cannot accept a connection on {}: {e}", bound.path.display());
                    // A true timer: backoff, so that a lasting failure
                    // (no file descriptors left) does not spin; the
                    // sessions already served go on meanwhile.
                    tokio::time::sleep(ACCEPT_BACKOFF).await;
                }
            },
            // Collects the sessions that ended.
            Some(_) = sessions.join_next(), if !sessions.is_empty() => {}
        }
    }
    // No new clients: the listener closes and the socket file goes now;
    // the lock is held until the sessions have ended.
    let lock = bound.lock.take();
    drop(bound);
    tracing::info!(
        sessions = sessions.len(),
        "stopping: answering the calls in flight"
    );
    while sessions.join_next().await.is_some() {}
    stdio::settle(&server).await;
    release(lock);
    tracing::info!("tmux-mcp stopped");
    Ok(())
}

/// One MCP session on one connection, until it ends or `shutdown` stops
/// it (once its calls in flight are answered).
async fn serve_connection(server: TmuxMcp, stream: UnixStream, shutdown: Shutdown) {
    let (read, write) = stream.into_split();
    let (transport, pumps) = stdio::guard_until(read, write, shutdown.clone());
    tracing::debug!(session = server.session, "a client connected");
    match Draining::new(server.clone(), shutdown)
        .serve(transport)
        .await
    {
        Ok(running) => {
            if let Err(e) = running.waiting().await {
                tracing::debug!("an MCP session ended with an error: {e}");
            }
        }
        Err(e) => tracing::debug!("an MCP session did not start: {e}"),
    }
    pumps.finish().await;
    let session = server.session;
    // The session's last value: its resource subscriptions end with it.
    drop(server);
    tracing::debug!(session, "a client disconnected");
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("tmux-mcp-shared-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        dir
    }

    #[tokio::test]
    async fn socket_modes_lock_and_stale_sockets() {
        let root = scratch("bind");
        let state = root.join("state");
        let path = root.join("sock-dir/mcp.sock");
        let bound = bind(&path, &state).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(path.parent().unwrap()), 0o700);
        let lock = std::fs::read_to_string(state.join(LOCK_FILE)).unwrap();
        let canonical = std::fs::canonicalize(path.parent().unwrap()).unwrap();
        assert_eq!(
            lock,
            format!(
                "{}\n{}\n",
                std::process::id(),
                canonical.join("mcp.sock").display()
            )
        );
        assert_eq!(serving(&state), Some(canonical.join("mcp.sock")));
        // flock locks are per open file: a second bind in this process is refused too.
        match bind(&path, &state).unwrap_err() {
            SharedError::Locked { pid, .. } => assert_eq!(pid, std::process::id().to_string()),
            other => panic!("{other}"),
        }
        // Another state directory, the same live socket: refused.
        assert!(matches!(
            bind(&path, &root.join("state2")).unwrap_err(),
            SharedError::InUse { .. }
        ));
        // A socket nobody listens on is replaced.
        drop(bound);
        assert!(!path.exists());
        assert_eq!(serving(&state), None);
        let stale = std::os::unix::net::UnixListener::bind(&path).unwrap();
        drop(stale);
        assert!(path.exists());
        let again = bind(&path, &state).unwrap();
        assert_eq!(mode(&path), 0o600);
        drop(again);
        // Something that is not a socket is left alone.
        std::fs::write(&path, "x").unwrap();
        assert!(matches!(
            bind(&path, &state).unwrap_err(),
            SharedError::NotASocket { .. }
        ));
        // A directory others can write is refused, and says why.
        let open = root.join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        let err = bind(&open.join("s"), &state).unwrap_err().to_string();
        assert!(err.contains("mode is 0777: every user can write"), "{err}");
        std::fs::remove_dir_all(&root).unwrap();
    }
}
