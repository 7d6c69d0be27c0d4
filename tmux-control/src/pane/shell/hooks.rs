//! The hooks and how shells load them: [`ShellIntegration`] and [`Launch`].

use std::io;
use std::path::{Path, PathBuf};

use super::scripts::{BASH_HOOKS, FISH_HOOKS, ZSH_HOOKS, ZSHENV};
use super::{NONCE_VARIABLE, ShellKind};
use crate::command::{OptionScope, SetOption};
use crate::error::Result;
use crate::pane::Tmux;
use crate::quote::quote;

/// An awk program that undoes what tmux 3.4 does to text it prints
/// (`show-options -v` included): a backslash before each `$` that starts a
/// name or a `{`, so `$HOME` reads `\$HOME`. The published texts never
/// hold a backslash before such a `$` (a unit test checks), so on every
/// other version it changes nothing. It is published beside the hooks (in
/// `@tmux-control-unescape`) and read from there by the line that reads
/// them: that way no shell has to quote it (it holds double quotes and
/// `$`, which fish's double quotes would expand, and a default-command may
/// hold no backslash). It holds no backslash itself (awk makes character
/// 92), nor a `$` that tmux 3.4 would escape, so it reads back as it is.
const UNESCAPE: &str = r#"BEGIN{b=sprintf("%c",92)}{o="";s=$0;while(i=index(s,b"$")){c=substr(s,i+2,1);o=o substr(s,1,i-1);if(c!~/[A-Za-z_{]/)o=o b;o=o"$";s=substr(s,i+2)}print o s}"#;

/// The file name whose option holds [`UNESCAPE`].
const UNESCAPE_NAME: &str = "unescape";

/// Whether `nonce` is one the hooks accept: 1 to 64 hex digits.
fn valid_nonce(nonce: &str) -> bool {
    (1..=64).contains(&nonce.len()) && nonce.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The hooks of every supported shell, and the commands that start a shell
/// with them or load them into a shell already running.
///
/// Shells find the hooks in one of two places:
///
/// - **Files**: [`ShellIntegration::install`] writes them into a directory
///   of the machine the shells run on.
/// - **The tmux server itself**: [`ShellIntegration::through_tmux`] writes
///   nothing; [`ShellIntegration::publish`] stores the hooks in user options
///   of the server (over the control connection), and the shells read them
///   back with `tmux show-options`. A shell needs only `tmux`, `sh`, `awk`
///   and `mktemp` on its own machine, so this reaches servers over ssh or
///   in containers, where no local path is valid. (`awk` undoes tmux 3.4's
///   escaping of `$` in what it prints.)
///
/// ```
/// use tmux_control::shell::{ShellIntegration, ShellKind};
/// let dir = std::env::temp_dir().join(format!("hooks-doc-{}", std::process::id()));
/// let hooks = ShellIntegration::install(&dir)?;
/// let launch = hooks.launch(ShellKind::Bash, "/bin/bash", "00ff")?;
/// assert!(launch.command.starts_with("exec /bin/bash --rcfile "));
/// assert_eq!(launch.env, [("TMUX_CONTROL_SHELL_NONCE".to_owned(), "00ff".to_owned())]);
/// assert!(hooks.source_line(ShellKind::Zsh, "00ff")?.starts_with(" . "));
/// # std::fs::remove_dir_all(&dir)?;
///
/// let remote = ShellIntegration::through_tmux("tmux");
/// assert!(remote.source_line(ShellKind::Bash, "00ff")?.contains("show-options -gqv @tmux-control-bash-hooks"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct ShellIntegration {
    source: HookSource,
}

/// Where the shells read the hooks from.
#[derive(Debug, Clone)]
enum HookSource {
    /// Files in this directory.
    Dir(PathBuf),
    /// The user options of the server the shell runs in, read with this
    /// tmux program (a name on the shell's `PATH`, or a path there).
    Tmux(String),
}

/// How to start an integrated shell: a command line for tmux to run
/// (through `sh -c`) and the environment it needs.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Launch {
    /// The command line.
    pub command: String,
    /// Variables to set for it.
    pub env: Vec<(String, String)>,
}

/// The prefix of the server options [`ShellIntegration::publish`] sets.
const OPTION_PREFIX: &str = "@tmux-control-";

/// The variable a launched shell's start-up file finds its own temporary
/// copy in (hooks read through tmux), to remove it.
const RC_VARIABLE: &str = "TMUX_CONTROL_RC";

