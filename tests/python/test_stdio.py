"""The built `tmux-mcp` binary over stdio, driven by the MCP Python SDK.

This is the third depth of the MCP tests (after handler calls and an rmcp
client over an in-memory duplex): a real child process, a client written
independently of rmcp, and a real tmux server on a private socket (see
conftest.py and support.py). Each test bounds itself with `anyio.fail_after`.
"""

from __future__ import annotations

import hashlib
import json
import queue
import signal
import stat
import subprocess
import threading
import time

import anyio
import mcp
import pytest
from support import (
    DEFAULT_TOOLS,
    HANDSHAKE_PROTOCOL,
    TMUX_DIED,
    TOOLSETS,
    TmuxMcp,
    connecting_call,
    text_of,
)
from mcp.shared.exceptions import MCPError

pytestmark = pytest.mark.anyio

#: Upper bound for one test's conversation with the server.
LIMIT = 30


async def new_terminal(session: mcp.ClientSession, **args) -> dict:
    result = await connecting_call(session.call_tool, "create_terminal", args)
    assert not result.is_error, text_of(result)
    return result.structured_content


async def run(session: mcp.ClientSession, pane: str, command: str, **args) -> dict:
    result = await session.call_tool("run", {"target": pane, "command": command, **args})
    assert not result.is_error, text_of(result)
    return result.structured_content


# ---------------------------------------------------------------- handshake and tool listing


async def test_initialize_and_list_default_tools(tmux_mcp: TmuxMcp) -> None:
    version = subprocess.run(
        [str(tmux_mcp.bin), "--version"], capture_output=True, text=True, check=True
    ).stdout.split()[-1]
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session() as (session, init):
            assert init.server_info.name == "tmux-mcp"
            assert init.server_info.version == version
            assert init.protocol_version == HANDSHAKE_PROTOCOL
            assert init.capabilities.tools is not None
            # The instructions tell a model how to start and a human how to watch.
            assert "create_terminal" in init.instructions
            assert f"tmux -S {tmux_mcp.socket} attach -t NAME" in init.instructions
            assert "Toolsets enabled: inspect, manage, execute." in init.instructions

            listed = await session.list_tools()
            tools = {tool.name: tool for tool in listed.tools}
            assert set(tools) == DEFAULT_TOOLS
            for name, tool in tools.items():
                assert tool.description, name
                assert tool.input_schema.get("type") == "object", name
                assert tool.output_schema and tool.output_schema.get("type") == "object", name
                read_only = tool.annotations.read_only_hint
                assert read_only == (name in TOOLSETS["inspect"]), name
            assert tools["run"].annotations.destructive_hint is True

            # Neither the handshake nor the listing starts or contacts tmux.
            assert not tmux_mcp.socket.exists()


@pytest.mark.parametrize(
    ("args", "env", "expected", "sets"),
    [
        pytest.param(
            ["--toolsets", "inspect,teardown", "--tools", "run", "--exclude-tools", "kill_server,read_output"],
            {},
            (TOOLSETS["inspect"] | TOOLSETS["teardown"] | {"run"}) - {"kill_server", "read_output"},
            "inspect, teardown",
            id="flags",
        ),
        pytest.param(
            [],
            {
                "TMUX_MCP_TOOLSETS": "manage",
                "TMUX_MCP_TOOLS": "capture_screen,kill_pane",
                "TMUX_MCP_EXCLUDE_TOOLS": "detach_clients",
            },
            (TOOLSETS["manage"] | {"capture_screen", "kill_pane"}) - {"detach_clients"},
            "manage",
            id="environment",
        ),
    ],
)
async def test_tools_follow_the_configured_toolsets(
    tmux_mcp: TmuxMcp, args: list[str], env: dict[str, str], expected: set[str], sets: str
) -> None:
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session(*args, env=env) as (session, init):
            listed = await session.list_tools()
            assert {tool.name for tool in listed.tools} == expected
            assert f"Toolsets enabled: {sets}." in init.instructions
            # A tool left out is not callable either.
            left_out = sorted(DEFAULT_TOOLS - expected)[0]
            with pytest.raises(MCPError) as refused:
                await session.call_tool(left_out, {})
            assert "tool not found" in refused.value.message


def test_an_unknown_toolset_stops_start_up(tmux_mcp: TmuxMcp) -> None:
    started = subprocess.run(
        [str(tmux_mcp.bin), *tmux_mcp.params("--toolsets", "inspect,exec").args],
        env=tmux_mcp.env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=LIMIT,
        check=False,
    )
    assert started.returncode == 2
    assert '"exec"' in started.stderr
    assert "inspect, manage, execute, teardown" in started.stderr
    assert started.stdout == ""


