//! The keys of the web view, and `tmux-mcp web-key`.
//!
//! A key is 32 bytes from the operating system's random source,
//! written as hex (URL-safe: it travels in a link's fragment,
//! `/ui/#key=KEY`). Two kinds:
//!
//! - **Ephemeral** keys (`KeyStore::ephemeral`) live as long as the
//!   process, in memory only: the server's own `link` key.
//! - **Named** keys, made by `tmux-mcp web-key add NAME`, printed once and
//!   kept only as SHA-256 digests in the state directory's `web-keys`
//!   file: JSON lines, one `{"name","scope","sha256","created"}` per key,
//!   mode 0600, rewritten atomically (a temporary file renamed over it,
//!   under an `flock` of `web-keys.lock`). The file is read again at every
//!   `KeyStore::check` and `KeyStore::still_valid`, so a revocation
//!   applies at once, and it is refused unless it is a private regular
//!   file of this user (the checks of the bearer token file,
//!   `crate::transport::http::read_private_file`).
//!
//! A key given is hashed and its digest compared with the stored digests
//! in constant time; the key itself is never stored, logged or printed,
//! except by `web-key add`, once, on standard output.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use sha2::{Digest as _, Sha256};
use subtle::ConstantTimeEq as _;

use crate::config::WebKeyScope;
use crate::transport::http::{Advice, read_private_file};

/// Bytes of randomness in a key (written as twice as many hex digits).
pub(crate) const KEY_BYTES: usize = 32;

/// The name of the keys file in the state directory.
pub(crate) const KEYS_FILE: &str = "web-keys";

/// The name of the lock file that orders the writers of [`KEYS_FILE`].
const LOCK_FILE: &str = "web-keys.lock";

/// The name of the temporary file a new [`KEYS_FILE`] is written to.
const TEMP_FILE: &str = "web-keys.tmp";

/// The name reserved for the server's own key.
pub(crate) const RESERVED_NAME: &str = "link";

/// The longest key name.
pub(crate) const MAX_NAME_CHARS: usize = 64;

/// The largest keys file read.
const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// The longest key text [`KeyStore::check`] hashes (a key has
/// `2 * KEY_BYTES` characters; anything much longer is refused unhashed).
const MAX_KEY_CHARS: usize = 1024;

/// What [`read_private_file`]'s refusals of the keys file advise.
const KEYS_ADVICE: Advice = Advice {
    noun: "the web keys file",
    symlink: "put the file itself there, or remove the link and add the keys again",
    not_regular: "remove it and add the keys again with `tmux-mcp web-key add`",
    other_owner: "remove it and add the keys again with `tmux-mcp web-key add`",
    not_private: " once you have checked that each of its lines is a key you made \
                   (others could have added one)",
    too_large: "revoke the keys no longer used with `tmux-mcp web-key revoke`",
};

/// What a key lets its holder do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// Sees the terminals.
    View,
    /// Sees them, takes them over and types (includes `View`).
    Input,
}

impl Scope {
    /// The scope's name: `view` or `input`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::View => "view",
            Self::Input => "input",
        }
    }

    /// Whether a key of this scope may take over a pane and type.
    pub fn allows_input(self) -> bool {
        self == Self::Input
    }
}

impl std::fmt::Display for Scope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

impl From<WebKeyScope> for Scope {
    fn from(scope: WebKeyScope) -> Self {
        match scope {
            WebKeyScope::View => Self::View,
            WebKeyScope::Input => Self::Input,
        }
    }
}

/// What a valid key grants: its name and scope (and, kept private, which
/// key it was, so that [`KeyStore::still_valid`] can ask again).
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Grant {
    /// The key's name (`link` for the server's own), as audited.
    pub(crate) name: String,
    /// What it may do.
    pub(crate) scope: Scope,
    /// The SHA-256 digest of the key.
    digest: [u8; 32],
    /// Whether it is an ephemeral key (in memory) or a named one (in the
    /// file).
    ephemeral: bool,
}

impl std::fmt::Debug for Grant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Grant")
            .field("name", &self.name)
            .field("scope", &self.scope)
            .field("ephemeral", &self.ephemeral)
            .finish_non_exhaustive()
    }
}

