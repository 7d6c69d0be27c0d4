#!/usr/bin/env python3
"""What an agent sees: MCP servers for tmux timed through a real MCP client.

Drives every contestant over stdio with the MCP Python SDK (`mcp`, the
client the project's Python tests use), all of them open at once in one
process, and interleaves them round by round (the order rotates every
round), so that the load of a shared machine falls on all of them alike.

Contestants:

* ``tmux-mcp`` (this project) at the binary given by ``--ours``;
* optionally a second ``tmux-mcp`` binary (``--baseline``), for example a
  build of an older commit, to compare a change;
* optionally ``libtmux-mcp`` (PyPI) started by the command given with
  ``--libtmux-mcp`` (installed in a separate virtual environment by
  ``scripts/bench-mcp``).

Measurements, per contestant (docs/benchmarks.md, "MCP through a real
client", says what each one is for each server):

1. ``ping``: the MCP ``ping`` request, the client's request floor;
2. ``run``: ``echo hi`` run in a shell pane to completion with its exit
   status, checked (status 0, output ``hi``), in the pane the server
   created itself;
   ``run premade``: the same in a pane made beforehand with plain tmux
   (``tmux new-session`` running bash without start-up files), as a pane a
   person or another program opened is (tmux-mcp types its wrapped form
   there);
3. ``capture``: the visible screen of a 200x50 pane that is full of text;
4. ``wait``: wait-for-output lateness. The command
   ``sleep D; printf 'WAKE<i>_%s\\n' "$EPOCHREALTIME"`` is typed into the
   pane, then the wait for ``WAKE<i>_<digits>`` is called at once. bash
   expands ``$EPOCHREALTIME`` (the wall clock, in microseconds) as the
   builtin ``printf`` writes the line, so the number in the matched text is
   the moment the bytes were written; lateness is the wall-clock moment the
   client had the reply minus that number. Both clocks are
   ``CLOCK_REALTIME`` on this machine. A sample is only valid when the
   server reports it waited at least 100 ms (so the wait was armed before
   the output); any other fails the run.

Isolation: every contestant gets a tmux server of its own, started by this
script on a socket path inside a fresh private directory (``tmux -S``, with
``-f`` naming a configuration this script writes), an empty ``HOME``, bash
without start-up files (``bash --norc --noprofile`` as tmux's
``default-command``), and ``TMUX_TMPDIR`` pointing into that directory, so
even a program that reached for a named or the default socket would land
there. At the end each of those tmux servers is killed through its own
socket, the run fails if any other socket appeared in a private directory or
if a ``default`` socket appeared in the user's tmux directory, and the
directories are removed. Only processes this script started are stopped.

Exit status: 0 with the table on standard output; 1 with a message on
standard error when a server cannot start, a reply is wrong, or the
isolation check fails.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import re
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.types import CallToolResult

#: The measurements, in the order of the table.
METRICS = ("ping", "run", "run_premade", "capture", "wait")

#: Also recorded: for each run, how long the server says the command took
#: (see `run_command`), to tell the command's own time from the rest.
SERIES = (*METRICS, "run_server")

#: Headings for the table.
HEADINGS = {
    "ping": "ping",
    "run": 'run("echo hi") with status',
    "run_premade": "the same, pane made with plain tmux",
    "capture": "capture screen",
    "wait": "wait for output: late by",
}

#: Longest any one request may take before the run fails (a deadline, not a
#: pause).
CALL_TIMEOUT_S = 30.0

#: Longest a server may take to answer `initialize` (a deadline).
START_TIMEOUT_S = 30.0

#: The shell every pane runs: bash without any start-up file.
SHELL_COMMAND = "bash --norc --noprofile"


class BenchError(Exception):
    """A failure the run reports and stops on."""


@dataclass
class Samples:
    """Milliseconds per metric, and per round (for paired ratios)."""

    by_metric: dict[str, list[float]] = field(default_factory=lambda: {m: [] for m in SERIES})
    by_round: dict[str, list[list[float]]] = field(default_factory=lambda: {m: [] for m in SERIES})

    def start_round(self) -> None:
        for m in SERIES:
            self.by_round[m].append([])

    def add(self, metric: str, ms: float) -> None:
        self.by_metric[metric].append(ms)
        self.by_round[metric][-1].append(ms)


def structured(result: CallToolResult, tool: str, label: str) -> dict[str, Any]:
    """The structured content of a successful tool call, or a BenchError."""
    if result.is_error:
        text = " ".join(getattr(c, "text", "") for c in result.content)
        raise BenchError(f"{label}: {tool} failed: {text}")
    content = result.structured_content
    if not isinstance(content, dict):
        raise BenchError(f"{label}: {tool} returned no structured content: {result!r}")
    return content


class Contestant:
    """One MCP server, on a private tmux server of its own."""

    kind: str = ""

    #: Whether the pane's shell comes from tmux's default-command (bash
    #: without start-up files). tmux-mcp starts its own shells instead: with
    #: no default-command it runs the default shell, bash, with its shell
    #: integration (reading only the system's /etc/bash.bashrc, as the
    #: empty HOME has no ~/.bashrc).
    plain_shell: bool = True

    def __init__(self, label: str, tmux: str) -> None:
        self.label = label
        self.tmux = tmux
        self.root = Path(tempfile.mkdtemp(prefix="mcp-bench-", dir="/tmp"))
        self.socket = self.root / "tmux.sock"
        self.home = self.root / "home"
        self.home.mkdir()
        self.log = self.root / "server-stderr.log"
        self.conf = self.root / "tmux.conf"
        self.session: ClientSession | None = None
        self.pane = ""
        self.premade = ""
        self.tmux_pid: int | None = None
        self.samples = Samples()
        self.info: dict[str, Any] = {}

    # -- set-up ---------------------------------------------------------

    def env(self) -> dict[str, str]:
        """A small, fixed environment: an empty home, bash, no TMUX, and
        TMUX_TMPDIR inside the private directory."""
        return {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.home),
            "SHELL": "/bin/bash",
            "LANG": "C.UTF-8",
            "TERM": "xterm-256color",
            "TMUX_TMPDIR": str(self.root),
        }

    def start_tmux(self) -> None:
        """Starts this contestant's tmux server on its private socket."""
        # The options tmux-mcp writes for a server it starts itself, plus the
        # shell without start-up files; the same for every contestant.
        self.conf.write_text(
            "set -g history-limit 50000\n"
            "set -g remain-on-exit on\n"
            "set -g exit-empty off\n"
            "set -g exit-unattached off\n"
            "set -g destroy-unattached off\n"
            "set -g default-size 200x50\n"
            "set -g default-shell /bin/bash\n"
            + (f'set -g default-command "{SHELL_COMMAND}"\n' if self.plain_shell else "")
        )
        self.tmux_cmd("-f", str(self.conf), "start-server")
        # The pane made beforehand, with plain tmux, before any MCP server
        # runs: bash without start-up files, whatever the server's defaults.
        self.premade = self.tmux_cmd(
            "new-session", "-d", "-s", "premade", "-x", "200", "-y", "50", "-P", "-F", "#{pane_id}", SHELL_COMMAND
        ).strip()
        pid = self.tmux_cmd("display-message", "-p", "#{pid}").strip()
        if not pid.isdigit():
            raise BenchError(f"{self.label}: the private tmux server gave no pid ({pid!r})")
        self.tmux_pid = int(pid)

    def tmux_cmd(self, *args: str) -> str:
        """Runs `tmux -S <private socket> ARGS` (never any other server)."""
        done = subprocess.run(
            [self.tmux, "-S", str(self.socket), *args],
            env=self.env(),
            cwd=self.home,
            capture_output=True,
            text=True,
            timeout=CALL_TIMEOUT_S,
            check=False,
        )
        if done.returncode != 0:
            raise BenchError(
                f"{self.label}: tmux -S {self.socket} {' '.join(args)} failed "
                f"(exit {done.returncode}): {done.stderr.strip()}"
            )
        return done.stdout

    def params(self) -> StdioServerParameters:
        raise NotImplementedError

    async def open(self, stack: contextlib.AsyncExitStack) -> None:
        """Starts the MCP server and its pane; fails loudly when it cannot."""
        self.start_tmux()
        errlog = stack.enter_context(self.log.open("w"))
        try:
            read, write = await stack.enter_async_context(stdio_client(self.params(), errlog=errlog))
            session = await stack.enter_async_context(ClientSession(read, write))
            init = await asyncio.wait_for(session.initialize(), START_TIMEOUT_S)
        except BenchError:
            raise
        except Exception as e:  # noqa: BLE001 - reported with the server's stderr
            errlog.flush()
            raise BenchError(
                f"{self.label} did not start ({type(e).__name__}: {e}).\n"
                f"command: {self.params().command} {' '.join(self.params().args)}\n"
                f"its standard error:\n{self.log.read_text()[-4000:]}"
            ) from e
        self.session = session
        self.info["server"] = f"{init.server_info.name} {init.server_info.version}"
        self.info["protocol"] = init.protocol_version
        tools = {t.name for t in (await session.list_tools()).tools}
        missing = sorted(self.needed_tools() - tools)
        if missing:
            raise BenchError(f"{self.label} does not serve the tools {missing} (it serves {sorted(tools)})")
        await self.create_pane()
        self.check_shell()
        await self.warm_up()

    def check_shell(self) -> None:
        """Fails unless the pane's shell is bash without start-up files: the
        pane's process itself, or its child (tmux-mcp starts the command
        under `bash -c "trap 'sleep 0.25' EXIT; COMMAND"`, so that output
        written just before an exit is not lost)."""
        pid = self.tmux_cmd("display-message", "-p", "-t", self.pane, "#{pane_pid}").strip()
        seen: list[list[str]] = []
        try:
            children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
            for p in [pid, *children]:
                raw = Path(f"/proc/{p}/cmdline").read_bytes().rstrip(b"\0").split(b"\0")
                seen.append([a.decode() for a in raw])
        except OSError as e:
            raise BenchError(f"{self.label}: cannot read the pane's process {pid}: {e}") from e
        integrated = any(a[:2] == ["/bin/bash", "--rcfile"] for a in seen)
        login = any(a[:1] == ["-bash"] or a[:2] == ["/bin/bash", "-l"] for a in seen)
        if self.plain_shell and SHELL_COMMAND.split() not in seen:
            raise BenchError(f"{self.label}: pane {self.pane} runs {seen}, not {SHELL_COMMAND}")
        if not self.plain_shell and not (integrated or login):
            raise BenchError(f"{self.label}: pane {self.pane} runs {seen}, not bash")
        self.info["pane_processes"] = [" ".join(a) for a in seen]

    def needed_tools(self) -> set[str]:
        raise NotImplementedError

    async def call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        if self.session is None:
            raise BenchError(f"{self.label}: not started")
        result = await self.session.call_tool(tool, args, read_timeout_seconds=CALL_TIMEOUT_S)
        return structured(result, tool, self.label)

    async def create_pane(self) -> None:
        raise NotImplementedError

    async def warm_up(self) -> None:
        """Fills the screen (so every capture has 50 full lines), then runs
        every measurement a few times without recording it."""
        await self.run_command("seq 1 60", expect_output="60")
        for _ in range(20):
            await self.ping()
        for _ in range(3):
            await self.capture()
            await self.run_command("echo hi", expect_output="hi")
            await self.run_command("echo hi", expect_output="hi", pane=self.premade)
        await self.wait_lateness(0, delay=0.3)

    # -- the measurements -----------------------------------------------

    async def ping(self) -> None:
        if self.session is None:
            raise BenchError(f"{self.label}: not started")
        await self.session.send_ping()

    async def run_command(self, command: str, expect_output: str, pane: str | None = None) -> float:
        """Runs `command` to completion in `pane` (default: the server's own
        pane), checks status 0 and the output; returns the duration the
        server reports, in milliseconds."""
        raise NotImplementedError

    async def capture(self) -> None:
        raise NotImplementedError

    async def type_line(self, line: str) -> None:
        raise NotImplementedError

    async def wait_for(self, pattern: str) -> tuple[str, float]:
        """Waits for `pattern` (a regex); returns the matched text and the
        time the server says it waited, in seconds."""
        raise NotImplementedError

    async def wait_lateness(self, i: int, delay: float) -> float:
        """Milliseconds from the write of a marker line to the reply."""
        tag = f"WAKE{i}_"
        # `sleep` is the true timer that separates the start of the wait
        # from the output; $EPOCHREALTIME is read as printf writes.
        await self.type_line(f"sleep {delay}; printf '{tag}%s\\n' \"$EPOCHREALTIME\"")
        text, waited = await self.wait_for(tag + r"[0-9]+\.[0-9]+")
        arrived = time.time()
        found = re.search(re.escape(tag) + r"([0-9]+\.[0-9]+)", text)
        if found is None:
            raise BenchError(f"{self.label}: the wait's reply has no timestamp: {text!r}")
        if waited < 0.1:
            raise BenchError(
                f"{self.label}: the wait lasted only {waited * 1000:.0f} ms, so it may have "
                f"started after the output; use a longer --emit-delay than {delay}"
            )
        return (arrived - float(found.group(1))) * 1000.0


