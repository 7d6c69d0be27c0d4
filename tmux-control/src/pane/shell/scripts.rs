//! The text of the hook scripts that [`ShellIntegration`](super::ShellIntegration) writes.

pub(super) const ZSHENV: &str = "# Written by tmux-control: the user's .zshenv, read from the user's ZDOTDIR.\n\
__tmc_zdotdir=$ZDOTDIR\n\
ZDOTDIR=${TMUX_CONTROL_USER_ZDOTDIR:-$HOME}\n\
[[ -r $ZDOTDIR/.zshenv ]] && . $ZDOTDIR/.zshenv\n\
__tmc_user_zdotdir=$ZDOTDIR\n\
ZDOTDIR=$__tmc_zdotdir\n";

pub(super) const BASH_HOOKS: &str = r#"# Shell integration hooks for bash, written by tmux-control.
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

pub(super) const ZSH_HOOKS: &str = r#"# Shell integration hooks for zsh, written by tmux-control.
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

pub(super) const FISH_HOOKS: &str = r#"# Shell integration hooks for fish, written by tmux-control.
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