impl ShellIntegration {
    /// Writes the hook files into `dir` (created with mode 0700 if missing;
    /// the files get mode 0600), replacing older versions of them.
    pub fn install(dir: impl Into<PathBuf>) -> io::Result<Self> {
        use std::os::unix::fs::DirBuilderExt as _;
        let dir = dir.into();
        for sub in ["", "bash", "zsh", "fish"] {
            match std::fs::DirBuilder::new()
                .mode(0o700)
                .recursive(true)
                .create(dir.join(sub))
            {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(e),
            }
        }
        let this = Self {
            source: HookSource::Dir(dir),
        };
        for (name, text) in this.files() {
            this.write(name, &text)?;
        }
        Ok(this)
    }

    /// Hooks that shells read from the tmux server they run in, with
    /// `tmux_program` (the tmux the shells run: `tmux` on their `PATH`, or
    /// its path on their machine). Writes nothing; call
    /// [`publish`](Self::publish) on each connection whose shells use it.
    ///
    /// ```
    /// use tmux_control::shell::{ShellIntegration, ShellKind};
    /// let hooks = ShellIntegration::through_tmux("tmux");
    /// assert!(hooks.dir().is_none());
    /// let fish = hooks.launch(ShellKind::Fish, "fish", "0a")?;
    /// assert!(fish.command.contains("@tmux-control-fish-hooks-fish | awk"));
    /// assert!(fish.command.contains(" | source -"));
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn through_tmux(tmux_program: impl Into<String>) -> Self {
        Self {
            source: HookSource::Tmux(tmux_program.into()),
        }
    }

    /// Stores the hooks in the server's global user options
    /// (`@tmux-control-bash-hooks` and the like), where shells started or
    /// loaded by [`through_tmux`](Self::through_tmux) hooks read them. Harmless for
    /// file hooks (their shells do not read the options).
    ///
    /// ```no_run
    /// # async fn demo(tmux: &tmux_control::Tmux) -> tmux_control::Result<()> {
    /// tmux_control::shell::ShellIntegration::through_tmux("tmux").publish(tmux).await?;
    /// # Ok(()) }
    /// ```
    pub async fn publish(&self, tmux: &Tmux) -> Result<()> {
        let through = Self::through_tmux(self.tmux_program());
        let unescape = (UNESCAPE_NAME, UNESCAPE.to_owned());
        for (name, text) in through.files().into_iter().chain([unescape]) {
            tmux.run(SetOption::new(OptionScope::Session, Self::option(name), text).global())
                .await?;
        }
        Ok(())
    }

    /// The directory the hook files are in; `None` for hooks read through
    /// tmux.
    pub fn dir(&self) -> Option<&Path> {
        match &self.source {
            HookSource::Dir(dir) => Some(dir),
            HookSource::Tmux(_) => None,
        }
    }

    /// The tmux program the shells run to read the hooks (`tmux` for file
    /// hooks, which do not need it).
    fn tmux_program(&self) -> &str {
        match &self.source {
            HookSource::Dir(_) => "tmux",
            HookSource::Tmux(program) => program,
        }
    }

    /// The hook files by name, and their text.
    fn files(&self) -> Vec<(&'static str, String)> {
        let bash_rc = format!(
            "# Written by tmux-control: an interactive bash's start-up files, then the hooks.\n\
             {cleanup}\
             [ -r /etc/bash.bashrc ] && . /etc/bash.bashrc\n\
             [ -r \"$HOME/.bashrc\" ] && . \"$HOME/.bashrc\"\n\
             {load}\n\
             unset {NONCE_VARIABLE}\n",
            cleanup = self.cleanup("rm -f"),
            load = self.load(ShellKind::Bash, &format!("\"${{{NONCE_VARIABLE}:-}}\"")),
        );
        let zshrc = format!(
            "# Written by tmux-control: the user's .zshrc, then the hooks.\n\
             ZDOTDIR=$__tmc_user_zdotdir\n\
             unset __tmc_zdotdir __tmc_user_zdotdir TMUX_CONTROL_USER_ZDOTDIR\n\
             {cleanup}\
             [[ -r $ZDOTDIR/.zshrc ]] && . $ZDOTDIR/.zshrc\n\
             {load}\n\
             unset {NONCE_VARIABLE}\n",
            cleanup = self.cleanup("rm -rf"),
            load = self.load(ShellKind::Zsh, &format!("\"${{{NONCE_VARIABLE}:-}}\"")),
        );
        vec![
            ("bash/hooks", BASH_HOOKS.to_owned()),
            ("bash/rc", bash_rc),
            ("zsh/hooks", ZSH_HOOKS.to_owned()),
            ("zsh/.zshenv", ZSHENV.to_owned()),
            ("zsh/.zshrc", zshrc),
            ("fish/hooks.fish", FISH_HOOKS.to_owned()),
        ]
    }

