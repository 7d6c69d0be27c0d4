//! The bearer token and its file: made once from the operating system's
//! random source, or read from a file that must pass [`read_token_file`]
//! (which `doctor` uses too).

use std::path::Path;

use subtle::ConstantTimeEq as _;

use super::HttpError;

/// Bytes of randomness in a new token (written as twice as many hex digits).
const TOKEN_BYTES: usize = 32;

/// The fewest characters a token read from a file may have.
const MIN_TOKEN_CHARS: usize = 16;

/// The bearer token (kept out of `Debug` output).
#[derive(Clone)]
pub struct Token(pub(super) String);

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(..)")
    }
}

impl Token {
    /// The token as sent after `Bearer `.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether `given` is this token, in time independent of where they
    /// differ.
    pub(super) fn matches(&self, given: &[u8]) -> bool {
        bool::from(self.0.as_bytes().ct_eq(given))
    }
}

/// Reads the token from `path`, or creates the file (mode 0600, a fresh
/// random token) when it does not exist. Returns the token and whether the
/// file was created now. `create_dir`: create a missing parent directory
/// with mode 0700 (for the default file in the state directory). An
/// existing file must pass [`read_token_file`].
pub fn load_or_create_token(path: &Path, create_dir: bool) -> Result<(Token, bool), HttpError> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let fail = |reason: String| HttpError::TokenFile {
        path: path.to_path_buf(),
        reason,
    };
    if create_dir && let Some(dir) = path.parent() {
        crate::terminal::backend::private_dir(dir)
            .map_err(|e| fail(format!("its directory {}: {e}", dir.display())))?;
    }
    // O_CREAT | O_EXCL never follows a symbolic link and never opens a FIFO
    // or another existing file: whatever is there already is judged below.
    let nofollow = rustix::fs::OFlags::NOFOLLOW.bits() as i32;
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(nofollow)
        .open(path)
    {
        Ok(mut file) => {
            let token = new_token().map_err(|e| fail(format!("no random bytes: {e}")))?;
            file.write_all(format!("{token}\n").as_bytes())
                .and_then(|()| file.sync_all())
                .map_err(|e| fail(format!("cannot write it: {e}")))?;
            return Ok((Token(token), true));
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(fail(format!("cannot create it: {e}"))),
    }
    match read_token_file(path) {
        Ok(Some(file)) => Ok((file.token, false)),
        Ok(None) => Err(fail(
            "it was removed while it was being read; start again".into(),
        )),
        Err(refusal) => Err(fail(refusal.reason)),
    }
}

/// The most bytes a token file may have (the token and white space around
/// it).
pub const MAX_TOKEN_FILE_BYTES: u64 = 64 * 1024;

/// What is wrong with a token file (see [`read_token_file`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TokenFileProblem {
    /// Its status cannot be read, or it cannot be opened or read.
    Unreadable,
    /// A symbolic link, a FIFO, a directory, a device or a socket.
    NotRegular,
    /// It belongs to another user.
    OtherOwner,
    /// Group or others may read or write it.
    NotPrivate,
    /// Larger than [`MAX_TOKEN_FILE_BYTES`], not text, or not one token of
    /// at least 16 printable characters.
    Contents,
}

/// Why a token file is refused, by `serve --http` and by `doctor` alike.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TokenFileRefusal {
    /// What kind of problem.
    pub problem: TokenFileProblem,
    /// What is wrong, and what to do about it.
    pub reason: String,
    /// The file's permission bits, when its status could be read.
    pub mode: Option<u32>,
}

/// An existing token file that passed every check.
#[derive(Debug)]
#[non_exhaustive]
pub struct TokenFile {
    /// The token in it.
    pub token: Token,
    /// Its permission bits.
    pub mode: u32,
}

/// Reads and checks an existing token file, exactly as `serve --http` uses
/// it: `Ok(None)` when there is none. Refused: whatever
/// `read_private_file` refuses (a symbolic link, anything but a regular
/// file, a file of another user or that group or others may read or
/// write, one larger than [`MAX_TOKEN_FILE_BYTES`]), and one that is not a
/// single token of at least 16 printable ASCII characters. `doctor` calls
/// this too, so both judge a file alike.
pub fn read_token_file(path: &Path) -> Result<Option<TokenFile>, TokenFileRefusal> {
    let Some(file) = read_private_file(path, MAX_TOKEN_FILE_BYTES, &TOKEN_ADVICE)? else {
        return Ok(None);
    };
    let token = parse_token(&file.bytes).map_err(|reason| TokenFileRefusal {
        problem: TokenFileProblem::Contents,
        reason,
        mode: Some(file.mode),
    })?;
    Ok(Some(TokenFile {
        token,
        mode: file.mode,
    }))
}

