"""Protocol edges over stdio and HTTP (issue 24 item 17): a request of a
known method whose params do not fit is answered -32602 on both; an HTTP
body that is not JSON gets a JSON-RPC -32700; DELETE of a session already
ended is 404; of two requests in flight with the same id both are answered;
the actor named in `initialize`'s `_meta` is the session's actor."""

from __future__ import annotations

import contextlib
import http.client
import json
import subprocess
import threading
import time
from collections.abc import Iterator
from typing import Any

from support import HANDSHAKE_PROTOCOL, HttpServer, TmuxMcp
from test_stdio import JsonLines

LIMIT = 60

ACCEPT = "application/json, text/event-stream"


@contextlib.contextmanager
def raw_stdio(tmux_mcp: TmuxMcp, *args: str) -> Iterator[JsonLines]:
    """A stdio server on the fixture's private tmux server, driven line by
    line; killed at the end."""
    proc = subprocess.Popen(  # acts on the fixture's private tmux socket (--socket-path)
        tmux_mcp.command(*args),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=tmux_mcp.env(),
        cwd=str(tmux_mcp.home),
    )
    try:
        assert proc.stdin is not None and proc.stdout is not None
        yield JsonLines(proc.stdin, proc.stdout)
    finally:
        proc.kill()
        proc.wait()