    /// For hooks read through tmux: the line of a start-up file that
    /// removes the file's temporary copy (its path in [`RC_VARIABLE`]).
    fn cleanup(&self, remove: &str) -> String {
        match &self.source {
            HookSource::Dir(_) => String::new(),
            HookSource::Tmux(_) => format!(
                "[ -n \"${{{RC_VARIABLE}:-}}\" ] && {remove} -- \"${RC_VARIABLE}\"; unset {RC_VARIABLE}\n"
            ),
        }
    }

    /// The server option the file `name` is published in: `bash/hooks`
    /// in `@tmux-control-bash-hooks`, `zsh/.zshrc` in
    /// `@tmux-control-zsh-zshrc`.
    fn option(name: &str) -> String {
        let name = name.replace("/.", "/").replace(['/', '.'], "-");
        format!("{OPTION_PREFIX}{name}")
    }

    /// `tmux show-options -gqv OPTION`, quoted for `sh` (or for fish),
    /// through the published [`UNESCAPE`] program.
    fn show(&self, name: &str, fish: bool) -> String {
        let tmux = quote(self.tmux_program());
        let show = |name: &str| format!("{tmux} show-options -gqv {}", Self::option(name));
        let program = if fish {
            format!("({})", show(UNESCAPE_NAME))
        } else {
            format!("\"$({})\"", show(UNESCAPE_NAME))
        };
        format!("{} | awk {program}", show(name))
    }

    /// The shell code that loads `kind`'s hooks with the nonce `nonce` (a
    /// word of that shell: a literal or a variable).
    fn load(&self, kind: ShellKind, nonce: &str) -> String {
        match (&self.source, kind) {
            (HookSource::Dir(_), ShellKind::Bash) => {
                format!(". {} {nonce}", quote(&self.path("bash/hooks")))
            }
            (HookSource::Dir(_), ShellKind::Zsh) => {
                format!(". {} {nonce}", quote(&self.path("zsh/hooks")))
            }
            (HookSource::Dir(_), ShellKind::Fish) => {
                format!("source {} {nonce}", quote(&self.path("fish/hooks.fish")))
            }
            // Run inside a function, so that the hooks see the nonce as
            // their `$1`, as when they are sourced from a file.
            (HookSource::Tmux(_), ShellKind::Bash | ShellKind::Zsh) => format!(
                "__tmc_load() {{ eval \"$({})\"; }}; __tmc_load {nonce}; unset -f __tmc_load",
                self.show(&format!("{}/hooks", kind.name()), false)
            ),
            (HookSource::Tmux(_), ShellKind::Fish) => {
                format!("{} | source - {nonce}", self.show("fish/hooks.fish", true))
            }
        }
    }

    fn path(&self, name: &str) -> String {
        match &self.source {
            HookSource::Dir(dir) => dir.join(name).display().to_string(),
            HookSource::Tmux(_) => name.to_owned(),
        }
    }

