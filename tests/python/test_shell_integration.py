"""`run` on shell integration, through the built binary and the MCP Python
SDK, on every shell with hooks: bash, zsh and fish, each as Debian installs
it (scripts/setup installs them). The shell is chosen through `SHELL`, which
tmux takes as its default shell; `HOME` is empty, so no start-up file of the
machine's user is read.

What an agent relies on: the command typed as it is (no wrapper on the
screen), the exact exit status and pipeline statuses, state that persists,
and an interrupt that ends the run like any other command, leaving the pane
free for the next one.
"""

from __future__ import annotations

import shutil

import anyio
import mcp
import pytest
from support import TmuxMcp, connecting_call, text_of

pytestmark = pytest.mark.anyio

#: Upper bound for one test's conversation with the server.
LIMIT = 60

SHELLS = ["bash", "zsh", "fish"]


def shell_path(name: str) -> str:
    path = shutil.which(name)
    assert path, f"{name} is not installed (scripts/setup installs it)"
    return path


async def call(session: mcp.ClientSession, tool: str, **args) -> dict:
    result = await session.call_tool(tool, args)
    assert not result.is_error, text_of(result)
    return result.structured_content


async def run(session: mcp.ClientSession, pane: str, command: str, **args) -> dict:
    return await call(session, "run", target=pane, command=command, **args)


@pytest.mark.parametrize("shell", SHELLS)
async def test_run_types_the_command_and_reads_the_shells_own_marks(tmux_mcp: TmuxMcp, shell: str) -> None:
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session(env={"SHELL": shell_path(shell)}) as (session, _):
            created = await connecting_call(session.call_tool, "create_terminal", {"name": f"sh-{shell}"})
            assert not created.is_error, text_of(created)
            made = created.structured_content
            assert made["shell_integration"] == shell
            assert made["shell_ready"] is True
            pane = made["pane"]

            done = await run(session, pane, "false")
            assert (done["status"], done["exit_status"], done["mode"]) == ("completed", 1, "integrated")

            exit_42 = "sh -c 'exit 42'" if shell == "fish" else "(exit 42)"
            assert (await run(session, pane, exit_42))["exit_status"] == 42

            done = await run(session, pane, "false | true")
            assert (done["exit_status"], done["pipestatus"]) == (0, [1, 0])

            sum_ = "math 1 + 1" if shell == "fish" else "echo $((1+1))"
            done = await run(session, pane, sum_)
            assert done["output"].strip("\n") == "2", repr(done["output"])
            assert done["output"].rstrip(" \n") == "2"

            await run(session, pane, "cd /tmp")
            done = await run(session, pane, "pwd")
            assert (done["output"].strip(), done["cwd"]) == ("/tmp", "/tmp")

            # What a human watching sees: the command as typed, no wrapper.
            screen = await call(session, "capture_screen", target=pane)
            text = screen["text"]
            assert "133;" not in text and "printf" not in text and "eval" not in text, text
            assert "false | true" in text, text


@pytest.mark.parametrize("shell", SHELLS)
async def test_an_interrupted_run_completes_with_130_and_frees_the_pane(tmux_mcp: TmuxMcp, shell: str) -> None:
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session(env={"SHELL": shell_path(shell)}) as (session, _):
            created = await connecting_call(session.call_tool, "create_terminal", {"name": f"int-{shell}"})
            assert not created.is_error, text_of(created)
            pane = created.structured_content["pane"]

            slow = await run(session, pane, "sleep 30; echo after", timeout_secs=1)
            assert slow["status"] == "running"
            await call(session, "send_keys", target=pane, keys=["C-c"])
            resumed = await call(session, "run", run_id=slow["run_id"], timeout_secs=10)
            assert (resumed["status"], resumed["exit_status"]) == ("completed", 130), resumed
            assert "after" not in resumed["output"]

            # The pane is free, with or without collecting the interrupted run.
            assert (await run(session, pane, "echo next"))["output"].strip() == "next"
            again = await run(session, pane, "sleep 30", timeout_secs=1)
            await call(session, "send_keys", target=pane, keys=["C-c"])
            done = await run(session, pane, "echo free")
            assert done["output"].strip() == "free"
            assert again["status"] == "running"


async def test_without_integration_the_wrapped_form_runs(tmux_mcp: TmuxMcp) -> None:
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session("--no-shell-integration") as (session, _):
            created = await connecting_call(session.call_tool, "create_terminal", {"name": "plain"})
            assert not created.is_error, text_of(created)
            assert created.structured_content["shell_integration"] is None
            pane = created.structured_content["pane"]
            done = await run(session, pane, "(exit 5)")
            assert (done["exit_status"], done["mode"], done["pipestatus"]) == (5, "wrapped", None)