/// A named key as `web-key list` shows it (never the key, nor its digest).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub(crate) struct KeyInfo {
    /// The key's name.
    pub(crate) name: String,
    /// What it may do.
    pub(crate) scope: Scope,
    /// When it was made (RFC 3339).
    pub(crate) created: String,
}

/// Why a key could not be made, listed or revoked.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum KeyError {
    /// The name is not 1 to 64 of `[A-Za-z0-9._-]`, or is reserved.
    #[error("bad web key name {name:?}: {reason}")]
    BadName {
        /// The name given.
        name: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A key of that name is already in the file.
    #[error(
        "a web key named {name:?} already exists (in {}); revoke it first, or choose another name",
        path.display()
    )]
    Exists {
        /// The name given.
        name: String,
        /// The keys file.
        path: PathBuf,
    },
    /// The keys file is not a private regular file of this user, or
    /// cannot be read.
    #[error("cannot use the web keys file {}: {reason}", path.display())]
    Refused {
        /// The keys file.
        path: PathBuf,
        /// What is wrong, and what to do.
        reason: String,
    },
    /// A line of the keys file is not a key.
    #[error(
        "the web keys file {}, line {line}: {reason}; fix or remove that line",
        path.display()
    )]
    Contents {
        /// The keys file.
        path: PathBuf,
        /// The line's number, from 1.
        line: usize,
        /// What is wrong with it.
        reason: String,
    },
    /// A file operation failed.
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        /// What was being done.
        action: &'static str,
        /// On what.
        path: PathBuf,
        /// Why it failed.
        #[source]
        source: std::io::Error,
    },
    /// The operating system gave no random bytes.
    #[error("cannot make a key: no random bytes from the operating system: {0}")]
    Random(#[source] std::io::Error),
}

impl KeyError {
    /// Whether this is bad usage (a bad name) rather than a failure.
    pub(crate) fn is_usage(&self) -> bool {
        matches!(self, Self::BadName { .. })
    }
}

/// A key as held in memory or in the file: never the key, its digest.
#[derive(Clone, PartialEq, Eq)]
struct Entry {
    name: String,
    scope: Scope,
    digest: [u8; 32],
    created: String,
}

/// One line of the keys file.
#[derive(serde::Serialize, serde::Deserialize)]
struct Line {
    name: String,
    scope: Scope,
    sha256: String,
    created: String,
}

/// The web view's keys: the ephemeral ones of this process and the named
/// ones of the state directory's `web-keys` file. Cheap to share in an
/// `Arc`; every method takes `&self`.
pub(crate) struct KeyStore {
    /// The state directory.
    dir: PathBuf,
    /// `dir/web-keys`.
    path: PathBuf,
    /// The ephemeral keys.
    ephemeral: Mutex<Vec<Entry>>,
}

impl std::fmt::Debug for KeyStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ephemeral = self.ephemeral_keys().len();
        f.debug_struct("KeyStore")
            .field("path", &self.path)
            .field("ephemeral", &ephemeral)
            .finish()
    }
}

impl KeyStore {
    /// The keys of the state directory `state_dir` (its `web-keys` file,
    /// which need not exist yet).
    pub(crate) fn new(state_dir: &Path) -> Self {
        Self {
            dir: state_dir.to_path_buf(),
            path: state_dir.join(KEYS_FILE),
            ephemeral: Mutex::new(Vec::new()),
        }
    }

    /// The keys file's path.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// A key that lives as long as this process (not written to disk),
    /// e.g. the server's own `link` key. Returns the key text. A second
    /// call with the same name replaces that name's key (the earlier one
    /// is no longer valid). Should the operating system give no random
    /// bytes, the name gets no key: the error is logged and the text
    /// returned is empty, which [`KeyStore::check`] never accepts.
    pub(crate) fn ephemeral(&self, name: &str, scope: Scope) -> String {
        let mut keys = self.ephemeral_keys();
        keys.retain(|e| e.name != name);
        let key = match new_key() {
            Ok(key) => key,
            Err(err) => {
                tracing::error!(name, error = %err, "no web key for this name");
                return String::new();
            }
        };
        let entry = Entry {
            name: name.to_owned(),
            scope,
            digest: digest(&key),
            created: crate::text::rfc3339(std::time::SystemTime::now()),
        };
        keys.push(entry);
        key
    }

