"""Long calls as MCP tasks (the Tasks extension, `io.modelcontextprotocol/tasks`,
SEP-2663), spoken as raw JSON-RPC over the built binary's stdio (the MCP
Python SDK 2.3 has no client for this extension), and once through the SDK's
generic extension hooks on the 2026-07-28 protocol.

Nothing here sleeps: every step waits for a line from the server (a reply or
a notification) within a deadline. A task's completion is seen through the
`notifications/tasks` the server sends on a session with an `initialize`
handshake once the result is recorded; cancellation is recorded before
`tasks/cancel` is acknowledged."""

from __future__ import annotations

import json
import selectors
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import anyio
import pytest
from support import HANDSHAKE_PROTOCOL, TmuxMcp

TASKS = "io.modelcontextprotocol/tasks"
MODERN = "2026-07-28"
TASK_TOOLS = {"run", "wait_for_output", "wait_for_idle", "wait_for_state", "wait_for_exit", "wait_for_attention"}

#: How long any one reply may take (a true timer: a deadline, not a poll).
DEADLINE_SECS = 30.0


class Wire:
    """One `tmux-mcp` process spoken to line by line."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.next_id = 0
        self.pending: list[dict[str, Any]] = []
        self.buffer = b""
        self.selector = selectors.DefaultSelector()
        assert proc.stdout is not None
        self.selector.register(proc.stdout, selectors.EVENT_READ)

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def _line(self, deadline: float) -> dict[str, Any]:
        assert self.proc.stdout is not None
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            assert left > 0, "no reply from tmux-mcp within the deadline"
            # Waits for the pipe to become readable (or the deadline).
            if not self.selector.select(left):
                continue
            chunk = self.proc.stdout.read1(65536)  # type: ignore[attr-defined]
            assert chunk, "tmux-mcp closed its standard output"
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)

    def receive(self, wanted: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        """The first message (already read, or next) that `wanted` accepts."""
        for i, message in enumerate(self.pending):
            if wanted(message):
                return self.pending.pop(i)
        deadline = time.monotonic() + DEADLINE_SECS
        while True:
            message = self._line(deadline)
            if wanted(message):
                return message
            self.pending.append(message)

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Sends a request and returns its whole response (result or error)."""
        self.next_id += 1
        rid = self.next_id
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return self.receive(lambda m: m.get("id") == rid and ("result" in m or "error" in m))

    def result(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        response = self.request(method, params)
        assert "result" in response, response
        return response["result"]

    def notification(self, method: str, test: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        return self.receive(lambda m: m.get("method") == method and "id" not in m and test(m.get("params") or {}))


@contextmanager
def wire(tmux_mcp: TmuxMcp, *args: str) -> Iterator[Wire]:
    params = tmux_mcp.params(*args)
    with tmux_mcp.log.open("a") as errlog:
        proc = subprocess.Popen(
            [params.command, *params.args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errlog,
            env=params.env,
            cwd=params.cwd,
        )
        try:
            yield Wire(proc)
        finally:
            assert proc.stdin is not None
            proc.stdin.close()
            proc.wait(timeout=DEADLINE_SECS)


def initialize(w: Wire, *, tasks: bool) -> dict[str, Any]:
    capabilities: dict[str, Any] = {"extensions": {TASKS: {}}} if tasks else {}
    init = w.result(
        "initialize",
        {"protocolVersion": HANDSHAKE_PROTOCOL, "capabilities": capabilities, "clientInfo": {"name": "raw", "version": "1"}},
    )
    w.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    return init


def create_terminal(w: Wire, meta: dict[str, Any] | None = None) -> str:
    params: dict[str, Any] = {"name": "create_terminal", "arguments": {"name": "tasks"}}
    if meta:
        params["_meta"] = meta
    created = w.result("tools/call", params)
    assert not created.get("isError"), created
    return created["structuredContent"]["pane"]


#: A request's own declaration of the extension (its `_meta`): what makes a
#: long call a task, on either protocol generation.
ASK_TASKS = {"io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS: {}}}}


def call_params(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """`tools/call` params that ask for a task if the call is long."""
    return {"name": name, "arguments": arguments, "_meta": ASK_TASKS}


def test_run_and_a_wait_as_tasks_on_an_initialize_session(tmux_mcp: TmuxMcp) -> None:
    with wire(tmux_mcp, "--audit-log", str(tmux_mcp.audit)) as w:
        init = initialize(w, tasks=True)
        assert TASKS in init["capabilities"].get("extensions", {}), init["capabilities"]

        tools = {t["name"]: t for t in w.result("tools/list")["tools"]}
        for name, tool in tools.items():
            declared = (tool.get("_meta") or {}).get(TASKS)
            if name in TASK_TOOLS:
                assert declared == {"taskSupport": "optional"}, tool
            else:
                assert declared is None, tool

        pane = create_terminal(w)  # not a task tool: answered as always

        # A call that ends within a second is answered as an ordinary one,
        # even for a client that declared tasks.
        quick = w.result("tools/call", call_params("run", {"target": pane, "command": "echo quick"}))
        assert "taskId" not in quick and quick["structuredContent"]["output"] == "quick\n", quick

        # A longer run is a task: the handle comes after a second, the
        # result when recorded.
        created = w.result("tools/call", call_params("run", {"target": pane, "command": "sleep 2; echo task-$((6*7))"}))
        assert created["resultType"] == "task", created
        task_id = created["taskId"]
        assert created["status"] == "working" and created["pollIntervalMs"] > 0 and created["ttlMs"] > 0
        pushed = w.notification("notifications/tasks", lambda p: p.get("taskId") == task_id)
        assert pushed["params"]["status"] == "completed", pushed
        got = w.result("tasks/get", {"taskId": task_id})
        assert got["resultType"] == "complete" and got["status"] == "completed", got
        run = got["result"]["structuredContent"]
        assert run["status"] == "completed" and run["exit_status"] == 0, run
        assert run["output"] == "task-42\n", run
        assert got["result"] == pushed["params"]["result"]

        # A wait as a task: working until cancelled; tasks/cancel stops it.
        created = w.result(
            "tools/call",
            call_params("wait_for_output", {"target": pane, "pattern": "never-printed-xyz", "timeout_secs": 50}),
        )
        wait_id = created["taskId"]
        assert created["resultType"] == "task"
        assert w.result("tasks/get", {"taskId": wait_id})["status"] == "working"
        ack = w.result("tasks/cancel", {"taskId": wait_id})
        assert ack.get("resultType", "complete") == "complete"
        assert w.result("tasks/get", {"taskId": wait_id})["status"] == "cancelled"
        # The pane is free again: an ordinary-looking task runs in it.
        again = w.result("tools/call", call_params("run", {"target": pane, "command": "sleep 2; echo after"}))
        w.notification("notifications/tasks", lambda p: p.get("taskId") == again["taskId"])
        assert w.result("tasks/get", {"taskId": again["taskId"]})["result"]["structuredContent"]["output"] == "after\n"

        # Unknown ids are invalid params; tasks/update is acknowledged.
        missing = w.request("tasks/get", {"taskId": "no-such-task"})
        assert missing["error"]["code"] == -32602, missing
        assert w.result("tasks/update", {"taskId": task_id, "inputResponses": {}}).get("resultType", "complete") == "complete"

    # The call in the task is the same call: it is in the audit log.
    runs = [r for r in tmux_mcp.audit_records() if r.get("tool") == "run"]
    assert len(runs) == 3, runs


def test_declared_only_at_initialize_a_long_call_stays_ordinary(tmux_mcp: TmuxMcp) -> None:
    # What the MCP Inspector CLI 2.12 does on 2025-11-25: the extension in
    # its initialize capabilities, plain tools/call requests, and no polling.
    with wire(tmux_mcp) as w:
        initialize(w, tasks=True)
        pane = create_terminal(w)
        slow = w.result("tools/call", {"name": "run", "arguments": {"target": pane, "command": "sleep 2; echo slept"}})
        assert slow.get("resultType", "complete") == "complete" and "taskId" not in slow, slow
        assert slow["structuredContent"]["output"] == "slept\n", slow


def test_without_the_extension_calls_stay_ordinary(tmux_mcp: TmuxMcp) -> None:
    with wire(tmux_mcp) as w:
        initialize(w, tasks=False)
        pane = create_terminal(w)
        done = w.result("tools/call", {"name": "run", "arguments": {"target": pane, "command": "echo plain"}})
        assert done.get("resultType", "complete") == "complete" and "taskId" not in done, done
        assert done["structuredContent"]["output"] == "plain\n"
        # A run that outlives its call still returns a resumable run_id.
        slow = w.result("tools/call", {"name": "run", "arguments": {"target": pane, "command": "sleep 3", "timeout_secs": 1}})
        assert slow["structuredContent"].get("run_id"), slow
        # The tasks methods need the extension declared.
        refused = w.request("tasks/get", {"taskId": "anything"})
        assert refused["error"]["code"] == -32021, refused


def test_tasks_on_the_2026_protocol_with_per_request_capabilities(tmux_mcp: TmuxMcp) -> None:
    def meta(tasks: bool) -> dict[str, Any]:
        return {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS: {}}} if tasks else {},
        }

    with wire(tmux_mcp) as w:
        discovered = w.result("server/discover", {"_meta": meta(False)})
        assert TASKS in discovered["capabilities"].get("extensions", {}), discovered
        pane = create_terminal(w, meta(False))
        call = {"name": "wait_for_output", "arguments": {"target": pane, "pattern": "never-xyz", "timeout_secs": 50}}
        created = w.result("tools/call", {**call, "_meta": meta(True)})
        assert created["resultType"] == "task", created
        task_id = created["taskId"]
        assert w.result("tasks/get", {"taskId": task_id, "_meta": meta(True)})["status"] == "working"
        # Declared on this request only: without it the tasks methods refuse.
        refused = w.request("tasks/get", {"taskId": task_id, "_meta": meta(False)})
        assert refused["error"]["code"] == -32021, refused
        w.result("tasks/cancel", {"taskId": task_id, "_meta": meta(True)})
        assert w.result("tasks/get", {"taskId": task_id, "_meta": meta(True)})["status"] == "cancelled"
        # The same call without the extension is the ordinary bounded call.
        plain = w.result("tools/call", {**call, "arguments": {**call["arguments"], "timeout_secs": 0.2}, "_meta": meta(False)})
        assert "taskId" not in plain and plain["structuredContent"]["status"] == "timeout", plain


# ------------------------------------------------- through the MCP Python SDK 2.3
#
# The SDK has no client for the Tasks extension, but its generic extension
# hooks take one: a `ClientExtension` that declares the extension (the SDK
# then puts it in every request's capabilities) and claims the result type
# "task" on tools/call. Its resolver reads the task with `tasks/get` and
# stops it with `tasks/cancel`, through the SDK's own session.


@pytest.mark.anyio
async def test_the_python_sdk_gets_a_task_handle_and_cancels_it(tmux_mcp: TmuxMcp) -> None:
    from typing import Literal

    import mcp
    import mcp_types
    from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
    from pydantic import ConfigDict, TypeAdapter

    class TaskHandle(mcp_types.Result):
        model_config = ConfigDict(extra="allow")
        result_type: Literal["task"]
        task_id: str
        status: str

    class TaskOp(mcp_types.RequestParams):
        task_id: str

    class GetTask(mcp_types.Request[TaskOp, Literal["tasks/get"]]):
        method: Literal["tasks/get"] = "tasks/get"
        params: TaskOp
        name_param = "taskId"

    class CancelTask(mcp_types.Request[TaskOp, Literal["tasks/cancel"]]):
        method: Literal["tasks/cancel"] = "tasks/cancel"
        params: TaskOp
        name_param = "taskId"

    raw = TypeAdapter(dict[str, Any])
    seen: dict[str, Any] = {}

    async def resolve(handle: TaskHandle, ctx: ClaimContext) -> mcp_types.CallToolResult:
        seen["handle"] = handle
        op = TaskOp(task_id=handle.task_id)
        seen["working"] = await ctx.session.send_request(GetTask(params=op), raw)
        seen["ack"] = await ctx.session.send_request(CancelTask(params=op), raw)
        seen["cancelled"] = await ctx.session.send_request(GetTask(params=op), raw)
        # A cancelled task has no reply: the resolver says so as a tool error.
        return mcp_types.CallToolResult(content=[mcp_types.TextContent(type="text", text="cancelled")], is_error=True)

    class Tasks(ClientExtension):
        identifier = TASKS

        def claims(self) -> list[ResultClaim[Any]]:
            return [ResultClaim(result_type="task", model=TaskHandle, resolve=resolve)]

    with anyio.fail_after(DEADLINE_SECS):
        async with mcp.Client(tmux_mcp.params(), mode="auto", extensions=[Tasks()]) as client:
            assert client.protocol_version == MODERN
            created = await client.call_tool("create_terminal", {"name": "sdk"})
            pane = created.structured_content["pane"]
            result = await client.call_tool(
                "wait_for_output", {"target": pane, "pattern": "never-xyz", "timeout_secs": 50}
            )
    assert result.content[0].text == "cancelled"
    assert seen["handle"].status == "working" and seen["handle"].task_id
    assert seen["working"]["status"] == "working", seen
    assert seen["ack"].get("resultType", "complete") == "complete", seen
    assert seen["cancelled"]["status"] == "cancelled", seen
