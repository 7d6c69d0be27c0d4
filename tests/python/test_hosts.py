"""Remote hosts (`--host NAME=TARGET`) through the built binary and the
MCP Python SDK: a tmux server on "another machine" reached over ssh, an
`exec:` host whose command stands for tmux, and a `docker:` host reached
through a stand-in `docker` program.

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

The `exec:` and `docker:` tests need neither: the exec: host's command is
`sh -c 'exec tmux -N -S SOCKET "$@"' sh` against a private server the test
starts, and the docker host's `docker` is a script the test writes and puts
first on the server's PATH, which checks that it was called as
`docker exec -i CONTAINER …` and runs the rest here, with the "container's"
TMUX_TMPDIR and HOME in a private directory.
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
            assert "Remote hosts (over ssh, in containers or pods, or through a command): box." in (
                init.instructions or ""
            ), init.instructions
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
            # Shell integration there too: the hooks come through the remote
            # tmux server, not a local file.
            assert made["shell_integration"] == "bash", made

            done = await call(session, "run", host="box", target=pane, command="echo hi")
            assert (done["status"], done["exit_status"], done["output"].strip()) == ("completed", 0, "hi"), done
            assert done["mode"] == "integrated", done
            done = await call(session, "run", host="box", target=pane, command="false | true")
            assert (done["exit_status"], done["pipestatus"]) == (0, [1, 0]), done
            # An interrupt ends the run with 130 and frees the pane.
            started = await call(
                session, "run", host="box", target=pane, command="sleep 30; echo after", timeout_secs=1
            )
            assert started["status"] == "running", started
            await call(session, "send_keys", host="box", target=pane, keys=["C-c"])
            ended = await call(session, "run", host="box", run_id=started["run_id"], timeout_secs=10)
            assert (ended["status"], ended["exit_status"]) == ("completed", 130), ended
            assert "after" not in ended["output"], ended
            done = await call(session, "run", host="box", target=pane, command="echo free")
            assert (done["exit_status"], done["output"]) == (0, "free\n"), done
            # No file was left behind on the remote machine: the start-up
            # file's temporary copy removed itself.
            done = await call(session, "run", host="box", target=pane, command='echo "${TMUX_CONTROL_RC:-none}"')
            assert done["output"] == "none\n", done
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


def doctor_hosts(tmux_mcp: TmuxMcp, *args: str, env: dict[str, str] | None = None) -> dict[str, dict]:
    """The doctor's `host` checks, by host name."""
    done = subprocess.run(
        [str(tmux_mcp.bin), "doctor", "--json", "--socket-path", str(tmux_mcp.socket), "--state-dir", str(tmux_mcp.state), *args],
        env=tmux_mcp.env(env),
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    report = json.loads(done.stdout)
    return {c["host"]: c for c in report["checks"] if c["name"] == "host"}


def private_tmux(tmux_mcp: TmuxMcp, sock: Path, session: str) -> None:
    """Starts a tmux server of the test's own on `sock` (no configuration
    file; its shells get the private HOME of `tmux_mcp.env()`)."""
    subprocess.run(
        [tmux_mcp.tmux, "-S", str(sock), "-f", "/dev/null", "new-session", "-d", "-s", session],
        env=tmux_mcp.env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=10,
        check=True,
    )


def tmux_sessions(tmux_mcp: TmuxMcp, sock: Path) -> list[str]:
    done = subprocess.run(
        [tmux_mcp.tmux, "-S", str(sock), "list-sessions", "-F", "#{session_name}"],
        env=tmux_mcp.env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=10,
        check=False,
    )
    return done.stdout.split()


def kill_tmux(tmux_mcp: TmuxMcp, sock: Path) -> None:
    subprocess.run(
        [tmux_mcp.tmux, "-S", str(sock), "kill-server"],
        env=tmux_mcp.env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=10,
        check=False,
    )


async def test_an_exec_host_runs_its_command_as_tmux_then_loses_the_server(tmux_mcp: TmuxMcp) -> None:
    # The "other side": a private tmux server the test starts (and removes).
    # `-N`: the command attaches to that server and never starts one.
    far = Path(tempfile.mkdtemp(prefix="tmux-mcp-exec-", dir="/tmp"))
    sock, other = far / "sock", far / "other"
    command = f"""sh -c 'exec {tmux_mcp.tmux} -N -S {sock} "$@"' sh"""
    # The first idea, a command that runs its own control client
    # (`tmux -C attach`), ignores the arguments tmux-mcp appends: refused.
    raw = f"sh -c 'exec {tmux_mcp.tmux} -S {other} -C attach'"
    args = ("--host", f"vm=exec:{command}", "--host", f"raw=exec:{raw}")
    try:
        private_tmux(tmux_mcp, sock, "pre")
        private_tmux(tmux_mcp, other, "mine")

        # The doctor says what would run, without running it.
        checks = doctor_hosts(tmux_mcp, *args)
        vm = checks["vm"]
        assert (vm["status"], vm["kind"], vm["target"]) == ("ok", "exec", command), vm
        assert f"-S {sock}" in vm["message"] and "-L tmux-mcp -u -C new-session -A -s tmux-mcp-control" in vm["message"], vm

        with anyio.fail_after(LIMIT):
            async with tmux_mcp.session(*args) as (session, _):
                listed = await call(session, "list_terminals")
                hosts = {h["host"]: h for h in listed["hosts"]}
                assert hosts["vm"]["reachable"] is True and hosts["vm"]["error"] is None, hosts
                assert hosts["vm"]["server"] == f"host vm: {command} -L tmux-mcp", hosts
                bad = hosts["raw"]
                assert bad["reachable"] is False, bad
                assert "host_unreachable" in bad["error"] and "host raw" in bad["error"], bad
                assert 'attached its tmux client to session "mine"' in bad["error"], bad
                assert "hand its arguments on" in bad["error"], bad

                created = await connecting_call(session.call_tool, "create_terminal", {"name": "far", "host": "vm"})
                assert not created.is_error, text_of(created)
                made = created.structured_content
                pane = made["pane"]
                assert made["host"] == "vm", made
                assert made["attach_command"] == f"{command} -L tmux-mcp attach -t far", made
                # The terminal is on the test's server.
                assert sorted(tmux_sessions(tmux_mcp, sock)) == ["far", "pre", "tmux-mcp-control"]

                done = await call(session, "run", host="vm", target=pane, command="echo hi-$((6*7)); (exit 3)")
                assert (done["status"], done["exit_status"], done["output"].strip()) == ("completed", 3, "hi-42"), done
                done = await call(session, "run", host="vm", target=pane, command="echo ok")
                assert (done["exit_status"], done["output"].strip()) == (0, "ok"), done

                # The server goes away; `-N` does not start another.
                kill_tmux(tmux_mcp, sock)
                started = time.monotonic()
                lost = await session.call_tool("run", {"host": "vm", "target": pane, "command": "echo again"})
                text = assert_host_unreachable(lost, "vm")
                assert time.monotonic() - started < PROMPT_SECS, text
                assert "through its exec: command" in text, text
                # Within the backoff the answer comes at once, quoting tmux.
                again = await session.call_tool("list_terminals", {"host": "vm"})
                text = assert_host_unreachable(again, "vm")
                assert f"no server running on {sock}" in text, text
                assert re.search(r"tries again on the first call after [1-9][0-9]* s", text), text
                assert "hand its arguments on" in text and "BatchMode" not in text, text
    finally:
        kill_tmux(tmux_mcp, sock)
        kill_tmux(tmux_mcp, other)
        shutil.rmtree(far, ignore_errors=True)


#: The stand-in `docker`: `docker exec -i box CMD…` runs CMD here, in the
#: "container" box (its TMUX_TMPDIR and HOME in the test's directory); any
#: other container does not exist, as docker says it.
STAND_IN_DOCKER = """#!/bin/sh
printf '%s\\n' "$*" >> '{calls}'
if [ "$1" != exec ] || [ "$2" != -i ]; then
    echo "stand-in docker: called as: docker $*" >&2
    exit 2
fi
if [ "$3" != box ]; then
    echo "Error: No such container: $3" >&2
    exit 1
fi
shift 3
export TMUX_TMPDIR='{container}' HOME='{container}/home'
exec "$@"
"""


async def test_a_docker_host_runs_tmux_in_the_container(tmux_mcp: TmuxMcp) -> None:
    container = Path(tempfile.mkdtemp(prefix="tmux-mcp-box-", dir="/tmp"))
    (container / "home").mkdir()
    bin_dir, calls = container / "bin", container / "calls"
    bin_dir.mkdir()
    docker = bin_dir / "docker"
    docker.write_text(STAND_IN_DOCKER.format(calls=calls, container=container))
    docker.chmod(0o755)
    env = {"PATH": f"{bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}"}
    args = ("--host", "box=docker:box", "--host", "gone=docker:nope", "--host-tmux", tmux_mcp.tmux)
    sock = container / f"tmux-{os.getuid()}" / "tmux-mcp"
    try:
        # The doctor runs `docker exec -i box tmux -V`, and quotes docker.
        checks = doctor_hosts(tmux_mcp, *args, env=env)
        box, gone = checks["box"], checks["gone"]
        assert (box["status"], box["kind"], box["target"]) == ("ok", "docker", "box"), box
        assert box["tmux_version"].startswith("tmux "), box
        assert gone["status"] == "fail" and "Error: No such container: nope" in gone["message"], gone
        assert "docker ps" in gone["hint"], gone

        with anyio.fail_after(LIMIT):
            async with tmux_mcp.session(*args, env=env) as (session, _):
                listed = await call(session, "list_terminals")
                hosts = {h["host"]: h for h in listed["hosts"]}
                assert hosts["box"]["reachable"] is True, hosts
                assert hosts["box"]["server"] == f"host box: docker exec -i box {tmux_mcp.tmux} -L tmux-mcp", hosts
                assert hosts["gone"]["reachable"] is False, hosts

                created = await connecting_call(session.call_tool, "create_terminal", {"name": "inside", "host": "box"})
                assert not created.is_error, text_of(created)
                made = created.structured_content
                pane = made["pane"]
                assert made["attach_command"] == f"docker exec -it box {tmux_mcp.tmux} -L tmux-mcp attach -t inside", made
                done = await call(session, "run", host="box", target=pane, command="echo in-$((6*7))")
                assert (done["status"], done["exit_status"], done["output"].strip()) == ("completed", 0, "in-42"), done
                # It ran "in the container": on its TMUX_TMPDIR.
                where = await call(session, "run", host="box", target=pane, command='echo "$TMUX_TMPDIR"; (exit 5)')
                assert (where["exit_status"], where["output"].strip()) == (5, str(container)), where
                assert sorted(tmux_sessions(tmux_mcp, sock)) == ["inside", "tmux-mcp-control"]

                # A container that does not exist: docker's own words, and
                # the check for a container, not ssh's.
                missing = await session.call_tool("create_terminal", {"name": "x", "host": "gone"})
                text = assert_host_unreachable(missing, "gone")
                assert "cannot be reached through docker exec" in text, text
                assert "docker said: Error: No such container: nope (exit status 1)" in text, text
                assert "docker ps" in text and "BatchMode" not in text, text

                # Every call was `docker exec -i CONTAINER …`.
                lines = calls.read_text().splitlines()
                assert lines and all(re.match(r"exec -i (box|nope) ", line) for line in lines), lines
                assert any(line.startswith(f"exec -i box {tmux_mcp.tmux} -L tmux-mcp -u -C ") for line in lines), lines
    finally:
        kill_tmux(tmux_mcp, sock)
        shutil.rmtree(container, ignore_errors=True)