# ---------------------------------------------------------------- terminals, input, waits, screens


async def test_create_type_wait_and_capture(tmux_mcp: TmuxMcp) -> None:
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session() as (session, _):
            created = await new_terminal(session, name="py stdio")
            pane = created["pane"]
            assert created["kind"] == "session"
            assert pane.startswith("%") and created["session"].startswith("$")
            assert created["session_name"] == "py stdio"
            assert created["cursor"] == 0
            assert created["attach_command"] == f"tmux -S {tmux_mcp.socket} attach -t 'py stdio'"

            # Characters that tmux's command parser or format expander would
            # act on arrive unchanged.
            typed = "echo 'a;b #{pane_id} $HOME \\ é 🚀'"
            sent = await session.call_tool("send_text", {"target": pane, "text": typed, "enter": True})
            assert not sent.is_error, text_of(sent)
            assert sent.structured_content["delivery"] == "literal"
            assert sent.structured_content["enter"] is True
            assert sent.structured_content["bytes"] == len(typed.encode())

            waited = await session.call_tool(
                "wait_for_output",
                {"target": pane, "pattern": "^a;b .*$", "cursor": sent.structured_content["cursor"], "timeout_secs": 10},
            )
            assert not waited.is_error, text_of(waited)
            found = waited.structured_content
            assert found["status"] == "matched" and found["matched"] is True
            assert found["text"] == "a;b #{pane_id} $HOME \\ é 🚀"
            assert found["cursor"] > sent.structured_content["cursor"]
            assert "Matched in pane" in text_of(waited)

            screen = await session.call_tool("capture_screen", {"target": pane})
            assert not screen.is_error, text_of(screen)
            shown = screen.structured_content
            assert "a;b #{pane_id} $HOME \\ é 🚀" in shown["text"].splitlines()
            assert shown["pane"] == pane
            assert shown["dead"] is False and shown["alternate_screen"] is False
            assert (shown["width"], shown["height"]) == (created["width"], created["height"])
            assert shown["text"] in text_of(screen)

            listed = await session.call_tool("list_terminals", {})
            sessions = listed.structured_content["sessions"]
            assert [s["name"] for s in sessions] == ["py stdio"]
            assert sessions[0]["windows"][0]["panes"][0]["id"] == pane

            # Both name the tmux they drive, as `tmux -V` does.
            version = subprocess.run([tmux_mcp.tmux, "-V"], capture_output=True, text=True, check=True)
            expected = version.stdout.split()[1]
            assert listed.structured_content["tmux_version"] == expected
            info = await session.call_tool("pane_info", {"target": pane})
            assert info.structured_content["tmux_version"] == expected
            assert f"tmux {expected}" in text_of(info)


async def test_run_returns_output_and_exact_exit_status(tmux_mcp: TmuxMcp) -> None:
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session() as (session, _):
            pane = (await new_terminal(session))["pane"]

            done = await run(session, pane, "printf 'out\\n'; (exit 7)")
            assert done["status"] == "completed"
            assert done["exit_status"] == 7
            assert done["output"] == "out\n"

            # Standard error is part of the output; the status is the command's.
            done = await run(session, pane, "ls /nonexistent-tmux-mcp-test")
            assert (done["status"], done["exit_status"]) == ("completed", 2)
            assert "No such file or directory" in done["output"]

            # Multi-line commands, and state that persists between runs.
            done = await run(session, pane, "cd /\necho one\necho two")
            assert (done["exit_status"], done["output"]) == (0, "one\ntwo\n")
            done = await run(session, pane, "pwd")
            assert done["output"] == "/\n"

            # Exiting the shell itself is reported as such.
            done = await run(session, pane, "exit 3")
            assert (done["status"], done["exit_status"]) == ("pane_exited", 3)

            # A terminal created with a command: its exit status after it ends.
            program = await new_terminal(session, command="echo bye; exit 4")
            exited = await session.call_tool("wait_for_exit", {"target": program["pane"], "timeout_secs": 10})
            assert exited.structured_content["status"] == "exited"
            assert exited.structured_content["exit_status"] == 4


# ---------------------------------------------------------------- progress and cancellation


