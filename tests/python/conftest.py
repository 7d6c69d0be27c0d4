"""Fixtures for driving the built `tmux-mcp` binary over stdio with the MCP
Python SDK (an MCP client written independently of rmcp).

Every server these tests start acts on a tmux server of its own: the socket is
a path inside a fresh temporary directory (`--socket-path`), and
`TMUX_TMPDIR` points into that directory too, so even a bug that reached for
a named or default socket would land there and not on the user's tmux. The
`tmux_mcp` fixture's finalizer kills that tmux server, checks that no other
socket appeared, and removes the directory.

The binary is `$TMUX_MCP_BIN` when set, else the one
`cargo build -p tmux-control-mcp --bin tmux-mcp` produces (built once per
test session; Cargo decides whether anything is stale).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import TmuxMcp

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def tmux_program() -> str:
    program = shutil.which("tmux")  # only located here; every run names a private socket
    if program is None:
        pytest.fail("tmux is not installed (scripts/setup installs it)")
    return program


@pytest.fixture(scope="session")
def tmux_mcp_bin() -> Path:
    """The `tmux-mcp` binary under test."""
    given = os.environ.get("TMUX_MCP_BIN")
    if given:
        path = Path(given)
        if not path.is_file():
            pytest.fail(f"TMUX_MCP_BIN={given} does not name a file")
        return path
    build = subprocess.run(
        [
            "cargo",
            "build",
            "-p",
            "tmux-control-mcp",
            "--bin",
            "tmux-mcp",
            "--message-format=json-render-diagnostics",
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
        check=False,
    )
    if build.returncode != 0:
        pytest.fail(f"cargo build -p tmux-control-mcp failed (exit {build.returncode})")
    for line in build.stdout.splitlines():
        try:
            message = json.loads(line)
        except json.JSONDecodeError:
            continue
        if (
            message.get("reason") == "compiler-artifact"
            and message.get("target", {}).get("name") == "tmux-mcp"
            and message.get("executable")
        ):
            return Path(message["executable"])
    pytest.fail("cargo build reported no tmux-mcp executable")


def _short_tmp() -> str:
    """A temporary directory base short enough for socket paths (108 bytes)."""
    base = tempfile.gettempdir()
    return base if len(base) <= 60 else "/tmp"


@pytest.fixture
def tmux_mcp(tmux_mcp_bin: Path, tmux_program: str) -> Iterator[TmuxMcp]:
    root = Path(tempfile.mkdtemp(prefix="tmux-mcp-py-", dir=_short_tmp()))
    server = TmuxMcp(bin=tmux_mcp_bin, tmux=tmux_program, root=root)
    try:
        yield server
    finally:
        server.kill_tmux()
        # Any socket tmux made for a name (`-L`) or for the default server
        # would be under TMUX_TMPDIR, that is, here.
        strays = sorted(str(p) for p in root.glob("tmux-*/*"))
        if server.log.exists():
            print(f"--- tmux-mcp stderr ---\n{server.log.read_text()}")
        shutil.rmtree(root, ignore_errors=True)
        assert not strays, f"a tmux socket other than the private one was created: {strays}"