    /// The grant of a key, if it is valid now: an ephemeral key, or a
    /// named one in the file as read now (so revocations apply at once).
    /// The key's SHA-256 digest is compared with the stored ones in
    /// constant time. A keys file that cannot be used grants nothing (and
    /// is logged, without any key).
    pub(crate) fn check(&self, key: &str) -> Option<Grant> {
        if key.is_empty() || key.len() > MAX_KEY_CHARS {
            return None;
        }
        let given = digest(key);
        let found = |entries: &[Entry], ephemeral: bool| {
            entries
                .iter()
                .find(|e| bool::from(e.digest.ct_eq(&given)))
                .map(|e| Grant {
                    name: e.name.clone(),
                    scope: e.scope,
                    digest: e.digest,
                    ephemeral,
                })
        };
        if let Some(grant) = found(&self.ephemeral_keys(), true) {
            return Some(grant);
        }
        found(&self.file_keys_or_none(), false)
    }

    /// Whether a grant made earlier is still valid: its ephemeral key is
    /// still there, or its named key is still in the file (read now) with
    /// the same digest and scope.
    pub(crate) fn still_valid(&self, grant: &Grant) -> bool {
        let same = |e: &Entry| {
            e.name == grant.name
                && e.scope == grant.scope
                && bool::from(e.digest.ct_eq(&grant.digest))
        };
        if grant.ephemeral {
            self.ephemeral_keys().iter().any(same)
        } else {
            self.file_keys_or_none().iter().any(same)
        }
    }

    /// Makes a named key, stores its digest in the file (creating the
    /// state directory with mode 0700 and the file with mode 0600 when
    /// missing) and returns the key text. Refuses a bad or reserved name,
    /// and a name already in the file.
    pub(crate) fn add(&self, name: &str, scope: Scope) -> Result<String, KeyError> {
        check_name(name)?;
        crate::terminal::backend::private_dir(&self.dir).map_err(|source| KeyError::Io {
            action: "use the state directory",
            path: self.dir.clone(),
            source,
        })?;
        let _lock = self.lock()?;
        let mut entries = self.read()?;
        if entries.iter().any(|e| e.name == name) {
            return Err(KeyError::Exists {
                name: name.to_owned(),
                path: self.path.clone(),
            });
        }
        let key = new_key()?;
        entries.push(Entry {
            name: name.to_owned(),
            scope,
            digest: digest(&key),
            created: crate::text::rfc3339(std::time::SystemTime::now()),
        });
        self.write(&entries)?;
        Ok(key)
    }

    /// The named keys in the file: name, scope and when each was made
    /// (never the key). None when there is no file.
    pub(crate) fn list(&self) -> Result<Vec<KeyInfo>, KeyError> {
        Ok(self
            .read()?
            .into_iter()
            .map(|e| KeyInfo {
                name: e.name,
                scope: e.scope,
                created: e.created,
            })
            .collect())
    }

    /// Removes the named key from the file: `Ok(false)` when there is no
    /// key of that name (and then the file is not written).
    pub(crate) fn revoke(&self, name: &str) -> Result<bool, KeyError> {
        check_name(name)?;
        if !self.exists()? {
            return Ok(false);
        }
        let _lock = self.lock()?;
        let mut entries = self.read()?;
        let before = entries.len();
        entries.retain(|e| e.name != name);
        if entries.len() == before {
            return Ok(false);
        }
        self.write(&entries)?;
        Ok(true)
    }

    /// The ephemeral keys (a panic elsewhere while they were held leaves
    /// them as they were: every change is one `retain` and one `push`).
    fn ephemeral_keys(&self) -> std::sync::MutexGuard<'_, Vec<Entry>> {
        self.ephemeral
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The keys in the file, or none (logged) when it cannot be used.
    fn file_keys_or_none(&self) -> Vec<Entry> {
        self.read().unwrap_or_else(|err| {
            tracing::warn!(error = %err, "the web keys file grants no key");
            Vec::new()
        })
    }

    /// Whether the keys file (or anything in its place) exists.
    fn exists(&self) -> Result<bool, KeyError> {
        match std::fs::symlink_metadata(&self.path) {
            Ok(_) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(source) => Err(KeyError::Io {
                action: "read the status of",
                path: self.path.clone(),
                source,
            }),
        }
    }

