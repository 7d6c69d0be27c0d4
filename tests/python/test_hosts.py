"""Remote hosts (`--host NAME=SSH_TARGET`) through the built binary and the
MCP Python SDK: a tmux server on "another machine" reached over ssh.

The other machine is this one behind a private sshd on loopback, started the
way the library's ssh test (tests/tests/it/ssh_remote.rs) starts it: its own
host key and authorized_keys in a temporary directory, key-only login, an
ephemeral port, nothing global changed. Its sessions get `TMUX_TMPDIR` (so
the remote tmux socket lands in that directory), a private `HOME` and
`SHLVL=1` (bash reads no start-up file for the ssh command).

Readiness is an event: sshd (`-D -e`, LogLevel INFO) writes "Server
listening on" to its standard error once it accepts connections, and the
test reads up to that line.

Needs `sshd`, `ssh` and `ssh-keygen` (scripts/setup installs
openssh-server) and root (sshd's privilege separation); it fails, never
skips, when they are missing.
"""

from __future__ import annotations

import contextlib
import getpass
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import anyio
import mcp
import pytest
from support import TmuxMcp, connecting_call, text_of

pytestmark = pytest.mark.anyio

#: Upper bound for the whole conversation with the server.
LIMIT = 90

#: How long a call on a host whose sshd was killed may take to say so.
PROMPT_SECS = 10


@dataclass
class Sshd:
    """A private sshd on loopback, and how ssh reaches it."""

    proc: subprocess.Popen
    dir: Path
    port: int
    stderr: list[str]

    def target(self) -> str:
        """The SSH_TARGET of `--host box=...`: ssh options, then the
        destination. `-F /dev/null` keeps the user's ssh configuration out."""
        key = self.dir / "client_key"
        return (
            f"-F /dev/null -p {self.port} -i {key} -o IdentitiesOnly=yes -o IdentityAgent=none "
            "-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR "
            f"{getpass.getuser()}@127.0.0.1"
        )

    def remote_socket(self) -> Path:
        """The socket of tmux-mcp's tmux server on the "remote" side."""
        return self.dir / f"tmux-{os.getuid()}" / "tmux-mcp"

    def kill(self) -> None:
        """Kills sshd and every process under it (the per-connection sshd
        processes start sessions of their own, so a process group would
        miss them): the ssh connection drops at once."""
        for pid in [self.proc.pid, *descendants(self.proc.pid)]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self.proc.wait(timeout=10)