    fn write(&self, name: &str, text: &str) -> io::Result<()> {
        use std::io::Write as _;
        use std::os::unix::fs::OpenOptionsExt as _;
        let Some(dir) = self.dir() else {
            return Ok(());
        };
        let path = dir.join(name);
        let tmp = dir.join(format!(
            ".{}.{}",
            name.replace('/', "-"),
            std::process::id()
        ));
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)?;
        file.write_all(text.as_bytes())?;
        drop(file);
        std::fs::rename(&tmp, &path)
    }

    /// The command line that starts `program` (the shell's path, for
    /// example tmux's `default-shell`) as an interactive `kind` shell that
    /// reads the user's usual start-up files and then the hooks, marking
    /// with `nonce` (hex digits). It is read by `kind` itself (tmux runs a
    /// command through its `default-shell`) and by `sh`.
    ///
    /// bash reads `/etc/bash.bashrc` and `~/.bashrc` (as an interactive
    /// non-login bash does); zsh its `.zshenv` and `.zshrc` from the
    /// user's `ZDOTDIR`; fish its usual configuration. With hooks read
    /// through tmux, bash and zsh start from a temporary copy of their
    /// start-up file (made with `mktemp`, removed as it is read); where
    /// none can be made, the shell starts without the hooks.
    pub fn launch(&self, kind: ShellKind, program: &str, nonce: &str) -> io::Result<Launch> {
        check_nonce(nonce)?;
        Ok(Launch {
            command: self.launch_line(kind, &quote(program)),
            env: vec![(NONCE_VARIABLE.to_owned(), nonce.to_owned())],
        })
    }

    /// [`launch`](Self::launch)'s line, with `program` already a shell
    /// word (quoted, or a variable).
    fn launch_line(&self, kind: ShellKind, program: &str) -> String {
        let fish = || {
            // In double quotes, so that the line holds no backslash (see
            // `default_command`); `$` expands to the nonce in sh and in
            // fish alike. A path that double quotes cannot hold as it is
            // is single-quoted instead.
            let init = format!(
                "{}; set -e {NONCE_VARIABLE}",
                self.load(kind, &format!("${NONCE_VARIABLE}"))
            );
            let plain = init.replace(&format!("${NONCE_VARIABLE}"), "");
            if plain.contains(['"', '$', '`', '\\']) {
                format!("exec {program} -i -C {}", quote(&init))
            } else {
                format!("exec {program} -i -C \"{init}\"")
            }
        };
        match (&self.source, kind) {
            (_, ShellKind::Fish) => fish(),
            (HookSource::Dir(_), ShellKind::Bash) => format!(
                "exec {program} --rcfile {} -i",
                quote(&self.path("bash/rc"))
            ),
            (HookSource::Dir(_), ShellKind::Zsh) => format!(
                "exec env TMUX_CONTROL_USER_ZDOTDIR=\"${{ZDOTDIR:-$HOME}}\" ZDOTDIR={} {program} -i",
                quote(&self.path("zsh"))
            ),
            // A temporary copy of the start-up files; where none can be
            // made, or the server holds no hooks, the shell starts plainly.
            (HookSource::Tmux(_), ShellKind::Bash) => format!(
                "if {RC_VARIABLE}=$(mktemp 2>/dev/null); then \
                 if {} >\"${RC_VARIABLE}\" && [ -s \"${RC_VARIABLE}\" ]; then \
                 export {RC_VARIABLE}; exec {program} --rcfile \"${RC_VARIABLE}\" -i; fi; \
                 rm -f -- \"${RC_VARIABLE}\"; fi; exec {program} -i",
                self.show("bash/rc", false)
            ),
            (HookSource::Tmux(_), ShellKind::Zsh) => format!(
                "if {RC_VARIABLE}=$(mktemp -d 2>/dev/null); then \
                 if {} >\"${RC_VARIABLE}/.zshenv\" && {} >\"${RC_VARIABLE}/.zshrc\" && [ -s \"${RC_VARIABLE}/.zshrc\" ]; then \
                 export {RC_VARIABLE} TMUX_CONTROL_USER_ZDOTDIR=\"${{ZDOTDIR:-$HOME}}\" ZDOTDIR=\"${RC_VARIABLE}\"; exec {program} -i; fi; \
                 rm -rf -- \"${RC_VARIABLE}\"; fi; exec {program} -i",
                self.show("zsh/.zshenv", false),
                self.show("zsh/.zshrc", false)
            ),
        }
    }

    /// A line to type into a `kind` shell that is already running at its
    /// prompt, loading the hooks with `nonce`. It starts with a space, so
    /// a shell that keeps such lines out of its history does.
    pub fn source_line(&self, kind: ShellKind, nonce: &str) -> io::Result<String> {
        check_nonce(nonce)?;
        Ok(format!(" {}", self.load(kind, nonce)))
    }

    /// A command for tmux's `default-command` that starts every new pane's
    /// shell (`$SHELL`, which tmux sets to its `default-shell`) with the
    /// hooks when it is bash, zsh or fish, and as it is otherwise. Each
    /// shell makes its own nonce and records `KIND NONCE` (for example
    /// `bash 0a1b…`) in the pane's user option `announce` (such as
    /// `@my-shell`), where the program that follows the pane finds it.
    ///
    /// Panes that name their own command are not affected. The shells start
    /// as interactive non-login shells, as [`launch`](Self::launch)'s do.
    /// Needs `od` and `/dev/urandom` for the nonce; without them the shell
    /// starts without the hooks.
    ///
    /// ```
    /// use tmux_control::shell::ShellIntegration;
    /// let hooks = ShellIntegration::through_tmux("tmux");
    /// let command = hooks.default_command("@my-shell")?;
    /// assert!(command.starts_with("exec /bin/sh -c "));
    /// assert!(hooks.default_command("no at sign").is_err());
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn default_command(&self, announce: &str) -> io::Result<String> {
        let valid = announce.len() > 1
            && announce.starts_with('@')
            && announce[1..]
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if !valid {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{announce:?} is not a user option name ('@' and letters, digits, '-' or '_')"
                ),
            ));
        }
        let tmux = quote(self.tmux_program());
        let mut arms = String::new();
        for kind in [ShellKind::Bash, ShellKind::Zsh, ShellKind::Fish] {
            arms.push_str(&format!(
                "{name}) {tmux} set-option -p -t \"$TMUX_PANE\" {announce} \"{name} $__tmc_n\" && \
                 export {NONCE_VARIABLE}=\"$__tmc_n\" && {launch};; ",
                name = kind.name(),
                launch = self.launch_line(kind, "\"$__tmc_s\""),
            ));
        }
        // The script is read by sh; the quoting around it by whatever shell
        // tmux's default-shell is: single quotes with '\'' inside read the
        // same in sh, bash, zsh and fish, and the script has no backslash.
        let script = format!(
            "__tmc_s=${{SHELL:-/bin/sh}}; \
             __tmc_n=$(od -An -N8 -tx1 /dev/urandom 2>/dev/null | tr -dc 0-9a-f); \
             if [ -n \"$__tmc_n\" ] && [ -n \"${{TMUX_PANE:-}}\" ]; then \
             case ${{__tmc_s##*/}} in {arms}esac; fi; \
             unset {NONCE_VARIABLE}; exec \"$__tmc_s\""
        );
        if script.contains('\\') {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "the tmux program's name holds a backslash, which no default-command can quote for every shell",
            ));
        }
        Ok(format!("exec /bin/sh -c {}", quote(&script)))
    }
}

