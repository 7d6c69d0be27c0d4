"""The web view against the real server, in headless Chromium: `tmux-mcp
serve --http` on a private tmux server, the link from the `web_view` tool
(through the MCP Python client), and the page's test API
(`window.tmuxView`, docs/web-view.md). The page on its own, against a
scripted server, is test_web_client.py.
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx2
import pytest
from browser import chromium, open_view, page_at, require_chromium, wait_for_screen
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from playwright.async_api import Page
from support import HttpServer, TmuxMcp, connecting_call, text_of

#: Upper bound for one test.
LIMIT = 120


@contextlib.asynccontextmanager
async def connect(server: HttpServer) -> AsyncIterator[ClientSession]:
    """An MCP client session on `server`, with its bearer token."""
    headers = {"Authorization": f"Bearer {server.token}"}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=120)) as http_client:
        async with streamable_http_client(server.url, http_client=http_client) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                yield session


async def call(session: ClientSession, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await session.call_tool(tool, args)
    assert not result.is_error, f"{tool}: {text_of(result)}"
    return result.structured_content


def capture(tm: TmuxMcp, pane: str) -> list[str]:
    """`capture-pane -p` of `pane`, row by row (tmux trims trailing spaces)."""
    out = subprocess.run(
        [tm.tmux, "-S", str(tm.socket), "capture-pane", "-p", "-t", pane],
        capture_output=True,
        text=True,
        timeout=10,
        check=True,
        env=tm.env(),
    ).stdout
    return out.removesuffix("\n").split("\n")


async def same_as_tmux(page: Page, tm: TmuxMcp, session: ClientSession, pane: str, terminal: str) -> list[str]:
    """Waits for the pane to settle, then for the page to show exactly what
    tmux shows of it."""
    idle = await call(session, "wait_for_idle", {"target": pane, "quiet_secs": 0.5, "timeout_secs": 20})
    assert idle["status"] == "idle", idle
    rows = capture(tm, pane)
    await wait_for_screen(page, terminal, rows)
    return rows


@pytest.mark.anyio
async def test_the_page_shows_what_tmux_shows(tmux_mcp: TmuxMcp) -> None:
    require_chromium()
    poem = tmux_mcp.home / "poem.txt"
    poem.write_text(
        "The first line of the file\n\tindented with a tab\nwide: 日本語の行\n" + "".join(f"line {n}\n" for n in range(4, 12))
    )
    browser_home = tmux_mcp.root / "chromium"
    browser_home.mkdir()
    with tmux_mcp.http_server() as server, anyio.fail_after(LIMIT):
        async with connect(server) as session, chromium(browser_home) as browser:
            created = await connecting_call(
                session.call_tool, "create_terminal", {"name": "web", "width": 120, "height": 32}
            )
            assert not created.is_error, text_of(created)
            pane = created.structured_content["pane"]

            link = await call(session, "web_view", {"target": pane})
            url, terminal = link["url"], link["terminal"]
            assert terminal == f"local:{pane}"
            assert "#key=" in url, url
            async with page_at(browser, url) as page:
                assert "#" not in page.url, "the key stays in the address bar"
                assert terminal in await page.evaluate("() => window.tmuxView.terminals.map(t => t.id)")
                await open_view(page, terminal)
                assert await page.evaluate(f"() => window.tmuxView.views['{terminal}'].term.cols") == 120

                for command in [
                    r"printf '\033[31mred\033[0m plain \033[1;42mbold on green\033[0m\n'",
                    "echo 日本語のテキスト 中文 한국어",
                    r"for i in 1 2 3; do printf '\r%d%%' $i; done; echo",
                ]:
                    ran = await call(session, "run", {"target": pane, "command": command, "timeout_secs": 20})
                    assert ran["status"] == "completed", ran
                rows = await same_as_tmux(page, tmux_mcp, session, pane, terminal)
                assert "red plain bold on green" in rows
                assert "日本語のテキスト 中文 한국어" in rows
                assert "3%" in rows

                # The DOM renderer: the text is in the page; and the colours are
                # xterm's: "red" in palette colour 1.
                dom = await page.evaluate(
                    """id => {
                        const v = window.tmuxView.views[id];
                        const buffer = v.term.buffer.active;
                        let red = null;
                        for (let i = 0; i < buffer.length; i++) {
                            const line = buffer.getLine(i);
                            if (line.translateToString(true).startsWith('red plain')) {
                                const cell = line.getCell(0);
                                red = {palette: cell.isFgPalette(), colour: cell.getFgColor()};
                            }
                        }
                        return {
                            text: v.term.element.querySelector('.xterm-rows')?.textContent ?? '',
                            canvases: v.term.element.querySelectorAll('canvas').length,
                            red,
                        };
                    }""",
                    terminal,
                )
                assert dom["canvases"] == 0
                assert "bold on green" in dom["text"]
                assert dom["red"] == {"palette": True, "colour": 1}

                # vim on the alternate screen.
                sent = await call(session, "send_text", {"target": pane, "text": "vim -u NONE -N poem.txt", "enter": True})
                waited = await call(
                    session,
                    "wait_for_output",
                    {"target": pane, "pattern": "poem.txt", "cursor": sent["cursor"], "timeout_secs": 20},
                )
                assert waited["matched"], waited
                rows = await same_as_tmux(page, tmux_mcp, session, pane, terminal)
                assert rows[0] == "The first line of the file", rows
                assert any("日本語の行" in row for row in rows), rows

                # A fresh view of the same screen (from a snapshot) is the same.
                await page.evaluate("id => window.tmuxView.close(id)", terminal)
                await open_view(page, terminal)
                await wait_for_screen(page, terminal, rows)
                await page.screenshot(path=str(tmux_mcp.root / "web-page.png"))
