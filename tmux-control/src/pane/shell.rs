//! Shell integration: hooks that make bash, zsh and fish mark their
//! prompts and commands in their output, and [`ShellTracker`], which reads
//! those marks back as a command's start, end, exit status and pipeline
//! statuses.
//!
//! The hooks print, with a per-terminal nonce in every OSC 133 mark:
//!
//! | when | what |
//! |---|---|
//! | a prompt is about to be drawn | `OSC 133;D;STATUS;nonce=N;pipestatus=S1,S2` for the command line just finished (not before the first prompt), `OSC 7;file://HOST/DIR`, then `OSC 133;A;nonce=N` |
//! | the prompt is drawn (end of `PS1`) | `OSC 133;B;nonce=N` |
//! | a command line starts running | `OSC 133;C;nonce=N` |
//!
//! Output between `C` and `D` is the command's own output. A mark with
//! another nonce (a program printing OSC 133 of its own, or a file that
//! holds marks) is not this terminal's and is ignored. The hook files are
//! written by [`ShellIntegration::install`]; nothing outside the given
//! directory is changed, and a shell started without them is untouched.
//!
//! (Over 600 lines with its unit tests and the three hook scripts, which
//! are kept here, in one place, as the text they write.)

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher as _, Hasher as _};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::marks::{Mark, MarkScanner, ShellMark};
use crate::command::{OptionScope, SetOption};
use crate::connection::Tmux;
use crate::error::Result;

/// The shells that [`ShellIntegration`] has hooks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ShellKind {
    /// GNU bash 4.4 or later (the hooks use `PS0`).
    Bash,
    /// zsh.
    Zsh,
    /// fish 3 or later.
    Fish,
}

impl ShellKind {
    /// The shell a program name or path is, if it is one with hooks: `bash`,
    /// `/usr/bin/zsh`, `-fish` (a login shell) and the like.
    ///
    /// ```
    /// use tmux_control::ShellKind;
    /// assert_eq!(ShellKind::of("/bin/bash"), Some(ShellKind::Bash));
    /// assert_eq!(ShellKind::of("-zsh"), Some(ShellKind::Zsh));
    /// assert_eq!(ShellKind::of("dash"), None);
    /// ```
    pub fn of(program: &str) -> Option<Self> {
        let name = program.rsplit('/').next().unwrap_or(program);
        match name.trim_start_matches('-') {
            "bash" => Some(Self::Bash),
            "zsh" => Some(Self::Zsh),
            "fish" => Some(Self::Fish),
            _ => None,
        }
    }

    /// The shell's name (`bash`, `zsh`, `fish`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Bash => "bash",
            Self::Zsh => "zsh",
            Self::Fish => "fish",
        }
    }
}

/// The environment variable that hands a launched shell its nonce; the
/// hooks read it and unset it, so the shell's children do not inherit it.
pub const NONCE_VARIABLE: &str = "TMUX_CONTROL_SHELL_NONCE";