class TmuxMcp(Contestant):
    kind = "tmux-mcp"
    plain_shell = False

    def __init__(self, label: str, tmux: str, binary: Path) -> None:
        if not binary.is_file() or not os.access(binary, os.X_OK):
            raise BenchError(f"{label}: {binary} is not an executable file")
        super().__init__(label, tmux)
        self.binary = binary

    def params(self) -> StdioServerParameters:
        return StdioServerParameters(
            command=str(self.binary),
            args=[
                "--socket-path",
                str(self.socket),
                "--tmux",
                self.tmux,
                "--state-dir",
                str(self.root / "state"),
                "--log-level",
                "warn",
            ],
            env=self.env(),
            cwd=str(self.home),
        )

    def needed_tools(self) -> set[str]:
        return {"create_terminal", "run", "capture_screen", "send_text", "wait_for_output"}

    async def create_pane(self) -> None:
        made = await self.call("create_terminal", {"name": "bench", "width": 200, "height": 50})
        self.pane = str(made["pane"])

    async def run_command(self, command: str, expect_output: str, pane: str | None = None) -> float:
        r = await self.call("run", {"target": pane or self.pane, "command": command})
        if r.get("status") != "completed" or r.get("exit_status") != 0:
            raise BenchError(f"{self.label}: run {command!r} did not complete with status 0: {r}")
        if not str(r.get("output", "")).rstrip("\n").endswith(expect_output):
            raise BenchError(f"{self.label}: run {command!r} gave output {r.get('output')!r}")
        # From the call to the end mark (whole milliseconds).
        return float(r.get("elapsed_ms", 0))

    async def capture(self) -> None:
        r = await self.call("capture_screen", {"target": self.pane})
        if not str(r.get("text", "")).strip():
            raise BenchError(f"{self.label}: capture_screen returned an empty screen: {r}")

    async def type_line(self, line: str) -> None:
        await self.call("send_text", {"target": self.pane, "text": line, "enter": True})

    async def wait_for(self, pattern: str) -> tuple[str, float]:
        r = await self.call(
            "wait_for_output", {"target": self.pane, "pattern": pattern, "timeout_secs": 10}
        )
        if r.get("status") != "matched":
            raise BenchError(f"{self.label}: wait_for_output did not match: {r}")
        return str(r.get("text", "")), float(r.get("waited_ms", 0)) / 1000.0


