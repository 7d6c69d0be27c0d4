"""Every input bounded and answered, through the built `tmux-mcp` binary.

Numbers at the edges (capped or refused by name), numbers and booleans sent
as strings (as MCP Inspector's CLI sends every argument), standard JSON
Schema in tools/list, NUL in typed text, unknown arguments in the audit log,
an out-of-range flag at start-up, and raw lines on standard input that are
not JSON, which the SDK cannot send: each gets a JSON-RPC error reply and
the session goes on. Every tmux involved is the private one of the
`tmux_mcp` fixture (see conftest.py).
"""

from __future__ import annotations

import hashlib
import json
import os
import selectors
import subprocess
import time
from typing import Any

import anyio
import mcp
import pytest
from support import DEFAULT_TOOLS, TOOLSETS, TmuxMcp, connecting_call, text_of

pytestmark = pytest.mark.anyio

#: Upper bound for one test's conversation with the server.
LIMIT = 30

#: Waits in these tests last at most this long (--max-wait-secs).
MAX_WAIT = 1

#: Integer formats a Rust schema generator writes; none is JSON Schema.
NON_STANDARD_FORMATS = {"int8", "int16", "int32", "int64", "int", "uint8", "uint16", "uint32", "uint64", "uint", "float", "double"}


async def new_terminal(session: mcp.ClientSession, **args: Any) -> dict:
    result = await connecting_call(session.call_tool, "create_terminal", args)
    assert not result.is_error, text_of(result)
    return result.structured_content


def formats(schema: Any, path: str = "") -> list[tuple[str, str]]:
    """Every `format` in a schema, with where it is."""
    found = []
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key == "format" and isinstance(value, str):
                found.append((path, value))
            found.extend(formats(value, f"{path}/{key}"))
    elif isinstance(schema, list):
        for i, value in enumerate(schema):
            found.extend(formats(value, f"{path}/{i}"))
    return found


# ---------------------------------------------------------------- schemas


async def test_tool_schemas_are_standard_json_schema(tmux_mcp: TmuxMcp) -> None:
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session("--toolsets", "inspect,manage,execute,teardown") as (session, _):
            tools = (await session.list_tools()).tools
    assert len(tools) == sum(len(names) for names in TOOLSETS.values())
    unsigned = 0
    for tool in tools:
        for where, schema in (("input", tool.input_schema), ("output", tool.output_schema)):
            found = formats(schema)
            assert not found, f"{tool.name} {where} schema: {found}"
            assert not {f for _, f in found} & NON_STANDARD_FORMATS
        for name, prop in tool.input_schema.get("properties", {}).items():
            kinds = prop.get("type")
            kinds = kinds if isinstance(kinds, list) else [kinds]
            if "integer" in kinds:
                # What the formats meant is kept as standard bounds.
                assert prop.get("minimum") is not None or name in {"start", "end"}, (tool.name, name, prop)
                unsigned += prop.get("minimum") is not None
    assert unsigned >= 12
    by_name = {tool.name: tool for tool in tools}
    width = by_name["create_terminal"].input_schema["properties"]["width"]
    assert (width["minimum"], width["maximum"]) == (2, 10000)
    timeout = by_name["run"].input_schema["properties"]["timeout_secs"]
    assert timeout["type"] == "number" and timeout["minimum"] == 0


# ---------------------------------------------------------------- numbers