async def test_progress_notifications_during_a_long_wait(tmux_mcp: TmuxMcp) -> None:
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, total, message))

    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session() as (session, _):
            pane = (await new_terminal(session))["pane"]
            started = time.monotonic()
            result = await session.call_tool(
                "wait_for_output",
                {"target": pane, "pattern": "never printed", "literal": True, "timeout_secs": 3.5},
                progress_callback=on_progress,
            )
            elapsed = time.monotonic() - started
    assert not result.is_error, text_of(result)
    assert result.structured_content["status"] == "timeout"
    assert result.structured_content["matched"] is False
    assert 3.4 <= elapsed < 10
    assert len(progress) >= 3, progress
    values = [value for value, _, _ in progress]
    assert values == sorted(values) and values[-1] < 3.6
    assert all(total == 4 for _, total, _ in progress)
    assert all(message and message.startswith("Waiting for output in pane") for _, _, message in progress)


async def test_cancelled_calls_end_and_the_server_stays_usable(tmux_mcp: TmuxMcp) -> None:
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session("--audit-log", str(tmux_mcp.audit)) as (session, _):
            pane = (await new_terminal(session))["pane"]

            # A 30-second wait abandoned after one second: the client's cancel
            # scope sends notifications/cancelled and the call returns at once.
            started = time.monotonic()
            with anyio.move_on_after(1.0) as scope:
                await session.call_tool(
                    "wait_for_output", {"target": pane, "pattern": "never printed", "timeout_secs": 30}
                )
            assert scope.cancelled_caught
            assert time.monotonic() - started < 3

            # The server is still there, and stopped waiting when told to.
            done = await run(session, pane, "echo still here")
            assert (done["status"], done["exit_status"], done["output"]) == ("completed", 0, "still here\n")
            cancelled = [r for r in tmux_mcp.audit_records() if r["tool"] == "wait_for_output"]
            assert len(cancelled) == 1
            assert cancelled[0]["outcome"] == "error"
            assert "cancelled" in cancelled[0]["message"]
            assert cancelled[0]["duration_ms"] < 3000

            # A cancelled run leaves the command running; the pane stays busy
            # while it runs, and the refusal names the run's id, by which its
            # end is collected.
            with anyio.move_on_after(0.5) as scope:
                await run(session, pane, "sleep 3; echo finished")
            assert scope.cancelled_caught
            busy = await session.call_tool("run", {"target": pane, "command": "echo next"})
            assert busy.is_error
            run_id = text_of(busy).split('run_id="', 1)[1].split('"', 1)[0]
            resumed = await session.call_tool("run", {"run_id": run_id, "timeout_secs": 10})
            assert not resumed.is_error, text_of(resumed)
            assert resumed.structured_content["status"] == "completed"
            assert resumed.structured_content["exit_status"] == 0
            assert resumed.structured_content["output"] == "finished\n"
            done = await run(session, pane, "echo next")
            assert done["output"] == "next\n"


# ---------------------------------------------------------------- refusals and errors


async def test_teardown_is_off_by_default(tmux_mcp: TmuxMcp) -> None:
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session() as (session, _):
            listed = {tool.name for tool in (await session.list_tools()).tools}
            assert not listed & TOOLSETS["teardown"]
            created = await new_terminal(session, name="keep")
            for tool, args in [
                ("kill_session", {"target": created["session"]}),
                ("kill_pane", {"target": created["pane"]}),
                ("kill_server", {}),
            ]:
                # A protocol error (JSON-RPC -32602), not a tool result.
                with pytest.raises(MCPError) as refused:
                    await session.call_tool(tool, args)
                assert refused.value.code == -32602
                assert refused.value.message == "tool not found"
            listed = await session.call_tool("list_terminals", {})
            assert [s["name"] for s in listed.structured_content["sessions"]] == ["keep"]


async def test_bad_arguments_are_tool_errors_with_a_message(tmux_mcp: TmuxMcp) -> None:
    cases = [
        ("send_text", {"target": "%1"}, "missing field `text`"),
        ("send_text", {"target": "%1", "text": "x", "colour": "red"}, "unknown field `colour`"),
        ("wait_for_output", {"target": "%1", "pattern": "x", "timeout_secs": "soon"}, "invalid type"),
        ("create_terminal", {"kind": "tab"}, "unknown variant `tab`"),
    ]
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session() as (session, _):
            for tool, args, detail in cases:
                result = await session.call_tool(tool, args)
                assert result.is_error, (tool, args)
                message = text_of(result)
                assert message.startswith(f"{tool} failed: the arguments do not match its input schema"), message
                assert detail in message
                assert "call it again" in message
            # Arguments refused before tmux is needed never start it.
            assert not tmux_mcp.socket.exists()

            # Errors found by the tool itself say what failed and what to do.
            pane = (await new_terminal(session))["pane"]
            result = await session.call_tool("wait_for_output", {"target": pane, "pattern": "("})
            assert result.is_error
            assert "Fix the pattern" in text_of(result)
            result = await session.call_tool("send_keys", {"target": pane, "keys": ["NoSuchKey"]})
            assert result.is_error
            assert "send_text" in text_of(result)