    /// The keys in the file as it is now; none when there is no file.
    fn read(&self) -> Result<Vec<Entry>, KeyError> {
        let file = match read_private_file(&self.path, MAX_FILE_BYTES, &KEYS_ADVICE) {
            Ok(Some(file)) => file,
            Ok(None) => return Ok(Vec::new()),
            Err(refusal) => {
                return Err(KeyError::Refused {
                    path: self.path.clone(),
                    reason: refusal.reason,
                });
            }
        };
        parse(&file.bytes).map_err(|(line, reason)| KeyError::Contents {
            path: self.path.clone(),
            line,
            reason,
        })
    }

    /// Replaces the file with `entries`: written to a temporary file (mode
    /// 0600, created afresh, never through a symbolic link), synced, and
    /// renamed over the keys file; the directory is synced after. The
    /// caller holds the lock.
    fn write(&self, entries: &[Entry]) -> Result<(), KeyError> {
        use std::os::unix::fs::OpenOptionsExt as _;
        let temp = self.dir.join(TEMP_FILE);
        let io = |action: &'static str, path: &Path| {
            let path = path.to_path_buf();
            move |source| KeyError::Io {
                action,
                path,
                source,
            }
        };
        let mut text = String::new();
        for entry in entries {
            let line = Line {
                name: entry.name.clone(),
                scope: entry.scope,
                sha256: hex(&entry.digest),
                created: entry.created.clone(),
            };
            let json = serde_json::to_string(&line).map_err(|e| {
                io("write", &temp)(std::io::Error::new(std::io::ErrorKind::InvalidData, e))
            })?;
            text.push_str(&json);
            text.push('\n');
        }
        // A temporary file a writer left when it died: the lock is ours now.
        match std::fs::remove_file(&temp) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(io("remove the stale", &temp)(e));
            }
            _ => {}
        }
        let nofollow = rustix::fs::OFlags::NOFOLLOW.bits() as i32;
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(nofollow)
            .open(&temp)
            .map_err(io("create", &temp))?;
        let written = file
            .write_all(text.as_bytes())
            .and_then(|()| file.sync_all())
            .map_err(io("write", &temp))
            .and_then(|()| std::fs::rename(&temp, &self.path).map_err(io("replace", &self.path)));
        if let Err(err) = written {
            let _ = std::fs::remove_file(&temp);
            return Err(err);
        }
        std::fs::File::open(&self.dir)
            .and_then(|dir| dir.sync_all())
            .map_err(io("sync", &self.dir))
    }

    /// Takes the writers' lock (an `flock` of `web-keys.lock`, released
    /// when the file returned is dropped, or when the process ends).
    fn lock(&self) -> Result<std::fs::File, KeyError> {
        use std::os::unix::fs::OpenOptionsExt as _;
        let path = self.dir.join(LOCK_FILE);
        let nofollow = rustix::fs::OFlags::NOFOLLOW.bits() as i32;
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .custom_flags(nofollow)
            .open(&path)
            .map_err(|source| KeyError::Io {
                action: "open the lock file",
                path: path.clone(),
                source,
            })?;
        loop {
            match rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive) {
                Ok(()) => return Ok(file),
                Err(rustix::io::Errno::INTR) => {}
                Err(e) => {
                    return Err(KeyError::Io {
                        action: "lock",
                        path,
                        source: e.into(),
                    });
                }
            }
        }
    }
}

/// Refuses a name that is not 1 to [`MAX_NAME_CHARS`] of
/// `[A-Za-z0-9._-]`, or that is [`RESERVED_NAME`] (in any case).
pub(crate) fn check_name(name: &str) -> Result<(), KeyError> {
    let bad = |reason| {
        Err(KeyError::BadName {
            name: name.to_owned(),
            reason,
        })
    };
    if name.is_empty() {
        return bad("it is empty");
    }
    if name.len() > MAX_NAME_CHARS {
        return bad("it is longer than 64 characters");
    }
    if !name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
    {
        return bad("use only letters, digits, `.`, `_` and `-`");
    }
    if name.eq_ignore_ascii_case(RESERVED_NAME) {
        return bad("`link` is the name of the server's own key");
    }
    Ok(())
}