class LibtmuxMcp(Contestant):
    kind = "libtmux-mcp"

    def __init__(self, label: str, tmux: str, command: list[str]) -> None:
        program = shutil.which(command[0]) if command else None
        if program is None:
            raise BenchError(f"{label}: cannot find the program {command[:1]}")
        super().__init__(label, tmux)
        # Absolute: the server starts in the private home directory.
        self.command = [str(Path(program).resolve()), *command[1:]]

    def env(self) -> dict[str, str]:
        env = super().env()
        # libtmux-mcp's own way to name the server (`tmux -S`) and the tmux
        # program (libtmux_mcp/_utils.py, _get_server).
        env["LIBTMUX_SOCKET_PATH"] = str(self.socket)
        env["LIBTMUX_TMUX_BIN"] = self.tmux
        return env

    def params(self) -> StdioServerParameters:
        return StdioServerParameters(
            command=self.command[0], args=self.command[1:], env=self.env(), cwd=str(self.home)
        )

    def needed_tools(self) -> set[str]:
        return {"create_session", "run_command", "capture_pane", "send_keys", "wait_for_text"}

    async def create_pane(self) -> None:
        made = await self.call("create_session", {"session_name": "bench", "x": 200, "y": 50})
        pane = made.get("active_pane_id")
        if not pane:
            raise BenchError(f"{self.label}: create_session named no pane: {made}")
        self.pane = str(pane)

    async def run_command(self, command: str, expect_output: str, pane: str | None = None) -> float:
        r = await self.call("run_command", {"command": command, "pane_id": pane or self.pane})
        if r.get("timed_out") or r.get("exit_status") != 0:
            raise BenchError(f"{self.label}: run_command {command!r} did not end with status 0: {r}")
        lines = [str(x) for x in r.get("output", [])]
        if expect_output not in lines:
            raise BenchError(f"{self.label}: run_command {command!r} output has no line {expect_output!r}: {lines[-5:]}")
        # From before send-keys to the end of `tmux wait-for` (the signal
        # the command line sends after the command).
        return float(r.get("elapsed_seconds", 0)) * 1000.0

    async def capture(self) -> None:
        r = await self.call("capture_pane", {"pane_id": self.pane})
        text = r.get("result", "")
        if not str(text).strip():
            raise BenchError(f"{self.label}: capture_pane returned an empty screen: {r}")

    async def type_line(self, line: str) -> None:
        await self.call("send_keys", {"keys": line, "pane_id": self.pane, "enter": True, "literal": True})

    async def wait_for(self, pattern: str) -> tuple[str, float]:
        r = await self.call(
            "wait_for_text",
            {"patterns": [pattern], "regex": True, "pane_id": self.pane, "timeout": 10},
        )
        if not r.get("found") or r.get("outcome") != "matched":
            raise BenchError(f"{self.label}: wait_for_text did not match: {r}")
        return "\n".join(str(x) for x in r.get("matched_lines", [])), float(r.get("elapsed_seconds", 0))