async def test_a_missing_target_is_named_as_missing(tmux_mcp: TmuxMcp) -> None:
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session() as (session, _):
            await new_terminal(session)
            for target in ("%99", "no-such-session"):
                result = await session.call_tool("capture_screen", {"target": target})
                assert result.is_error
                message = text_of(result)
                assert "list_terminals" in message
                assert any(
                    phrase in message
                    for phrase in ("can't find", "not found", "does not exist", "no such", "no pane")
                ), message


async def test_unsendable_key_advice_names_tools(tmux_mcp: TmuxMcp) -> None:
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session() as (session, _):
            pane = (await new_terminal(session))["pane"]
            result = await session.call_tool("send_keys", {"target": pane, "keys": ["C-é"]})
            assert result.is_error
            assert "SendKeys" not in text_of(result), text_of(result)


async def test_first_connection_survives_a_busy_control_pane(tmux_mcp: TmuxMcp) -> None:
    failures = []
    with anyio.fail_after(LIMIT):
        for attempt in range(20):
            socket = tmux_mcp.extra_socket(f"busy-{attempt}.sock")
            # A fresh server whose control session's pane prints without pause.
            busy = ["new-session", "-d", "-s", "tmux-mcp-control", "while :; do echo busy; done"]
            subprocess.run(
                [tmux_mcp.tmux, "-S", str(socket), "-f", "/dev/null", *busy],
                env=tmux_mcp.env(),
                check=True,
                timeout=10,
            )
            try:
                async with tmux_mcp.session(socket=socket) as (session, _):
                    result = await session.call_tool("list_terminals", {})
                    if result.is_error:
                        failures.append(text_of(result))
            finally:
                subprocess.run([tmux_mcp.tmux, "-S", str(socket), "kill-server"], capture_output=True, check=False)
            if failures:
                break
    assert not failures, failures


# ---------------------------------------------------------------- safety: guard, redaction, audit


async def test_self_kill_guard_protects_the_clients_own_pane(tmux_mcp: TmuxMcp) -> None:
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session() as (session, _):
            mine = await new_terminal(session, name="client")
            other = await new_terminal(session, name="other")
        # A tmux-mcp whose client runs in pane `mine`, on this very server.
        inside = {
            "TMUX": f"{tmux_mcp.socket},1,{mine['session'].lstrip('$')}",
            "TMUX_PANE": mine["pane"],
        }
        async with tmux_mcp.session("--toolsets", "inspect,execute,teardown", env=inside) as (session, _):
            for tool, args in [
                ("send_text", {"target": mine["pane"], "text": "echo hi", "enter": True}),
                ("kill_pane", {"target": mine["pane"]}),
                ("kill_session", {"target": mine["session"]}),
                ("kill_server", {}),
            ]:
                result = await session.call_tool(tool, args)
                assert result.is_error, tool
                assert "protect the MCP client itself" in text_of(result), text_of(result)
            killed = await session.call_tool("kill_pane", {"target": other["pane"]})
            assert not killed.is_error, text_of(killed)
        # The same variables naming another tmux server do not restrict anything.
        elsewhere = dict(inside, TMUX=f"{tmux_mcp.root / 'other.sock'},1,0")
        async with tmux_mcp.session("--toolsets", "inspect,execute,teardown", env=elsewhere) as (session, _):
            sent = await session.call_tool("send_text", {"target": mine["pane"], "text": "true", "enter": True})
            assert not sent.is_error, text_of(sent)
        # TMUX_PANE without TMUX: the server cannot tell, so it refuses.
        unknown = {"TMUX_PANE": mine["pane"]}
        async with tmux_mcp.session(env=unknown) as (session, _):
            sent = await session.call_tool("send_text", {"target": mine["pane"], "text": "true", "enter": True})
            assert sent.is_error
            assert "TMUX is not readable" in text_of(sent)