async def test_huge_waits_are_capped_and_negative_ones_refused(tmux_mcp: TmuxMcp) -> None:
    flags = ("--max-wait-secs", str(MAX_WAIT), "--default-wait-secs", str(MAX_WAIT))
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session(*flags) as (session, _):
            pane = (await new_terminal(session))["pane"]
            # 1e308 seconds used to panic a worker (Duration::from_secs_f64),
            # and the call was never answered.
            for tool, args in [
                ("wait_for_output", {"target": pane, "pattern": "never printed", "literal": True}),
                ("wait_for_idle", {"target": pane, "quiet_secs": 1e308}),
                ("wait_for_exit", {"target": pane}),
            ]:
                started = time.monotonic()
                result = await session.call_tool(tool, {**args, "timeout_secs": 1e308})
                elapsed = time.monotonic() - started
                assert not result.is_error, (tool, text_of(result))
                assert result.structured_content["status"] in {"timeout", "idle"}, (tool, result.structured_content)
                assert elapsed < MAX_WAIT + 5, (tool, elapsed)
            done = await session.call_tool("run", {"target": pane, "command": "echo capped", "timeout_secs": 1e308})
            assert not done.is_error, text_of(done)
            assert done.structured_content["output"] == "capped\n"

            # -1 used to become the 30 s default silently.
            for tool, args in [
                ("wait_for_output", {"target": pane, "pattern": "x", "timeout_secs": -1}),
                ("run", {"target": pane, "command": "echo never", "timeout_secs": -1}),
                ("wait_for_idle", {"target": pane, "timeout_secs": -1}),
            ]:
                started = time.monotonic()
                result = await session.call_tool(tool, args)
                assert result.is_error, tool
                assert time.monotonic() - started < 2, tool
                message = text_of(result)
                assert message.startswith(f"{tool} failed: timeout_secs must be a number of seconds from 0 to {MAX_WAIT}"), message
                assert "not -1" in message, message
            result = await session.call_tool("wait_for_idle", {"target": pane, "quiet_secs": -2})
            assert result.is_error
            assert "quiet_secs must be a number of seconds from 0" in text_of(result)

            # Integers: refused by name with the range, instead of serde's
            # nameless "invalid value".
            for tool, args, message in [
                ("read_output", {"target": pane, "max_bytes": -1}, "max_bytes must be a whole number of 0 or more, not -1"),
                ("read_output", {"target": pane, "last_lines": 2.5}, "last_lines must be a whole number of 0 or more, not 2.5"),
                ("resize", {"target": pane, "width": 1}, "width must be a whole number from 2 to 10000, not 1"),
                ("create_terminal", {"kind": "split", "target": pane, "size_percent": 300}, "size_percent must be a whole number from 1 to 99, not 300"),
            ]:
                result = await session.call_tool(tool, args)
                assert result.is_error, (tool, args)
                assert message in text_of(result), text_of(result)
            # Counts beyond any limit count as the limit.
            lines = await session.call_tool("read_output", {"target": pane, "last_lines": 10**30, "max_bytes": 10**30})
            assert not lines.is_error, text_of(lines)


# ---------------------------------------------------------------- strings for numbers and booleans


async def test_numbers_and_booleans_sent_as_strings_are_accepted(tmux_mcp: TmuxMcp) -> None:
    flags = ("--max-wait-secs", str(MAX_WAIT), "--default-wait-secs", str(MAX_WAIT))
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session(*flags) as (session, _):
            pane = (await new_terminal(session))["pane"]
            # What MCP Inspector's CLI sends for --tool-arg timeout_secs=1.
            started = time.monotonic()
            waited = await session.call_tool(
                "wait_for_output", {"target": pane, "pattern": "never printed", "literal": "true", "timeout_secs": "0.5"}
            )
            assert not waited.is_error, text_of(waited)
            assert waited.structured_content["status"] == "timeout"
            assert time.monotonic() - started < MAX_WAIT + 3
            sent = await session.call_tool("send_text", {"target": pane, "text": "echo from-strings", "enter": "true"})
            assert not sent.is_error, text_of(sent)
            assert sent.structured_content["enter"] is True
            found = await session.call_tool(
                "wait_for_output",
                {"target": pane, "pattern": "^from-strings$", "cursor": str(sent.structured_content["cursor"]), "timeout_secs": "1"},
            )
            assert found.structured_content["status"] == "matched", found.structured_content
            done = await session.call_tool(
                "run", {"target": pane, "command": "echo 1", "timeout_secs": "1", "max_bytes": "300", "force": "false"}
            )
            assert not done.is_error, text_of(done)
            assert done.structured_content["output"] == "1\n"
            listed = await session.call_tool("list_terminals", {"include_internal": "true"})
            assert "tmux-mcp-control" in {s["name"] for s in listed.structured_content["sessions"]}
            # An array sent as the JSON of one.
            keys = await session.call_tool("send_keys", {"target": pane, "keys": '["C-l"]'})
            assert not keys.is_error, text_of(keys)
            assert keys.structured_content["keys"] == ["C-l"]

            # A string that holds no number or boolean is refused by name.
            for args, message in [
                ({"target": pane, "pattern": "x", "timeout_secs": "soon"}, 'invalid type for timeout_secs: expected a number, got the string "soon"'),
                ({"target": pane, "pattern": "x", "timeout_secs": "NaN"}, 'got the string "NaN"'),
                ({"target": pane, "pattern": "x", "literal": "yes"}, 'invalid type for literal: expected true or false, got the string "yes"'),
            ]:
                result = await session.call_tool("wait_for_output", args)
                assert result.is_error
                assert message in text_of(result), text_of(result)