# -- isolation checks and clean-up --------------------------------------


def default_socket() -> Path:
    """Where the user's default tmux server has its socket."""
    base = os.environ.get("TMUX_TMPDIR") or "/tmp"
    return Path(base) / f"tmux-{os.getuid()}" / "default"


def socket_state(path: Path) -> tuple[int, int] | None:
    try:
        st = path.lstat()
    except FileNotFoundError:
        return None
    return (st.st_ino, st.st_dev)


def wait_process_exit(pid: int, timeout: float) -> bool:
    """True once `pid` has exited (waits on a pidfd, a real event), False
    when it is still running after `timeout` seconds."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        readable, _, _ = select.select([fd], [], [], timeout)
        return bool(readable)
    finally:
        os.close(fd)


def clean_up(c: Contestant) -> list[str]:
    """Kills the contestant's private tmux server through its own socket,
    checks that no other socket appeared in its directory, removes the
    directory. Returns the problems found."""
    problems: list[str] = []
    if c.socket.exists():
        with contextlib.suppress(BenchError, subprocess.TimeoutExpired):
            c.tmux_cmd("kill-server")
    if c.tmux_pid is not None and not wait_process_exit(c.tmux_pid, 10.0):
        problems.append(f"{c.label}: the private tmux server {c.tmux_pid} did not exit after kill-server")
    strays = sorted(str(p) for p in c.root.glob("tmux-*/*"))
    if strays:
        problems.append(f"{c.label}: a tmux socket other than the private one was created: {strays}")
    if not problems:
        shutil.rmtree(c.root, ignore_errors=True)
    else:
        problems.append(f"{c.label}: left {c.root} in place for inspection")
    return problems


# -- statistics and report ------------------------------------------------


def p50(xs: list[float]) -> float:
    return statistics.median(xs)


def p90(xs: list[float]) -> float:
    if len(xs) < 2:
        return xs[0]
    return statistics.quantiles(xs, n=10, method="inclusive")[8]


def paired_ratio(other: Contestant, ours: Contestant, metric: str) -> float | None:
    """The median over rounds of (other's median in the round / ours)."""
    ratios = [
        p50(o) / p50(u)
        for o, u in zip(other.samples.by_round[metric], ours.samples.by_round[metric], strict=True)
        if o and u and p50(u) > 0
    ]
    return p50(ratios) if ratios else None


def fmt_ms(x: float) -> str:
    if x < 10:
        return f"{x:.2f}"
    if x < 100:
        return f"{x:.1f}"
    return f"{x:.0f}"


def report(contestants: list[Contestant], meta: dict[str, Any]) -> str:
    ours = contestants[0]
    out: list[str] = []
    out.append(
        "| server | " + " | ".join(f"{HEADINGS[m]}: p50 / p90 (ms)" for m in METRICS) + " |"
    )
    out.append("|---|" + "---:|" * len(METRICS))
    for c in contestants:
        cells = []
        for m in METRICS:
            xs = c.samples.by_metric[m]
            cells.append(f"{fmt_ms(p50(xs))} / {fmt_ms(p90(xs))}")
        out.append(f"| {c.label} | " + " | ".join(cells) + " |")
    if len(contestants) > 1:
        out.append("")
        out.append(
            f"Ratios, each server against {ours.label} (p50 / ours' p50; in brackets the "
            "median over rounds of the per-round ratio). Above 1: slower than ours."
        )
        out.append("")
        out.append("| server | " + " | ".join(HEADINGS[m] for m in METRICS) + " |")
        out.append("|---|" + "---:|" * len(METRICS))
        for c in contestants[1:]:
            cells = []
            for m in METRICS:
                r = p50(c.samples.by_metric[m]) / p50(ours.samples.by_metric[m])
                pr = paired_ratio(c, ours, m)
                cells.append(f"{r:.2f}× ({pr:.2f}×)" if pr is not None else f"{r:.2f}×")
            out.append(f"| {c.label} | " + " | ".join(cells) + " |")
    out.append("")
    out.append(
        "Of the run, the time the server reports for the command itself, p50 / p90 (ms): "
        + "; ".join(
            f"{c.label} {fmt_ms(p50(c.samples.by_metric['run_server']))} / "
            f"{fmt_ms(p90(c.samples.by_metric['run_server']))}"
            for c in contestants
        )
        + " (tmux-mcp: `elapsed_ms`, to the end mark; "
        "libtmux-mcp: `elapsed_seconds`, from send-keys to the `wait-for` signal)."
    )
    out.append("")
    n = {m: len(ours.samples.by_metric[m]) for m in METRICS}
    out.append(
        f"Samples per server: ping {n['ping']}, run {n['run']}, run premade {n['run_premade']}, capture {n['capture']}, "
        f"wait {n['wait']} ({meta['rounds']} rounds)."
    )
    out.append(
        f"tmux {meta['tmux_version']} ({meta['tmux']}); {meta['machine']}; load average "
        f"{meta['load_before']} before, {meta['load_after']} after; {meta['wall_s']:.0f} s."
    )
    for c in contestants:
        out.append(f"- {c.label}: {c.info.get('server')} (protocol {c.info.get('protocol')})")
    out.append(f"- client: Python {platform.python_version()}, mcp {meta['mcp_version']}")
    return "\n".join(out)


def machine() -> str:
    model = "unknown CPU"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return f"{os.cpu_count()} CPUs ({model}), Linux {platform.release()}"


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


# -- main -------------------------------------------------------------------


async def measure_round(c: Contestant, i: int, args: argparse.Namespace) -> None:
    async def timed(metric: str, action: Callable[[], Awaitable[None]]) -> None:
        t0 = time.perf_counter()
        await action()
        c.samples.add(metric, (time.perf_counter() - t0) * 1000.0)

    c.samples.start_round()
    for _ in range(args.pings):
        await timed("ping", c.ping)
    for _ in range(args.repeat):
        await timed("capture", c.capture)
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        server_ms = await c.run_command("echo hi", expect_output="hi")
        c.samples.add("run", (time.perf_counter() - t0) * 1000.0)
        c.samples.add("run_server", server_ms)
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        await c.run_command("echo hi", expect_output="hi", pane=c.premade)
        c.samples.add("run_premade", (time.perf_counter() - t0) * 1000.0)
    c.samples.add("wait", await c.wait_lateness(i, args.emit_delay))


async def bench(args: argparse.Namespace) -> int:
    tmux = shutil.which(args.tmux)
    if tmux is None:
        raise BenchError(f"tmux program {args.tmux!r} not found on PATH")
    tmux_version = subprocess.run([tmux, "-V"], capture_output=True, text=True, check=True).stdout.strip()

    contestants: list[Contestant] = []
    default_before = socket_state(default_socket())
    problems: list[str] = []
    meta: dict[str, Any] = {
        "tmux": tmux,
        "tmux_version": tmux_version.removeprefix("tmux "),
        "machine": machine(),
        "rounds": args.rounds,
        "mcp_version": version("mcp"),
        "load_before": load(),
    }
    started = time.perf_counter()
    try:
        contestants.append(TmuxMcp(args.ours_label, tmux, Path(args.ours)))
        if args.baseline:
            contestants.append(TmuxMcp(args.baseline_label, tmux, Path(args.baseline)))
        if args.libtmux_mcp:
            contestants.append(LibtmuxMcp(args.libtmux_label, tmux, args.libtmux_mcp.split()))
        async with contextlib.AsyncExitStack() as stack:
            for c in contestants:
                print(f"starting {c.label} ...", file=sys.stderr)
                await c.open(stack)
            for i in range(1, args.rounds + 1):
                k = i % len(contestants)
                for c in contestants[k:] + contestants[:k]:
                    await measure_round(c, i, args)
                if i % 10 == 0 or i == args.rounds:
                    print(f"round {i}/{args.rounds}", file=sys.stderr)
    finally:
        for c in contestants:
            problems += clean_up(c)
        default_after = socket_state(default_socket())
        if default_after is not None and default_after != default_before:
            problems.append(
                f"a default tmux socket appeared at {default_socket()} during the run "
                f"(before: {'present' if default_before else 'absent'})"
            )
    meta["wall_s"] = time.perf_counter() - started
    meta["load_after"] = load()
    if problems:
        raise BenchError("isolation check failed:\n" + "\n".join(problems))

    text = report(contestants, meta)
    print(text)
    print(
        f"default socket {default_socket()}: "
        f"{'absent' if default_before is None else 'present (not ours)'} before and after, unchanged",
    )
    if args.json:
        data = {
            "meta": meta,
            "contestants": [
                {
                    "label": c.label,
                    "kind": c.kind,
                    "info": c.info,
                    "samples_ms": c.samples.by_metric,
                    "p50_ms": {m: p50(c.samples.by_metric[m]) for m in SERIES},
                    "p90_ms": {m: p90(c.samples.by_metric[m]) for m in SERIES},
                }
                for c in contestants
            ],
        }
        Path(args.json).write_text(json.dumps(data, indent=1))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ours", required=True, help="path of the tmux-mcp binary under test")
    parser.add_argument("--ours-label", default="tmux-mcp")
    parser.add_argument("--baseline", help="path of a second tmux-mcp binary (for example an older build)")
    parser.add_argument("--baseline-label", default="tmux-mcp (baseline)")
    parser.add_argument("--libtmux-mcp", help="command that starts libtmux-mcp over stdio (split on spaces)")
    parser.add_argument("--libtmux-label", default="libtmux-mcp")
    parser.add_argument("--tmux", default="tmux", help="tmux program (looked up on PATH) for every server")
    parser.add_argument("--rounds", type=int, default=60, help="interleaved rounds (default 60)")
    parser.add_argument("--pings", type=int, default=10, help="pings per round (default 10)")
    parser.add_argument("--repeat", type=int, default=3, help="runs and captures per round (default 3)")
    parser.add_argument(
        "--emit-delay", type=float, default=0.3, help="seconds between the wait call and the output (default 0.3)"
    )
    parser.add_argument("--json", help="also write every sample to this JSON file")
    args = parser.parse_args()
    if args.rounds < 1 or args.pings < 1 or args.repeat < 1 or args.emit_delay < 0.15:
        parser.error("--rounds, --pings and --repeat must be at least 1, --emit-delay at least 0.15")
    try:
        return asyncio.run(bench(args))
    except BenchError as e:
        print(f"agent_bench: {e}", file=sys.stderr)
        return 1
    except BaseExceptionGroup as group:
        # The SDK's stdio transport runs in a task group, which wraps what
        # was raised inside it.
        failures = [e for e in leaves(group) if isinstance(e, BenchError)]
        if not failures:
            raise
        for e in failures:
            print(f"agent_bench: {e}", file=sys.stderr)
        return 1


def leaves(group: BaseExceptionGroup) -> list[BaseException]:
    out: list[BaseException] = []
    for e in group.exceptions:
        out += leaves(e) if isinstance(e, BaseExceptionGroup) else [e]
    return out


if __name__ == "__main__":
    sys.exit(main())
