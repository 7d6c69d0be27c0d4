"""`run` in panes tmux-mcp did not start, through the built binary and the
MCP Python SDK: a pane made beforehand with plain tmux (the wrapped form,
with no fixed wait after each command), a pane a person opens on
tmux-mcp's own server with `tmux new-window` (integrated by the server's
`default-command`), and an existing bash integrated on first `run` when the
server is started with `--integrate-existing`.

Every shell gets the test's private, empty HOME (no start-up file of the
machine's user), and every tmux server a private socket.
"""

from __future__ import annotations

import shutil
import subprocess

import anyio
import mcp
import pytest
from support import TmuxMcp

pytestmark = pytest.mark.anyio

#: Upper bound for one test's conversation with the server.
LIMIT = 90


async def call(session: mcp.ClientSession, tool: str, **args) -> dict:
    result = await session.call_tool(tool, args)
    assert not result.is_error, (tool, args, result.content)
    return result.structured_content


def tmux(tm: TmuxMcp, *args: str) -> str:
    """Runs the tmux CLI on the test's private server, as a person would,
    and returns what it printed."""
    done = subprocess.run(
        [tm.tmux, "-S", str(tm.socket), *args],
        env=tm.env(),
        capture_output=True,
        text=True,
        timeout=20,
        check=True,
    )
    return done.stdout.strip()


def premade_pane(tm: TmuxMcp) -> str:
    """A bash pane made with plain tmux before tmux-mcp runs (so the server
    is not tmux-mcp's and its shells have no hooks). Returns its id."""
    return tmux(
        tm,
        "-f",
        "/dev/null",
        "new-session",
        "-d",
        "-x",
        "120",
        "-y",
        "40",
        "-P",
        "-F",
        "#{pane_id}",
        "bash --norc --noprofile",
    )


async def test_ten_back_to_back_runs_in_a_premade_pane_are_each_exact(tmux_mcp: TmuxMcp) -> None:
    pane = premade_pane(tmux_mcp)
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session() as (session, _):
            for i in range(10):
                # Two lines, a status of its own, and text a prompt or a
                # marker left in the output would show up next to.
                command = f"printf 'first-%s\\nsecond-%s\\n' {i} $(({i} + 1000)); (exit {i % 4})"
                done = await call(session, "run", target=pane, command=command)
                assert done["mode"] == "wrapped", done
                assert done["status"] == "completed", done
                assert done["exit_status"] == i % 4, done
                assert done["output"] == f"first-{i}\nsecond-{i + 1000}\n", done
            # The screen holds every command's output once (its echoed line
            # shows the arithmetic, not the number): nothing typed early
            # was echoed or run twice.
            screen = (await call(session, "capture_screen", target=pane))["text"]
            for i in range(10):
                assert screen.count(f"second-{i + 1000}") == 1, screen


async def test_a_pane_a_person_opens_on_the_server_is_integrated(tmux_mcp: TmuxMcp) -> None:
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session() as (session, _):
            # tmux-mcp starts its own server with its first terminal.
            made = await call(session, "create_terminal", name="agent")
            assert made["shell_integration"] == "bash", made
            # A person opens a window and a split with the tmux CLI: no
            # command, so the server's default-command starts their shells.
            window = tmux(tmux_mcp, "new-window", "-d", "-P", "-F", "#{pane_id}")
            split = tmux(tmux_mcp, "split-window", "-d", "-t", window, "-P", "-F", "#{pane_id}")
            for pane in (window, split):
                done = await call(session, "run", target=pane, command="false | true")
                assert (done["mode"], done["exit_status"], done["pipestatus"]) == (
                    "integrated",
                    0,
                    [1, 0],
                ), done
                info = await call(session, "pane_info", target=pane)
                assert info["state"]["shell_integration"] == "bash", info
            # The person's shell is theirs: it read their (private) HOME's
            # .bashrc as an interactive bash does.
            (tmux_mcp.home / ".bashrc").write_text("export FROM_BASHRC=yes\n")
            pane = tmux(tmux_mcp, "new-window", "-d", "-P", "-F", "#{pane_id}")
            done = await call(session, "run", target=pane, command='echo "rc=$FROM_BASHRC"')
            assert (done["mode"], done["output"]) == ("integrated", "rc=yes\n"), done