def initialize(meta: dict | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {
        "protocolVersion": HANDSHAKE_PROTOCOL,
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    }
    if meta is not None:
        params["_meta"] = meta
    return {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}


def request(
    server: HttpServer,
    method: str,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, dict[str, str], bytes]:
    """One raw HTTP request with the bearer token; an SSE answer is read up
    to its first message. Returns the status, headers and body."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=LIMIT)
    try:
        sent = {"Authorization": f"Bearer {server.token}", "Accept": ACCEPT}
        if body is not None:
            sent["Content-Type"] = "application/json"
        sent.update(headers or {})
        conn.request(method, "/mcp", body=body, headers=sent)
        response = conn.getresponse()
        got = {k.lower(): v for k, v in response.getheaders()}
        if got.get("content-type", "").startswith("text/event-stream"):
            data = b""
            while not data.startswith(b"data: {"):
                data = response.readline()
                assert data, "the SSE stream ended before a message"
            data = data.removeprefix(b"data: ")
        else:
            data = response.read()
        return response.status, got, data
    finally:
        conn.close()


def open_session(server: HttpServer, meta: dict | None = None) -> str:
    status, headers, body = request(server, "POST", json.dumps(initialize(meta)).encode())
    assert status == 200, (status, body)
    session = headers["mcp-session-id"]
    status, _, body = request(
        server,
        "POST",
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode(),
        {"Mcp-Session-Id": session, "Mcp-Protocol-Version": HANDSHAKE_PROTOCOL},
    )
    assert status == 202, (status, body)
    return session


def in_session(session: str) -> dict[str, str]:
    return {"Mcp-Session-Id": session, "Mcp-Protocol-Version": HANDSHAKE_PROTOCOL}


BAD_PARAMS = [
    {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "list_terminals", "arguments": [1]}},
    {"jsonrpc": "2.0", "id": 6, "method": "tasks/get", "params": {"taskId": 5}},
]


def test_bad_params_are_invalid_params_over_http(tmux_mcp: TmuxMcp) -> None:
    with tmux_mcp.http_server() as server:
        session = open_session(server)
        for message in BAD_PARAMS:
            status, headers, body = request(server, "POST", json.dumps(message).encode(), in_session(session))
            assert status == 200, (status, body)
            answer = json.loads(body)
            assert answer["id"] == message["id"], answer
            assert answer["error"]["code"] == -32602, answer
            assert message["method"] in answer["error"]["message"], answer


def test_a_body_that_is_not_json_is_a_parse_error(tmux_mcp: TmuxMcp) -> None:
    with tmux_mcp.http_server() as server:
        for body in [b"this is not json", b'{"jsonrpc":"2.0","id":3,', b"\xff\xfe", b""]:
            status, headers, data = request(server, "POST", body)
            assert status == 400, (body, status, data)
            assert headers["content-type"].startswith("application/json"), (body, headers)
            answer = json.loads(data)
            assert answer["jsonrpc"] == "2.0", answer
            # The id of a cut-off request is read where it can be.
            assert answer["id"] == (3 if body.startswith(b"{") else None), answer
            assert answer["error"]["code"] == -32700, answer
            assert answer["error"]["message"].startswith("Parse error"), answer
            assert "The body must be" in answer["error"]["message"], answer
        # The server still answers a good request.
        assert open_session(server)


def test_deleting_an_ended_session_is_not_found(tmux_mcp: TmuxMcp) -> None:
    with tmux_mcp.http_server() as server:
        session = open_session(server)
        status, _, body = request(server, "DELETE", None, in_session(session))
        assert status == 202, (status, body)
        status, _, body = request(server, "DELETE", None, in_session(session))
        assert status == 404, (status, body)
        assert b"session" in body.lower(), body
        status, _, body = request(server, "DELETE", None, in_session("no-such-session"))
        assert status == 404, (status, body)


def run_body(request_id: int, pane: str, command: str, progress: str | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"name": "run", "arguments": {"target": pane, "command": command, "timeout_secs": 20}}
    if progress:
        params["_meta"] = {"progressToken": progress}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def assert_one_ran_and_one_was_refused(answers: list[dict]) -> None:
    """Of two requests with id 9, the first (`echo first` after a sleep)
    ran, and the second was answered -32600 without running."""
    assert [a["id"] for a in answers] == [9, 9], answers
    refused = [a for a in answers if "error" in a]
    ran = [a for a in answers if "result" in a]
    assert len(refused) == 1 and len(ran) == 1, answers
    assert refused[0]["error"]["code"] == -32600, refused
    assert "still in flight" in refused[0]["error"]["message"], refused
    assert ran[0]["result"]["structuredContent"]["output"] == "first\n", ran


def test_two_requests_in_flight_with_one_id_are_both_answered_over_http(tmux_mcp: TmuxMcp) -> None:
    with tmux_mcp.http_server() as server:
        session = open_session(server)
        status, _, body = request(
            server,
            "POST",
            json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                        "params": {"name": "create_terminal", "arguments": {}}}).encode(),
            in_session(session),
        )
        assert status == 200, body
        pane = json.loads(body)["result"]["structuredContent"]["pane"]
        under_way = threading.Event()
        progressed: list[dict] = []
        answers: list[dict] = []

        def first() -> None:
            # Reads the SSE stream as it comes: the first progress
            # notification says the run is in flight; the answer ends it.
            conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=LIMIT)
            try:
                headers = {"Authorization": f"Bearer {server.token}", "Accept": ACCEPT,
                           "Content-Type": "application/json", **in_session(session)}
                conn.request("POST", "/mcp", body=json.dumps(run_body(9, pane, "sleep 3; echo first", "p")),
                             headers=headers)
                response = conn.getresponse()
                while line := response.readline():
                    if not line.startswith(b"data: {"):
                        continue
                    message = json.loads(line.removeprefix(b"data: "))
                    if message.get("method") == "notifications/progress":
                        progressed.append(message)
                        under_way.set()
                    elif message.get("id") == 9:
                        answers.append(message)
                        return
            finally:
                under_way.set()
                conn.close()

        thread = threading.Thread(target=first)
        thread.start()
        assert under_way.wait(LIMIT)
        assert progressed, f"the first run ended before it was seen in flight: {answers}"
        status, _, body = request(server, "POST", json.dumps(run_body(9, pane, "echo second")).encode(),
                                  in_session(session))
        assert status == 200, body
        answers.insert(0, json.loads(body))
        thread.join(LIMIT)
        assert_one_ran_and_one_was_refused(answers)


def test_two_requests_in_flight_with_one_id_are_both_answered_over_stdio(tmux_mcp: TmuxMcp) -> None:
    deadline = time.monotonic() + LIMIT
    with raw_stdio(tmux_mcp) as client:
        client.handshake(deadline)
        pane = client.call(2, "create_terminal", deadline)["result"]["structuredContent"]["pane"]
        # Both lines at once: the second is read while the first runs.
        client.send(run_body(9, pane, "sleep 1; echo first"))
        client.send(run_body(9, pane, "echo second"))
        assert_one_ran_and_one_was_refused([client.answer(9, deadline), client.answer(9, deadline)])


def test_the_actor_named_in_initialize_is_the_sessions(tmux_mcp: TmuxMcp) -> None:
    deadline = time.monotonic() + LIMIT
    with raw_stdio(tmux_mcp, "--audit-log", str(tmux_mcp.audit)) as client:
        client.send(initialize({"tmux-mcp/actor": "agent-from-init"}))
        assert "result" in client.answer(1, deadline), client.seen
        client.send({"method": "notifications/initialized"})
        made = client.call(2, "create_terminal", deadline)
        pane = made["result"]["structuredContent"]["pane"]
        listed = client.call(3, "list_terminals", deadline)["result"]["structuredContent"]
        [terminal] = [p for s in listed["sessions"] for w in s["windows"] for p in w["panes"] if p["id"] == pane]
        assert terminal["actors"]["created_by"] == "agent-from-init", terminal
    assert {r["actor"] for r in tmux_mcp.audit_records()} == {"agent-from-init"}
