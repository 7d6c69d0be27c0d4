"""Attention events: the moments a terminal needs the agent, told from
pushed sources only, numbered, and delivered once each: in every tool
result (`attention`), by `wait_for_attention` (from a cursor), and across a
reconnect with the last cursor. Real tmux, real shells, the MCP Python SDK.
"""

from __future__ import annotations

import shutil
import subprocess
import time

import anyio
import mcp
import pytest
from support import TmuxMcp, text_of
from test_people import attached

pytestmark = pytest.mark.anyio

#: Upper bound for one test's conversation with the server.
LIMIT = 90


async def call(session: mcp.ClientSession, tool: str, **args) -> dict:
    result = await session.call_tool(tool, args)
    assert not result.is_error, text_of(result)
    return result.structured_content


def bash_env() -> dict[str, str]:
    program = shutil.which("bash")
    assert program, "bash is not installed"
    return {"SHELL": program}


async def terminal(session: mcp.ClientSession, name: str) -> str:
    """A new integrated bash, at its prompt."""
    pane = (await call(session, "create_terminal", name=name))["pane"]
    ready = await call(session, "run", target=pane, command="true", timeout_secs=30)
    assert ready["status"] == "completed", ready
    return pane


async def test_a_read_after_a_sleep_is_told_within_100_ms(tmux_mcp: TmuxMcp) -> None:
    stamp = tmux_mcp.root / "read-started"
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session(env=bash_env()) as (session, _):
            pane = await terminal(session, "reads")
            # Nothing is printed when the read starts: only the kernel can
            # tell (the foreground `sleep` exits, then the shell reads).
            command = f"sleep 0.3; date +%s%3N > {stamp}; read x"
            left = await call(session, "run", target=pane, command=command, timeout_secs=0.1)
            assert left["status"] == "running", left
            waited = await call(session, "wait_for_attention", kinds=["waiting_for_input"], timeout_secs=10)
            assert waited["status"] == "events", waited
            event = waited["events"][0]
            assert (event["kind"], event["pane"]) == ("waiting_for_input", pane), event
            started_ms = int(stamp.read_text())
            late = event["at_ms"] - started_ms
            assert late < 100, f"told {late} ms after the read started: {event}"
            # A secret: read -s turns echo off.
            await call(session, "send_text", target=pane, text="answer", enter=True)
            resumed = await call(session, "run", run_id=left["run_id"], timeout_secs=10)
            assert resumed["status"] == "completed", resumed
            secret = await call(session, "run", target=pane, command="sleep 0.2; read -s pw", timeout_secs=0.1)
            waited = await call(session, "wait_for_attention", kinds=["asks_for_secret", "waiting_for_input"], timeout_secs=10)
            kinds = [e["kind"] for e in waited["events"]]
            assert kinds == ["asks_for_secret"], waited
            await call(session, "send_text", target=pane, text="hunter2", enter=True)
            done = await call(session, "run", run_id=secret["run_id"], timeout_secs=10)
            assert done["status"] == "completed", done


async def test_a_command_left_running_is_told_when_it_ends(tmux_mcp: TmuxMcp) -> None:
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session(env=bash_env()) as (session, _):
            pane = await terminal(session, "finishes")
            left = await call(session, "run", target=pane, command="sh -c 'sleep 0.5; exit 3'", timeout_secs=0.1)
            assert left["status"] == "running", left
            # No call waits for it: the end is an event, with its status.
            waited = await call(session, "wait_for_attention", timeout_secs=10)
            finished = [e for e in waited["events"] if e["kind"] == "command_finished"]
            assert len(finished) == 1, waited
            event = finished[0]
            assert (event["pane"], event["run_id"], event["exit_status"]) == (pane, left["run_id"], 3), event
            assert event["pipestatus"] == [3], event
            # Collected later, with its output and status.
            resumed = await call(session, "run", run_id=left["run_id"], timeout_secs=5)
            assert (resumed["status"], resumed["exit_status"]) == ("completed", 3), resumed
            # Told once: neither the next result nor the next wait repeats it.
            listed = await session.call_tool("list_terminals", {})
            assert "attention" not in (listed.structured_content or {}), listed.structured_content
            again = await call(session, "wait_for_attention", timeout_secs=0.5)
            assert again["events"] == [], again
            # A run a call waited for is no event.
            ran = await call(session, "run", target=pane, command="sh -c 'exit 4'")
            assert ran["exit_status"] == 4, ran
            quiet = await call(session, "wait_for_attention", timeout_secs=0.5)
            assert quiet["events"] == [], quiet