/// What [`read_private_file`]'s refusals tell the user to do, after the
/// `; ` that ends what is wrong.
pub(crate) struct Advice {
    /// How a file of this kind is named ("a token file").
    pub(crate) noun: &'static str,
    /// For a symbolic link.
    pub(crate) symlink: &'static str,
    /// For a FIFO, a directory, a device or a socket.
    pub(crate) not_regular: &'static str,
    /// For a file of another user.
    pub(crate) other_owner: &'static str,
    /// Added to ``make it private with `chmod 600 PATH` ``.
    pub(crate) not_private: &'static str,
    /// For a file larger than the limit.
    pub(crate) too_large: &'static str,
}

/// The advice for a token file.
const TOKEN_ADVICE: Advice = Advice {
    noun: "a token file",
    symlink: "point --token-file at the file itself",
    not_regular: "point --token-file at a regular file",
    other_owner: "use a token file of your own",
    not_private: " (and choose a new token if others may have read it)",
    too_large: "put one shorter token in it, or delete it to have a new one made",
};

/// An existing file that passed [`read_private_file`]'s checks.
pub(crate) struct PrivateFile {
    /// Its contents.
    pub(crate) bytes: Vec<u8>,
    /// Its permission bits.
    pub(crate) mode: u32,
}

/// Reads an existing file that holds a secret (or what guards one):
/// `Ok(None)` when there is none. Refused: a symbolic link (looked at with
/// `lstat`, and opened with `O_NOFOLLOW`), anything but a regular file
/// (opened with `O_NONBLOCK`, so a FIFO put in its place between the check
/// and the open cannot block), a file replaced between the check and the
/// open, a file of another user or that group or others may read or
/// write, and one larger than `max_bytes`. The token file and the web
/// keys file are read by this; `advice` says what to do about a refusal.
pub(crate) fn read_private_file(
    path: &Path,
    max_bytes: u64,
    advice: &Advice,
) -> Result<Option<PrivateFile>, TokenFileRefusal> {
    use std::io::Read as _;
    use std::os::unix::fs::{MetadataExt as _, OpenOptionsExt as _};
    let refuse = |problem, reason: String, mode| TokenFileRefusal {
        problem,
        reason,
        mode,
    };
    let seen = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(refuse(
                TokenFileProblem::Unreadable,
                format!("cannot read its status: {e}"),
                None,
            ));
        }
    };
    let mode = seen.mode() & 0o7777;
    not_regular(&seen, advice).map_or(Ok(()), |why| {
        Err(refuse(TokenFileProblem::NotRegular, why, Some(mode)))
    })?;
    let flags = (rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK).bits() as i32;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(flags)
        .open(path)
        .map_err(|e| {
            refuse(
                TokenFileProblem::Unreadable,
                format!("cannot open it: {e}"),
                Some(mode),
            )
        })?;
    let meta = file.metadata().map_err(|e| {
        refuse(
            TokenFileProblem::Unreadable,
            format!("cannot read its status: {e}"),
            Some(mode),
        )
    })?;
    let mode = meta.mode() & 0o7777;
    if (meta.dev(), meta.ino()) != (seen.dev(), seen.ino()) {
        return Err(refuse(
            TokenFileProblem::NotRegular,
            "it was replaced while it was being checked; start again".into(),
            Some(mode),
        ));
    }
    not_regular(&meta, advice).map_or(Ok(()), |why| {
        Err(refuse(TokenFileProblem::NotRegular, why, Some(mode)))
    })?;
    let uid = crate::terminal::guard::current_uid();
    if meta.uid() != uid {
        return Err(refuse(
            TokenFileProblem::OtherOwner,
            format!(
                "owned by user {}, not by this user ({uid}); {}",
                meta.uid(),
                advice.other_owner
            ),
            Some(mode),
        ));
    }
    if mode & 0o077 != 0 {
        return Err(refuse(
            TokenFileProblem::NotPrivate,
            format!(
                "group or others may read or write it (mode {mode:04o}); \
                 make it private with `chmod 600 {}`{}",
                path.display(),
                advice.not_private
            ),
            Some(mode),
        ));
    }
    let too_large = |size: u64| {
        refuse(
            TokenFileProblem::Contents,
            format!(
                "it has {size} bytes, more than the {max_bytes} bytes {} may have; {}",
                advice.noun, advice.too_large
            ),
            Some(mode),
        )
    };
    if meta.len() > max_bytes {
        return Err(too_large(meta.len()));
    }
    let mut bytes = Vec::new();
    file.take(max_bytes + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| {
            refuse(
                TokenFileProblem::Unreadable,
                format!("cannot read it: {e}"),
                Some(mode),
            )
        })?;
    // It grew after its status was read.
    if bytes.len() as u64 > max_bytes {
        return Err(too_large(bytes.len() as u64));
    }
    Ok(Some(PrivateFile { bytes, mode }))
}

