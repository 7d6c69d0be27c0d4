"""Memory per flooded pane through the built binary: the server's resident
memory stays within the documented bound (`--log-bytes` for each terminal's
cooked log plus `--pane-log-bytes` for its raw output log, plus 1 MiB for its
screen and working memory) when terminals
print floods of short lines, the case where a line's own bookkeeping costs
more than its text."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import anyio
import mcp
import pytest
from support import TmuxMcp, connecting_call, server_pid, text_of

pytestmark = pytest.mark.anyio

#: Deadlines, reached only when something is wrong: a flood takes a few
#: seconds on an idle machine, and a loaded one (a shared CI runner) was
#: seen to take over a minute.
LIMIT = 900
FLOOD_LIMIT = 240
BASH = {"SHELL": shutil.which("bash") or "/bin/bash"}
MIB = 1 << 20

#: The flood's settings (overridable to measure other sizes by hand).
PANES = int(os.environ.get("TMUX_MCP_MEMORY_PANES", "6"))
LOG_BYTES = int(os.environ.get("TMUX_MCP_MEMORY_LOG_BYTES", str(8 * MIB)))
PANE_LOG_BYTES = int(os.environ.get("TMUX_MCP_MEMORY_PANE_LOG_BYTES", str(2 * MIB)))
#: Bytes of `yes` output per pane: "y\n" lines, several times either bound.
FLOOD_BYTES = int(os.environ.get("TMUX_MCP_MEMORY_FLOOD_BYTES", str(3 * MIB)))
#: What each terminal may cost beyond its two logs, as docs/tools.md says:
#: its emulated screen (24 bytes a cell, twice with the alternate screen:
#: about 0.5 MiB at 200x50) and its share of the server's working memory.
PER_PANE = 1 * MIB
#: The server's own working memory in a flood (cooking, replies in flight).
#: Measured at 2-5 MiB over the logs for six floods of the default sizes
#: (docs/benchmarks.md, "Memory per flooded pane"); before the emulator
#: dropped its history and the cooked log reused its blocks, the growth was
#: 88-103 MiB, and before the log counted its lines' bookkeeping 167-170
#: MiB: both over this bound (74 MiB).
SLACK = 8 * MIB


async def call(session: mcp.ClientSession, tool: str, **args) -> dict:
    result = await session.call_tool(tool, args)
    assert not result.is_error, text_of(result)
    return result.structured_content


def status_kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} in /proc/{pid}/status")


async def test_flooded_panes_stay_within_the_documented_memory_bound(tmux_mcp: TmuxMcp) -> None:
    if not Path("/proc/self/status").exists():
        pytest.skip("needs /proc to read the server's resident memory")
    with anyio.fail_after(LIMIT):
        args = (
            "--log-bytes",
            str(LOG_BYTES),
            "--pane-log-bytes",
            str(PANE_LOG_BYTES),
            "--max-wait-secs",
            str(FLOOD_LIMIT),
        )
        async with tmux_mcp.session(*args, env=BASH) as (session, _):
            panes = []
            for i in range(PANES):
                created = await connecting_call(session.call_tool, "create_terminal", {"name": f"flood{i}"})
                assert not created.is_error, text_of(created)
                panes.append(created.structured_content["pane"])
            for pane in panes:
                await call(session, "run", target=pane, command="echo ready")
            pid = server_pid(tmux_mcp)
            before = status_kib(pid, "VmRSS")

            async def flood(pane: str) -> None:
                # The marker the shell prints at the end, which its echo of
                # the command line does not contain.
                command = f"yes | head -c {FLOOD_BYTES}; echo flood-$((1 + 1))"
                await call(session, "send_text", target=pane, text=command, enter=True)
                done = await call(session, "wait_for_output", target=pane, pattern="^flood-2$", timeout_secs=FLOOD_LIMIT)
                assert done["matched"], {k: done.get(k) for k in ("status", "waited_ms", "losses", "cursor", "tail")}
                await call(session, "wait_for_state", target=pane, states=["at_prompt"], timeout_secs=10)

            # One after the other: six floods at once can outrun the server
            # on a small machine, and tmux then pauses the panes and discards
            # output (and the end of the command with it).
            for pane in panes:
                await flood(pane)
            for pane in panes:
                # The cooked log has filled up: its oldest lines were rotated
                # out, so it holds what its bound lets it (it may still be
                # cooking the last of the flood, which the pane's own log,
                # bounded by --pane-log-bytes, holds meanwhile).
                read = await call(session, "read_log", target=pane, last_lines=3)
                assert read["oldest_line"] > 1, read
            after = status_kib(pid, "VmRSS")
            peak = status_kib(pid, "VmHWM")
            grown = (after - before) * 1024
            bound = PANES * (LOG_BYTES + PANE_LOG_BYTES + PER_PANE) + SLACK
            print(
                f"{PANES} panes, {FLOOD_BYTES} bytes of `yes` each, --log-bytes {LOG_BYTES}, "
                f"--pane-log-bytes {PANE_LOG_BYTES}: VmRSS {before} kB -> {after} kB "
                f"(+{grown / MIB:.1f} MiB), VmHWM {peak} kB; bound +{bound / MIB:.1f} MiB"
            )
            assert grown <= bound, (
                f"resident memory grew by {grown / MIB:.1f} MiB for {PANES} flooded panes, "
                f"more than the bound {bound / MIB:.1f} MiB"
            )
