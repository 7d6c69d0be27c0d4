"""One shared `tmux-mcp serve --unix` server, joined by stdio clients
through `tmux-mcp bridge` (issue 12, must-show 3), driven by the MCP Python
SDK.

Every server acts on the fixture's private tmux server (`--socket-path`),
with the fixture's state directory and audit log (support.py). The shared
server's readiness, its debug lines about input turns and its refusals are
read from its standard error as they come (`SharedServer.wait_line`); the
MCP calls are real calls through real bridge processes.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import stat
import time
import warnings

import anyio
import anyio.lowlevel
import mcp
import pytest
from mcp import types
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from support import TmuxMcp, connecting_call, text_of
from test_stdio import STOP_LIMIT, JsonLines, assert_stopped_run_answer

pytestmark = pytest.mark.anyio

#: Upper bound for one test's conversation (seconds).
LIMIT = 60


async def call(session: mcp.ClientSession, tool: str, **args) -> dict:
    result = await connecting_call(session.call_tool, tool, args)
    assert not result.is_error, text_of(result)
    return result.structured_content


def leaves(error: BaseException) -> list[BaseException]:
    """The exceptions inside (nested) exception groups."""
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in leaves(inner)]
    return [error]


def panes_of(listing: dict) -> dict[str, dict]:
    return {
        pane["id"]: pane
        for session in listing["sessions"]
        for window in session["windows"]
        for pane in window["panes"]
    }


async def test_two_bridges_share_one_server_and_are_told_apart(tmux_mcp: TmuxMcp) -> None:
    socket = tmux_mcp.root / "shared" / "mcp.sock"
    server = tmux_mcp.serve_unix(socket)
    ready = server.ready()
    assert f"pid {server.pid}" in ready, ready
    with anyio.fail_after(LIMIT):
        async with (
            tmux_mcp.bridge_session(socket, "agent-a") as (a, init_a),
            tmux_mcp.bridge_session(socket, "agent-b") as (b, _),
        ):
            assert init_a.server_info.name == "tmux-mcp"
            made = await call(a, "create_terminal", name="shared-work")
            pane = made["pane"]
            ran = await call(a, "run", target=pane, command="echo hello-from-a")
            assert ran["status"] == "completed" and ran["exit_status"] == 0, ran
            assert "sharing" not in ran, ran

            # B sees A's terminal, who made it and who typed into it, and reads it.
            listed = panes_of(await call(b, "list_terminals"))
            assert pane in listed, listed
            actors = listed[pane]["actors"]
            assert actors["created_by"] == "agent-a", actors
            assert actors["last_input_by"] == "agent-a", actors
            assert actors["last_input_at"].endswith("Z"), actors
            screen = await b.call_tool("capture_screen", {"target": pane})
            assert "hello-from-a" in text_of(screen), text_of(screen)

            # B types into it: told that A uses it too.
            typed = await call(b, "send_text", target=pane, text="echo hello-from-b", enter=True)
            assert typed["sharing"]["last_other_actor"] == "agent-a", typed
            assert "waited_for" not in typed["sharing"], typed
            keys = await b.call_tool("send_keys", {"target": pane, "keys": ["Enter"]})
            assert "agent-a" in text_of(keys), text_of(keys)
            # And A's next run is told about B, in both forms of the reply.
            again = await a.call_tool("run", {"target": pane, "command": "echo again"})
            assert again.structured_content["sharing"]["last_other_actor"] == "agent-b"
            assert '"agent-b" last typed into it at' in text_of(again), text_of(again)
            listed = panes_of(await call(a, "list_terminals"))
            assert listed[pane]["actors"]["last_input_by"] == "agent-a"

    # The audit log names both actors, per call.
    records = tmux_mcp.audit_records()
    by_actor = {(r["actor"], r["tool"]) for r in records}
    assert ("agent-a", "create_terminal") in by_actor, records
    assert ("agent-a", "run") in by_actor, records
    assert ("agent-b", "list_terminals") in by_actor, records
    assert ("agent-b", "send_text") in by_actor, records
    server.kill()


async def test_each_session_has_its_own_resource_subscriptions(tmux_mcp: TmuxMcp) -> None:
    socket = tmux_mcp.root / "s" / "mcp.sock"
    server = tmux_mcp.serve_unix(socket, log_level="debug")
    server.ready()
    tree = "tmux://terminals"
    heard: dict[str, anyio.Event] = {"a": anyio.Event(), "b": anyio.Event()}

    def handler(who: str):
        async def handle(message) -> None:
            if isinstance(message, types.ResourceUpdatedNotification) and message.params.uri == tree:
                heard[who].set()

        return handle

    with anyio.fail_after(LIMIT):
        async with (
            tmux_mcp.bridge_session(socket, "agent-a", message_handler=handler("a")) as (a, _),
            tmux_mcp.bridge_session(socket, "agent-b", message_handler=handler("b")) as (b, _),
        ):
            # A's session started first; B's subscription is B's own, so the
            # update goes to B (it once went to the first session).
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", MCPDeprecationWarning)  # the legacy generation on purpose
                await b.subscribe_resource(tree)
            await call(a, "create_terminal")
            await heard["b"].wait()
            assert not heard["a"].is_set()
        # B's connection closed: its subscription ended with its session.
        line = await anyio.to_thread.run_sync(
            lambda: server.wait_line("a session ended: its resource subscriptions end")
        )
        assert "uris=1" in line, line


async def test_without_actor_the_client_name_is_used(tmux_mcp: TmuxMcp) -> None:
    socket = tmux_mcp.root / "s" / "mcp.sock"
    tmux_mcp.serve_unix(socket).ready()
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.bridge_session(socket, None) as (session, _):
            await call(session, "list_terminals")
        # The stdio server's own --actor names its session too.
        async with tmux_mcp.session("--audit-log", str(tmux_mcp.audit), "--actor", "solo") as (session, _):
            await call(session, "list_terminals")
    actors = [r["actor"] for r in tmux_mcp.audit_records()]
    # The MCP Python SDK's default clientInfo.name is "mcp".
    assert actors == ["mcp", "solo"], actors


async def test_concurrent_typing_is_serialised_and_reported(tmux_mcp: TmuxMcp) -> None:
    # The terminal's bash waits in its start-up file until the test opens
    # the gate: A's run holds the pane's input turn while it waits for the
    # shell's first prompt, and B's send_text comes meanwhile.
    gate = tmux_mcp.home / "gate"
    os.mkfifo(gate)
    (tmux_mcp.home / ".bashrc").write_text('[ -p "$HOME/gate" ] && read -r _ < "$HOME/gate"\n')
    socket = tmux_mcp.root / "s" / "mcp.sock"
    server = tmux_mcp.serve_unix(socket, log_level="debug")
    server.ready()
    with anyio.fail_after(LIMIT):
        async with (
            tmux_mcp.bridge_session(socket, "agent-a") as (a, _),
            tmux_mcp.bridge_session(socket, "agent-b") as (b, _),
        ):
            made = await call(a, "create_terminal")
            pane = made["pane"]
            assert made["shell_ready"] is False, made
            mark = len(server.lines)
            results: dict[str, dict] = {}

            async def as_a() -> None:
                results["a"] = await call(a, "run", target=pane, command="echo from-a", timeout_secs=30)

            async def as_b() -> None:
                results["b"] = await call(b, "send_text", target=pane, text="echo from-b", enter=True)

            async with anyio.create_task_group() as tasks:
                tasks.start_soon(as_a)
                await anyio.to_thread.run_sync(
                    lambda: server.wait_line("took the pane's input turn", "actor=agent-a", start=mark)
                )
                tasks.start_soon(as_b)
                await anyio.to_thread.run_sync(
                    lambda: server.wait_line("waiting for the pane's input turn", "actor=agent-b", start=mark)
                )
                # Reads never wait for the turn: B lists the terminals (and
                # sees who is typing) while A still holds it.
                listed = panes_of(await call(b, "list_terminals"))
                assert listed[pane]["actors"]["typing_now"] == "agent-a", listed[pane]
                assert "waited_for" not in results.get("b", {}).get("sharing", {}), results
                # Both are in: let the shell start.
                with gate.open("w") as opened:
                    opened.write("go\n")

            assert results["a"]["status"] == "completed", results["a"]
            assert "from-a" in results["a"]["output"], results["a"]
            sharing = results["b"]["sharing"]
            assert sharing["waited_for"] == "agent-a", results["b"]
            assert sharing["last_other_actor"] == "agent-a", results["b"]
            # B's text came after A's whole command line, not inside it.
            seen = await call(b, "wait_for_output", target=pane, pattern="from-b", literal=True, cursor=0)
            assert seen["status"] == "matched", seen
            screen = text_of(await b.call_tool("capture_screen", {"target": pane}))
            assert not [line for line in screen.splitlines() if "from-a" in line and "from-b" in line], screen
    server.kill()


async def test_bridge_survives_a_server_restart_without_resending(tmux_mcp: TmuxMcp) -> None:
    socket = tmux_mcp.root / "s" / "mcp.sock"
    first = tmux_mcp.serve_unix(socket)
    first.ready()
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.bridge_session(socket, "agent-a") as (a, _):
            pane = (await call(a, "create_terminal", name="survivor"))["pane"]
            in_flight = asyncio.Event()

            async def progressed(progress: float, total: float | None, message: str | None) -> None:
                in_flight.set()

            async def kill_once_running() -> None:
                await in_flight.wait()
                first.kill()

            failure: list[MCPError] = []

            async def long_wait() -> None:
                try:
                    await a.call_tool(
                        "wait_for_output",
                        {"target": pane, "pattern": "never-printed", "timeout_secs": 50},
                        progress_callback=progressed,
                    )
                except MCPError as e:
                    failure.append(e)

            async with anyio.create_task_group() as tasks:
                tasks.start_soon(long_wait)
                tasks.start_soon(kill_once_running)
            assert failure, "the in-flight call was not answered with an error"
            error = failure[0].error
            assert error.code == -32001, error
            assert "it was not re-sent" in error.message, error
            assert "may or may not have run" in error.message, error
            # The stale socket file of the killed server is still there.
            assert socket.exists()

            # A call made while no server runs waits for the next one: the
            # bridge reconnects (replaying the handshake) and sends it; the
            # terminal lives on in tmux.
            made: dict[str, dict] = {}

            async def listing() -> None:
                made["list"] = await call(a, "list_terminals")

            async with anyio.create_task_group() as tasks:
                tasks.start_soon(listing)
                # The call is on its way (or waiting in the bridge) before
                # the server starts; either way it must be answered.
                await anyio.lowlevel.checkpoint()
                second = tmux_mcp.serve_unix(socket, log_level="debug")
                await anyio.to_thread.run_sync(second.ready)
            listed = panes_of(made["list"])
            assert pane in listed, listed
            ran = await call(a, "run", target=pane, command="echo after-restart")
            assert ran["status"] == "completed" and "after-restart" in ran["output"], ran
            # The new server got the calls after the restart, and never the
            # long wait (a re-sent request would have come before them).
            calls = [line for line in second.lines if "tool call" in line]
            assert any("tool=list_terminals" in line for line in calls), calls
            assert not any("tool=wait_for_output" in line for line in calls), calls
    # The killed server never finished the wait, so the audit log has no record
    # of it; the new server's calls are there.
    tools = [r["tool"] for r in tmux_mcp.audit_records()]
    assert "wait_for_output" not in tools, tools
    assert tools.count("run") == 1, tools
    second.kill()


async def test_a_subscription_through_the_bridge_outlives_a_server_restart(tmux_mcp: TmuxMcp) -> None:
    socket = tmux_mcp.root / "s" / "mcp.sock"
    first = tmux_mcp.serve_unix(socket)
    first.ready()
    updates: list[str] = []
    arrived = asyncio.Event()

    async def handle(message) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            updates.append(str(message.params.uri))
            arrived.set()

    async def heard_after(seen: int, uri: str) -> None:
        """Waits for an update of `uri` beyond the first `seen` ones."""
        while uri not in updates[seen:]:
            arrived.clear()
            await arrived.wait()

    with anyio.fail_after(LIMIT):
        async with tmux_mcp.bridge_session(socket, "agent-a", message_handler=handle) as (a, _):
            pane = (await call(a, "create_terminal", name="watched"))["pane"]
            uri = f"tmux://pane/{pane.lstrip('%')}/screen"
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", MCPDeprecationWarning)  # the legacy generation on purpose
                await a.subscribe_resource(uri)
            seen = len(updates)
            await call(a, "send_text", target=pane, text="echo before-restart", enter=True)
            await heard_after(seen, uri)

            first.kill()
            seen = len(updates)
            second = tmux_mcp.serve_unix(socket)
            await anyio.to_thread.run_sync(second.ready)
            # The bridge reconnects by itself, subscribes again and says the
            # screen may have changed while no server watched it.
            await heard_after(seen, uri)
            # New output is heard through the new server's subscription: the
            # old server's is gone with it.
            seen = len(updates)
            await call(a, "send_text", target=pane, text="echo after-restart", enter=True)
            await heard_after(seen, uri)
    second.kill()


async def test_bridge_answers_when_no_server_comes(tmux_mcp: TmuxMcp) -> None:
    socket = tmux_mcp.root / "s" / "nobody.sock"
    caught: list[BaseException] = []
    with anyio.fail_after(LIMIT):
        try:
            async with tmux_mcp.bridge_session(socket, "agent-a", "--wait-secs", "0.5"):
                pass
        except* MCPError as group:
            caught.extend(leaves(group))
    assert len(caught) == 1, caught
    error = caught[0].error
    assert error.code == -32002, error
    assert "the call was not sent" in error.message, error


def test_socket_modes_and_one_server_per_state_directory(tmux_mcp: TmuxMcp) -> None:
    socket = tmux_mcp.root / "private" / "deep" / "mcp.sock"
    first = tmux_mcp.serve_unix(socket)
    first.ready()
    assert stat.S_IMODE(socket.stat().st_mode) == 0o600
    assert stat.S_ISSOCK(socket.stat().st_mode)
    assert stat.S_IMODE(socket.parent.stat().st_mode) == 0o700
    # The lock file names the server and its socket (how `tmux-mcp call` finds it).
    assert (tmux_mcp.state / "serve.lock").read_text().splitlines() == [str(first.pid), str(socket.resolve())]

    # A second server on the same state directory, even on another socket.
    second = tmux_mcp.serve_unix(tmux_mcp.root / "private" / "other.sock")
    assert second.exit_status() == 2
    refusal = second.wait_line("tmux-mcp:")
    assert f"another tmux-mcp server (pid {first.pid})" in refusal, refusal
    assert str(tmux_mcp.state) in refusal, refusal
    assert not (tmux_mcp.root / "private" / "other.sock").exists()

    # A directory others can write is refused, clearly.
    open_dir = tmux_mcp.root / "open"
    open_dir.mkdir()
    open_dir.chmod(0o777)
    first.kill()
    third = tmux_mcp.serve_unix(open_dir / "mcp.sock")
    assert third.exit_status() == 2
    refusal = third.wait_line("refusing the socket directory")
    assert "mode is 0777: every user can write to it" in refusal, refusal
    assert not (open_dir / "mcp.sock").exists()


def test_sigterm_answers_the_call_in_flight_and_removes_the_socket(tmux_mcp: TmuxMcp) -> None:
    socket_path = tmux_mcp.root / "s" / "mcp.sock"
    server = tmux_mcp.serve_unix(socket_path)
    server.ready()
    deadline = time.monotonic() + LIMIT
    with (
        socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as busy,
        socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as idle,
    ):
        busy.connect(str(socket_path))
        idle.connect(str(socket_path))
        busy_file = busy.makefile("rwb")
        idle_file = idle.makefile("rwb")
        client = JsonLines(busy_file, busy_file)
        client.handshake(deadline)
        bystander = JsonLines(idle_file, idle_file)
        bystander.handshake(deadline)
        client.start_long_run(10, deadline)

        server.process.send_signal(signal.SIGTERM)
        stopped = time.monotonic()
        # The call in flight is answered, then the connection ends; the idle
        # connection just ends.
        assert_stopped_run_answer(client.answer(10, stopped + STOP_LIMIT))
        for connection in (client, bystander):
            while (message := connection.next(stopped + STOP_LIMIT)) is not None:
                assert "id" not in message, message
        assert server.exit_status(timeout=max(0.0, stopped + STOP_LIMIT - time.monotonic())) == 0
        assert time.monotonic() - stopped < STOP_LIMIT
    assert not socket_path.exists()
    # The lock is released, and no longer names the stopped server's pid.
    assert (tmux_mcp.state / "serve.lock").read_text().strip() == ""
    runs = [r for r in tmux_mcp.audit_records() if r["tool"] == "run"]
    assert len(runs) == 1 and runs[0]["outcome"] == "error", tmux_mcp.audit_records()
    # Another server can start on the same socket and state directory at once.
    again = tmux_mcp.serve_unix(socket_path)
    again.ready()
    again.kill()
