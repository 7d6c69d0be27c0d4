"""Output that tries to pass for the shell's own marks, through the built
binary and the MCP Python SDK (issue 24's hostile pass): a program's OSC 7
must not move a region's or a run's working directory.

Every shell gets the test's private, empty HOME.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess

import anyio
import mcp
import pytest
from mcp.shared.exceptions import MCPError
from support import TmuxMcp, connecting_call, text_of

pytestmark = pytest.mark.anyio

#: Upper bound for one test's conversation with the server.
LIMIT = 60


async def call(client: mcp.ClientSession, tool: str, **args) -> dict:
    result = await client.call_tool(tool, args)
    assert not result.is_error, text_of(result)
    return result.structured_content


async def new_terminal(client: mcp.ClientSession, args: dict) -> str:
    """A terminal made by create_terminal with `args`; its pane id."""
    created = await connecting_call(client.call_tool, "create_terminal", args)
    assert not created.is_error, text_of(created)
    return created.structured_content["pane"]


def shell_setup(shell: str, name: str) -> tuple[dict[str, str] | None, dict]:
    """The server environment and create_terminal arguments for a terminal
    running `shell`: bash, zsh and fish as the default shell (integrated),
    dash as a command (the wrapped form)."""
    program = shutil.which(shell)
    assert program, f"{shell} is not installed (scripts/setup installs it)"
    env = {"SHELL": program} if shell != "dash" else None
    args = {"name": name} | ({"command": "dash"} if shell == "dash" else {})
    return env, args


async def test_a_printed_osc_7_does_not_set_the_working_directory(tmux_mcp: TmuxMcp) -> None:
    fake = tmux_mcp.home / "fake-cwd.txt"
    fake.write_bytes(b"before\x1b]7;file://host/etc/fake-dir\x07after\n")
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session() as (session, _):
            pane = await new_terminal(session, {"name": "osc7"})
            await call(session, "run", target=pane, command="cd /tmp")
            done = await call(session, "run", target=pane, command=f"cat {fake}")
            assert done["mode"] == "integrated", done
            assert done["cwd"] == "/tmp", done
            listed = await call(session, "list_regions", target=pane)
            cwds = [r["cwd"] for r in listed["regions"]]
            assert "/etc/fake-dir" not in cwds, listed
            assert cwds[-1] == "/tmp", listed
            # The next command runs (and is recorded) in the real directory.
            done = await call(session, "run", target=pane, command="pwd")
            assert (done["output"], done["cwd"]) == ("/tmp\n", "/tmp"), done


async def test_the_nonce_stays_out_of_the_session_s_environment(tmux_mcp: TmuxMcp) -> None:
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session() as (session, _):
            created = await connecting_call(session.call_tool, "create_terminal", {"name": "nonce"})
            assert not created.is_error, text_of(created)
            made = created.structured_content
            assert made["shell_integration"] == "bash", made
            shown = subprocess.run(
                [tmux_mcp.tmux, "-S", str(tmux_mcp.socket), "show-environment", "-t", made["session"]],
                env=tmux_mcp.env(),
                capture_output=True,
                text=True,
                timeout=20,
                check=True,
            ).stdout
            assert "TMUX_CONTROL_SHELL_NONCE" not in shown, shown
            # Nor does the shell keep it (the hooks unset it), nor a window
            # opened later in the session.
            done = await call(session, "run", target=made["pane"], command='echo "[${TMUX_CONTROL_SHELL_NONCE:-}]"')
            assert done["output"] == "[]\n", done
            window = await call(session, "create_terminal", kind="window", target=made["pane"], command="sh")
            done = await call(session, "run", target=window["pane"], command='echo "[${TMUX_CONTROL_SHELL_NONCE:-}]"')
            assert done["output"] == "[]\n", done


async def test_after_a_restart_a_shell_still_starting_is_known_to_be_starting(tmux_mcp: TmuxMcp) -> None:
    # A start-up file that takes seconds (pyenv, nvm, conda, a lock).
    (tmux_mcp.home / ".bashrc").write_text("sleep 6\n")
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session() as (session, _):
            created = await connecting_call(session.call_tool, "create_terminal", {"name": "slow"})
            assert not created.is_error, text_of(created)
            made = created.structured_content
            assert (made["shell_integration"], made["shell_ready"]) == ("bash", False), made
        # tmux-mcp restarts while the shell still reads its start-up file.
        async with tmux_mcp.session() as (session, _):
            early = await call(session, "run", target=made["pane"], command="echo typed-early", timeout_secs=1)
            assert early["status"] == "shell_starting", early
            done = await call(session, "run", target=made["pane"], command="false | true", timeout_secs=30)
            assert (done["status"], done["exit_status"], done["pipestatus"]) == ("completed", 0, [1, 0]), done
            screen = (await call(session, "capture_screen", target=made["pane"]))["text"]
            assert "typed-early" not in screen, screen


@pytest.mark.parametrize("quirk", ["t1:0.0;", "% 1", "%01", "=", ":", "=:"])
async def test_loose_targets_are_refused_not_guessed(tmux_mcp: TmuxMcp, quirk: str) -> None:
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session() as (session, _):
            created = await connecting_call(session.call_tool, "create_terminal", {"name": "t1"})
            assert not created.is_error, text_of(created)
            assert created.structured_content["pane"] == "%1", created.structured_content
            refused = await session.call_tool("send_text", {"target": quirk, "text": "x"})
            assert refused.is_error, text_of(refused)
            assert f"Reading target {quirk!r}".replace("'", '"') in text_of(refused), text_of(refused)
            # The exact forms still work.
            for target in ("%1", "t1", "t1:0", "t1:0.0"):
                done = await call(session, "pane_info", target=target)
                assert done["pane"] == "%1", (target, done)


async def test_symbolic_links_in_the_state_directory_are_not_followed(tmux_mcp: TmuxMcp) -> None:
    elsewhere = tmux_mcp.root / "elsewhere"
    (elsewhere / "shell").mkdir(parents=True)
    (elsewhere / "logs").mkdir()
    tmux_mcp.state.mkdir(mode=0o700)
    (tmux_mcp.state / "shell").symlink_to(elsewhere / "shell")
    (tmux_mcp.state / "logs").symlink_to(elsewhere / "logs")
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session() as (session, _):
            created = await connecting_call(session.call_tool, "create_terminal", {"name": "links"})
            assert not created.is_error, text_of(created)
            pane = created.structured_content["pane"]
            # Without its hooks directory the shell runs plainly; run works.
            assert created.structured_content["shell_integration"] is None, created.structured_content
            done = await call(session, "run", target=pane, command="echo still-works")
            assert done["output"] == "still-works\n", done
    # Nothing was written through the links.
    assert list((elsewhere / "shell").iterdir()) == []
    assert list((elsewhere / "logs").iterdir()) == []


async def test_without_tmux_pane_the_client_s_whole_session_is_guarded_alike(tmux_mcp: TmuxMcp) -> None:
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session() as (session, _):
            mine = (await connecting_call(session.call_tool, "create_terminal", {"name": "client"})).structured_content
            other = (await connecting_call(session.call_tool, "create_terminal", {"name": "other"})).structured_content
        # The client runs in session `mine` of this server, its pane unknown.
        inside = {"TMUX": f"{tmux_mcp.socket},1,{mine['session'].lstrip('$')}"}
        async with tmux_mcp.session("--toolsets", "inspect,execute,teardown", env=inside) as (session, _):
            for tool, args in [
                ("send_text", {"target": mine["pane"], "text": "echo hi", "enter": True}),
                ("run", {"target": mine["pane"], "command": "echo hi"}),
                ("respawn", {"target": mine["pane"]}),
                ("kill_pane", {"target": mine["pane"]}),
                ("kill_window", {"target": mine["window"]}),
                ("kill_session", {"target": mine["session"]}),
            ]:
                result = await session.call_tool(tool, args)
                assert result.is_error, (tool, text_of(result))
                assert "protect the MCP client itself" in text_of(result), text_of(result)
            # Another session is not the client's.
            sent = await session.call_tool("send_text", {"target": other["pane"], "text": "true", "enter": True})
            assert not sent.is_error, text_of(sent)


async def test_resource_requests_are_answered_while_tmux_does_not_answer(tmux_mcp: TmuxMcp) -> None:
    with anyio.fail_after(LIMIT + 60):
        async with tmux_mcp.session("--max-wait-secs", "3", "--default-wait-secs", "1") as (session, _):
            created = await connecting_call(session.call_tool, "create_terminal", {"name": "stopped"})
            assert not created.is_error, text_of(created)
            pane = created.structured_content["pane"].lstrip("%")
            pid = int(
                subprocess.run(
                    [tmux_mcp.tmux, "-S", str(tmux_mcp.socket), "display-message", "-p", "#{pid}"],
                    env=tmux_mcp.env(),
                    capture_output=True,
                    text=True,
                    timeout=20,
                    check=True,
                ).stdout
            )
            os.kill(pid, signal.SIGSTOP)
            try:
                answers: dict[str, str] = {}

                async def ask(name: str, request) -> None:
                    try:
                        await request()
                        answers[name] = "result"
                    except MCPError as e:
                        answers[name] = str(e)

                # Each is answered (an error naming the cause) within the
                # bound of a tool call, not left hanging while tmux is stopped.
                with anyio.fail_after(60):
                    async with anyio.create_task_group() as tg:
                        tg.start_soon(ask, "read", lambda: session.read_resource(f"tmux://pane/{pane}/screen"))
                        tg.start_soon(ask, "terminals", lambda: session.read_resource("tmux://terminals"))
                        tg.start_soon(ask, "list", session.list_resources)
                        tg.start_soon(ask, "subscribe", lambda: session.subscribe_resource(f"tmux://pane/{pane}/screen"))
                assert set(answers) == {"read", "terminals", "list", "subscribe"}, answers
                for name, answer in answers.items():
                    assert answer == "result" or "tmux may be unresponsive" in answer, (name, answer)
                assert any("tmux may be unresponsive" in a for a in answers.values()), answers
            finally:
                os.kill(pid, signal.SIGCONT)
            # tmux answers again: so do the resources.
            listed = await session.list_resources()
            assert any(r.uri == "tmux://terminals" for r in listed.resources), listed


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish", "dash"])
async def test_a_run_that_execs_a_new_shell_says_the_shell_was_replaced(tmux_mcp: TmuxMcp, shell: str) -> None:
    env, args = shell_setup(shell, f"exec-{shell}")
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session(env=env) as (session, _):
            pane = await new_terminal(session, args)
            replaced = await call(session, "run", target=pane, command="exec bash --norc --noprofile -i", timeout_secs=20)
            assert (replaced["status"], replaced["exit_status"]) == ("shell_replaced", None), replaced
            # Not a password prompt, and the pane takes run again.
            done = await call(session, "run", target=pane, command="echo in-new-shell", timeout_secs=20)
            assert (done["status"], done["mode"], done["output"]) == ("completed", "wrapped", "in-new-shell\n"), done


async def test_the_shell_nonce_never_reaches_the_client(tmux_mcp: TmuxMcp) -> None:
    import re

    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session() as (session, _):
            pane = await new_terminal(session, {"name": "nonce-view"})
            await call(session, "run", target=pane, command="echo one")
            nonce = subprocess.run(
                [tmux_mcp.tmux, "-S", str(tmux_mcp.socket), "show-options", "-pqv", "-t", pane, "@tmux-mcp-shell"],
                env=tmux_mcp.env(),
                capture_output=True,
                text=True,
                timeout=20,
                check=True,
            ).stdout.split()[1]
            assert re.fullmatch(r"[0-9a-f]{16}", nonce), nonce
            replies = [
                await session.call_tool("read_output", {"target": pane, "cursor": 0, "raw": True}),
                await session.call_tool("read_output", {"target": pane, "cursor": 3}),
                await session.call_tool(
                    "wait_for_output", {"target": pane, "pattern": "[0-9a-f]{16}", "cursor": 0, "timeout_secs": 2}
                ),
            ]
            for reply in replies:
                assert nonce not in text_of(reply), text_of(reply)
                assert nonce not in str(reply.structured_content), reply.structured_content


async def test_a_huge_resource_uri_is_not_echoed_back_whole(tmux_mcp: TmuxMcp) -> None:
    uri = "tmux://pane/" + "9" * 100_000 + "/screen"
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session() as (session, _):
            with pytest.raises(MCPError) as failed:
                await session.read_resource(uri)
            message = str(failed.value)
            assert len(message) < 2000, len(message)
            assert f"({len(uri)} bytes)" in message, message


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish", "dash"])
async def test_run_never_joins_text_pending_on_the_line(tmux_mcp: TmuxMcp, shell: str) -> None:
    env, args = shell_setup(shell, f"pending-{shell}")
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session(env=env) as (session, _):
            pane = await new_terminal(session, args)
            await call(session, "send_text", target=pane, text="echo PREFIX ")
            refused = await session.call_tool("run", {"target": pane, "command": "false"})
            assert refused.is_error, text_of(refused)
            assert "still on the shell's input line" in text_of(refused), text_of(refused)
            await call(session, "send_keys", target=pane, keys=["C-u"])
            done = await call(session, "run", target=pane, command="false", timeout_secs=20)
            assert (done["status"], done["exit_status"], done["output"]) == ("completed", 1, ""), done


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish", "dash"])
async def test_run_is_refused_at_a_continuation_prompt(tmux_mcp: TmuxMcp, shell: str) -> None:
    program = shutil.which(shell)
    assert program, f"{shell} is not installed (scripts/setup installs it)"
    env = {"SHELL": program} if shell != "dash" else None
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session(env=env) as (session, _):
            if shell == "dash":
                # No integration: the wrapped form, whose first run learns
                # how the shell's own prompt ends.
                pane = await new_terminal(session, {"name": "cont-dash", "command": "dash"})
                await call(session, "run", target=pane, command="echo ready")
            else:
                pane = await new_terminal(session, {"name": f"cont-{shell}"})
            sent = await call(session, "send_text", target=pane, text="echo 'open", enter=True)
            if shell == "fish":
                # fish draws no continuation prompt: the command line gets
                # a second line, the cursor indented under the prompt.
                await call(session, "wait_for_idle", target=pane, quiet_secs=0.3, timeout_secs=10)
            else:
                await call(session, "wait_for_output", target=pane, pattern="> $", cursor=sent["cursor"], timeout_secs=10)
            refused = await session.call_tool("run", {"target": pane, "command": "echo hi"})
            assert refused.is_error, text_of(refused)
            assert "continuation prompt" in text_of(refused), text_of(refused)
            await call(session, "send_keys", target=pane, keys=["C-c"])
            # The shell's answer to C-c (a fresh prompt) comes a moment
            # later; a run before it would still see the continuation (and
            # be refused again, safely): wait until the shell has drawn it.
            await call(session, "wait_for_idle", target=pane, quiet_secs=0.3, timeout_secs=10)
            done = await call(session, "run", target=pane, command="echo hi", timeout_secs=20)
            assert (done["status"], done["output"]) == ("completed", "hi\n"), done


def test_known_methods_with_params_that_do_not_fit_get_invalid_params(tmux_mcp: TmuxMcp) -> None:
    from test_tasks import initialize, wire

    with wire(tmux_mcp) as w:
        initialize(w, tasks=False)
        for method, params in [
            ("tools/call", {"name": "list_terminals", "arguments": []}),
            ("tasks/get", {"taskId": 5}),
        ]:
            answer = w.request(method, params)
            assert answer["error"]["code"] == -32602, (method, answer)
            assert method in answer["error"]["message"], answer
        # The server goes on answering.
        assert "tools" in w.result("tools/list")