fn check_nonce(nonce: &str) -> io::Result<()> {
    if valid_nonce(nonce) {
        Ok(())
    } else {
        Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("shell integration nonce {nonce:?} is not 1 to 64 hex digits"),
        ))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn hooks_and_launch_lines() {
        let dir = std::env::temp_dir().join(format!("tmc-shell-unit-{}", std::process::id()));
        let hooks = ShellIntegration::install(&dir).unwrap();
        for name in [
            "bash/hooks",
            "bash/rc",
            "zsh/hooks",
            "zsh/.zshrc",
            "zsh/.zshenv",
            "fish/hooks.fish",
        ] {
            use std::os::unix::fs::PermissionsExt as _;
            let meta = std::fs::metadata(dir.join(name)).unwrap();
            assert_eq!(meta.permissions().mode() & 0o777, 0o600, "{name}");
        }
        assert!(hooks.launch(ShellKind::Fish, "fish", "xyz").is_err());
        let fish = hooks
            .launch(ShellKind::Fish, "/usr/bin/fish", "0a")
            .unwrap();
        assert!(fish.command.contains("hooks.fish"), "{}", fish.command);
        assert_eq!(ShellKind::of("/usr/local/bin/fish"), Some(ShellKind::Fish));
        assert_eq!(ShellKind::Zsh.name(), "zsh");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// What tmux 3.4 prints for `text`: a backslash before each `$` that
    /// starts a name or a `{` (its `utf8_strvis`).
    fn as_tmux_3_4_prints(text: &str) -> String {
        let mut out = String::new();
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            if c == '$'
                && chars
                    .peek()
                    .is_some_and(|n| n.is_ascii_alphabetic() || *n == '_' || *n == '{')
            {
                out.push('\\');
            }
            out.push(c);
        }
        out
    }

    #[test]
    fn hooks_read_through_tmux_survive_tmux_3_4s_escaping() {
        let hooks = ShellIntegration::through_tmux("tmux");
        let mut sh = String::new();
        for (name, text) in hooks.files() {
            // Nothing published has a backslash before such a `$`, so the
            // unescaping changes nothing on the other versions.
            let escaped = as_tmux_3_4_prints(&text);
            for (at, _) in text.match_indices("\\$") {
                let next = text[at + 2..].chars().next();
                assert!(
                    !next.is_some_and(|n| n.is_ascii_alphabetic() || n == '_' || n == '{'),
                    "{name} holds a backslash before a $ name"
                );
            }
            // Undone by a real shell, the 3.4 text is the text again.
            let out = std::process::Command::new("awk")
                .arg(UNESCAPE)
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .spawn()
                .and_then(|mut child| {
                    use std::io::Write as _;
                    child.stdin.take().unwrap().write_all(escaped.as_bytes())?;
                    child.wait_with_output()
                })
                .unwrap();
            assert_eq!(String::from_utf8(out.stdout).unwrap(), text, "{name}");
            sh.push_str(&escaped);
        }
        assert!(
            sh.contains("\\$HOME"),
            "the test's 3.4 escaping did nothing"
        );
        // The program reads back from tmux 3.4 as it is.
        assert_eq!(as_tmux_3_4_prints(UNESCAPE), UNESCAPE);
        assert!(!UNESCAPE.contains(['\\', '\'', '\n']));
    }
}