async def test_a_person_s_pane_with_a_slow_bashrc_is_known_to_be_starting(tmux_mcp: TmuxMcp) -> None:
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session() as (session, _):
            await call(session, "create_terminal", name="agent")
            # A start-up file that takes seconds (pyenv, nvm, conda, a lock).
            (tmux_mcp.home / ".bashrc").write_text("sleep 4\n")
            pane = tmux(tmux_mcp, "new-window", "-d", "-P", "-F", "#{pane_id}")
            early = await call(session, "run", target=pane, command="echo typed-early", timeout_secs=1)
            assert (early["status"], early["mode"]) == ("shell_starting", "integrated"), early
            done = await call(session, "run", target=pane, command="false | true", timeout_secs=30)
            assert (done["status"], done["exit_status"], done["pipestatus"]) == ("completed", 0, [1, 0]), done
            # Nothing was typed ahead into the starting shell.
            screen = (await call(session, "capture_screen", target=pane))["text"]
            assert "typed-early" not in screen, screen


async def test_integrate_existing_loads_the_hooks_into_a_premade_bash(tmux_mcp: TmuxMcp) -> None:
    pane = tmux(
        tmux_mcp,
        "-f",
        "/dev/null",
        "new-session",
        "-d",
        "-P",
        "-F",
        "#{pane_id}",
        "bash --norc --noprofile -i",
    )
    dash = tmux(tmux_mcp, "new-window", "-d", "-P", "-F", "#{pane_id}", "dash")
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session("--integrate-existing") as (session, _):
            done = await call(session, "run", target=pane, command="false | true")
            assert (done["mode"], done["exit_status"], done["pipestatus"]) == ("integrated", 0, [1, 0]), done
            # Per call, integrate=false keeps the wrapped form.
            other = tmux(tmux_mcp, "new-window", "-d", "-P", "-F", "#{pane_id}", "bash --norc --noprofile -i")
            done = await call(session, "run", target=other, command="echo kept", integrate=False)
            assert (done["mode"], done["output"]) == ("wrapped", "kept\n"), done
            # A shell without hooks (dash) is not refused: it runs wrapped.
            done = await call(session, "run", target=dash, command="echo in-dash")
            assert (done["mode"], done["output"]) == ("wrapped", "in-dash\n"), done
        # Without the flag the same kind of pane stays as it is.
        async with tmux_mcp.session() as (session, _):
            fresh = tmux(tmux_mcp, "new-window", "-d", "-P", "-F", "#{pane_id}", "bash --norc --noprofile -i")
            done = await call(session, "run", target=fresh, command="echo plain")
            assert (done["mode"], done["output"]) == ("wrapped", "plain\n"), done


#: The shells a run is given up in: integrated (bash, zsh, fish, started by
#: create_terminal as the default shell) and wrapped (dash, as a command).
ABANDON_SHELLS = ["bash", "zsh", "fish", "dash"]


@pytest.mark.parametrize("shell", ABANDON_SHELLS)
async def test_respawn_gives_up_an_unfinished_run_and_frees_the_pane(tmux_mcp: TmuxMcp, shell: str) -> None:
    program = shutil.which(shell)
    assert program, f"{shell} is not installed (scripts/setup installs it)"
    env = {"SHELL": program} if shell != "dash" else None
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session(env=env) as (session, _):
            args = {"name": f"re-{shell}"} | ({"command": "dash"} if shell == "dash" else {})
            pane = (await call(session, "create_terminal", **args))["pane"]
            slow = await call(session, "run", target=pane, command="sleep 5", timeout_secs=1)
            assert slow["status"] == "running", slow
            await call(session, "respawn", target=pane)
            # The pane is free: a new run goes through, also without force.
            done = await call(session, "run", target=pane, command="echo a-after", timeout_secs=20)
            assert (done["status"], done["output"]) == ("completed", "a-after\n"), done
            # The respawned shell is integrated as the first one was.
            assert done["mode"] == ("wrapped" if shell == "dash" else "integrated"), done
            # The old run answers that it was given up, at once.
            resumed = await call(session, "run", run_id=slow["run_id"], timeout_secs=5)
            assert (resumed["status"], resumed["exit_status"]) == ("abandoned", None), resumed


