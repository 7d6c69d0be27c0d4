"""A long-running server forgets what it no longer needs (issue 23): through
one stdio server, 300 times create a named terminal, run a command in it and
kill its session; what the server holds after terminal 300 (its resident
memory and its open file descriptors) is what it held after terminal 50,
within noise."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest
from support import TmuxMcp, connecting_call, server_pid, text_of

pytestmark = pytest.mark.anyio

LIMIT = 600
MIB = 1 << 20
#: Terminals made and killed in all, and after how many the first count is
#: taken (the server's own working memory has grown to its size by then).
TOTAL = int(os.environ.get("TMUX_MCP_LIFETIME_TERMINALS", "300"))
WARM = 50
#: What resident memory may grow by between the two counts: allocator
#: noise. Before each killed terminal was forgotten, it grew by about
#: 2 MiB a terminal (382-507 MiB over 250 terminals).
RSS_NOISE = 16 * MIB
#: Descriptors may differ by a few (a log file being rotated, a pipe of
#: tmux's being set up); before, one leaked per terminal (250 over 250).
FD_NOISE = 4


def held(pid: int) -> tuple[int, int]:
    """The process's resident memory (bytes) and open descriptors."""
    rss = 0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            rss = int(line.split()[1]) * 1024
    return rss, len(os.listdir(f"/proc/{pid}/fd"))


async def test_killed_terminals_are_forgotten(tmux_mcp: TmuxMcp) -> None:
    if not Path("/proc/self/status").exists():
        pytest.skip("needs /proc to read the server's memory and descriptors")
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session("--toolsets", "inspect,execute,teardown") as (session, _):
            counts = {}
            for i in range(1, TOTAL + 1):
                created = await connecting_call(session.call_tool, "create_terminal", {"name": f"t{i}"})
                assert not created.is_error, text_of(created)
                pane = created.structured_content["pane"]
                done = await session.call_tool("run", {"target": pane, "command": "echo x"})
                assert not done.is_error and done.structured_content["output"] == "x\n", text_of(done)
                killed = await session.call_tool("kill_session", {"target": f"t{i}"})
                assert not killed.is_error, text_of(killed)
                if i in (WARM, TOTAL):
                    # The last kill is answered before the pane's records
                    # go: a call after it sees the server once they have.
                    listed = await session.call_tool("list_terminals", {})
                    assert not listed.is_error, text_of(listed)
                    counts[i] = held(server_pid(tmux_mcp))
            (rss_warm, fds_warm), (rss_end, fds_end) = counts[WARM], counts[TOTAL]
            print(
                f"after {WARM}: {rss_warm / MIB:.1f} MiB, {fds_warm} fds; "
                f"after {TOTAL}: {rss_end / MIB:.1f} MiB, {fds_end} fds"
            )
            assert rss_end - rss_warm <= RSS_NOISE, (rss_warm, rss_end)
            assert fds_end - fds_warm <= FD_NOISE, (fds_warm, fds_end)