async def test_redaction_and_the_audit_log(tmux_mcp: TmuxMcp) -> None:
    command = "echo password=hunter22 AKIAIOSFODNN7EXAMPLE ticket-4711"
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session("--audit-log", str(tmux_mcp.audit), "--redact", r"ticket-\d+") as (session, _):
            pane = (await new_terminal(session))["pane"]
            done = await run(session, pane, command)
            assert done["output"] == "password=[REDACTED:password] [REDACTED:aws-access-key] [REDACTED:custom]\n"
            screen = await session.call_tool("capture_screen", {"target": pane})
            for secret in ("hunter22", "AKIAIOSFODNN7EXAMPLE", "ticket-4711"):
                assert secret not in screen.structured_content["text"]
                assert secret not in text_of(screen)
        # Redaction is a property of what one tmux-mcp returns, not of the pane.
        async with tmux_mcp.session("--no-default-redactions") as (session, _):
            screen = await session.call_tool("capture_screen", {"target": pane})
            assert "password=hunter22 AKIAIOSFODNN7EXAMPLE ticket-4711" in screen.structured_content["text"]

    mode = stat.S_IMODE(tmux_mcp.audit.stat().st_mode)
    assert mode == 0o600, oct(mode)
    assert "hunter22" not in tmux_mcp.audit.read_text()
    records = [r for r in tmux_mcp.audit_records() if TMUX_DIED not in r.get("message", "")]
    assert [r["tool"] for r in records] == ["create_terminal", "run", "capture_screen"]
    assert all(r["outcome"] == "ok" and r["time"].endswith("Z") for r in records)
    logged = records[1]["arguments"]
    assert logged["target"] == pane
    assert logged["command"] == {
        "len": len(command.encode()),
        "sha256": hashlib.sha256(command.encode()).hexdigest()[:12],
    }


async def test_a_private_key_on_screen_is_masked_whole(tmux_mcp: TmuxMcp) -> None:
    body = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW"
    key = tmux_mcp.root / "key"
    key.write_text(f"-----BEGIN OPENSSH PRIVATE KEY-----\n{body}\n-----END OPENSSH PRIVATE KEY-----\n")
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session() as (session, _):
            pane = (await new_terminal(session))["pane"]
            done = await run(session, pane, f"cat {key}")
            assert done["output"] == "[REDACTED:private-key]\n"
            screen = await session.call_tool("capture_screen", {"target": pane})
            assert body not in screen.structured_content["text"]
            scrollback = await session.call_tool("read_output", {"target": pane, "last_lines": 20})
            assert body not in scrollback.structured_content["text"]


# ---------------------------------------------------------------- the 2026-07-28 protocol


async def test_modern_protocol_lists_tools_and_calls_one(tmux_mcp: TmuxMcp) -> None:
    progress: list[float] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    with anyio.fail_after(LIMIT):
        # mode="auto" sends server/discover and adopts 2026-07-28 (no initialize).
        async with mcp.Client(tmux_mcp.params(), mode="auto") as client:
            assert client.protocol_version == "2026-07-28"
            assert client.server_info.name == "tmux-mcp"
            listed = await client.list_tools()
            assert {tool.name for tool in listed.tools} == DEFAULT_TOOLS
            created = await connecting_call(client.call_tool, "create_terminal", {})
            assert not created.is_error, text_of(created)
            done = await client.call_tool(
                "run",
                {"target": created.structured_content["pane"], "command": "sleep 1.2; echo modern; false"},
                progress_callback=on_progress,
            )
    assert not done.is_error, text_of(done)
    assert done.structured_content["status"] == "completed"
    assert done.structured_content["exit_status"] == 1
    assert done.structured_content["output"] == "modern\n"
    assert progress, "no progress notification during a 1.2 s run"


# ---------------------------------------------------------------- shutdown


