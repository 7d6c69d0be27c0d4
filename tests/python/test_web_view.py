"""The web view (docs/web-view.md) end to end: the built `tmux-mcp serve
--http` on a private tmux server, the agent the MCP Python SDK over
streamable HTTP (the bearer token from the token file), and the person
headless Chromium (tests/python/browser.py) driving the page through its
test API, `window.tmuxView`.

What a person relies on: a view that loses no byte across a reconnect,
viewers that never resize the terminal they watch, a take-over the agent
cannot type through and that it is told of afterwards, a view no other
site, rebound host, view-only key or wrong key can use, a password typed
in the view that is kept nowhere, and a slow tab that slows nobody else.

Every page here gets an init script (`RECORDER`) that counts the sockets
the page opens and keeps the server's text frames (`window.__wv.frames`,
the `terminals` lists only counted), so a test can say which `lost`,
`snapshot` or `refused` frames came.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import http.client
import json
import os
import re
import socket
import statistics
import struct
import subprocess
import time
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import quote

import anyio
import mcp
import pytest
from browser import PAGE_LIMIT_MS, buffer_text, chromium, open_view, page_at, screen_text, view_state
from mcp.types import CallToolResult
from playwright.async_api import Browser, Page
from support import HttpServer, TmuxMcp, connecting_call, text_of
from test_http import connect

pytestmark = pytest.mark.anyio

#: Upper bound for one test's conversation with the server and the page.
LIMIT = 120

#: Recorded in every page before its own scripts run: the sockets it opens
#: and every text frame the server sends on them (the lists only counted).
RECORDER = """
(() => {
  const record = { sockets: 0, frames: [], lists: 0, binary: 0 };
  window.__wv = record;
  const Native = window.WebSocket;
  class Recorded extends Native {
    constructor(...args) {
      super(...args);
      record.sockets += 1;
      this.addEventListener('message', (event) => {
        if (typeof event.data !== 'string') {
          record.binary += 1;
          return;
        }
        let m;
        try { m = JSON.parse(event.data); } catch { return; }
        if (m.t === 'terminals') record.lists += 1;
        else record.frames.push(m);
      });
    }
  }
  window.WebSocket = Recorded;
})();
"""


# ---------------------------------------------------------------- the agent


class Agent:
    """The agent: an MCP session; every result it received is kept as JSON
    (`replies`), for the test that looks for a secret in all of them."""

    def __init__(self, session: mcp.ClientSession) -> None:
        self.session = session
        self.replies: list[str] = []

    async def result(self, tool: str, args: dict[str, Any]) -> CallToolResult:
        result = await self.session.call_tool(tool, args)
        self.replies.append(result.model_dump_json(by_alias=True))
        return result

    async def call(self, tool: str, **args: Any) -> dict[str, Any]:
        """The structured result of a call that must succeed."""
        result = await self.result(tool, args)
        assert not result.is_error, f"{tool} failed: {text_of(result)}"
        assert result.structured_content is not None, text_of(result)
        return result.structured_content

    async def terminal(self, name: str, width: int = 80, height: int = 24) -> str:
        """A new terminal (the default shell, bash with shell integration),
        once its prompt is shown: its pane id."""
        made = await connecting_call(self.result, "create_terminal", {"name": name, "width": width, "height": height})
        assert not made.is_error, text_of(made)
        created = made.structured_content
        assert created["shell_integration"] == "bash", created
        pane = created["pane"]
        ready = await self.call("wait_for_state", target=pane, states=["at_prompt"], timeout_secs=20)
        assert ready["status"] == "matched", ready
        return pane

    async def view_link(self, pane: str) -> tuple[str, str]:
        """`web_view` of one terminal: its view id and the link."""
        made = await self.call("web_view", target=pane)
        view = made["terminal"]
        assert view == f"local:{pane}", made
        assert f"?pane={quote(view, safe='')}#key=" in made["url"], made
        return view, made["url"]


@contextlib.asynccontextmanager
async def served(tm: TmuxMcp, *args: str) -> AsyncIterator[tuple[HttpServer, Agent]]:
    """`serve --http` (with `args`) and the agent's session on it."""
    with tm.http_server(*args) as server:
        async with connect(server, "legacy") as session:
            yield server, Agent(session)


def web_key(tm: TmuxMcp, name: str, scope: str) -> str:
    """`tmux-mcp web-key add NAME --scope SCOPE` on the test's state
    directory: the key it prints."""
    made = subprocess.run(
        tm.command("web-key", "add", name, "--scope", scope),
        capture_output=True,
        text=True,
        env=tm.env(),
        timeout=30,
        check=False,
    )
    assert made.returncode == 0, made.stderr
    found = re.search(r"^key:\s+(\S+)$", made.stdout, re.M)
    assert found, made.stdout
    return found.group(1)


def window_size(tm: TmuxMcp, pane: str) -> str:
    """The size of `pane`'s window as tmux says it, `WIDTHxHEIGHT`."""
    return tmux(tm, "display-message", "-p", "-t", pane, "#{window_width}x#{window_height}").strip()


def page_link(server: HttpServer, key: str, view: str | None = None) -> str:
    """The view's link with `key` (and `?pane=view`)."""
    query = f"?pane={quote(view, safe='')}" if view else ""
    return f"http://127.0.0.1:{server.port}/ui/{query}#key={key}"