async def test_events_ride_in_the_next_result_of_any_tool(tmux_mcp: TmuxMcp) -> None:
    socket = tmux_mcp.root / "ride" / "mcp.sock"
    server = tmux_mcp.serve_unix(socket, "--toolsets", "inspect,manage,execute,teardown")
    server.ready()
    with anyio.fail_after(LIMIT):
        async with (
            tmux_mcp.bridge_session(socket, "agent-a") as (a, _),
            tmux_mcp.bridge_session(socket, "agent-b") as (b, _),
        ):
            pane = await terminal(a, "bells")
            other = await terminal(a, "elsewhere")
            start = (await call(b, "wait_for_attention", timeout_secs=0.2))["cursor"]
            # A title (OSC ended by BEL) rings no bell; a BEL does. The
            # sleep lets send_text's reply go before the events.
            await call(a, "send_text", target=pane, text=r"sleep 0.2; printf '\033]0;title\007'; printf '\a'", enter=True)
            # B (its own session, its own cursor) sees both logged...
            seen: list[dict] = []
            cursor = start
            while len(seen) < 2:
                more = await call(b, "wait_for_attention", cursor=cursor, timeout_secs=10)
                assert more["events"], more
                seen += more["events"]
                cursor = more["cursor"]
            assert [(e["kind"], e["pane"]) for e in seen] == [("bell", pane), ("prompt_returned", pane)], seen
            assert seen[0]["count"] == 1, seen
            # ...and A's next result, of any tool about any terminal, tells
            # A of both, once.
            screen = await a.call_tool("capture_screen", {"target": other})
            attention = screen.structured_content["attention"]
            assert [(e["kind"], e["pane"]) for e in attention["events"]] == [("bell", pane), ("prompt_returned", pane)], attention
            assert "Attention since your last call" in text_of(screen), text_of(screen)
            again = await a.call_tool("capture_screen", {"target": other})
            assert "attention" not in again.structured_content, again.structured_content
            # A program that exits (the pane stays) and a pane that goes.
            await call(a, "send_text", target=pane, text="exit 7", enter=True)
            exited = await call(a, "wait_for_attention", kinds=["pane_exited"], timeout_secs=10)
            assert [(e["pane"], e["exit_status"]) for e in exited["events"]] == [(pane, 7)], exited
            await call(a, "kill_pane", target=other)
            gone = await call(a, "wait_for_attention", kinds=["pane_gone"], timeout_secs=10)
            assert [(e["kind"], e["pane"]) for e in gone["events"]] == [("pane_gone", other)], gone
    server.kill()


async def test_a_reconnect_with_the_last_cursor_loses_nothing_and_repeats_nothing(tmux_mcp: TmuxMcp) -> None:
    socket = tmux_mcp.root / "att" / "mcp.sock"
    server = tmux_mcp.serve_unix(socket, "--attention-events", "60")
    server.ready()
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.bridge_session(socket, "agent") as (session, _):
            pane = await terminal(session, "many")
            start = (await call(session, "wait_for_attention", timeout_secs=0.2))["cursor"]
            # 50 command lines nobody waits for: 50 prompt_returned events.
            lines = "".join(f"true {i}\n" for i in range(50))
            await call(session, "paste_text", target=pane, text=lines, bracketed=False)
            first = await call(session, "wait_for_attention", cursor=start, max_events=12, timeout_secs=10)
            seen = [e["seq"] for e in first["events"]]
            cursor = first["cursor"]
        # The client goes away and comes back with its last cursor.
        async with tmux_mcp.bridge_session(socket, "agent") as (session, _):
            while len(seen) < 50:
                more = await call(session, "wait_for_attention", cursor=cursor, timeout_secs=10)
                assert more["events"], more
                seen += [e["seq"] for e in more["events"]]
                cursor = more["cursor"]
            assert seen == list(range(seen[0], seen[0] + 50)), seen
            # 20 more events: the log keeps 60, so the first cursor is now
            # older than the log, and says so.
            lines = "".join(f"true {i}\n" for i in range(20))
            await call(session, "paste_text", target=pane, text=lines, bracketed=False)
            while True:
                tail = await call(session, "wait_for_attention", cursor=cursor, timeout_secs=10)
                cursor = tail["cursor"]
                if tail["events"][-1]["command"] == "true 19" or len(seen) > 200:
                    break
            old = await call(session, "wait_for_attention", cursor=start, timeout_secs=1)
            assert old["truncated"], old
            assert old["events"][0]["seq"] > seen[0], old
            # A cursor of an earlier run of the server reads as truncated.
            foreign = await call(session, "wait_for_attention", cursor="0-1", timeout_secs=0.2)
            assert foreign["truncated"], foreign
    server.kill()