/// A fresh nonce: 16 hex digits, different in every call and process.
///
/// ```
/// let a = tmux_control::shell_nonce();
/// assert_eq!(a.len(), 16);
/// assert_ne!(a, tmux_control::shell_nonce());
/// ```
pub fn shell_nonce() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    // RandomState is seeded from the operating system's randomness once per
    // process; the counter makes every call different.
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    hasher.write_u32(std::process::id());
    format!("{:016x}", hasher.finish())
}

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
///   back with `tmux show-options`. A shell needs only `tmux`, `sh` and
///   `mktemp` on its own machine, so this reaches servers over ssh or in
///   containers, where no local path is valid.
///
/// ```
/// use tmux_control::{ShellIntegration, ShellKind};
/// let dir = std::env::temp_dir().join(format!("hooks-doc-{}", std::process::id()));
/// let hooks = ShellIntegration::install(&dir)?;
/// let launch = hooks.launch(ShellKind::Bash, "/bin/bash", "00ff")?;
/// assert!(launch.command.starts_with("exec '/bin/bash' --rcfile "));
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
    /// use tmux_control::{ShellIntegration, ShellKind};
    /// let hooks = ShellIntegration::through_tmux("tmux");
    /// assert!(hooks.dir().is_none());
    /// let fish = hooks.launch(ShellKind::Fish, "fish", "0a")?;
    /// assert!(fish.command.contains("@tmux-control-fish-hooks-fish | source -"));
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
    /// tmux_control::ShellIntegration::through_tmux("tmux").publish(tmux).await?;
    /// # Ok(()) }
    /// ```
    pub async fn publish(&self, tmux: &Tmux) -> Result<()> {
        let through = Self::through_tmux(self.tmux_program());
        for (name, text) in through.files() {
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

    /// `tmux show-options -gqv OPTION`, quoted for a shell.
    fn show(&self, name: &str) -> String {
        format!(
            "{} show-options -gqv {}",
            quote(self.tmux_program()),
            Self::option(name)
        )
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
                self.show(&format!("{}/hooks", kind.name()))
            ),
            (HookSource::Tmux(_), ShellKind::Fish) => {
                format!("{} | source - {nonce}", self.show("fish/hooks.fish"))
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
                self.show("bash/rc")
            ),
            (HookSource::Tmux(_), ShellKind::Zsh) => format!(
                "if {RC_VARIABLE}=$(mktemp -d 2>/dev/null); then \
                 if {} >\"${RC_VARIABLE}/.zshenv\" && {} >\"${RC_VARIABLE}/.zshrc\" && [ -s \"${RC_VARIABLE}/.zshrc\" ]; then \
                 export {RC_VARIABLE} TMUX_CONTROL_USER_ZDOTDIR=\"${{ZDOTDIR:-$HOME}}\" ZDOTDIR=\"${RC_VARIABLE}\"; exec {program} -i; fi; \
                 rm -rf -- \"${RC_VARIABLE}\"; fi; exec {program} -i",
                self.show("zsh/.zshenv"),
                self.show("zsh/.zshrc")
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
    /// use tmux_control::ShellIntegration;
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

/// Single-quotes `word` for a POSIX shell (and fish, for the paths used
/// here: fish reads `'\''` the same way).
fn quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

const ZSHENV: &str = "# Written by tmux-control: the user's .zshenv, read from the user's ZDOTDIR.\n\
__tmc_zdotdir=$ZDOTDIR\n\
ZDOTDIR=${TMUX_CONTROL_USER_ZDOTDIR:-$HOME}\n\
[[ -r $ZDOTDIR/.zshenv ]] && . $ZDOTDIR/.zshenv\n\
__tmc_user_zdotdir=$ZDOTDIR\n\
ZDOTDIR=$__tmc_zdotdir\n";

const BASH_HOOKS: &str = r#"# Shell integration hooks for bash, written by tmux-control.
# Usage: . THIS_FILE NONCE. Marks prompts and commands with OSC 133 (with
# the nonce, the exit status and PIPESTATUS) and the directory with OSC 7.
if [ -n "${1:-}" ] && [ -z "${__tmc_nonce:-}" ]; then
__tmc_nonce=$1
__tmc_prompted=
__tmc_prompt() {
    local __tmc_status=$? __tmc_pipe="${PIPESTATUS[*]}"
    if [ -n "$__tmc_prompted" ]; then
        printf '\033]133;D;%s;nonce=%s;pipestatus=%s\007' "$__tmc_status" "$__tmc_nonce" "${__tmc_pipe// /,}"
    fi
    __tmc_prompted=1
    local __tmc_dir="${PWD//%/%25}"
    printf '\033]7;file://%s%s\007\033]133;A;nonce=%s\007' "${HOSTNAME:-}" "${__tmc_dir//;/%3B}" "$__tmc_nonce"
    return "$__tmc_status"
}
PROMPT_COMMAND="__tmc_prompt${PROMPT_COMMAND:+;$PROMPT_COMMAND}"
PS0="${PS0:-}\\e]133;C;nonce=${__tmc_nonce}\\a"
PS1="${PS1:-}\\[\\e]133;B;nonce=${__tmc_nonce}\\a\\]"
fi
"#;

const ZSH_HOOKS: &str = r#"# Shell integration hooks for zsh, written by tmux-control.
# Usage: . THIS_FILE NONCE. Marks prompts and commands with OSC 133 (with
# the nonce, the exit status and pipestatus) and the directory with OSC 7.
# PROMPT_SP is turned off: zsh prints its partial-line mark before the
# precmd hooks run, so it would land inside the command's output.
if [[ -n ${1:-} && -z ${__tmc_nonce:-} ]]; then
unsetopt PROMPT_SP
typeset -g __tmc_nonce=$1 __tmc_prompted=
__tmc_precmd() {
    local __tmc_status=$? __tmc_pipe=${(j:,:)pipestatus}
    if [[ -n $__tmc_prompted ]]; then
        printf '\033]133;D;%s;nonce=%s;pipestatus=%s\007' $__tmc_status $__tmc_nonce $__tmc_pipe
    fi
    __tmc_prompted=1
    local __tmc_dir=${PWD//\%/%25}
    printf '\033]7;file://%s%s\007\033]133;A;nonce=%s\007' $HOST ${__tmc_dir//;/%3B} $__tmc_nonce
    return $__tmc_status
}
__tmc_preexec() {
    printf '\033]133;C;nonce=%s\007' $__tmc_nonce
}
typeset -ga precmd_functions preexec_functions
precmd_functions=(__tmc_precmd ${precmd_functions:#__tmc_precmd})
preexec_functions=(${preexec_functions:#__tmc_preexec} __tmc_preexec)
PS1="${PS1}%{"$'\e'"]133;B;nonce=${__tmc_nonce}"$'\a'"%}"
fi
"#;

const FISH_HOOKS: &str = r#"# Shell integration hooks for fish, written by tmux-control.
# Usage: source THIS_FILE NONCE. Marks prompts and commands with OSC 133
# (with the nonce, the exit status and pipestatus) and the directory with
# OSC 7. A command line's end is marked right after it runs (before fish
# prints its own missing-newline mark); a line fish did not run (an empty
# one) is marked ended at the next prompt.
if test -n "$argv[1]"; and not set -q __tmc_nonce
    set -g __tmc_nonce $argv[1]
    set -g __tmc_prompted 0
    set -g __tmc_ended 0
    function __tmc_prompt --on-event fish_prompt
        set -l __tmc_status $status
        if test $__tmc_prompted = 1; and test $__tmc_ended = 0
            printf '\e]133;D;%s;nonce=%s\a' $__tmc_status $__tmc_nonce
        end
        set -g __tmc_prompted 1
        set -g __tmc_ended 0
        set -l __tmc_dir (string replace -a ';' '%3B' -- (string replace -a '%' '%25' -- $PWD))
        printf '\e]7;file://%s%s\a\e]133;A;nonce=%s\a' $hostname $__tmc_dir $__tmc_nonce
    end
    function __tmc_preexec --on-event fish_preexec
        printf '\e]133;C;nonce=%s\a' $__tmc_nonce
    end
    function __tmc_postexec --on-event fish_postexec
        set -l __tmc_status $status
        set -l __tmc_pipe (string join , $pipestatus)
        printf '\e]133;D;%s;nonce=%s;pipestatus=%s\a' $__tmc_status $__tmc_nonce $__tmc_pipe
        set -g __tmc_ended 1
    end
    if functions -q fish_prompt; and not functions -q __tmc_user_prompt
        functions -c fish_prompt __tmc_user_prompt
        function fish_prompt
            __tmc_user_prompt
            printf '\e]133;B;nonce=%s\a' $__tmc_nonce
        end
    end
end
"#;

/// Where an integrated shell stands, as its marks tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ShellPhase {
    /// No mark yet: the shell has not drawn its first prompt (it may still
    /// be reading its start-up files), or it has no hooks.
    Starting,
    /// A prompt is being drawn (`A` seen, not yet `B`).
    Prompt,
    /// The prompt is drawn and the shell reads a command line (`B`).
    Ready,
    /// A command line runs (`C` seen, not yet `D`).
    Running,
}

/// A command line that finished, as its marks tell.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct FinishedCommand {
    /// Offset of the first byte of its output: just after the `C` mark, or
    /// when the shell ran nothing (an empty line, a syntax error), where
    /// the tracker started or the last prompt ended.
    pub output_start: u64,
    /// Offset just after its last byte (the start of the `D` mark).
    pub output_end: u64,
    /// Offset just after the `D` mark.
    pub end: u64,
    /// Whether a `C` mark was seen: the shell ran the line.
    pub ran: bool,
    /// The exit status (`$?`), when the shell gave one.
    pub status: Option<i32>,
    /// The status of each command of the pipeline (`PIPESTATUS`,
    /// `pipestatus`), when the shell gave them.
    pub pipestatus: Vec<i32>,
    /// Where the command line itself is in the output, as the shell echoed
    /// it: from the end of the prompt (`B`) to the start of the output
    /// (`C`), when both were marked.
    pub input: Option<(u64, u64)>,
    /// The working directory the shell last reported before the line ended
    /// (the one it ran in).
    pub directory: Option<PathBuf>,
}

/// What [`ShellTracker::feed`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ShellEvent {
    /// A prompt started (`A`), at this offset.
    Prompt(u64),
    /// The prompt is drawn (`B`); input is read from this offset.
    Ready(u64),
    /// A command line started (`C`); its output starts at this offset.
    Started(u64),
    /// A command line finished (`D`).
    Finished(FinishedCommand),
    /// The shell's working directory (OSC 7).
    Directory(PathBuf),
}

/// Follows one integrated shell through its marks, fed its output in
/// order: the [`ShellPhase`], each command's output range and statuses,
/// and the working directory. Pure: no I/O, so it can be fed from a
/// [`PaneStream`](crate::PaneStream), from a log read back, or in a test.
///
/// ```
/// use tmux_control::{ShellEvent, ShellPhase, ShellTracker};
/// let mut shell = ShellTracker::new("ab", 0);
/// let out = b"\x1b]133;A;nonce=ab\x07$ \x1b]133;B;nonce=ab\x07false | true\r\n\
///             \x1b]133;C;nonce=ab\x07\x1b]133;D;0;nonce=ab;pipestatus=1,0\x07";
/// let events = shell.feed(0, out);
/// let Some(ShellEvent::Finished(done)) = events.last() else { panic!() };
/// assert_eq!((done.status, done.pipestatus.clone()), (Some(0), vec![1, 0]));
/// assert_eq!(done.output_start, done.output_end); // it printed nothing
/// assert_eq!(shell.phase(), ShellPhase::Prompt);
/// ```
#[derive(Debug, Clone)]
pub struct ShellTracker {
    nonce: String,
    marks: MarkScanner,
    phase: ShellPhase,
    /// Where the output of a line run without a `C` mark starts.
    line_start: u64,
    /// Just after the `C` mark of the running line.
    output_start: Option<u64>,
    /// Just after the `B` mark of the prompt the running line was typed
    /// at, and the start of its `C` mark: where its echoed text is.
    input: (Option<u64>, Option<u64>),
    directory: Option<PathBuf>,
    /// An OSC 7 report not yet confirmed by the prompt mark right after it:
    /// where it ended, and the directory.
    pending_directory: Option<(u64, PathBuf)>,
}

impl ShellTracker {
    /// A tracker for the marks with `nonce`, whose first byte fed will be
    /// at offset `from`.
    pub fn new(nonce: &str, from: u64) -> Self {
        Self {
            nonce: nonce.to_owned(),
            marks: MarkScanner::new(from),
            phase: ShellPhase::Starting,
            line_start: from,
            output_start: None,
            input: (None, None),
            directory: None,
            pending_directory: None,
        }
    }

    /// The nonce it follows.
    pub fn nonce(&self) -> &str {
        &self.nonce
    }

    /// Where the shell stands.
    pub fn phase(&self) -> ShellPhase {
        self.phase
    }

    /// Where the output of the command line running now starts (just after
    /// its `C` mark), while one runs.
    pub fn command_start(&self) -> Option<u64> {
        self.output_start
    }

    /// Where the shell's input line starts (just after the `B` mark of the
    /// prompt drawn last), while it reads one (`Ready`): what the terminal
    /// shows after it was typed there and not yet run.
    pub fn input_start(&self) -> Option<u64> {
        match self.phase {
            ShellPhase::Ready => self.input.0,
            _ => None,
        }
    }

    /// The last working directory the shell reported: an OSC 7 counts only
    /// right before this shell's prompt mark, where the hooks print it, so
    /// a program that prints one of its own does not change it.
    pub fn directory(&self) -> Option<&Path> {
        self.directory.as_deref()
    }

    /// Where to feed from next to see everything not yet reported (the
    /// start of an unfinished mark, or the end of what was fed).
    pub fn resume_offset(&self) -> u64 {
        self.marks.resume_offset()
    }

    /// Takes up at `offset` after a gap in the output (bytes lost or no
    /// longer held): an unfinished mark is dropped, the phase kept.
    pub fn skip_to(&mut self, offset: u64) {
        self.marks = MarkScanner::new(offset);
    }

    /// Starts the next command line's output at `offset` if the shell runs
    /// it without a `C` mark (an empty line, a syntax error): the offset
    /// after the line was typed.
    pub fn typed(&mut self, offset: u64) {
        self.line_start = offset;
    }

    /// Feeds output that starts at `offset`, and returns what it tells.
    pub fn feed(&mut self, offset: u64, data: &[u8]) -> Vec<ShellEvent> {
        let marks = self.marks.feed(offset, data);
        let mut events = Vec::new();
        for m in marks {
            self.apply(m, &mut events);
        }
        events
    }

    fn apply(&mut self, m: Mark, events: &mut Vec<ShellEvent>) {
        if let ShellMark::WorkingDirectory { path, .. } = m.mark {
            // Only the hooks' own report counts: the one right before this
            // shell's prompt mark (a program can print OSC 7 too).
            self.pending_directory = Some((m.end, path));
            return;
        }
        let pending = self.pending_directory.take();
        if m.mark.param("nonce") != Some(self.nonce.as_str()) {
            return;
        }
        let event = match m.mark {
            ShellMark::PromptStart { .. } => {
                if let Some((_, path)) = pending.filter(|(end, _)| *end == m.start) {
                    self.directory = Some(path.clone());
                    events.push(ShellEvent::Directory(path));
                }
                self.phase = ShellPhase::Prompt;
                ShellEvent::Prompt(m.start)
            }
            ShellMark::InputStart { .. } => {
                self.phase = ShellPhase::Ready;
                self.line_start = m.end;
                self.input = (Some(m.end), None);
                ShellEvent::Ready(m.end)
            }
            // A line of several commands (a multi-line paste) can mark
            // each one's start; its output starts at the first.
            ShellMark::CommandStart { .. } if self.output_start.is_some() => return,
            ShellMark::CommandStart { .. } => {
                self.phase = ShellPhase::Running;
                self.output_start = Some(m.end);
                self.input.1 = Some(m.start);
                ShellEvent::Started(m.end)
            }
            ShellMark::CommandEnd { status, .. } => {
                let pipestatus = m
                    .mark
                    .param("pipestatus")
                    .map(|p| p.split(',').filter_map(|s| s.trim().parse().ok()).collect())
                    .unwrap_or_default();
                let ran = self.output_start.is_some();
                let output_start = self.output_start.take().unwrap_or(self.line_start);
                let input = match std::mem::take(&mut self.input) {
                    (Some(from), Some(to)) if from <= to => Some((from, to)),
                    _ => None,
                };
                self.phase = ShellPhase::Prompt;
                self.line_start = m.end;
                ShellEvent::Finished(FinishedCommand {
                    output_start: output_start.min(m.start),
                    output_end: m.start,
                    end: m.end,
                    ran,
                    status,
                    pipestatus,
                    input,
                    directory: self.directory.clone(),
                })
            }
            ShellMark::WorkingDirectory { .. } => return,
        };
        events.push(event);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn mark(kind: &str, nonce: &str) -> Vec<u8> {
        format!("\x1b]133;{kind};nonce={nonce}\x07").into_bytes()
    }

    #[test]
    fn phases_follow_the_marks_and_other_nonces_are_ignored() {
        let mut t = ShellTracker::new("n1", 0);
        assert_eq!(t.phase(), ShellPhase::Starting);
        let mut out = Vec::new();
        out.extend(mark("A", "n1"));
        out.extend(b"$ ");
        out.extend(mark("B", "n1"));
        let events = t.feed(0, &out);
        assert_eq!(events.len(), 2);
        assert_eq!(t.phase(), ShellPhase::Ready);
        let at = out.len() as u64;
        // A program printing marks of its own (no nonce, another nonce).
        let fake = b"\x1b]133;C\x07\x1b]133;D;0;nonce=n2\x07";
        assert!(t.feed(at, fake).is_empty());
        assert_eq!(t.phase(), ShellPhase::Ready);
        let at = at + fake.len() as u64;
        let mut run = mark("C", "n1");
        // A program's own OSC 7 (in a file it prints) is not the shell's.
        run.extend(b"hi\r\n\x1b]7;file://h/etc/fake-dir\x07");
        run.extend(b"\x1b]133;D;130;nonce=n1;pipestatus=0,130\x07");
        // The hooks': right before the prompt mark.
        run.extend(b"\x1b]7;file://h/tmp/a%20b\x07");
        run.extend(mark("A", "n1"));
        let events = t.feed(at, &run);
        let done = events
            .iter()
            .find_map(|e| match e {
                ShellEvent::Finished(f) => Some(f.clone()),
                _ => None,
            })
            .unwrap();
        let text = &run[(done.output_start - at) as usize..(done.output_end - at) as usize];
        assert!(text.starts_with(b"hi\r\n"));
        assert_eq!(done.directory, None, "the program's OSC 7 was taken");
        assert_eq!(done.status, Some(130));
        assert_eq!(done.pipestatus, vec![0, 130]);
        assert!(done.ran);
        assert_eq!(t.directory(), Some(Path::new("/tmp/a b")));
        assert_eq!(t.phase(), ShellPhase::Prompt);
    }

    #[test]
    fn a_line_of_several_commands_is_one_command() {
        let mut t = ShellTracker::new("n", 0);
        let mut out = mark("C", "n");
        out.extend(b"one\r\n");
        out.extend(mark("C", "n"));
        out.extend(b"two\r\n\x1b]133;D;0;nonce=n\x07");
        let events = t.feed(0, &out);
        assert_eq!(events.len(), 2, "{events:?}");
        let ShellEvent::Finished(f) = &events[1] else {
            panic!("{events:?}")
        };
        assert_eq!(f.output_start, mark("C", "n").len() as u64);
    }

    #[test]
    fn a_line_the_shell_does_not_run_ends_with_its_text() {
        let mut t = ShellTracker::new("n", 0);
        t.feed(0, &mark("B", "n"));
        t.typed(40);
        let mut out = b"syntax error\r\n".to_vec();
        out.extend(b"\x1b]133;D;2;nonce=n;pipestatus=2\x07");
        let events = t.feed(40, &out);
        let ShellEvent::Finished(f) = &events[0] else {
            panic!("{events:?}")
        };
        assert!(!f.ran);
        assert_eq!((f.output_start, f.output_end), (40, 54));
        assert_eq!(f.status, Some(2));
    }

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
}
