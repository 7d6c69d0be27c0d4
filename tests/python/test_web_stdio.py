"""The web view beside the stdio server (`--web ADDR`): the MCP client on
standard input and output, the person in headless Chromium on the view's
own listener; and the rules of that listener (loopback unless asked, the
Host check), and the tool's answer when no view is served.
"""

from __future__ import annotations

import http.client
import re
import subprocess
from urllib.parse import urlsplit

import anyio
import pytest
from browser import chromium, open_view
from support import TmuxMcp, connecting_call, text_of
from test_web_view import view_page, wait_row

pytestmark = pytest.mark.anyio

LIMIT = 60


async def test_the_stdio_server_serves_the_view_with_web(tmux_mcp: TmuxMcp) -> None:
    async with tmux_mcp.session("--web", "127.0.0.1:0") as (session, _init):
        with anyio.fail_after(LIMIT):
            made = await connecting_call(session.call_tool, "create_terminal", {"name": "beside"})
            assert not made.is_error, text_of(made)
            pane = made.structured_content["pane"]
            link = await session.call_tool("web_view", {"target": pane})
            assert not link.is_error, text_of(link)
            url = link.structured_content["url"]
            view = link.structured_content["terminal"]
            parts = urlsplit(url)
            assert parts.hostname == "127.0.0.1" and parts.path == "/ui/", url
            assert re.fullmatch(r"key=[0-9a-f]{64}", parts.fragment), url
            # The view's own listener checks Host as serve --http does.
            connection = http.client.HTTPConnection("127.0.0.1", parts.port, timeout=10)
            connection.request("GET", "/ui/", headers={"Host": "evil.example"})
            assert connection.getresponse().status == 403
            connection.close()
            async with chromium() as browser, view_page(browser, url) as page:
                await open_view(page, view)
                done = await session.call_tool("run", {"target": pane, "command": "echo beside-$((6*7))"})
                assert not done.is_error, text_of(done)
                await wait_row(page, view, "beside-42")
                # The agent knows who views the terminal in the browser.
                info = await session.call_tool("pane_info", {"target": pane})
                assert info.structured_content["people"].get("web_viewers") == ["link"], info.structured_content
                listed = await session.call_tool("list_terminals", {})
                panes = [p for s in listed.structured_content["sessions"] for w in s["windows"] for p in w["panes"]]
                (entry,) = [p for p in panes if p["id"] == pane]
                assert entry["people"]["web_viewers"] == ["link"], entry


async def test_without_a_view_web_view_says_how_to_serve_one(tmux_mcp: TmuxMcp) -> None:
    async with tmux_mcp.session() as (session, _init):
        with anyio.fail_after(LIMIT):
            result = await session.call_tool("web_view", {})
            assert result.is_error
            assert "--web 127.0.0.1:PORT" in text_of(result), text_of(result)


def test_a_view_on_another_machines_address_needs_the_flag(tmux_mcp: TmuxMcp) -> None:
    def started(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            tmux_mcp.command(*args), input="", capture_output=True, text=True, env=tmux_mcp.env(), timeout=30
        )

    refused = started("--web", "0.0.0.0:0")
    assert refused.returncode == 2, refused
    assert "not a loopback address" in refused.stderr and "--web-allow-remote" in refused.stderr, refused.stderr
    bad = started("--web", "nowhere")
    assert bad.returncode == 2 and "is not an address to listen on" in bad.stderr, bad