@pytest.mark.parametrize("shell", SHELLS)
async def test_a_command_reading_the_terminal_is_waiting_for_input(tmux_mcp: TmuxMcp, shell: str) -> None:
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session(env={"SHELL": shell_path(shell)}) as (session, _):
            created = await connecting_call(session.call_tool, "create_terminal", {"name": f"in-{shell}"})
            assert not created.is_error, text_of(created)
            pane = created.structured_content["pane"]

            # A prompt printed, then a read of the terminal: reported within
            # a second or two, long before the time limit.
            ask = "read -P 'Name? ' x; echo got:$x" if shell == "fish" else "printf 'Name? '; read x; echo got:$x"
            waiting = await run(session, pane, ask, timeout_secs=20)
            assert waiting["status"] == "waiting_for_input", waiting
            assert waiting["elapsed_ms"] < 5000, waiting
            assert "Name?" in (waiting["prompt"] or ""), waiting
            await call(session, "send_text", target=pane, text="ada", enter=True)
            done = await call(session, "run", run_id=waiting["run_id"], timeout_secs=10)
            assert (done["status"], done["exit_status"]) == ("completed", 0), done
            assert "got:ada" in done["output"]

            # A silent read: echo off, as for a password.
            if shell != "fish":
                secret = await run(session, pane, "read -s pw; echo len:${#pw}", timeout_secs=20)
                assert (secret["status"], secret["echo"]) == ("waiting_for_input", False), secret
                await call(session, "send_text", target=pane, text="hunter2", enter=True)
                done = await call(session, "run", run_id=secret["run_id"], timeout_secs=10)
                assert "len:7" in done["output"], done

            # A busy command that reads nothing is still running.
            busy = await run(session, pane, "sleep 2.5", timeout_secs=1.5)
            assert busy["status"] == "running", busy


@pytest.mark.parametrize("shell", SHELLS)
async def test_a_shell_prompt_is_at_prompt_and_no_secret(tmux_mcp: TmuxMcp, shell: str) -> None:
    """Line editors turn terminal echo off at every prompt: that is not a
    secret being asked for."""
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session(env={"SHELL": shell_path(shell)}) as (session, _):
            created = await connecting_call(session.call_tool, "create_terminal", {"name": f"prompt-{shell}"})
            assert not created.is_error, text_of(created)
            pane = created.structured_content["pane"]
            ready = await call(session, "wait_for_state", target=pane, states=["at_prompt"], timeout_secs=10)
            assert ready["status"] == "matched", ready
            result = await session.call_tool("pane_info", {"target": pane})
            info = result.structured_content
            assert info["state"]["state"] == "at_prompt", info["state"]
            assert info["state"]["shell_integration"] == shell
            assert info["state"]["echo"] is None, info["state"]
            assert "secret" not in text_of(result), text_of(result)


async def test_wait_for_state_and_pane_info_report_the_evidence(tmux_mcp: TmuxMcp) -> None:
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session(env={"SHELL": shell_path("bash")}) as (session, _):
            created = await connecting_call(session.call_tool, "create_terminal", {"name": "state"})
            assert not created.is_error, text_of(created)
            pane = created.structured_content["pane"]
            info = await call(session, "pane_info", target=pane)
            assert info["state"]["state"] == "at_prompt", info["state"]
            assert info["state"]["shell_integration"] == "bash"

            # Typed by hand (not run): a slow start, then a password prompt.
            await call(session, "send_text", target=pane, text="sleep 1; read -s -p 'Password: ' pw", enter=True)
            running = await call(session, "wait_for_state", target=pane, states=["running"], timeout_secs=10)
            assert running["status"] == "matched", running
            waiting = await call(
                session, "wait_for_state", target=pane, states=["waiting_for_input"], timeout_secs=10
            )
            assert waiting["status"] == "matched", waiting
            assert (waiting["facts"]["echo"], waiting["facts"]["foreground_command"]) == (False, "bash")
            info = await call(session, "pane_info", target=pane)
            assert info["state"]["state"] == "waiting_for_input"

            await call(session, "send_text", target=pane, text="s3cret", enter=True)
            back = await call(session, "wait_for_state", target=pane, states=["at_prompt"], timeout_secs=10)
            assert back["status"] == "matched", back
            assert back["facts"]["last_exit_status"] == 0

            timeout = await call(session, "wait_for_state", target=pane, states=["exited"], timeout_secs=0.5)
            assert (timeout["status"], timeout["facts"]["state"]) == ("timeout", "at_prompt")


@pytest.mark.parametrize("shell,command", [("bash", "bash --norc --noprofile"), ("zsh", "zsh -f")])
async def test_integration_loads_on_request_into_a_running_shell(tmux_mcp: TmuxMcp, shell: str, command: str) -> None:
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session() as (session, _):
            created = await connecting_call(
                session.call_tool, "create_terminal", {"name": f"late-{shell}", "command": command}
            )
            assert not created.is_error, text_of(created)
            assert created.structured_content["shell_integration"] is None
            pane = created.structured_content["pane"]
            plain = await run(session, pane, "true")
            assert plain["mode"] == "wrapped"
            done = await run(session, pane, "false | true", integrate=True)
            assert (done["mode"], done["exit_status"], done["pipestatus"]) == ("integrated", 0, [1, 0]), done
            again = await run(session, pane, "echo $((2+3))")
            assert (again["mode"], again["output"].strip()) == ("integrated", "5"), again
            info = await call(session, "pane_info", target=pane)
            assert info["state"]["shell_integration"] == shell
