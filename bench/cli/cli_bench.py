"""`tmux-mcp call` as a whole process: `run '{"target":…,"command":"true"}'`
started from nothing and timed from its start to its exit, three ways side by
side, round by round (the order rotating, so a change in the machine's load
falls on all alike):

- in-process: no shared server runs; the call makes its own MCP server and
  tmux connection in its process;
- shared: through a running `tmux-mcp serve --unix` server (`--unix PATH`);
- tmux: the yardstick, one plain `tmux display-message -p` process on the
  same server (what a tool that starts a tmux process per call pays at the
  least, before it polls).

Every call's exit status and JSON reply are checked. Runs on a private tmux
socket in a temporary directory with an empty HOME, removed afterwards;
prints the median, the 10th and the 90th percentile of each, and the ratios
of the medians.

    .venv/bin/python bench/cli/cli_bench.py [--rounds 40] [--bin target/release/tmux-mcp]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--bin", default="target/release/tmux-mcp")
    parser.add_argument("--tmux", default=shutil.which("tmux") or "tmux")
    options = parser.parse_args()
    binary = str(Path(options.bin).resolve())
    root = Path(tempfile.mkdtemp(prefix="tmux-mcp-cli-bench-", dir="/tmp"))
    sock = root / "tmux.sock"
    home = root / "home"
    home.mkdir()
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "SHELL": "/bin/bash",
        "LANG": "C.UTF-8",
        "TERM": "xterm-256color",
        "TMUX_TMPDIR": str(root),
    }
    flags = ["--socket-path", str(sock), "--state-dir", str(root / "state"), "--tmux", options.tmux]
    served: subprocess.Popen[str] | None = None

    def call(*args: str) -> dict:
        done = subprocess.run(
            [binary, *flags, "call", *args], capture_output=True, text=True, env=env, cwd=home, check=False
        )
        if done.returncode != 0:
            raise SystemExit(f"tmux-mcp call {args[0]} exited {done.returncode}: {done.stderr}")
        return json.loads(done.stdout)

    try:
        pane = call("create_terminal", "{}")["pane"]
        run_args = json.dumps({"target": pane, "command": "true"})
        # Shell integration answers from the first call on; one call to warm the caches.
        assert call("run", run_args)["status"] == "completed"
        socket = root / "shared" / "mcp.sock"
        served = subprocess.Popen(
            [binary, *flags, "--log-level", "info", "serve", "--unix", str(socket)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=home,
        )
        assert served.stderr is not None
        for line in served.stderr:
            if "serving MCP on unix socket" in line:
                break
        else:
            raise SystemExit("the shared server did not start")
        # The in-process contestant has a state directory of its own, so it
        # does not find the shared server's lock file there; the same tmux
        # server and pane.
        alone = ["--socket-path", str(sock), "--state-dir", str(root / "state-alone"), "--tmux", options.tmux]
        contestants = {
            "in-process": [binary, *alone, "call", "run", run_args],
            "shared": [binary, *flags, "call", "--unix", str(socket), "run", run_args],
            "tmux": [options.tmux, "-S", str(sock), "display-message", "-p", "#{pane_id}"],
        }
        times: dict[str, list[float]] = {name: [] for name in contestants}
        names = list(contestants)
        for round_ in range(options.rounds):
            order = names[round_ % len(names) :] + names[: round_ % len(names)]
            for name in order:
                started = time.perf_counter()
                done = subprocess.run(contestants[name], capture_output=True, text=True, env=env, cwd=home, check=False)
                elapsed = (time.perf_counter() - started) * 1000
                if done.returncode != 0:
                    raise SystemExit(f"{name} exited {done.returncode}: {done.stderr}")
                if name != "tmux":
                    reply = json.loads(done.stdout)
                    if reply["status"] != "completed" or reply["exit_status"] != 0:
                        raise SystemExit(f"{name}: {reply}")
                times[name].append(elapsed)
        print(f"{options.rounds} rounds, tmux {subprocess.run([options.tmux, '-V'], capture_output=True, text=True).stdout.strip()}")
        print(f"{'':12} {'median':>8} {'p10':>8} {'p90':>8}  (ms)")
        for name, values in times.items():
            print(
                f"{name:12} {statistics.median(values):8.1f} {percentile(values, 0.1):8.1f} {percentile(values, 0.9):8.1f}"
            )
        tmux = statistics.median(times["tmux"])
        for name in ("in-process", "shared"):
            print(f"{name} / tmux: {statistics.median(times[name]) / tmux:.2f}")
    finally:
        if served is not None:
            served.kill()
            served.wait()
        subprocess.run([options.tmux, "-S", str(sock), "kill-server"], capture_output=True, check=False)
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
