"""`tmux-mcp web-key add/list/revoke` (issue 20, access): the named keys of
the web view, run as the built binary on the fixture's private state
directory. A key is printed once, on standard output; the state
directory's `web-keys` file (mode 0600) keeps only its SHA-256 digest."""

from __future__ import annotations

import hashlib
import json
import re
import stat
import subprocess
from pathlib import Path

from support import TmuxMcp

#: Upper bound for one command (seconds).
LIMIT = 30


def web_key(tm: TmuxMcp, *args: str) -> subprocess.CompletedProcess[str]:
    """`tmux-mcp --state-dir STATE web-key ARGS…` (no tmux is started)."""
    return subprocess.run(
        tm.command("web-key", *args),
        capture_output=True,
        text=True,
        env=tm.env(),
        cwd=str(tm.home),
        timeout=LIMIT,
        check=False,
    )


def added_key(done: subprocess.CompletedProcess[str]) -> str:
    """The key `web-key add` printed (on its `key:` line), checked against
    its link line and its notice that it is shown once."""
    assert done.returncode == 0, done.stderr
    found = re.search(r"^key:\s+([0-9a-f]{64})$", done.stdout, re.MULTILINE)
    assert found, done.stdout
    key = found.group(1)
    assert f"/ui/#key={key}" in done.stdout, done.stdout
    assert "only this once" in done.stdout, done.stdout
    assert key not in done.stderr
    return key


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_web_keys_are_added_listed_and_revoked_and_only_their_digests_are_stored(tmux_mcp: TmuxMcp) -> None:
    keys_file = tmux_mcp.state / "web-keys"
    assert not tmux_mcp.state.exists()

    empty = web_key(tmux_mcp, "list", "--json")
    assert empty.returncode == 0, empty.stderr
    assert json.loads(empty.stdout) == []
    assert not tmux_mcp.state.exists(), "listing made nothing"

    alice = added_key(web_key(tmux_mcp, "add", "alice"))
    bob = added_key(web_key(tmux_mcp, "add", "bob.2", "--scope", "input"))
    assert alice != bob
    assert mode(tmux_mcp.state) == 0o700
    assert mode(keys_file) == 0o600 and stat.S_ISREG(keys_file.lstat().st_mode)

    # The file holds each key's digest, never the key.
    text = keys_file.read_text()
    assert alice not in text and bob not in text, text
    lines = [json.loads(line) for line in text.splitlines()]
    assert [(e["name"], e["scope"]) for e in lines] == [("alice", "view"), ("bob.2", "input")]
    assert lines[0]["sha256"] == hashlib.sha256(alice.encode()).hexdigest()
    assert lines[1]["sha256"] == hashlib.sha256(bob.encode()).hexdigest()
    assert set(lines[0]) == {"name", "scope", "sha256", "created"}

    listed = web_key(tmux_mcp, "list", "--json")
    assert listed.returncode == 0, listed.stderr
    keys = json.loads(listed.stdout)
    assert [(k["name"], k["scope"]) for k in keys] == [("alice", "view"), ("bob.2", "input")]
    assert all(set(k) == {"name", "scope", "created"} for k in keys), keys
    assert alice not in listed.stdout and lines[0]["sha256"] not in listed.stdout

    table = web_key(tmux_mcp, "list")
    assert table.returncode == 0, table.stderr
    rows = [row.split() for row in table.stdout.splitlines()]
    assert rows[0] == ["NAME", "SCOPE", "CREATED"], table.stdout
    assert [row[:2] for row in rows[1:]] == [["alice", "view"], ["bob.2", "input"]], table.stdout

    # A name is there once; `link` is the server's; a bad name is usage.
    again = web_key(tmux_mcp, "add", "alice")
    assert again.returncode == 1 and "already exists" in again.stderr, again
    assert again.stdout == ""
    for bad in ["link", "two words", "x" * 65, ""]:
        refused = web_key(tmux_mcp, "add", bad)
        assert refused.returncode == 2 and refused.stdout == "", (bad, refused)
    assert web_key(tmux_mcp, "add", "carol", "--scope", "admin").returncode == 2

    revoked = web_key(tmux_mcp, "revoke", "alice")
    assert revoked.returncode == 0, revoked.stderr
    gone = web_key(tmux_mcp, "revoke", "alice")
    assert gone.returncode == 1 and "no web key named" in gone.stderr, gone
    assert [k["name"] for k in json.loads(web_key(tmux_mcp, "list", "--json").stdout)] == ["bob.2"]
    assert mode(keys_file) == 0o600
    assert bob not in keys_file.read_text()

    # A file others may read or write is refused, and left as it is.
    keys_file.chmod(0o644)
    for args in (["list"], ["add", "dave"], ["revoke", "bob.2"]):
        refused = web_key(tmux_mcp, *args)
        assert refused.returncode == 1, (args, refused)
        assert "mode 0644" in refused.stderr and "chmod 600" in refused.stderr, refused.stderr
    assert mode(keys_file) == 0o644
    keys_file.chmod(0o600)
    assert web_key(tmux_mcp, "list").returncode == 0

    # A symbolic link in its place is refused too.
    real = tmux_mcp.state / "elsewhere"
    keys_file.rename(real)
    keys_file.symlink_to(real)
    linked = web_key(tmux_mcp, "list")
    assert linked.returncode == 1 and "symbolic link" in linked.stderr, linked