def tmux(tm: TmuxMcp, *args: str) -> str:
    """A tmux command on the test's private socket: its output."""
    return subprocess.run(  # tm.socket: a private tmux socket
        [tm.tmux, "-S", str(tm.socket), *args],
        capture_output=True,
        text=True,
        check=True,
        timeout=10,
    ).stdout


# ---------------------------------------------------------------- the page


@contextlib.asynccontextmanager
async def view_page(
    browser: Browser, url: str, *, width: int = 1400, height: int = 900, ready: bool = True
) -> AsyncIterator[Page]:
    """A page (a context of its own: its own cookies) at `url` with the
    recorder, once `tmuxView.ready` resolved (unless `ready` is False)."""
    async with page_at(browser, url, width=width, height=height, ready=ready, init_script=RECORDER) as page:
        yield page


async def frames(page: Page, kind: str | None = None, view: str | None = None) -> list[dict[str, Any]]:
    """The server's text frames the page got (of `kind`, about `view`)."""
    got = await page.evaluate("() => window.__wv.frames")
    return [f for f in got if (kind is None or f.get("t") == kind) and (view is None or f.get("id") == view)]


async def wait_js(page: Page, predicate: str, arg: Any = None, timeout_ms: int = PAGE_LIMIT_MS) -> Any:
    """Waits on the page until `predicate(arg)` is truthy; its value."""
    handle = await page.wait_for_function(predicate, arg=arg, timeout=timeout_ms)
    return await handle.json_value()


async def wait_written(page: Page, view: str, offset: int, timeout_ms: int = PAGE_LIMIT_MS) -> None:
    """Waits until the page wrote `view`'s output up to `offset`."""
    try:
        await wait_js(
            page,
            "([id, at]) => { const v = window.tmuxView.views[id]; return v && v.written !== null && v.written >= at; }",
            [view, offset],
            timeout_ms,
        )
    except Exception:
        state = await view_state(page, view)
        raise AssertionError(f"the page did not write {view} up to {offset}: {state}") from None


async def wait_row(page: Page, view: str, row: str) -> None:
    """Waits until a row of `view`'s buffer is exactly `row`."""
    try:
        await wait_js(
            page,
            "([id, row]) => window.tmuxView.views[id] && window.tmuxView.bufferText(id).includes(row)",
            [view, row],
        )
    except Exception:
        raise AssertionError(f"no row {row!r} in {view}: {(await buffer_text(page, view))[-15:]}") from None


async def wait_refused(page: Page, op: str, view: str) -> dict[str, Any]:
    """The first `refused` frame for `op` on `view`, waiting for it."""
    return await wait_js(
        page,
        "([op, id]) => window.tmuxView.refusals.find((r) => r.op === op && r.id === id) || false",
        [op, view],
    )


async def wait_refused_after(page: Page, op: str, view: str) -> dict[str, Any]:
    """Sends `op` and waits for the `refused` frame it gets."""
    count = await page.evaluate("() => window.tmuxView.refusals.length")
    await page.evaluate(f"id => window.tmuxView.{op}(id)", view)
    return await wait_js(
        page,
        "([op, id, n]) => window.tmuxView.refusals.slice(n).find((r) => r.op === op && r.id === id) || false",
        [op, view, count],
    )


async def wait_held(page: Page, view: str, by: str | None, you: bool) -> None:
    """Waits until the page's last `held` frame for `view` says this."""
    try:
        await wait_js(
            page,
            "([id, by, you]) => { const h = window.tmuxView.held[id]; return !!h && h.by === by && h.you === you; }",
            [view, by, you],
        )
    except Exception:
        held = await page.evaluate("id => window.tmuxView.held[id] || null", view)
        raise AssertionError(f"{view}: held is {held}, not by={by} you={you}") from None


# ---------------------------------------------------------------- raw HTTP


def request(
    server: HttpServer, method: str, path: str, body: bytes | None = None, **headers: str
) -> tuple[int, dict[str, str], bytes]:
    """One HTTP request with exactly these headers (`Host` as given, else
    the server's own address): status, headers (lower-case) and body."""
    sent = {k.replace("_", "-"): v for k, v in headers.items()}
    sent.setdefault("Host", f"127.0.0.1:{server.port}")
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    try:
        conn.request(method, path, body=body, headers=sent)
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        conn.close()


def own_origin(server: HttpServer) -> str:
    return f"http://127.0.0.1:{server.port}"


def session_cookie(server: HttpServer, key: str) -> str:
    """A session cookie for `key` (`POST /ui/session` from the page's own
    origin): `tmux_mcp_web=…`."""
    status, headers, body = request(
        server,
        "POST",
        "/ui/session",
        json.dumps({"key": key}).encode(),
        Content_Type="application/json",
        Origin=own_origin(server),
    )
    assert status == 200, body
    cookie = headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/ui" in cookie, cookie
    return cookie.split(";", 1)[0]


