"""The web view's page (tmux-mcp/web/) on its own, in headless Chromium,
against a scripted server: Playwright answers the page's requests with the
files from the source tree and plays the server's side of the WebSocket
(docs/web-view.md), so each test sends exactly the frames it is about and
reads what the page sent back. No tmux-mcp runs here; test_web_page.py
drives the page against the real server.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import struct
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from browser import buffer_text, chromium, open_view, screen_text, view_state, wait_ready
from playwright.async_api import Page, Route, WebSocketRoute

REPO = Path(__file__).resolve().parents[2]
WEB = REPO / "tmux-mcp" / "web"

#: The origin the page is loaded from (Playwright answers it: no network).
ORIGIN = "http://view.test"

#: What the server serves under /ui/, from where in the source tree.
FILES = {
    "": ("index.html", "text/html; charset=utf-8"),
    "app.js": ("app.js", "text/javascript; charset=utf-8"),
    "app.css": ("app.css", "text/css; charset=utf-8"),
    "vendor/xterm.js": ("vendor/xterm/xterm.js", "text/javascript; charset=utf-8"),
    "vendor/xterm.css": ("vendor/xterm/xterm.css", "text/css; charset=utf-8"),
}

#: Seconds one test may take.
LIMIT = 60

ID = "local:%1"


def terminal(id: str = ID, **fields: Any) -> dict[str, Any]:
    """One T of a `terminals` frame."""
    host, pane = id.split(":", 1)
    t = {
        "id": id,
        "host": host,
        "session": "work",
        "window": "@1",
        "window_name": "bash",
        "pane": pane,
        "title": "a title",
        "command": "bash",
        "cwd": "/tmp",
        "width": 40,
        "height": 6,
        "dead": False,
        "alternate_screen": False,
        "people": [],
        "held_by": None,
        "attention": 0,
    }
    t.update(fields)
    return t


def data_frame(id: str, offset: int, data: bytes) -> bytes:
    """A binary frame of pane output (docs/web-view.md)."""
    name = id.encode()
    return b"\x01" + struct.pack(">H", len(name)) + name + struct.pack(">QQ", offset, int(time.time() * 1e6)) + data


@dataclass
class Server:
    """The server's side, scripted: the session answers and each socket
    the page opens, with every message the page sent on it."""

    scope: str = "input"
    key_ok: bool = True
    terminals: list[dict[str, Any]] = field(default_factory=lambda: [terminal()])
    sockets: list[WebSocketRoute] = field(default_factory=list)
    #: (socket number from 0, message) for every text frame the page sent.
    sent: asyncio.Queue[tuple[int, dict[str, Any]]] = field(default_factory=asyncio.Queue)
    log: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    sessions: list[tuple[str, str | None]] = field(default_factory=list)
    #: Whether a socket is greeted (hello and terminals) when it opens.
    greet: bool = True

    async def serve_file(self, route: Route) -> None:
        request = route.request
        path = request.url.split("/ui/", 1)[1].split("?", 1)[0].split("#", 1)[0]
        if path == "session":
            self.sessions.append((request.method, request.post_data))
            if self.key_ok:
                body = {"name": "tester", "scope": self.scope}
                await route.fulfill(status=200, content_type="application/json", body=json.dumps(body))
            else:
                await route.fulfill(status=401, content_type="application/json", body='{"error":"unknown key"}')
            return
        if path not in FILES:
            await route.fulfill(status=404, body="Not found\n")
            return
        name, kind = FILES[path]
        await route.fulfill(status=200, content_type=kind, body=(WEB / name).read_bytes())

    def socket_opened(self, ws: WebSocketRoute) -> None:
        number = len(self.sockets)
        self.sockets.append(ws)

        def received(message: str | bytes) -> None:
            assert isinstance(message, str), message
            parsed = json.loads(message)
            self.log.append((number, parsed))
            self.sent.put_nowait((number, parsed))

        ws.on_message(received)
        if self.greet:
            ws.send(json.dumps({"t": "hello", "name": "tester", "scope": self.scope}))
            self.send_list()

    def send(self, message: dict[str, Any] | bytes, socket: int = -1) -> None:
        self.sockets[socket].send(message if isinstance(message, bytes) else json.dumps(message))

    def send_list(self) -> None:
        self.send({"t": "terminals", "terminals": self.terminals, "hosts": [{"host": "local", "reachable": True, "error": None}]})

    async def expect(self, op: str, **fields: Any) -> tuple[int, dict[str, Any]]:
        """The next message the page sends with this `op` (others before it
        are skipped, except that they stay in `log`)."""
        while True:
            number, message = await self.sent.get()
            if message["op"] == op and all(message.get(k) == v for k, v in fields.items()):
                return number, message

    def ops(self, op: str) -> list[dict[str, Any]]:
        return [m for _, m in self.log if m["op"] == op]


@contextlib.asynccontextmanager
async def page_with(server: Server, query: str = "", key: str | None = "KEY-1") -> AsyncIterator[Page]:
    """The page loaded at /ui/ (with `query` and a `#key=` fragment) against
    `server`."""
    async with chromium() as browser:
        context = await browser.new_context(viewport={"width": 1400, "height": 900})
        page = await context.new_page()
        page.set_default_timeout(20_000)
        page.on("console", lambda m: print(f"[page console {m.type}] {m.text}"))
        page.on("pageerror", lambda e: print(f"[page error] {e}"))
        await page.route(f"{ORIGIN}/ui/**", server.serve_file)
        await page.route_web_socket(f"{ORIGIN.replace('http', 'ws')}/ui/ws", server.socket_opened)
        await page.goto(f"{ORIGIN}/ui/{query}" + (f"#key={key}" if key else ""))
        yield page
        await context.close()


async def open_with_snapshot(page: Page, server: Server, offset: int = 100, data: str = "$ ") -> None:
    """Opens the view of ID and answers its attach with a snapshot."""
    opened = asyncio.ensure_future(open_view(page, ID))
    _, attach = await server.expect("attach", id=ID)
    assert "from" not in attach, attach
    server.send({"t": "snapshot", "id": ID, "offset": offset, "cols": 40, "rows": 6, "data": data})
    await opened


@pytest.mark.anyio
async def test_the_key_is_exchanged_and_leaves_the_address_bar() -> None:
    server = Server()
    async with page_with(server, "?scrollback=50") as page:
        await asyncio.wait_for(wait_ready(page), LIMIT)
        assert server.sessions == [("POST", '{"key":"KEY-1"}')]
        assert page.url == f"{ORIGIN}/ui/?scrollback=50", "the key stays in the address bar"
        assert await page.evaluate("() => location.hash") == ""
        terminals = await page.evaluate("() => window.tmuxView.terminals.map(t => t.id)")
        assert terminals == [ID]
        # The sidebar lists it; a click opens it.
        button = page.get_by_role("button", name="pane %1")
        await button.click()
        _, attach = await server.expect("attach", id=ID)
        server.send({"t": "snapshot", "id": ID, "offset": 7, "cols": 40, "rows": 6, "data": "\x1b[1;31mred\x1b[0m line\r\n$ "})
        await page.wait_for_function(f"() => window.tmuxView.views['{ID}'].written === 7")
        assert (await screen_text(page, ID))[:2] == ["red line", "$"]
        assert await page.evaluate(f"() => window.tmuxView.views['{ID}'].term.options.scrollback") == 50
        # The DOM renderer: the text is in the page, no canvas.
        dom = await page.evaluate(
            """() => ({rows: document.querySelector('.xterm-rows')?.textContent ?? null,
                       canvases: document.querySelectorAll('.xterm canvas').length})"""
        )
        assert dom["canvases"] == 0
        assert "red line" in dom["rows"]
        assert (await button.get_attribute("aria-label")).endswith(", open")


@pytest.mark.anyio
async def test_without_a_key_the_cookie_is_tried() -> None:
    server = Server()
    async with page_with(server, key=None) as page:
        await asyncio.wait_for(wait_ready(page), LIMIT)
        assert server.sessions == [("GET", None)]


@pytest.mark.anyio
async def test_a_refused_key_opens_no_socket() -> None:
    server = Server(key_ok=False)
    async with page_with(server, key="wrong") as page:
        with pytest.raises(Exception, match="refused"):
            await page.evaluate("() => window.tmuxView.ready")
        assert server.sockets == []
        assert page.url == f"{ORIGIN}/ui/"
        await page.get_by_text("Not signed in").wait_for()


@pytest.mark.anyio
async def test_pane_in_the_query_opens_at_load() -> None:
    server = Server()
    async with page_with(server, f"?pane={ID}") as page:
        await asyncio.wait_for(server.expect("attach", id=ID), LIMIT)
        server.send({"t": "snapshot", "id": ID, "offset": 0, "cols": 40, "rows": 6, "data": "hi"})
        await page.wait_for_function(f"() => window.tmuxView.views['{ID}']?.written === 0")
        assert (await screen_text(page, ID))[0] == "hi"


@pytest.mark.anyio
async def test_a_reconnect_continues_from_the_written_offset_without_duplicates() -> None:
    server = Server()
    async with page_with(server) as page:
        await asyncio.wait_for(wait_ready(page), LIMIT)
        await open_with_snapshot(page, server, offset=100, data="")
        server.send(data_frame(ID, 100, b"one\r\n"))
        server.send(data_frame(ID, 105, b"two\r\n"))
        await page.wait_for_function(f"() => window.tmuxView.views['{ID}'].written === 110")
        assert await view_state(page, ID) == {"offset": 110, "written": 110, "cols": 40, "rows": 6}

        await page.evaluate("() => window.tmuxView.socket.close()")
        number, attach = await asyncio.wait_for(server.expect("attach", id=ID), LIMIT)
        assert number == 1 and attach["from"] == 110
        assert await page.evaluate("() => window.tmuxView.reconnects") == 1
        # The server sends again from an earlier offset (what it still had
        # in flight): only the bytes past what the page holds are written.
        server.send(data_frame(ID, 105, b"two\r\nthree\r\n"))
        server.send(data_frame(ID, 100, b"one\r\n"))
        server.send(data_frame(ID, 117, b"four\r\n"))
        await page.wait_for_function(f"() => window.tmuxView.views['{ID}'].written === 123")
        assert [row for row in await buffer_text(page, ID) if row] == ["one", "two", "three", "four"]
        marks = await page.evaluate("() => window.tmuxView.marks.map(m => [m.id, m.offset])")
        assert marks == [[ID, 100], [ID, 105], [ID, 105], [ID, 117]]
        # Acknowledged up to the end, on the new socket.
        await page.wait_for_function(f"() => window.tmuxView.views['{ID}'].written === 123")
        _, ack = await asyncio.wait_for(server.expect("ack", id=ID, offset=123), LIMIT)


@pytest.mark.anyio
async def test_received_but_unwritten_bytes_are_not_written_twice() -> None:
    """A socket that closes while the page's terminal still has bytes queued:
    the page re-attaches from what was written, and the bytes the server
    sends again that the page had already received are dropped."""
    server = Server()
    async with page_with(server) as page:
        await asyncio.wait_for(wait_ready(page), LIMIT)
        await open_with_snapshot(page, server, offset=0, data="")
        lines = b"".join(b"%d\r\n" % n for n in range(1, 20001))
        chunks = [lines[i : i + 4096] for i in range(0, len(lines), 4096)]
        at = 0
        for chunk in chunks:
            server.send(data_frame(ID, at, chunk))
            at += len(chunk)
        # Close as soon as part of it is received, before all is written.
        await page.wait_for_function(f"() => window.tmuxView.views['{ID}'].offset > 0")
        state = await page.evaluate(
            f"""() => {{ const v = window.tmuxView.views['{ID}'];
                         const s = {{offset: v.offset, written: v.written}};
                         window.tmuxView.socket.close(); return s; }}"""
        )
        _, attach = await asyncio.wait_for(server.expect("attach", id=ID), LIMIT)
        assert attach["from"] <= state["offset"]
        # The server continues from `from`, to the end.
        offset = attach["from"]
        while offset < len(lines):
            end = min(offset + 50_000, len(lines))
            server.send(data_frame(ID, offset, lines[offset:end]), socket=1)
            offset = end
        await page.wait_for_function(f"() => window.tmuxView.views['{ID}'].written === {len(lines)}")
        rows = [row for row in await buffer_text(page, ID) if row]
        assert rows == [str(n) for n in range(20001 - len(rows), 20001)]


@pytest.mark.anyio
async def test_a_snapshot_applies_after_the_bytes_before_it() -> None:
    server = Server()
    async with page_with(server) as page:
        await asyncio.wait_for(wait_ready(page), LIMIT)
        await open_with_snapshot(page, server, offset=0, data="")
        server.send(data_frame(ID, 0, b"old\r\n" * 20000))
        server.send({"t": "lost", "id": ID, "at": 900000, "why": "the tab fell behind"})
        server.send({"t": "snapshot", "id": ID, "offset": 900000, "cols": 30, "rows": 4, "data": "fresh\r\n$ "})
        server.send(data_frame(ID, 900000, b"more"))
        await page.wait_for_function(f"() => window.tmuxView.views['{ID}'].written === 900004")
        assert await screen_text(page, ID) == ["fresh", "$ more", "", ""]
        assert await buffer_text(page, ID) == ["fresh", "$ more", "", ""]
        assert (await view_state(page, ID))["cols"] == 30
        await page.get_by_text("could not be shown").wait_for()


@pytest.mark.anyio
async def test_acks_are_coalesced_and_reach_the_end() -> None:
    server = Server()
    async with page_with(server) as page:
        await asyncio.wait_for(wait_ready(page), LIMIT)
        await open_with_snapshot(page, server, offset=0, data="")
        at = 0
        for n in range(300):
            chunk = b"line %d\r\n" % n
            server.send(data_frame(ID, at, chunk))
            at += len(chunk)
        await asyncio.wait_for(server.expect("ack", id=ID, offset=at), LIMIT)
        acks = [m["offset"] for m in server.ops("ack")]
        assert acks == sorted(acks) and len(set(acks)) == len(acks)
        assert len(acks) < 100, f"{len(acks)} acks for 300 small frames"
        # A large burst is acknowledged every 64 KiB at the least.
        start = at
        for _ in range(64):
            chunk = b"x" * 8191 + b"\n"
            server.send(data_frame(ID, at, chunk))
            at += len(chunk)
        await asyncio.wait_for(server.expect("ack", id=ID, offset=at), LIMIT)
        later = [m["offset"] for m in server.ops("ack") if m["offset"] > start]
        assert all(b - a <= 64 * 1024 + 8192 for a, b in zip([start, *later], later)), later


@pytest.mark.anyio
async def test_held_input_types_keys_and_never_the_terminal_s_own_answers() -> None:
    server = Server()
    async with page_with(server) as page:
        await asyncio.wait_for(wait_ready(page), LIMIT)
        await open_with_snapshot(page, server)
        assert await page.get_by_role("button", name="Hand back").count() == 0
        await page.get_by_role("button", name=f"Take over ({ID})").click()
        await server.expect("take", id=ID)
        # Typing before the hold is confirmed sends nothing.
        await page.locator(".xterm-helper-textarea").focus()
        await page.keyboard.type("n")
        server.send({"t": "held", "id": ID, "by": "tester", "you": True})
        await page.get_by_role("button", name=f"Hand back ({ID})").wait_for()
        assert await page.evaluate(f"() => window.tmuxView.held['{ID}']") == {"by": "tester", "you": True}
        # Queries in the output (device attributes, cursor position, colours,
        # modes): tmux answered them already; the page's terminal must not.
        server.send(data_frame(ID, 100, b"\x1b[c\x1b[>c\x1b[6n\x1b[5n\x1b]11;?\x07\x1b[?2004$p\x1bP$qm\x1b\\ok"))
        await page.wait_for_function(f"() => window.tmuxView.views['{ID}'].written > 100")
        await page.locator(".xterm-helper-textarea").focus()
        await page.keyboard.type("ls")
        await page.keyboard.press("Enter")
        await page.keyboard.press("Control+C")
        await server.expect("input", id=ID, data="\x03")
        assert [m["data"] for m in server.ops("input")] == ["l", "s", "\r", "\x03"]
        await page.get_by_role("button", name="Fit to window").click()
        _, fit = await server.expect("fit", id=ID)
        assert fit["cols"] > 40 and fit["rows"] > 6, fit
        await page.get_by_role("button", name=f"Hand back ({ID})").click()
        await server.expect("release", id=ID)
        server.send({"t": "held", "id": ID, "by": None, "you": False})
        await page.get_by_role("button", name=f"Take over ({ID})").wait_for()
        assert await page.evaluate(f"() => window.tmuxView.views['{ID}'].term.options.disableStdin") is True


@pytest.mark.anyio
async def test_a_view_scope_has_no_take_over_and_refusals_are_kept() -> None:
    server = Server(scope="view")
    async with page_with(server) as page:
        await asyncio.wait_for(wait_ready(page), LIMIT)
        await open_with_snapshot(page, server)
        assert await page.get_by_role("button", name="Take over").count() == 0
        await page.evaluate(f"() => window.tmuxView.type('{ID}', 'secret')")
        _, sent = await server.expect("input", id=ID)
        assert sent["data"] == "secret"
        refusal = {"t": "refused", "op": "input", "id": ID, "why": "the key's scope is view"}
        server.send(refusal)
        await page.get_by_text("the key's scope is view").wait_for()
        assert await page.evaluate("() => window.tmuxView.refusals") == [refusal]


@pytest.mark.anyio
async def test_resize_scales_and_never_resizes_the_pane() -> None:
    server = Server(terminals=[terminal(width=300, height=80)])
    async with page_with(server) as page:
        await asyncio.wait_for(wait_ready(page), LIMIT)
        opened = asyncio.ensure_future(open_view(page, ID))
        await server.expect("attach", id=ID)
        server.send({"t": "snapshot", "id": ID, "offset": 0, "cols": 300, "rows": 80, "data": "wide"})
        await opened
        assert (await view_state(page, ID))["cols"] == 300
        fits = """id => {
            const v = window.tmuxView.views[id];
            const box = v.term.element.closest('.screen').getBoundingClientRect();
            const term = v.term.element.getBoundingClientRect();
            return term.width <= box.width + 0.5 && term.height <= box.height + 0.5;
        }"""
        await page.wait_for_function(fits, arg=ID)
        server.send({"t": "resize", "id": ID, "cols": 20, "rows": 5})
        await page.wait_for_function(f"() => window.tmuxView.views['{ID}'].term.cols === 20")
        await page.wait_for_function(fits, arg=ID)
        assert server.ops("fit") == []


@pytest.mark.anyio
async def test_an_ended_terminal_is_marked_and_closing_detaches() -> None:
    server = Server()
    async with page_with(server) as page:
        await asyncio.wait_for(wait_ready(page), LIMIT)
        await open_with_snapshot(page, server)
        server.send({"t": "ended", "id": ID, "why": "the pane was killed"})
        await page.get_by_text("the pane was killed").wait_for()
        assert await page.get_by_role("button", name="Take over").count() == 0
        await page.get_by_role("button", name=f"Close ({ID})").click()
        await server.expect("detach", id=ID)
        assert await page.evaluate(f"() => '{ID}' in window.tmuxView.views") is False
        # A reconnect does not attach it again.
        await page.evaluate("() => window.tmuxView.socket.close()")
        await page.wait_for_function("() => window.tmuxView.reconnects === 1")
        assert len(server.sockets) == 2
        assert [n for n, m in server.log if m["op"] == "attach"] == [0]


@pytest.mark.anyio
async def test_the_sidebar_groups_and_describes_terminals() -> None:
    server = Server(
        terminals=[
            terminal("local:%1", people=["/dev/pts/3"], attention=2),
            terminal("local:%2", window="@2", window_name="logs", held_by="alice", dead=True),
            terminal("box:%7", session="remote"),
        ]
    )
    async with page_with(server) as page:
        await asyncio.wait_for(wait_ready(page), LIMIT)
        sidebar = page.get_by_role("navigation", name="Terminals")
        text = await sidebar.inner_text()
        for words in ["local", "box", "session work", "window bash", "window logs", "1 watching", "2 attention", "held by alice", "dead"]:
            assert words in text, (words, text)
        assert await sidebar.get_by_role("button").count() == 3
        # Rebuilt on each list.
        server.terminals = server.terminals[:1]
        server.send_list()
        await page.wait_for_function("() => document.querySelectorAll('#hosts .pane').length === 1")