/// Why a file of this status cannot be read as a private file, if it
/// cannot.
fn not_regular(meta: &std::fs::Metadata, advice: &Advice) -> Option<String> {
    use std::os::unix::fs::FileTypeExt as _;
    let kind = meta.file_type();
    if kind.is_file() {
        return None;
    }
    if kind.is_symlink() {
        return Some(format!(
            "it is a symbolic link, which is refused; {}",
            advice.symlink
        ));
    }
    let what = if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_dir() {
        "a directory"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_char_device() || kind.is_block_device() {
        "a device"
    } else {
        "not a file"
    };
    Some(format!(
        "not a regular file (it is {what}); {}",
        advice.not_regular
    ))
}

/// The token in a token file's bytes: one word of printable ASCII, at
/// least [`MIN_TOKEN_CHARS`] long, with white space around it.
fn parse_token(bytes: &[u8]) -> Result<Token, String> {
    let text = std::str::from_utf8(bytes).map_err(|_| {
        "it is not text; put one token of printable characters in it, \
         or delete it to have a new one made"
            .to_owned()
    })?;
    let token = text.trim();
    if token.len() < MIN_TOKEN_CHARS {
        return Err(format!(
            "the token must have at least {MIN_TOKEN_CHARS} characters; \
             delete the file to have a new one made"
        ));
    }
    if !token.bytes().all(|b| b.is_ascii_graphic()) {
        return Err("the token must be one word of printable ASCII characters".into());
    }
    Ok(Token(token.to_owned()))
}

/// A fresh token: [`TOKEN_BYTES`] bytes from the operating system, as hex
/// (also the form of a web key).
pub(crate) fn new_token() -> std::io::Result<String> {
    use std::fmt::Write as _;
    let mut bytes = [0u8; TOKEN_BYTES];
    let mut filled = 0;
    while filled < bytes.len() {
        match rustix::rand::getrandom(&mut bytes[filled..], rustix::rand::GetRandomFlags::empty()) {
            Ok(n) => filled += n,
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
    let mut hex = String::with_capacity(TOKEN_BYTES * 2);
    for b in bytes {
        // Writing to a String cannot fail.
        let _ = write!(hex, "{b:02x}");
    }
    Ok(hex)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn token_file_checks() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir =
            std::env::temp_dir().join(format!("tmux-mcp-token-checks-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let write = |name: &str, text: &str| {
            let path = dir.join(name);
            std::fs::write(&path, text).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
            path
        };
        assert!(read_token_file(&dir.join("missing")).unwrap().is_none());

        let long = "t".repeat(5000);
        let file = read_token_file(&write("long", &format!("{long}\n")))
            .unwrap()
            .unwrap();
        assert_eq!(file.token.as_str(), long);
        assert_eq!(file.mode, 0o600);

        let max = usize::try_from(MAX_TOKEN_FILE_BYTES).unwrap();
        let largest = format!("{}\n", "m".repeat(max - 1));
        assert!(
            read_token_file(&write("largest", &largest))
                .unwrap()
                .is_some()
        );
        let refusal = read_token_file(&write("huge", &"h".repeat(max + 1))).unwrap_err();
        assert_eq!(refusal.problem, TokenFileProblem::Contents);
        assert!(refusal.reason.contains("65537 bytes"), "{}", refusal.reason);

        let link = dir.join("link");
        std::os::unix::fs::symlink(dir.join("long"), &link).unwrap();
        let refusal = read_token_file(&link).unwrap_err();
        assert_eq!(refusal.problem, TokenFileProblem::NotRegular);
        assert!(
            refusal.reason.contains("symbolic link"),
            "{}",
            refusal.reason
        );
        assert!(load_or_create_token(&link, false).is_err());

        let refusal = read_token_file(&dir).unwrap_err();
        assert_eq!(refusal.problem, TokenFileProblem::NotRegular);
        assert!(refusal.reason.contains("a directory"), "{}", refusal.reason);

        for bad in ["short\n", "two words-of-token-text\n"] {
            let refusal = read_token_file(&write("bad", bad)).unwrap_err();
            assert_eq!(refusal.problem, TokenFileProblem::Contents, "{bad}");
        }
        let open = write("open", "a-token-of-enough-characters\n");
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o640)).unwrap();
        let refusal = read_token_file(&open).unwrap_err();
        assert_eq!(refusal.problem, TokenFileProblem::NotPrivate);
        assert_eq!(refusal.mode, Some(0o640));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn token_files() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = std::env::temp_dir().join(format!("tmux-mcp-token-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let path = dir.join("state").join("http-token");
        let (token, created) = load_or_create_token(&path, true).unwrap();
        assert!(created);
        assert_eq!(token.as_str().len(), 64);
        assert!(token.as_str().bytes().all(|b| b.is_ascii_hexdigit()));
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let (again, created) = load_or_create_token(&path, true).unwrap();
        assert!(!created);
        assert_eq!(again.as_str(), token.as_str());
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let err = load_or_create_token(&path, true).unwrap_err();
        assert!(err.is_config_error());
        assert!(err.to_string().contains("mode 0644"), "{err}");
        std::fs::write(dir.join("short"), "abc\n").unwrap();
        std::fs::set_permissions(dir.join("short"), std::fs::Permissions::from_mode(0o600))
            .unwrap();
        assert!(load_or_create_token(&dir.join("short"), false).is_err());
        assert!(load_or_create_token(&dir.join("missing/x"), false).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