/// The entries of a keys file's bytes, or the line (from 1) that is wrong
/// and why. Blank lines are skipped.
fn parse(bytes: &[u8]) -> Result<Vec<Entry>, (usize, String)> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let line = 1 + bytes[..e.valid_up_to()]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        (line, "not UTF-8 text".to_owned())
    })?;
    let mut entries = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let number = i + 1;
        if line.trim().is_empty() {
            continue;
        }
        let parsed: Line = serde_json::from_str(line).map_err(|e| {
            (
                number,
                format!(
                    "not a key ({e}); a line is {{\"name\":…,\"scope\":\"view\"|\"input\",\"sha256\":…,\"created\":…}}"
                ),
            )
        })?;
        check_name(&parsed.name).map_err(|e| (number, e.to_string()))?;
        let digest = unhex(&parsed.sha256)
            .ok_or_else(|| (number, "its sha256 is not 64 hex digits".to_owned()))?;
        entries.push(Entry {
            name: parsed.name,
            scope: parsed.scope,
            digest,
            created: parsed.created,
        });
    }
    Ok(entries)
}

/// A fresh key: [`KEY_BYTES`] bytes from the operating system, as hex (the
/// form of the bearer token).
fn new_key() -> Result<String, KeyError> {
    const _: () = assert!(KEY_BYTES == 32);
    crate::transport::http::new_token().map_err(KeyError::Random)
}

/// The SHA-256 digest of a key.
fn digest(key: &str) -> [u8; 32] {
    Sha256::digest(key.as_bytes()).into()
}

/// Lowercase hex.
fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    bytes
        .iter()
        .flat_map(|b| [DIGITS[usize::from(b >> 4)], DIGITS[usize::from(b & 0xf)]])
        .map(char::from)
        .collect()
}