def descendants(root: int) -> list[int]:
    """Every process below `root`, read once from /proc."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # pid (comm) state ppid ...: comm may hold spaces, so split after ')'.
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def keygen(path: Path) -> None:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True)


@pytest.fixture
def sshd(tmux_program: str) -> Iterator[Sshd]:
    binary = next((p for p in ["/usr/sbin/sshd", "/usr/bin/sshd"] if Path(p).exists()), None)
    if binary is None or shutil.which("ssh") is None:
        pytest.fail("sshd or ssh is not installed (scripts/setup installs openssh-server)")
    root = Path(tempfile.mkdtemp(prefix="tmux-mcp-sshd-", dir="/tmp"))
    keygen(root / "host_key")
    keygen(root / "client_key")
    shutil.copy(root / "client_key.pub", root / "authorized_keys")
    (root / "home").mkdir()
    Path("/run/sshd").mkdir(parents=True, exist_ok=True)
    port = free_port()
    (root / "sshd_config").write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {root}/host_key\n"
        f"AuthorizedKeysFile {root}/authorized_keys\nPidFile {root}/sshd.pid\n"
        "StrictModes no\nUsePAM no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"
        "PermitRootLogin prohibit-password\nPubkeyAuthentication yes\nLogLevel INFO\n"
        f"SetEnv SHLVL=1 TMUX_TMPDIR={root} HOME={root}/home\n"
    )
    proc = subprocess.Popen(
        [binary, "-D", "-e", "-f", str(root / "sshd_config")],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: list[str] = []
    assert proc.stderr is not None
    # The event: sshd says it listens (or exits, ending its stderr).
    for line in proc.stderr:
        lines.append(line)
        if "Server listening on" in line:
            break
    else:
        proc.wait(timeout=10)
        pytest.fail(f"sshd did not start (exit {proc.returncode}): {''.join(lines)}")
    # Keep reading its log so that sshd never blocks on a full pipe.
    threading.Thread(target=lambda: lines.extend(proc.stderr), daemon=True).start()
    server = Sshd(proc=proc, dir=root, port=port, stderr=lines)
    try:
        yield server
    finally:
        server.kill()
        sock = server.remote_socket()
        subprocess.run([tmux_program, "-S", str(sock), "kill-server"], capture_output=True, timeout=10, check=False)
        print(f"--- sshd stderr ---\n{''.join(lines)}")
        shutil.rmtree(root, ignore_errors=True)


async def call(session: mcp.ClientSession, tool: str, **args) -> dict:
    result = await session.call_tool(tool, args)
    assert not result.is_error, text_of(result)
    return result.structured_content


def assert_host_unreachable(result, host: str) -> str:
    """The reply of a call on a lost host: an error a client can match
    (the kind in `_meta`, and in the text), naming the host."""
    text = text_of(result)
    assert result.is_error, text
    assert "host_unreachable" in text and f"host {host}" in text, text
    meta = (result.meta or {}).get("tmux-mcp/error")
    assert meta == {"kind": "host_unreachable", "host": host}, result.meta
    return text


async def test_run_and_wait_on_a_remote_host_then_lose_it(tmux_mcp: TmuxMcp, sshd: Sshd, tmux_program: str) -> None:
    args = ("--host", f"box={sshd.target()}", "--host-tmux", tmux_program)

    def doctor_host() -> dict:
        done = subprocess.run(
            [str(tmux_mcp.bin), "doctor", "--json", "--socket-path", str(tmux_mcp.socket), "--state-dir", str(tmux_mcp.state), *args],
            env=tmux_mcp.env(),
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        report = json.loads(done.stdout)
        return next(c for c in report["checks"] if c["name"] == "host")

    # The doctor reaches the host over ssh and asks its tmux for -V.
    check = doctor_host()
    assert (check["status"], check["host"]) == ("ok", "box"), check
    assert check["tmux_version"].startswith("tmux "), check
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session(*args) as (session, init):
            assert "Remote hosts, reached over ssh: box." in (init.instructions or ""), init.instructions
            tools = await session.list_tools()
            run_tool = next(t for t in tools.tools if t.name == "run")
            assert "host" in run_tool.input_schema["properties"], run_tool.input_schema
            assert "box" in run_tool.input_schema["properties"]["host"]["description"]

            # The tree names the host, before anything was made there.
            listed = await call(session, "list_terminals")
            assert listed["host"] == "local"
            [box] = listed["hosts"]
            assert (box["host"], box["reachable"], box["error"]) == ("box", True, None), box
            assert box["server"].startswith("host box: ssh"), box

            # A terminal on box: its shell runs on the far side of ssh.
            created = await connecting_call(
                session.call_tool, "create_terminal", {"name": "far", "host": "box"}
            )
            assert not created.is_error, text_of(created)
            made = created.structured_content
            pane = made["pane"]
            assert made["attach_command"].startswith("ssh -t "), made["attach_command"]
            assert made["host"] == "box", made
            assert "Use target=%s with host=box" % pane in text_of(created), text_of(created)
            # No shell integration there: run uses its wrapped form.
            assert made["shell_integration"] is None, made

            done = await call(session, "run", host="box", target=pane, command="echo hi")
            assert (done["status"], done["exit_status"], done["output"].strip()) == ("completed", 0, "hi"), done
            # It really ran behind the sshd: in the sessions' TMUX_TMPDIR.
            where = await call(session, "run", host="box", target=pane, command='echo "$TMUX_TMPDIR"')
            assert where["output"].strip() == str(sshd.dir), where

            sent = await call(session, "send_text", host="box", target=pane, text="echo ready-$((6*7))", enter=True)
            waited = await call(
                session, "wait_for_output", host="box", target=pane, pattern="ready-42", cursor=sent["cursor"],
                timeout_secs=20,
            )
            assert waited["status"] == "matched", waited

            # The host's tree lists the terminal; the local tree does not.
            on_box = await call(session, "list_terminals", host="box")
            assert on_box["host"] == "box" and on_box["hosts"] == []
            assert [s["name"] for s in on_box["sessions"]] == ["far"], on_box
            listed = await call(session, "list_terminals")
            assert [s["name"] for s in listed["hosts"][0]["sessions"]] == ["far"], listed
            assert "far" not in [s["name"] for s in listed["sessions"]], listed

            unknown = await session.call_tool("list_terminals", {"host": "nowhere"})
            assert unknown.is_error and "box" in text_of(unknown), text_of(unknown)

            # The machine goes away.
            sshd.kill()
            check = doctor_host()
            assert check["status"] == "fail" and "box" in check["message"], check
            started = time.monotonic()
            lost = await session.call_tool("run", {"host": "box", "target": pane, "command": "echo again"})
            text = assert_host_unreachable(lost, "box")
            assert time.monotonic() - started < PROMPT_SECS, text
            # Within the backoff, the answer comes at once, saying when the
            # next attempt is; ssh's own words are in it.
            started = time.monotonic()
            again = await session.call_tool("wait_for_output", {"host": "box", "target": pane, "pattern": "x"})
            text = assert_host_unreachable(again, "box")
            assert time.monotonic() - started < PROMPT_SECS, text
            assert re.search(r"tries again on the first call after [1-9][0-9]* s", text), text

            # Local terminals are not affected.
            local = await connecting_call(session.call_tool, "create_terminal", {"name": "near"})
            assert not local.is_error, text_of(local)
            here = await call(session, "run", target=local.structured_content["pane"], command="echo local")
            assert (here["exit_status"], here["output"].strip()) == (0, "local"), here
            listed = await call(session, "list_terminals")
            assert "near" in [s["name"] for s in listed["sessions"]], listed
            [box] = listed["hosts"]
            assert box["reachable"] is False and "host_unreachable" in box["error"], box