class JsonLines:
    """A raw JSON-RPC client on a pair of byte streams (newline-delimited):
    a thread reads the server's lines into a queue, and `next` waits on that
    queue with a deadline (never by looking again after a pause)."""

    def __init__(self, writer, reader) -> None:
        self._writer = writer
        self._lines: queue.Queue[dict | None] = queue.Queue()
        self.seen: list[dict] = []

        def read() -> None:
            for line in reader:
                if line.strip():
                    self._lines.put(json.loads(line))
            self._lines.put(None)

        threading.Thread(target=read, daemon=True).start()

    def send(self, message: dict) -> None:
        self._writer.write((json.dumps({"jsonrpc": "2.0", **message}) + "\n").encode())
        self._writer.flush()

    def next(self, deadline: float) -> dict | None:
        """The next message (None at the end of the stream), waiting until
        `deadline` (a `time.monotonic` value) at most."""
        try:
            message = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            raise AssertionError(f"no message in time; seen: {self.seen}") from None
        if message is not None:
            self.seen.append(message)
        return message

    def answer(self, request_id: int, deadline: float) -> dict:
        """Waits for the answer to request `request_id`."""
        while (message := self.next(deadline)) is not None:
            if message.get("id") == request_id and "method" not in message:
                return message
        raise AssertionError(f"the stream ended without an answer to {request_id}: {self.seen}")

    def call(self, request_id: int, tool: str, deadline: float, meta: dict | None = None, **args) -> dict:
        params: dict = {"name": tool, "arguments": args}
        if meta:
            params["_meta"] = meta
        self.send({"id": request_id, "method": "tools/call", "params": params})
        return self.answer(request_id, deadline)

    def handshake(self, deadline: float) -> None:
        self.send(
            {
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": HANDSHAKE_PROTOCOL,
                    "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "1"},
                },
            }
        )
        assert "result" in self.answer(1, deadline), self.seen
        self.send({"method": "notifications/initialized"})

    def start_long_run(self, request_id: int, deadline: float) -> str:
        """Creates a terminal and starts a `run` of `sleep 30` as request
        `request_id`; returns once the run has typed its command and waits
        (its first progress notification). The pane's id."""
        made = self.call(2, "create_terminal", deadline)
        if made["result"].get("isError") and TMUX_DIED in made["result"]["content"][0]["text"]:
            made = self.call(3, "create_terminal", deadline)
        assert not made["result"].get("isError"), made
        pane = made["result"]["structuredContent"]["pane"]
        self.send(
            {
                "id": request_id,
                "method": "tools/call",
                "params": {
                    "name": "run",
                    "arguments": {"target": pane, "command": "sleep 30", "timeout_secs": 20},
                    "_meta": {"progressToken": "long-run"},
                },
            }
        )
        while (message := self.next(deadline)) is not None:
            if message.get("method") == "notifications/progress":
                assert message["params"]["progressToken"] == "long-run", message
                return pane
            assert message.get("id") != request_id, f"the run ended early: {message}"
        raise AssertionError(f"the server ended before the run was under way: {self.seen}")


def assert_stopped_run_answer(answer: dict) -> None:
    """The answer to a `run` in flight when the server stopped: an error that
    says so, with the run_id to resume with, or a running result with it."""
    result = answer.get("result")
    assert result is not None, answer
    if result.get("isError"):
        text = result["content"][0]["text"]
        assert "shutting down" in text, text
        assert 'run_id="' in text, text
    else:
        assert result["structuredContent"]["status"] == "running", result
        assert result["structuredContent"]["run_id"], result


#: How long a stopped server may take to exit (its drain time is 5 s).
STOP_LIMIT = 15


def test_sigterm_answers_and_audits_the_call_in_flight(tmux_mcp: TmuxMcp) -> None:
    deadline = time.monotonic() + LIMIT
    with tmux_mcp.log.open("ab") as errlog:
        proc = subprocess.Popen(  # acts on the fixture's private tmux socket (--socket-path)
            tmux_mcp.command("--audit-log", str(tmux_mcp.audit)),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errlog,
            env=tmux_mcp.env(),
            cwd=str(tmux_mcp.home),
        )
    try:
        assert proc.stdin is not None and proc.stdout is not None
        client = JsonLines(proc.stdin, proc.stdout)
        client.handshake(deadline)
        client.start_long_run(10, deadline)

        proc.send_signal(signal.SIGTERM)
        stopped = time.monotonic()
        answer = client.answer(10, stopped + STOP_LIMIT)
        assert_stopped_run_answer(answer)
        assert proc.wait(timeout=max(0.0, stopped + STOP_LIMIT - time.monotonic())) == 0
        assert time.monotonic() - stopped < STOP_LIMIT
        # Nothing else is answered: only notifications come before the end.
        while (message := client.next(time.monotonic() + 5)) is not None:
            assert "id" not in message, message
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()

    runs = [r for r in tmux_mcp.audit_records() if r["tool"] == "run"]
    assert len(runs) == 1, tmux_mcp.audit_records()
    assert runs[0]["outcome"] == "error", runs
    assert runs[0]["arguments"]["timeout_secs"] == 20, runs