# ---------------------------------------------------------------- NUL in typed text


async def test_nul_is_typed_as_a_byte_and_refused_where_no_argument_can_hold_it(tmux_mcp: TmuxMcp) -> None:
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session() as (session, _):
            od = await new_terminal(session, command="stty -echo; echo od-ready; LC_ALL=C od -c")
            ready = await session.call_tool(
                "wait_for_output", {"target": od["pane"], "pattern": "od-ready", "literal": True, "cursor": 0, "timeout_secs": 10}
            )
            assert ready.structured_content["status"] == "matched", ready.structured_content
            sent = await session.call_tool("send_text", {"target": od["pane"], "text": "a\u0000b\n"})
            assert not sent.is_error, text_of(sent)
            assert (sent.structured_content["delivery"], sent.structured_content["bytes"]) == ("bytes", 4)
            await session.call_tool("send_keys", {"target": od["pane"], "keys": ["C-d"]})
            dump = await session.call_tool(
                "wait_for_output",
                {"target": od["pane"], "pattern": "a  \\0   b  \\n", "literal": True, "cursor": sent.structured_content["cursor"], "timeout_secs": 10},
            )
            assert dump.structured_content["status"] == "matched", dump.structured_content

            shell = (await new_terminal(session))["pane"]
            pasted = await session.call_tool("paste_text", {"target": shell, "text": "echo pasted\u0000", "enter": True})
            assert pasted.is_error
            assert "text contains a NUL byte (byte 12), which a tmux paste buffer cannot hold" in text_of(pasted)
            ran = await session.call_tool("run", {"target": shell, "command": "echo \u0000ran"})
            assert ran.is_error
            assert "the command contains a NUL byte (byte 6)" in text_of(ran)
            done = await session.call_tool("run", {"target": shell, "command": "echo next", "timeout_secs": 10})
            assert done.structured_content["output"] == "next\n", done.structured_content


# ---------------------------------------------------------------- audit log


async def test_unknown_arguments_are_recorded_by_name_with_digested_values(tmux_mcp: TmuxMcp) -> None:
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session("--audit-log", str(tmux_mcp.audit)) as (session, _):
            result = await session.call_tool("send_text", {"target": "%1", "txt": "hunter2"})
            assert result.is_error
            assert "unknown field `txt`" in text_of(result)
    assert "hunter2" not in tmux_mcp.audit.read_text()
    (record,) = tmux_mcp.audit_records()
    assert record["tool"] == "send_text" and record["outcome"] == "error"
    assert record["arguments"] == {
        "target": "%1",
        "txt": {"len": 7, "sha256": hashlib.sha256(b"hunter2").hexdigest()[:12]},
    }
    assert record["unknown_arguments"] == ["txt"]


# ---------------------------------------------------------------- start-up flags


@pytest.mark.parametrize("value", ["99", "0", "2147483648"])
def test_history_limit_out_of_range_stops_start_up(tmux_mcp: TmuxMcp, value: str) -> None:
    started = subprocess.run(
        [str(tmux_mcp.bin), *tmux_mcp.params("--history-limit", value).args],
        env=tmux_mcp.env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=LIMIT,
        check=False,
    )
    assert started.returncode == 2, started
    assert f"--history-limit must be between 100 and 2147483647 lines (tmux's maximum), not {value}" in started.stderr
    assert started.stdout == ""


