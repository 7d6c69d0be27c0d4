"""Installed like a Rust tool (issue 21, must-show 4): `cargo install --locked
--path tmux-mcp` puts a `tmux-mcp` that works into a bin directory, and both
crates package.

The install goes into a temporary root (never the user's `~/.cargo/bin`);
with `--path`, cargo builds in the workspace's own target directory, so a
release build made before is reused. The installed binary is then driven by
the MCP Python SDK on the fixture's private tmux server, and from the shell.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import anyio
import pytest
from support import TmuxMcp, connecting_call, text_of

pytestmark = pytest.mark.anyio

REPO = Path(__file__).resolve().parents[2]

#: A release build from nothing on a small machine (seconds).
BUILD_LIMIT = 1800


@pytest.fixture(scope="module")
def installed() -> Path:
    cargo = shutil.which("cargo")
    if cargo is None:
        pytest.fail("cargo is not on PATH")
    root = Path(tempfile.mkdtemp(prefix="tmux-mcp-install-"))
    try:
        done = subprocess.run(
            [cargo, "install", "--locked", "--path", "tmux-mcp", "--root", str(root)],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=BUILD_LIMIT,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-4000:]
        binary = root / "bin" / "tmux-mcp"
        assert binary.is_file() and os.access(binary, os.X_OK), sorted(root.rglob("*"))
        yield binary
    finally:
        shutil.rmtree(root, ignore_errors=True)


async def test_the_installed_binary_serves_mcp_and_calls_tools(tmux_mcp: TmuxMcp, installed: Path) -> None:
    version = subprocess.run([str(installed), "--version"], capture_output=True, text=True, check=True)
    assert version.stdout.startswith("tmux-mcp "), version.stdout
    tmux_mcp.bin = installed
    with anyio.fail_after(60):
        async with tmux_mcp.session() as (session, init):
            assert init.server_info.name == "tmux-mcp"
            made = await connecting_call(session.call_tool, "create_terminal", {"name": "installed"})
            assert not made.is_error, text_of(made)
            pane = made.structured_content["pane"]
            ran = await session.call_tool("run", {"target": pane, "command": "false | true"})
            assert ran.structured_content["pipestatus"] == [1, 0], text_of(ran)
    # The same binary from the shell, by its bare name on PATH.
    env = tmux_mcp.env({"PATH": f"{installed.parent}:{os.environ.get('PATH', '/usr/bin:/bin')}"})
    argv = ["tmux-mcp", *tmux_mcp.command("call", "run", "--target", pane, "--command", "echo installed")[1:]]
    done = subprocess.run(  # acts on tmux_mcp.socket, a private tmux socket (--socket-path in command)
        argv, capture_output=True, text=True, env=env, cwd=str(tmux_mcp.home), timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["output"] == "installed\n", done.stdout


def test_both_crates_package() -> None:
    done = subprocess.run(
        ["cargo", "package", "-p", "tmux-control", "-p", "tmux-control-mcp", "--no-verify", "--allow-dirty"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    assert "warning" not in done.stderr, done.stderr
    for crate in ("tmux-control", "tmux-control-mcp"):
        assert f"Packaging {crate} v" in done.stderr, done.stderr
