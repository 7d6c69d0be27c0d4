"""Idle costs nothing: tmux-mcp waits for what tmux pushes and polls
nothing, so terminals that print nothing cost it no tmux command and no
CPU. Measured on the built binary with 20 followed terminals, each an
integrated bash at its prompt."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from support import TmuxMcp, connecting_call, server_pid, text_of
from test_shell_integration import call

pytestmark = pytest.mark.anyio

#: How long the server is watched while idle (a true timer: the interval
#: measured).
IDLE_SECS = 10

#: Terminals followed while idle.
TERMINALS = 20

#: Time left after the last call before the measurement (a true timer:
#: longer than the 100 ms debounce of the resources' look at the tree
#: that follows every call).
SETTLE_SECS = 1


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of process `pid` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


def commands_sent(log: Path) -> int:
    """tmux commands the server logged as sent (at `--log-level debug`)."""
    return log.read_text(errors="replace").count("command sent")


@contextlib.asynccontextmanager
async def debug_session(tm: TmuxMcp, log: Path):
    params = tm.params()
    args = list(params.args)
    args[args.index("--log-level") + 1] = "debug"
    params = StdioServerParameters(command=params.command, args=args, env=params.env, cwd=params.cwd)
    with log.open("a") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                yield session


async def test_idle_terminals_cost_no_tmux_command_and_no_cpu(tmux_mcp: TmuxMcp) -> None:
    log = tmux_mcp.root / "debug.log"
    with anyio.fail_after(IDLE_SECS + 120):
        async with debug_session(tmux_mcp, log) as session:
            panes = []
            for n in range(TERMINALS):
                created = await connecting_call(session.call_tool, "create_terminal", {"name": f"idle-{n}"})
                assert not created.is_error, text_of(created)
                panes.append(created.structured_content["pane"])
            for pane in panes:
                ready = await call(session, "wait_for_state", target=pane, states=["at_prompt"], timeout_secs=30)
                assert ready["status"] == "matched", ready
            listed = await call(session, "list_terminals")
            followed = [p for s in listed["sessions"] for w in s["windows"] for p in w["panes"] if p["cursor"] is not None]
            assert len(followed) >= TERMINALS, listed
            pid = server_pid(tmux_mcp)
            await anyio.sleep(SETTLE_SECS)
            sent, cpu = commands_sent(log), cpu_seconds(pid)
            assert sent > 0, "the log counts commands (the test would see any)"
            await anyio.sleep(IDLE_SECS)
            idle_sent, idle_cpu = commands_sent(log) - sent, cpu_seconds(pid) - cpu
            lines = [l for l in log.read_text(errors="replace").splitlines() if "command sent" in l]
            assert idle_sent == 0, f"{idle_sent} tmux commands while idle: {lines[-idle_sent:][:8]}"
            assert idle_cpu < IDLE_SECS * 0.01, f"{idle_cpu:.3f} s of CPU in {IDLE_SECS} s idle"