# ---------------------------------------------------------------- raw lines on standard input


class RawServer:
    """A `tmux-mcp` process spoken to in raw bytes, one line at a time."""

    def __init__(self, tmux_mcp: TmuxMcp) -> None:
        params = tmux_mcp.params()
        self.errlog = tmux_mcp.log.open("a")
        self.process = subprocess.Popen(
            [params.command, *params.args],
            env=params.env,
            cwd=params.cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.errlog,
        )
        assert self.process.stdin and self.process.stdout
        self.stdout = self.process.stdout.fileno()
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.stdout, selectors.EVENT_READ)
        self.pending = b""

    def send(self, line: bytes) -> None:
        assert self.process.stdin
        self.process.stdin.write(line + b"\n")
        self.process.stdin.flush()

    def reply(self, timeout: float = 10) -> dict:
        """The next line the server writes, as JSON, within `timeout`
        seconds (select waits for the bytes: no polling)."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self.pending:
            left = deadline - time.monotonic()
            assert left > 0, f"no reply within {timeout} s (got {self.pending!r})"
            if self.selector.select(left):
                chunk = os.read(self.stdout, 65536)
                assert chunk, "the server closed its output"
                self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        return json.loads(line)

    def ask(self, line: bytes) -> dict:
        self.send(line)
        return self.reply()

    def close(self) -> int:
        assert self.process.stdin
        self.process.stdin.close()
        try:
            return self.process.wait(timeout=LIMIT)
        finally:
            self.selector.close()
            self.errlog.close()


def request(id_: int | str, method: str, params: dict | None = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode()


def test_every_raw_line_gets_an_answer_and_the_session_goes_on(tmux_mcp: TmuxMcp) -> None:
    server = RawServer(tmux_mcp)
    try:
        init = server.ask(
            request(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}})
        )
        assert init["id"] == 1 and "result" in init, init
        server.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        call = b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"send_text","arguments":{"target":"%%1","text":"%s"}}}'
        cases = [
            # A lone surrogate, as JavaScript clients write a broken pair: the id is read from the line.
            (call % (5, b"\\ud800"), 5, -32700, "lone surrogate"),
            (b'{"jsonrpc":"2.0","id":6,"method":"ping","params":{"text":"\\udc00"}}', 6, -32700, "lone surrogate"),
            (b"\\ud800", None, -32700, "Parse error"),
            # Invalid UTF-8, in a request and alone.
            (call % (7, b"caf\xe9"), 7, -32700, "not UTF-8"),
            (b"\xff\xfe\xfd", None, -32700, "not UTF-8"),
            # Not JSON at all, a number no float holds, a cut line.
            (b"not json", None, -32700, "Parse error"),
            (b"1e999", None, -32700, "number out of range"),
            (b'{"jsonrpc":"2.0","id":8,"method":"tools/li', 8, -32700, "EOF while parsing"),
            # JSON that is no JSON-RPC message.
            (b'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":5}', 9, -32600, "Invalid request"),
            (b"[]", None, -32600, "Invalid request"),
        ]
        for line, id_, code, words in cases:
            reply = server.ask(line)
            assert reply["jsonrpc"] == "2.0", (line, reply)
            assert "id" in reply and reply["id"] == id_, (line, reply)
            assert reply["error"]["code"] == code, (line, reply)
            assert words in reply["error"]["message"], (line, reply)
            # The next valid request still works.
            pong = server.ask(request(f"after-{id_}", "ping"))
            assert pong == {"jsonrpc": "2.0", "id": f"after-{id_}", "result": {}}, pong
        listed = server.ask(request(10, "tools/list"))
        assert listed["id"] == 10 and len(listed["result"]["tools"]) == len(DEFAULT_TOOLS)
        # None of this touched tmux.
        assert not tmux_mcp.socket.exists()
    finally:
        status = server.close()
    assert status == 0