async def test_a_bad_cursor_or_kind_is_refused_clearly(tmux_mcp: TmuxMcp) -> None:
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session() as (session, _):
            bad = await session.call_tool("wait_for_attention", {"cursor": "nonsense"})
            assert bad.is_error and "not an attention cursor" in text_of(bad), text_of(bad)
            bad = await session.call_tool("wait_for_attention", {"kinds": ["explosion"]})
            assert bad.is_error and "command_finished" in text_of(bad), text_of(bad)
            started = time.monotonic()
            quiet = await call(session, "wait_for_attention", timeout_secs=0.3)
            assert quiet["status"] == "timeout" and time.monotonic() - started >= 0.3, quiet


async def test_people_coming_and_going_are_told_and_see_what_needs_them(tmux_mcp: TmuxMcp) -> None:
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session(env=bash_env()) as (session, _):
            pane = await terminal(session, "shared")
            start = (await call(session, "wait_for_attention", timeout_secs=0.2))["cursor"]
            with attached(tmux_mcp, "shared", b"\x1b[") as person:
                came = await call(session, "wait_for_attention", cursor=start, kinds=["person_attached"], timeout_secs=10)
                assert [e["kind"] for e in came["events"]] == ["person_attached"], came
                client = came["events"][0]["client"]
                # A command the agent left running ends: the person's status
                # line says so too.
                left = await call(session, "run", target=pane, command="sleep 0.3; false", timeout_secs=0.1)
                assert left["status"] == "running", left
                finished = await call(session, "wait_for_attention", kinds=["command_finished"], timeout_secs=10)
                assert finished["events"][0]["exit_status"] == 1, finished
                person.read_until(f"tmux-mcp: pane {pane}".encode())
                # The person starts typing: told once, with their client.
                person.type("echo half-typed")
                typing = await call(session, "wait_for_attention", kinds=["person_typing"], timeout_secs=10)
                assert [(e["kind"], e["pane"], e["client"]) for e in typing["events"]] == [("person_typing", pane, client)], typing
                person.type(" more")
                again = await call(session, "wait_for_attention", kinds=["person_typing"], timeout_secs=0.5)
                assert again["events"] == [], again
            went = await call(session, "wait_for_attention", cursor=came["cursor"], kinds=["person_detached"], timeout_secs=10)
            assert [(e["kind"], e["client"]) for e in went["events"]] == [("person_detached", client)], went


def test_the_claude_channel_pushes_an_event_after_initialized(tmux_mcp: TmuxMcp) -> None:
    from test_stdio import JsonLines

    command = tmux_mcp.command("--channel", "claude")
    with subprocess.Popen(  # tmux_mcp.command: a private tmux server
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        env=tmux_mcp.env(bash_env()), cwd=str(tmux_mcp.home),
    ) as server:
        lines = JsonLines(server.stdin, server.stdout)
        deadline = time.monotonic() + LIMIT
        lines.send(
            {
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "1"},
                },
            }
        )
        init = lines.answer(1, deadline)
        assert "claude/channel" in init["result"]["capabilities"]["experimental"], init
        lines.send({"method": "notifications/initialized"})
        made = lines.call(2, "create_terminal", deadline, name="chan")
        pane = made["result"]["structuredContent"]["pane"]
        ready = lines.call(3, "run", deadline, target=pane, command="true", timeout_secs=30)
        assert ready["result"]["structuredContent"]["status"] == "completed", ready
        left = lines.call(4, "run", deadline, target=pane, command="sleep 0.3; exit_code=5; (exit 5)", timeout_secs=0.1)
        assert left["result"]["structuredContent"]["status"] == "running", left
        while (message := lines.next(deadline)) is not None:
            if message.get("method") == "notifications/claude/channel":
                break
        else:
            raise AssertionError(f"no channel message: {lines.seen}")
        params = message["params"]
        assert params["meta"]["pane"] == pane, params
        assert "command_finished" in params["meta"]["kinds"], params
        assert all(isinstance(v, str) for v in params["meta"].values()), params
        assert "exit status 5" in params["content"], params
        server.stdin.close()
        server.wait(timeout=20)


