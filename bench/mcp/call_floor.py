"""What one tool call costs the MCP Python SDK client, beside its ping:
`capture_screen` of a full 200x50 pane, the same cut to 1 KB, and
`read_log` of one line, 150 calls each, medians in milliseconds. Runs the
release build (`cargo build --release -p tmux-control-mcp`) on a private
tmux socket in a temporary directory, removed afterwards.

    .venv/bin/python bench/mcp/call_floor.py
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import tempfile
import time

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

CALLS = 150


async def main() -> None:
    root = tempfile.mkdtemp(prefix="tmux-mcp-floor-")
    sock = os.path.join(root, "tmux.sock")
    env = {
        "PATH": os.environ["PATH"],
        "HOME": root,
        "SHELL": "/bin/bash",
        "LANG": "C.UTF-8",
        "TERM": "xterm-256color",
        "TMUX_TMPDIR": root,
    }
    params = StdioServerParameters(
        command="target/release/tmux-mcp",
        args=["--socket-path", sock, "--state-dir", os.path.join(root, "state")],
        env=env,
    )
    try:
        async with stdio_client(params) as (r, w):
            async with ClientSession(r, w) as s:
                await s.initialize()
                made = await s.call_tool("create_terminal", {"name": "floor", "width": 200, "height": 50})
                pane = made.structured_content["pane"]
                await s.call_tool("run", {"target": pane, "command": "for i in $(seq 1 60); do printf '%0199d\\n' $i; done"})
                calls = {
                    "ping": lambda: s.send_ping(),
                    "capture_screen (full 200x50)": lambda: s.call_tool("capture_screen", {"target": pane}),
                    "capture_screen (max_bytes 1000)": lambda: s.call_tool(
                        "capture_screen", {"target": pane, "max_bytes": 1000}
                    ),
                    "read_log (1 line)": lambda: s.call_tool("read_log", {"target": pane, "last_lines": 1}),
                }
                for label, call in calls.items():
                    times = []
                    for _ in range(CALLS):
                        started = time.perf_counter()
                        await call()
                        times.append((time.perf_counter() - started) * 1000)
                    print(f"{label}: {statistics.median(times):.3f} ms")
    finally:
        subprocess.run(["tmux", "-S", sock, "kill-server"], capture_output=True, check=False)
        shutil.rmtree(root, ignore_errors=True)


anyio.run(main)