/// 32 bytes from 64 hex digits (either case).
fn unhex(text: &str) -> Option<[u8; 32]> {
    let digits = text.as_bytes();
    if digits.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (byte, pair) in out.iter_mut().zip(digits.chunks_exact(2)) {
        let high = char::from(pair[0]).to_digit(16)?;
        let low = char::from(pair[1]).to_digit(16)?;
        *byte = u8::try_from(high * 16 + low).ok()?;
    }
    Some(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt as _;

    /// A fresh directory under the temporary directory, removed when
    /// dropped.
    struct TempDir(PathBuf);

    impl TempDir {
        fn new(name: &str) -> Self {
            let dir = std::env::temp_dir()
                .join(format!("tmux-mcp-web-keys-{name}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
            Self(dir)
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn add_check_list_revoke() {
        let tmp = TempDir::new("add");
        // The state directory does not exist yet: `add` makes it, 0700.
        let state = tmp.0.join("state");
        let store = KeyStore::new(&state);
        assert!(store.list().unwrap().is_empty());
        assert!(!store.revoke("nobody").unwrap());
        assert!(!state.exists(), "reading made nothing");

        let alice = store.add("alice", Scope::View).unwrap();
        let bob = store.add("bob.2_x-y", Scope::Input).unwrap();
        assert_eq!(alice.len(), 2 * KEY_BYTES);
        assert!(alice.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_ne!(alice, bob);
        assert_eq!(mode(&state), 0o700);
        assert_eq!(mode(store.path()), 0o600);
        assert!(!state.join(TEMP_FILE).exists());

        // The file holds digests, never the keys.
        let text = std::fs::read_to_string(store.path()).unwrap();
        assert!(!text.contains(&alice) && !text.contains(&bob), "{text}");
        assert!(text.contains(&hex(&digest(&alice))), "{text}");
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["name"], "alice");
        assert_eq!(lines[0]["scope"], "view");
        assert_eq!(lines[1]["scope"], "input");
        assert!(lines[0]["created"].as_str().unwrap().ends_with('Z'));

        let grant = store.check(&alice).unwrap();
        assert_eq!((grant.name.as_str(), grant.scope), ("alice", Scope::View));
        assert!(!grant.scope.allows_input());
        let bob_grant = store.check(&bob).unwrap();
        assert_eq!(bob_grant.scope, Scope::Input);
        assert!(bob_grant.scope.allows_input());
        assert!(store.still_valid(&grant) && store.still_valid(&bob_grant));
        assert!(!format!("{grant:?}").contains(&hex(&grant.digest)));

        // Wrong keys: altered, truncated, empty, huge, the digest itself.
        let mut wrong = alice.clone().into_bytes();
        wrong[0] = if wrong[0] == b'0' { b'1' } else { b'0' };
        assert!(store.check(std::str::from_utf8(&wrong).unwrap()).is_none());
        assert!(store.check(&alice[..63]).is_none());
        assert!(store.check("").is_none());
        assert!(store.check(&"a".repeat(MAX_KEY_CHARS + 1)).is_none());
        assert!(store.check(&hex(&digest(&alice))).is_none());

        let listed = store.list().unwrap();
        let names: Vec<_> = listed.iter().map(|k| (k.name.as_str(), k.scope)).collect();
        assert_eq!(names, [("alice", Scope::View), ("bob.2_x-y", Scope::Input)]);
        let json = serde_json::to_string(&listed).unwrap();
        assert!(!json.contains(&alice) && !json.contains("sha256"), "{json}");
        assert!(
            super::super::cli::table(&listed)
                .starts_with("NAME       SCOPE  CREATED\nalice      view   ")
        );

        // A name is there once.
        let err = store.add("alice", Scope::Input).unwrap_err();
        assert!(matches!(err, KeyError::Exists { .. }), "{err}");
        assert!(!err.is_usage());
        assert_eq!(store.check(&alice).unwrap().scope, Scope::View);

        // A revocation applies at once, also to a grant made before.
        assert!(store.revoke("alice").unwrap());
        assert!(!store.revoke("alice").unwrap());
        assert!(store.check(&alice).is_none());
        assert!(!store.still_valid(&grant));
        assert!(store.still_valid(&bob_grant));
        assert_eq!(store.list().unwrap().len(), 1);
        assert_eq!(mode(store.path()), 0o600);

        // Another store on the same directory (another process) sees the
        // same file; a key made again under the same name is a new key.
        let other = KeyStore::new(&state);
        assert_eq!(other.check(&bob).unwrap().name, "bob.2_x-y");
        let again = other.add("alice", Scope::Input).unwrap();
        assert!(store.check(&alice).is_none());
        assert_eq!(store.check(&again).unwrap().scope, Scope::Input);
        assert!(!store.still_valid(&grant), "the old grant's digest differs");

        // The file removed: no named key is valid any more.
        std::fs::remove_file(store.path()).unwrap();
        assert!(store.check(&bob).is_none());
        assert!(!store.still_valid(&bob_grant));
        assert!(store.list().unwrap().is_empty());
    }

    #[test]
    fn ephemeral_keys() {
        let tmp = TempDir::new("ephemeral");
        let store = KeyStore::new(&tmp.0);
        let link = store.ephemeral(RESERVED_NAME, Scope::Input);
        assert_eq!(link.len(), 2 * KEY_BYTES);
        let grant = store.check(&link).unwrap();
        assert_eq!((grant.name.as_str(), grant.scope), ("link", Scope::Input));
        assert!(store.still_valid(&grant));
        // Not written, nor listed.
        assert!(!store.path().exists());
        assert!(store.list().unwrap().is_empty());
        // Another store (another process) does not know it.
        assert!(KeyStore::new(&tmp.0).check(&link).is_none());
        // A file key of the same digest cannot stand in for it, nor it for
        // a file key: a grant remembers where it came from.
        let named = store.add("alice", Scope::Input).unwrap();
        let named_grant = store.check(&named).unwrap();
        assert!(store.still_valid(&named_grant));
        // Made again, the name's earlier key is no longer valid.
        let newer = store.ephemeral(RESERVED_NAME, Scope::Input);
        assert_ne!(newer, link);
        assert!(store.check(&link).is_none());
        assert!(!store.still_valid(&grant));
        assert!(store.check(&newer).is_some());
        // An unusable file does not take the ephemeral keys with it.
        std::fs::set_permissions(store.path(), std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(store.check(&newer).is_some());
        assert!(store.check(&named).is_none());
    }

    #[test]
    fn names() {
        for good in ["a", "alice", "A.b_c-9", &"n".repeat(64), "links", "-x"] {
            check_name(good).unwrap();
        }
        for bad in [
            "",
            &"n".repeat(65),
            "link",
            "LINK",
            "two words",
            "a/b",
            "é",
            "a\n",
            "key=1",
        ] {
            let err = check_name(bad).unwrap_err();
            assert!(err.is_usage(), "{bad:?}: {err}");
        }
        let tmp = TempDir::new("names");
        let store = KeyStore::new(&tmp.0);
        assert!(store.add("link", Scope::View).unwrap_err().is_usage());
        assert!(store.add("a b", Scope::View).unwrap_err().is_usage());
        assert!(store.revoke("a b").unwrap_err().is_usage());
        assert!(!store.path().exists());
    }

    #[test]
    fn unsafe_files_are_refused() {
        let tmp = TempDir::new("unsafe");
        let store = KeyStore::new(&tmp.0);
        let key = store.add("alice", Scope::View).unwrap();

        std::fs::set_permissions(store.path(), std::fs::Permissions::from_mode(0o644)).unwrap();
        let err = store.list().unwrap_err();
        assert!(matches!(err, KeyError::Refused { .. }), "{err}");
        assert!(err.to_string().contains("mode 0644"), "{err}");
        assert!(err.to_string().contains("chmod 600"), "{err}");
        assert!(store.check(&key).is_none());
        assert!(matches!(
            store.add("bob", Scope::View).unwrap_err(),
            KeyError::Refused { .. }
        ));
        assert!(matches!(
            store.revoke("alice").unwrap_err(),
            KeyError::Refused { .. }
        ));
        // Nothing was rewritten meanwhile.
        assert_eq!(mode(store.path()), 0o644);
        std::fs::set_permissions(store.path(), std::fs::Permissions::from_mode(0o600)).unwrap();
        assert!(store.check(&key).is_some());

        // A symbolic link to a good file is refused too.
        let real = tmp.0.join("real");
        std::fs::rename(store.path(), &real).unwrap();
        std::os::unix::fs::symlink(&real, store.path()).unwrap();
        let err = store.list().unwrap_err();
        assert!(err.to_string().contains("symbolic link"), "{err}");
        assert!(store.check(&key).is_none());
        std::fs::remove_file(store.path()).unwrap();

        // A directory in its place.
        std::fs::create_dir(store.path()).unwrap();
        assert!(
            store
                .list()
                .unwrap_err()
                .to_string()
                .contains("a directory")
        );
        std::fs::remove_dir(store.path()).unwrap();

        // Lines that are not keys.
        let write = |text: &str| {
            std::fs::write(store.path(), text).unwrap();
            std::fs::set_permissions(store.path(), std::fs::Permissions::from_mode(0o600)).unwrap();
        };
        let digest = hex(&digest(&key));
        let good = format!(
            r#"{{"name":"alice","scope":"view","sha256":"{digest}","created":"2026-01-01T00:00:00.000Z"}}"#
        );
        write(&format!("\n{good}\n\n"));
        assert_eq!(store.check(&key).unwrap().name, "alice");
        for (bad, line) in [
            (format!("{good}\nnot json\n"), 2),
            (good.replace("view", "admin"), 1),
            (good.replace(&digest, &digest[..60]), 1),
            (good.replace("alice", "link"), 1),
        ] {
            write(&bad);
            match store.list().unwrap_err() {
                KeyError::Contents { line: got, .. } => assert_eq!(got, line, "{bad}"),
                other => panic!("{bad}: {other}"),
            }
            assert!(store.check(&key).is_none(), "{bad}");
            assert!(store.add("bob", Scope::View).is_err(), "{bad}");
        }
    }

    #[test]
    fn digests_are_compared_not_keys() {
        let tmp = TempDir::new("digests");
        let store = KeyStore::new(&tmp.0);
        // A key of our own choosing, stored by its digest only: checking
        // the key grants, checking what is stored does not.
        let key = "a-key-someone-chose-by-hand-0123456789";
        let digest = hex(&digest(key));
        std::fs::write(
            store.path(),
            format!(
                r#"{{"name":"hand","scope":"input","sha256":"{}","created":"2026-01-01T00:00:00.000Z"}}"#,
                digest.to_uppercase()
            ),
        )
        .unwrap();
        std::fs::set_permissions(store.path(), std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(store.check(key).unwrap().name, "hand");
        assert!(store.check(&digest).is_none());
        assert!(store.check(&digest.to_uppercase()).is_none());
        assert_eq!(unhex(&digest), Some(super::digest(key)));
        assert_eq!(unhex("zz"), None);
        assert_eq!(unhex(&"g".repeat(64)), None);
    }
}