async def test_events_are_posted_to_a_signed_webhook(tmux_mcp: TmuxMcp) -> None:
    import base64
    import hashlib
    import hmac
    import http.server
    import json
    import queue
    import threading

    key = b"attention-webhook-key-24"
    received: queue.Queue[tuple[dict, bytes]] = queue.Queue()

    class Hook(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (the stdlib's name)
            body = self.rfile.read(int(self.headers["content-length"]))
            received.put((dict(self.headers), body))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args) -> None:
            pass

    hook = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hook)
    threading.Thread(target=hook.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{hook.server_address[1]}/hook"
    env = bash_env() | {"TMUX_MCP_WEBHOOK_SECRET": "whsec_" + base64.b64encode(key).decode()}
    try:
        with anyio.fail_after(LIMIT):
            async with tmux_mcp.session("--notify-webhook", url, env=env) as (session, _):
                pane = await terminal(session, "hooked")
                left = await call(session, "run", target=pane, command="sleep 0.2; (exit 6)", timeout_secs=0.1)
                assert left["status"] == "running", left
                while True:
                    headers, body = await anyio.to_thread.run_sync(lambda: received.get(timeout=20))
                    event = json.loads(body)
                    if event["kind"] == "command_finished":
                        break
        assert (event["pane"], event["exit_status"], event["run_id"]) == (pane, 6, left["run_id"]), event
        headers = {k.lower(): v for k, v in headers.items()}
        assert headers["webhook-id"] == f"evt_{event['cursor']}", headers
        signed = f"{headers['webhook-id']}.{headers['webhook-timestamp']}.".encode() + body
        expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
        assert headers["webhook-signature"] == f"v1,{expected}", headers
        assert abs(int(headers["webhook-timestamp"]) - time.time()) < 60, headers
    finally:
        hook.shutdown()


async def test_a_run_sees_a_read_after_a_sleep_when_the_sleep_exits(tmux_mcp: TmuxMcp) -> None:
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session(env=bash_env()) as (session, _):
            pane = await terminal(session, "run-reads")
            # Nothing is printed when the read starts; the pidfd of `sleep`
            # wakes the run, before its 1 s progress heartbeat would.
            waiting = await call(session, "run", target=pane, command="sleep 0.3; read x", timeout_secs=20)
            assert waiting["status"] == "waiting_for_input", waiting
            assert waiting["elapsed_ms"] < 950, waiting
            await call(session, "send_text", target=pane, text="y", enter=True)
            done = await call(session, "run", run_id=waiting["run_id"], timeout_secs=10)
            assert done["status"] == "completed", done


async def test_a_wrapped_run_left_running_is_told_when_it_ends(tmux_mcp: TmuxMcp) -> None:
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session() as (session, _):
            # A shell without integration: run types its wrapped form.
            pane = (await call(session, "create_terminal", name="plain", command="bash --norc --noprofile"))["pane"]
            left = await call(session, "run", target=pane, command="sleep 0.3; (exit 4)", timeout_secs=0.1)
            assert (left["status"], left["mode"]) == ("running", "wrapped"), left
            waited = await call(session, "wait_for_attention", kinds=["command_finished"], timeout_secs=10)
            event = waited["events"][0]
            assert (event["pane"], event["run_id"], event["exit_status"]) == (pane, left["run_id"], 4), event
            resumed = await call(session, "run", run_id=left["run_id"], timeout_secs=5)
            assert (resumed["status"], resumed["exit_status"]) == ("completed", 4), resumed