def websocket(server: HttpServer, **headers: str) -> tuple[int, bytes]:
    """A WebSocket handshake on `/ui/ws` with these headers besides the
    handshake's own: the status, and on 101 the payload of the server's
    first frame (else the answer's body)."""
    sent = {
        "Host": f"127.0.0.1:{server.port}",
        "Upgrade": "websocket",
        "Connection": "Upgrade",
        "Sec-WebSocket-Key": base64.b64encode(os.urandom(16)).decode(),
        "Sec-WebSocket-Version": "13",
    }
    sent.update({k.replace("_", "-"): v for k, v in headers.items()})
    lines = ["GET /ui/ws HTTP/1.1", *(f"{k}: {v}" for k, v in sent.items())]
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as s:
        s.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        got = b""

        def more() -> None:
            nonlocal got
            chunk = s.recv(65536)
            assert chunk, f"the connection closed: {got!r}"
            got += chunk

        while b"\r\n\r\n" not in got:
            more()
        head, _, rest = got.partition(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        if status != 101:
            length = re.search(rb"(?im)^content-length:\s*(\d+)", head)
            while length and len(rest) < int(length.group(1)):
                got = rest
                more()
                rest = got
            return status, rest
        got = rest
        while len(got) < 2:
            more()
        size, at = got[1] & 0x7F, 2
        if size == 126:
            while len(got) < 4:
                more()
            size, at = struct.unpack(">H", got[2:4])[0], 4
        elif size == 127:
            while len(got) < 10:
                more()
            size, at = struct.unpack(">Q", got[2:10])[0], 10
        while len(got) < at + size:
            more()
        return status, got[at : at + size]


# ---------------------------------------------------------------- 1. lossless reconnect


#: How many numbers `seq` prints in the reconnect test.
NUMBERS = 200_000


async def test_a_reconnect_loses_no_byte(tmux_mcp: TmuxMcp) -> None:
    async with served(tmux_mcp) as (server, agent):
        with anyio.fail_after(LIMIT):
            pane = await agent.terminal("counted", width=40, height=10)
            view, url = await agent.view_link(pane)
            url = url.replace("#key=", "&scrollback=250000#key=", 1)
            async with chromium() as browser, view_page(browser, url) as page:
                await open_view(page, view)
                start = (await agent.call("pane_info", target=pane))["cursor"]
                closed: list[dict[str, Any]] = []
                done: dict[str, Any] = {}
                async with anyio.create_task_group() as tasks:

                    async def count() -> None:
                        done["run"] = await agent.call("run", target=pane, command=f"seq 1 {NUMBERS}", timeout_secs=90)

                    tasks.start_soon(count)
                    # The socket is closed twice while the numbers stream in,
                    # each time as soon as the page wrote past a mark; the
                    # second time on the socket the page opened again.
                    for n, mark in enumerate([start + 100_000, start + 800_000]):
                        closed.append(
                            await wait_js(
                                page,
                                """([id, at, n]) => {
                                    const api = window.tmuxView;
                                    const v = api.views[id];
                                    if (api.reconnects < n || api.socket.readyState !== WebSocket.OPEN) return false;
                                    if (v.written === null || v.written < at) return false;
                                    api.socket.close();
                                    return {written: v.written, offset: v.offset, reconnects: api.reconnects};
                                }""",
                                [view, mark, n],
                                timeout_ms=60_000,
                            )
                        )
                        # Whether `run` still waited for `seq` then.
                        closed[-1]["running"] = "run" not in done
                ran = done["run"]
                assert (ran["status"], ran["exit_status"]) == ("completed", 0), ran
                end = (await agent.call("pane_info", target=pane))["cursor"]
                await wait_js(page, "() => window.tmuxView.reconnects >= 2")
                await wait_written(page, view, end, timeout_ms=60_000)
                # Both closes came before the page had the whole output.
                assert all(c["written"] < end for c in closed), (closed, end)
                rows = await buffer_text(page, view)
                numbers = [int(r) for r in rows if r.isdigit()]
                lost = await frames(page, "lost", view)
                snapshots = await frames(page, "snapshot", view)
                assert numbers == list(range(1, NUMBERS + 1)), (
                    f"{len(numbers)} numbers in the buffer; first gap after "
                    f"{next((a for a, b in zip(numbers, numbers[1:]) if b != a + 1), None)}; "
                    f"closes {closed}, end {end}, lost {lost}, snapshots {len(snapshots)}"
                )
                # The socket came back with `from`: no loss, no new snapshot.
                assert lost == [], lost
                assert len(snapshots) == 1, [(s["offset"], s["cols"], s["rows"]) for s in snapshots]
                print(f"reconnect: closed at {closed}; {end - start} bytes of output")


# ---------------------------------------------------------------- 2. no resize


async def test_viewers_never_resize_the_window(tmux_mcp: TmuxMcp) -> None:
    async with served(tmux_mcp) as (server, agent):
        with anyio.fail_after(LIMIT):
            pane = await agent.terminal("sized", width=100, height=30)
            view, url = await agent.view_link(pane)

            def size() -> str:
                return window_size(tmux_mcp, pane)

            async def unchanged(when: str) -> None:
                assert size() == "100x30", when
                info = await agent.call("pane_info", target=pane)
                assert (info["width"], info["height"]) == (100, 30), (when, info)

            await unchanged("before any viewer")
            clients = tmux(tmux_mcp, "list-clients", "-F", "#{client_name} #{client_flags}")
            async with chromium() as browser, contextlib.AsyncExitStack() as stack:
                pages: list[Page] = []
                for n, (width, height) in enumerate([(640, 480), (1920, 1080), (420, 900)]):
                    page = await stack.enter_async_context(view_page(browser, url, width=width, height=height))
                    await open_view(page, view)
                    # A round trip through the pane after the attach: the
                    # agent prints, every open page shows it.
                    await agent.call("run", target=pane, command=f"echo attached-{n}")
                    for p in [*pages, page]:
                        await wait_row(p, view, f"attached-{n}")
                    state = await view_state(page, view)
                    assert (state["cols"], state["rows"]) == (100, 30), state
                    await unchanged(f"after viewer {n} ({width}x{height}) attached")
                    pages.append(page)
                # A viewer's window changes size while it watches.
                await pages[0].set_viewport_size({"width": 300, "height": 200})
                await pages[1].set_viewport_size({"width": 2400, "height": 1400})
                await agent.call("run", target=pane, command="echo resized")
                for p in pages:
                    await wait_row(p, view, "resized")
                await unchanged("after the viewers' windows changed size")
                for n, page in enumerate(pages):
                    await page.evaluate("id => window.tmuxView.close(id)", view)
                    await page.context.close()
                    await agent.call("run", target=pane, command=f"echo left-{n}")
                    await unchanged(f"after viewer {n} left")
            await unchanged("after all viewers left")
            # No viewer was ever a tmux client.
            assert tmux(tmux_mcp, "list-clients", "-F", "#{client_name} #{client_flags}") == clients


async def test_the_holder_fits_the_window_and_hand_back_undoes_it(tmux_mcp: TmuxMcp) -> None:
    """Resizing to the browser is the holder's explicit act: refused
    without a hold, done while held (the page's terminal follows the new
    size), undone on hand-back."""
    async with served(tmux_mcp) as (server, agent):
        with anyio.fail_after(LIMIT):
            pane = await agent.terminal("fitted", width=100, height=30)
            view, url = await agent.view_link(pane)

            def size() -> str:
                return window_size(tmux_mcp, pane)

            async with chromium() as browser, view_page(browser, url) as page:
                await open_view(page, view)
                fit = "([id, c, r]) => window.tmuxView.socket.send(JSON.stringify({op: 'fit', id, cols: c, rows: r}))"
                # Not held: refused, and the window keeps its size.
                await page.evaluate(fit, [view, 60, 20])
                await page.wait_for_function(
                    "id => window.tmuxView.refusals.some(r => r.op === 'fit' && r.id === id)", arg=view
                )
                assert size() == "100x30"
                await page.evaluate("id => window.tmuxView.take(id)", view)
                await page.wait_for_function("id => window.tmuxView.held[id] && window.tmuxView.held[id].you", arg=view)
                await page.evaluate(fit, [view, 60, 20])
                # The page's terminal takes the pane's new size from the
                # server's resize frame.
                await page.wait_for_function(
                    "id => { const t = window.tmuxView.views[id].term; return t.cols === 60 && t.rows === 20; }",
                    arg=view,
                )
                assert size() == "60x20"
                await page.evaluate("id => window.tmuxView.release(id)", view)
                await page.wait_for_function(
                    "id => { const t = window.tmuxView.views[id].term; return t.cols === 100 && t.rows === 30; }",
                    arg=view,
                )
                assert size() == "100x30"
                info = await agent.call("pane_info", target=pane)
                assert (info["width"], info["height"]) == (100, 30), info


# ---------------------------------------------------------------- 3. take-over


def refused_because_held(result: CallToolResult, by: str) -> str:
    text = text_of(result)
    assert result.is_error, text
    meta = (result.meta or {}).get("tmux-mcp/error") or {}
    assert meta.get("kind") == "human_holds", result.meta
    assert meta.get("by") == by, result.meta
    return text


async def attention(agent: Agent, cursor: str, kinds: list[str], pane: str) -> list[dict[str, Any]]:
    """Every event of `kinds` about `pane` after `cursor`, waiting until
    there is one of each kind."""
    seen: list[dict[str, Any]] = []
    while not set(kinds) <= {e["kind"] for e in seen}:
        more = await agent.call("wait_for_attention", cursor=cursor, kinds=kinds, targets=[pane], timeout_secs=10)
        assert more["events"], (more, seen)
        seen += more["events"]
        cursor = more["cursor"]
    return seen


async def test_a_person_takes_over_and_hands_back(tmux_mcp: TmuxMcp) -> None:
    bob = web_key(tmux_mcp, "bob", "input")
    async with served(tmux_mcp) as (server, agent):
        with anyio.fail_after(LIMIT):
            pane = await agent.terminal("shared")
            view = f"local:{pane}"
            before = (await agent.call("wait_for_attention", timeout_secs=0))["cursor"]
            asked = await agent.call("request_human", target=pane, reason="please run the failing command")
            assert asked["terminal"] == view, asked
            requested = await attention(agent, before, ["human_requested"], pane)
            assert [(e["seq"], e["reason"]) for e in requested] == [(asked["event"], "please run the failing command")], (
                requested,
                asked,
            )
            async with (
                chromium() as browser,
                view_page(browser, asked["url"]) as a,
                view_page(browser, page_link(server, bob, view)) as b,
            ):
                await open_view(a, view)
                await open_view(b, view)
                assert await a.evaluate("() => [window.tmuxView.name, window.tmuxView.scope]") == ["link", "input"]
                assert await b.evaluate("() => [window.tmuxView.name, window.tmuxView.scope]") == ["bob", "input"]

                await a.evaluate("id => window.tmuxView.take(id)", view)
                await wait_held(a, view, "link", True)
                await wait_held(b, view, "link", False)
                listed = await a.evaluate("id => window.tmuxView.terminals.find((t) => t.id === id)", view)
                assert listed["held_by"] == "link", listed

                # The agent cannot type through the hold.
                for tool, args in [
                    ("run", {"command": "echo from-agent", "timeout_secs": 5}),
                    ("send_text", {"text": "echo from-agent", "enter": True}),
                    ("send_keys", {"keys": ["C-c"]}),
                ]:
                    refused_because_held(await agent.result(tool, {"target": pane, **args}), "link")

                # The person runs `false`; the page shows its prompt again.
                screen = await screen_text(a, view)
                prompt = next(r for r in reversed(screen) if r)
                await a.evaluate("id => window.tmuxView.type(id, 'false\\r')", view)
                await wait_js(
                    a,
                    """([id, prompt]) => {
                        const rows = window.tmuxView.bufferText(id);
                        const typed = rows.findLastIndex((r) => r === prompt + ' false' || r === prompt + 'false');
                        return typed >= 0 && rows.slice(typed + 1).includes(prompt);
                    }""",
                    [view, prompt],
                )

                # A second person may neither take it nor type.
                refusal = await wait_refused_after(b, "take", view)
                assert "link" in refusal["why"], refusal
                await b.evaluate("id => window.tmuxView.type(id, 'echo from-bob\\r')", view)
                refusal = await wait_refused(b, "input", view)
                await wait_held(b, view, "link", False)

                await a.evaluate("id => window.tmuxView.release(id)", view)
                await wait_held(a, view, None, False)
                await wait_held(b, view, None, False)

                # The agent's next reply tells what the person ran.
                done = await agent.result("run", {"target": pane, "command": "true"})
                assert not done.is_error, text_of(done)
                assert (done.structured_content["status"], done.structured_content["exit_status"]) == ("completed", 0)
                news = (done.meta or {}).get("tmux-mcp/people", {}).get("news", [])
                ran = [(r["command"], r["exit_status"], r["pane"]) for n in news for r in n["ran"]]
                assert ran == [("false", 1, pane)], (done.meta, text_of(done))
                assert f"a person ran in pane {pane}: `false` → 1" in text_of(done), text_of(done)
                shown = "\n".join(await buffer_text(a, view))
                assert "from-bob" not in shown and "from-agent" not in shown, shown

                events = await attention(agent, before, ["person_took_over", "person_handed_back"], pane)
                kinds = [(e["kind"], e.get("client")) for e in events]
                assert kinds == [("person_took_over", "link"), ("person_handed_back", "link")], events


# ---------------------------------------------------------------- 4. attacks


async def test_a_page_of_another_origin_is_refused(tmux_mcp: TmuxMcp) -> None:
    async with served(tmux_mcp) as (server, agent):
        with anyio.fail_after(LIMIT):
            await agent.terminal("attacked")
            key = (await agent.call("web_view"))["url"].split("#key=", 1)[1]
            cookie = session_cookie(server, key)
            # The handshake itself is right: from the page's own origin it
            # opens, and the server greets the tab.
            status, first = await anyio.to_thread.run_sync(
                lambda: websocket(server, Origin=own_origin(server), Cookie=cookie)
            )
            assert status == 101, first
            assert json.loads(first)["t"] == "hello", first
            others = ["http://evil.example", f"http://127.0.0.1:{server.port + 1}", f"http://localhost:{server.port}", "null"]
            for origin in others:
                status, body = await anyio.to_thread.run_sync(lambda: websocket(server, Origin=origin, Cookie=cookie))
                assert status == 403, (origin, body)
                assert b"Origin" in body, body
                # Nor may another site's page exchange a key.
                status, _, body = request(
                    server, "POST", "/ui/session", json.dumps({"key": key}).encode(),
                    Content_Type="application/json", Origin=origin,
                )
                assert status == 403, (origin, body)
            # No Origin at all (not a browser's page).
            status, body = await anyio.to_thread.run_sync(lambda: websocket(server, Cookie=cookie))
            assert status == 403, body


async def test_a_title_a_program_sets_is_shown_as_text(tmux_mcp: TmuxMcp) -> None:
    """A pane's title is the program's to set: markup in it is shown as
    text, never run or parsed, in the list and in the view's heading."""
    async with served(tmux_mcp) as (server, agent):
        with anyio.fail_after(LIMIT):
            pane = await agent.terminal("titled")
            view, url = await agent.view_link(pane)
            markup = '<img src=x onerror="window.__owned=1">'
            async with chromium() as browser, view_page(browser, url) as page:
                await open_view(page, view)
                await agent.call("run", target=pane, command=f"printf '\\033]2;%s\\033\\\\' '{markup}'")
                try:
                    await page.wait_for_function(
                        "([id, m]) => (window.tmuxView.terminals.find(t => t.id === id) || {}).title === m",
                        arg=[view, markup],
                    )
                except Exception:
                    titles = await page.evaluate("() => window.tmuxView.terminals.map(t => [t.id, t.title])")
                    raise AssertionError(f"{titles} / tmux: {tmux(tmux_mcp, 'display-message', '-p', '-t', pane, '#{pane_title}')!r}")
                await page.wait_for_function("m => document.body.innerText.includes(m)", arg=markup)
                assert await page.evaluate("() => document.querySelectorAll('img').length") == 0
                assert await page.evaluate("() => window.__owned === undefined")


async def test_a_revoked_key_cuts_its_viewer_off(tmux_mcp: TmuxMcp) -> None:
    """`web-key revoke` ends a watching tab within a second of output,
    without the page asking anything."""
    dave = web_key(tmux_mcp, "dave", "view")
    async with served(tmux_mcp) as (server, agent):
        with anyio.fail_after(LIMIT):
            pane = await agent.terminal("revoked")
            view = f"local:{pane}"
            async with chromium() as browser, view_page(browser, page_link(server, dave, view)) as page:
                await open_view(page, view)
                await agent.call("run", target=pane, command="echo before-revoke")
                await wait_row(page, view, "before-revoke")
                revoked = subprocess.run(
                    tmux_mcp.command("web-key", "revoke", "dave"), capture_output=True, text=True, env=tmux_mcp.env(), timeout=30
                )
                assert revoked.returncode == 0, revoked.stderr
                # Output the page acknowledges, for a little over a second
                # (the recheck's bound: a true timer in the shell).
                await agent.call(
                    "run", target=pane, command="for i in $(seq 1 30); do echo tick-$i; sleep 0.05; done", timeout_secs=20
                )
                await page.wait_for_function(
                    "() => window.__wv.frames.some(f => f.t === 'error' && /revoked/.test(f.why))"
                )
                # Its cookie is worth nothing now.
                answer = await page.evaluate("() => fetch('session').then(r => r.status)")
                assert answer == 401, answer


async def test_a_rebinding_host_is_refused(tmux_mcp: TmuxMcp) -> None:
    async with served(tmux_mcp) as (server, agent):
        with anyio.fail_after(LIMIT):
            key = (await agent.call("web_view"))["url"].split("#key=", 1)[1]
            cookie = session_cookie(server, key)
            status, headers, page = request(server, "GET", "/ui/")
            assert status == 200 and b"app.js" in page, status
            # The policy the pages of these tests run under (never bypassed).
            assert "script-src 'self'" in headers["content-security-policy"], headers
            for host in ["evil.example", f"evil.example:{server.port}", f"127.0.0.1:{server.port + 1}"]:
                status, _, body = request(server, "GET", "/ui/", Host=host)
                assert status == 403, (host, body)
                status, _, body = request(server, "GET", "/ui/app.js", Host=host)
                assert status == 403, (host, body)
                # With the rebound name as the origin too: the page a rebinding
                # attack loads is of that origin, so Origin and Host agree.
                status, _, body = request(
                    server, "POST", "/ui/session", json.dumps({"key": key}).encode(),
                    Host=host, Origin=f"http://{host}", Content_Type="application/json",
                )
                assert status == 403, (host, body)
                status, body = await anyio.to_thread.run_sync(
                    lambda: websocket(server, Host=host, Origin=f"http://{host}", Cookie=cookie)
                )
                assert status == 403, (host, body)


async def test_a_view_key_sees_but_cannot_type(tmux_mcp: TmuxMcp) -> None:
    watcher = web_key(tmux_mcp, "watcher", "view")
    async with served(tmux_mcp, "--audit-log", str(tmux_mcp.audit)) as (server, agent):
        with anyio.fail_after(LIMIT):
            pane = await agent.terminal("watched")
            view = f"local:{pane}"
            await agent.call("run", target=pane, command="echo visible-$((6*7))")
            async with chromium() as browser, view_page(browser, page_link(server, watcher, view)) as page:
                await open_view(page, view)
                assert await page.evaluate("() => [window.tmuxView.name, window.tmuxView.scope]") == ["watcher", "view"]
                await wait_row(page, view, "visible-42")
                refusal = await wait_refused_after(page, "take", view)
                assert "view" in refusal["why"], refusal
                count = await page.evaluate("() => window.tmuxView.refusals.length")
                await page.evaluate("id => window.tmuxView.type(id, 'echo typed-by-viewer\\r')", view)
                await wait_js(
                    page,
                    "([id, n]) => window.tmuxView.refusals.slice(n).some((r) => r.op === 'input' && r.id === id)",
                    [view, count],
                )
                held = await page.evaluate("id => window.tmuxView.held[id] || null", view)
                assert held is None or held["by"] is None, held
                # The agent still has the terminal, and nothing was typed.
                done = await agent.call("run", target=pane, command="echo after-viewer")
                assert done["output"] == "after-viewer\n", done
                await wait_row(page, view, "after-viewer")
                everything = await agent.call("read_output", target=pane, cursor=0)
                assert "typed-by-viewer" not in json.dumps(everything), everything
                assert "typed-by-viewer" not in tmux(tmux_mcp, "capture-pane", "-p", "-t", pane)
                assert "typed-by-viewer" not in "\n".join(await buffer_text(page, view))
    assert not [r for r in tmux_mcp.audit_records() if r.get("tool") == "web_input"], tmux_mcp.audit_records()


async def test_a_wrong_key_sees_nothing(tmux_mcp: TmuxMcp) -> None:
    async with served(tmux_mcp) as (server, agent):
        with anyio.fail_after(LIMIT):
            pane = await agent.terminal("hidden")
            view = f"local:{pane}"
            await agent.call("run", target=pane, command="echo hidden-$((6*7))")
            key = (await agent.call("web_view"))["url"].split("#key=", 1)[1]
            wrong = "0" * len(key) if key != "0" * len(key) else "1" * len(key)
            async with chromium() as browser:
                context = await browser.new_context()
                try:
                    await context.add_init_script(RECORDER)
                    page = await context.new_page()
                    page.set_default_timeout(PAGE_LIMIT_MS)
                    sockets: list[str] = []
                    page.on("websocket", lambda ws: sockets.append(ws.url))
                    async with page.expect_response(lambda r: r.url.endswith("/ui/session")) as answer:
                        await page.goto(page_link(server, wrong, view))
                    response = await answer.value
                    assert (response.request.method, response.status) == ("POST", 401)
                    assert "error" in await response.json()
                    # The page says so, and never opens a socket.
                    outcome = await page.evaluate(
                        "() => window.tmuxView.ready.then(() => 'ready', (e) => 'refused: ' + e.message)"
                    )
                    assert outcome.startswith("refused:"), outcome
                    assert await page.evaluate("() => [window.__wv.sockets, window.__wv.binary]") == [0, 0]
                    assert sockets == []
                    assert await page.evaluate("() => window.tmuxView.terminals") == []
                    assert "hidden-42" not in await page.inner_text("body")
                    assert "Not signed in" in await page.inner_text("body")
                    # No cookie came with the refusal.
                    assert [c for c in await context.cookies() if c["name"] == "tmux_mcp_web"] == []
                finally:
                    await context.close()
            # Nor does the socket open without a session, or with a made-up one.
            for cookie in [None, "tmux_mcp_web=" + "ab" * 32]:
                extra = {"Cookie": cookie} if cookie else {}
                status, body = await anyio.to_thread.run_sync(
                    lambda: websocket(server, Origin=own_origin(server), **extra)
                )
                assert status == 401, (cookie, body)
                status, _, body = request(server, "GET", "/ui/session", **extra)
                assert status == 401, (cookie, body)


#: The password typed in the view.
SECRET = "hunter2-secret"


async def test_a_password_typed_in_the_view_is_kept_nowhere(tmux_mcp: TmuxMcp) -> None:
    carol = web_key(tmux_mcp, "carol", "input")
    async with served(tmux_mcp, "--audit-log", str(tmux_mcp.audit), "--log-level", "debug") as (server, agent):
        with anyio.fail_after(LIMIT):
            pane = await agent.terminal("secret")
            view = f"local:{pane}"
            # The server's own key, in a reply the debug log shows.
            link_key = (await agent.call("web_view"))["url"].split("#key=", 1)[1]
            asking = await agent.call("run", target=pane, command="read -s pw; echo got-${#pw}", timeout_secs=10)
            assert asking["status"] in ("waiting_for_input", "asks_for_secret"), asking
            async with chromium() as browser, view_page(browser, page_link(server, carol, view)) as page:
                await open_view(page, view)
                await page.evaluate("id => window.tmuxView.take(id)", view)
                await wait_held(page, view, "carol", True)
                await page.evaluate(f"id => window.tmuxView.type(id, {json.dumps(SECRET + chr(13))})", view)
                await wait_row(page, view, "got-14")
                await page.evaluate("id => window.tmuxView.release(id)", view)
                await wait_held(page, view, None, False)
                assert await page.evaluate("() => window.tmuxView.refusals") == []
            done = await agent.call("run", run_id=asking["run_id"], timeout_secs=20)
            assert (done["status"], done["exit_status"]) == ("completed", 0), done
            assert done["output"].strip().endswith("got-14"), done
            await agent.call("read_output", target=pane, cursor=0)
            await agent.call("capture_screen", target=pane)
            await agent.call("list_regions", target=pane)
            await agent.call("pane_info", target=pane)
        stderr = "\n".join(server.lines)
    # The server has stopped (its logs are complete).
    assert agent.replies, "no reply was kept"
    for n, reply in enumerate(agent.replies):
        assert SECRET not in reply, f"reply {n}: {reply}"
    assert SECRET not in stderr
    # No key reaches a log, not even the debug level's copy of a reply.
    for key in (link_key, carol):
        assert key not in stderr
        assert key not in tmux_mcp.log.read_text()
        assert key not in tmux_mcp.audit.read_text()
    assert "key=[masked]" in stderr, "the debug log shows no web_view reply: the check above proves nothing"
    assert SECRET not in tmux_mcp.log.read_text()
    audit = tmux_mcp.audit.read_text()
    assert SECRET not in audit
    for path in sorted(p for p in tmux_mcp.state.rglob("*") if p.is_file()):
        assert SECRET.encode() not in path.read_bytes(), path
    typed = (SECRET + "\r").encode()
    inputs = [r for r in tmux_mcp.audit_records() if r.get("tool") == "web_input"]
    assert len(inputs) == 1, inputs
    record = inputs[0]
    assert (record["actor"], record["person"], record["pane"], record["outcome"]) == ("carol", True, pane, "ok"), record
    assert record["input"] == {"len": len(typed), "sha256": hashlib.sha256(typed).hexdigest()[:12]}, record


# ---------------------------------------------------------------- 5. isolation


#: How many markers the isolation test times, with and without the flood.
ROUNDS = 5

#: Seconds the agent's wait may take to see a marker while the flood runs,
#: as a median, and at most (the whole MCP round trip over HTTP, on a
#: loaded 2-core machine; the figures are printed). A wait held up by the
#: flood or the slow view would take until the flood ends (minutes).
MARK_LIMIT = 1.0
MARK_MOST = 5.0


async def time_marker(agent: Agent, pane: str, n: int) -> float:
    """Milliseconds from a marker's print in the shell (its own clock,
    `$EPOCHREALTIME`) to the agent having `wait_for_output`'s reply. The
    wait is called before the marker is printed (0.3 s later)."""
    sent = await agent.call(
        "send_text", target=pane, text=f"sleep 0.3; printf 'MARK-{n}-%s\\n' \"$EPOCHREALTIME\"", enter=True
    )
    waited = await agent.call(
        "wait_for_output",
        target=pane,
        pattern=rf"MARK-{n}-[0-9]+\.[0-9]{{6}}",
        cursor=sent["cursor"],
        timeout_secs=20,
    )
    got = time.time()
    assert waited["matched"] is True, waited
    printed = float(waited["text"].rsplit("-", 1)[1])
    return (got - printed) * 1000


async def flooding(
    agent: Agent, tm: TmuxMcp, flood: str, quiet: str, base: int, page: Page | None = None
) -> dict[str, Any]:
    """Floods `flood` (`yes | head -c 200000000`) and, while it prints,
    times ROUNDS markers of `quiet` (`time_marker`, numbered from `base`)
    and as many `pane_info` calls on the flooded pane; then interrupts the
    flood and waits for its prompt. The figures, in milliseconds, and the
    flooded pane's output cursor at the interrupt (`head`) and once it is
    back at its prompt (`end`); with `page`, what the page had written of
    `flood` at the interrupt (`written`)."""
    sent = await agent.call("send_text", target=flood, text="yes | head -c 200000000; echo flood-$((6*7))", enter=True)
    await agent.call("wait_for_output", target=flood, pattern="^y$", cursor=sent["cursor"], timeout_secs=20)
    markers: list[float] = []
    answers: list[float] = []
    for n in range(ROUNDS):
        started = time.perf_counter()
        info = await agent.call("pane_info", target=flood)
        answers.append((time.perf_counter() - started) * 1000)
        assert info["state"]["state"] != "at_prompt", info["state"]
        markers.append(await time_marker(agent, quiet, base + n))
    # The flood still ran after the last marker.
    running = tmux(tm, "display-message", "-p", "-t", flood, "#{pane_current_command}").strip()
    assert running != "bash", "the flood ended before the markers did: make it longer"
    head = (await agent.call("pane_info", target=flood))["cursor"]
    written = (await view_state(page, f"local:{flood}"))["written"] if page else None
    await agent.call("send_keys", target=flood, keys=["C-c"])
    await agent.call("wait_for_state", target=flood, states=["at_prompt"], timeout_secs=60)
    end = (await agent.call("pane_info", target=flood))["cursor"]
    return {"markers": markers, "answers": answers, "head": head, "end": end, "written": written}


def figures(values: list[float]) -> str:
    return f"{[round(x, 1) for x in values]} (median {statistics.median(values):.1f}, max {max(values):.1f})"


async def test_a_flooded_slow_view_delays_no_other_terminal(tmux_mcp: TmuxMcp) -> None:
    async with served(tmux_mcp) as (server, agent):
        with anyio.fail_after(300):
            flood = await agent.terminal("flood")
            quiet = await agent.terminal("quiet")
            view, url = await agent.view_link(flood)
            calm = [await time_marker(agent, quiet, n) for n in range(ROUNDS)]
            # The same flood with no view, to compare with.
            alone = await flooding(agent, tmux_mcp, flood, quiet, 100)
            async with chromium() as browser, view_page(browser, url) as page:
                await open_view(page, view)
                cdp = await page.context.new_cdp_session(page)
                await cdp.send("Emulation.setCPUThrottlingRate", {"rate": 20})
                viewed = await flooding(agent, tmux_mcp, flood, quiet, 200, page)
                await cdp.send("Emulation.setCPUThrottlingRate", {"rate": 1})
                # The slow view catches up once it is fast again.
                await wait_written(page, view, viewed["end"], timeout_ms=120_000)
                lost = await frames(page, "lost", view)
                snapshots = await frames(page, "snapshot", view)
            print(f"marker printed → wait_for_output's reply at the agent, ms: calm {figures(calm)}")
            for label, run in [("no view", alone), ("a throttled view", viewed)]:
                print(
                    f"  flood with {label}: markers {figures(run['markers'])}; "
                    f"pane_info of the flooded pane {figures(run['answers'])}; "
                    f"{run['head']} bytes of flood output by the interrupt, {run['end']} in all"
                )
            told = f"{len(lost)} lost frames" if lost else "no lost frame"
            print(
                f"the throttled view: {told}, {len(snapshots)} snapshots; at the interrupt it had written "
                f"{viewed['written']} bytes of {viewed['head']} ({viewed['head'] - viewed['written']} behind)"
            )
            for frame in lost[:3]:
                print(f"  lost: {frame}")
            for run in (alone, viewed):
                for times in (run["markers"], run["answers"]):
                    assert statistics.median(times) < MARK_LIMIT * 1000, run
                    assert max(times) < MARK_MOST * 1000, run
            # Each loss is followed by a snapshot, from which the view goes on.
            assert len(snapshots) == 1 + len(lost), (len(snapshots), lost)