#: Shells run without integration, so that `run` types its wrapped form.
WRAPPED_SHELLS = ["bash --norc --noprofile", "zsh -f", "fish --no-config", "dash"]


@pytest.mark.parametrize("shell", WRAPPED_SHELLS)
async def test_the_wrapped_form_runs_in_each_shell_with_its_status(tmux_mcp: TmuxMcp, shell: str) -> None:
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session() as (session, _):
            pane = (await call(session, "create_terminal", name="wrapped", command=shell))["pane"]
            # Quotes and a backslash reach the shell as typed; the status is
            # the command's own (fish has no `$?`: it must be `$status`).
            done = await call(session, "run", target=pane, command=r"""printf '%s\n' 'a\b' "it's"; false""")
            assert (done["mode"], done["status"]) == ("wrapped", "completed"), done
            assert (done["exit_status"], done["output"]) == (1, "a\\b\nit's\n"), done


@pytest.mark.parametrize("shell", WRAPPED_SHELLS)
async def test_an_interrupted_wrapped_run_does_not_lock_the_pane(tmux_mcp: TmuxMcp, shell: str) -> None:
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session() as (session, _):
            pane = (await call(session, "create_terminal", name="wrapped", command=shell))["pane"]
            slow = await call(session, "run", target=pane, command="sleep 30; echo after", timeout_secs=1)
            assert (slow["status"], slow["mode"]) == ("running", "wrapped"), slow
            await call(session, "send_keys", target=pane, keys=["C-c"])
            # The shell is back at its prompt without the end marker: the
            # run is over (interrupted), and says so when resumed. fish
            # stops only the command and goes on to the end marker, so its
            # run ends with the command's own status.
            ended = ("completed", 130) if shell.startswith("fish") else ("interrupted", None)
            resumed = await call(session, "run", run_id=slow["run_id"], timeout_secs=10)
            assert (resumed["status"], resumed["exit_status"]) == ended, resumed
            done = await call(session, "run", target=pane, command="echo next", timeout_secs=20)
            assert (done["status"], done["output"]) == ("completed", "next\n"), done
            # Interrupted and not collected: the next run goes through too.
            again = await call(session, "run", target=pane, command="sleep 30", timeout_secs=1)
            await call(session, "send_keys", target=pane, keys=["C-c"])
            done = await call(session, "run", target=pane, command="echo free", timeout_secs=20)
            assert (done["status"], done["output"]) == ("completed", "free\n"), done
            resumed = await call(session, "run", run_id=again["run_id"], timeout_secs=5)
            assert resumed["status"] == ended[0], resumed


async def test_force_gives_up_a_run_still_in_progress(tmux_mcp: TmuxMcp) -> None:
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session() as (session, _):
            pane = (await call(session, "create_terminal", name="forced", command="dash"))["pane"]
            # Still running (no interrupt): force types the next command
            # ahead, which the shell reads once this one ends.
            slow = await call(session, "run", target=pane, command="sleep 3", timeout_secs=1)
            assert slow["status"] == "running", slow
            refused = await session.call_tool("run", {"target": pane, "command": "echo next"})
            assert refused.is_error
            advice = refused.content[0].text
            assert "force=true" in advice and "respawn" in advice, advice
            done = await call(session, "run", target=pane, command="echo taken", force=True, timeout_secs=20)
            assert (done["status"], done["output"]) == ("completed", "taken\n"), done
            resumed = await call(session, "run", run_id=slow["run_id"], timeout_secs=5)
            assert resumed["status"] == "abandoned", resumed
