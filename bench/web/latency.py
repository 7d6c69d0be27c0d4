"""How long the web view takes to show a line: a terminal running a shell
prints markers 20 ms apart (one command, `for i in $(seq 1 N); do printf
'M%d %s\\n' $i $EPOCHREALTIME; sleep 0.02; done`), its view is open in
headless Chromium, and each binary frame that carries a marker is timed
from the page's test API (docs/web-view.md): `window.tmuxView.marks` gives
the server's clock when it read the frame's bytes from the pane's log
(`serverUs`) and the page's when xterm.js had written them (`writtenUs`).

Two figures per marker, in milliseconds: server → page (`writtenUs -
serverUs`: the socket, the page's parse and xterm.js's write) and shell →
page (`writtenUs` less the shell's own `$EPOCHREALTIME` in the marker:
tmux and tmux-mcp too). Both clocks are this machine's.

A benchmark, not a test: it asserts nothing. Runs `tmux-mcp serve --http`
on a private tmux socket in a temporary directory (removed afterwards),
with the release build when there is one (`cargo build --release -p
tmux-control-mcp`), else the debug build, or `--bin`.

    .venv/bin/python bench/web/latency.py [--rounds 200] [--bin PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "python"))

from browser import chromium, open_view, wait_ready  # noqa: E402
from support import TmuxMcp  # noqa: E402
from test_http import connect  # noqa: E402

#: Kept in the page before its scripts run: for each binary frame, its
#: offset and the markers in its bytes (the page's marks say when it was
#: written, by offset).
RECORDER = """
(() => {
  const carried = [];
  window.__markers = carried;
  const decoder = new TextDecoder();
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener('message', (event) => {
        if (typeof event.data === 'string') return;
        const dv = new DataView(event.data);
        const at = 3 + dv.getUint16(1);
        const offset = Number(dv.getBigUint64(at));
        const text = decoder.decode(new Uint8Array(event.data, at + 16));
        const found = [...text.matchAll(/M(\\d+) (\\d+)\\.(\\d{6})\\r?\\n/g)];
        if (found.length) {
          carried.push({ offset, markers: found.map((m) => [Number(m[1]), Number(m[2]) * 1e6 + Number(m[3])]) });
        }
      });
    }
  };
})();
"""


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def row(label: str, values: list[float]) -> str:
    return (
        f"| {label:<16} | {len(values):>5} | {statistics.median(values):>7.2f} | "
        f"{percentile(values, 95):>7.2f} | {max(values):>7.2f} |"
    )


async def bench(binary: Path, rounds: int, interval_ms: int) -> None:
    root = Path(tempfile.mkdtemp(prefix="tmux-mcp-web-bench-", dir="/tmp"))
    tm = TmuxMcp(bin=binary, tmux=shutil.which("tmux") or "tmux", root=root)
    try:
        with tm.http_server() as server:
            async with connect(server, "legacy") as session:
                made = await session.call_tool("create_terminal", {"name": "bench", "width": 80, "height": 24})
                pane = made.structured_content["pane"]
                await session.call_tool("wait_for_state", {"target": pane, "states": ["at_prompt"], "timeout_secs": 20})
                link = (await session.call_tool("web_view", {"target": pane})).structured_content
                view, url = link["terminal"], link["url"]
                async with chromium() as browser:
                    context = await browser.new_context(viewport={"width": 1400, "height": 900})
                    await context.add_init_script(RECORDER)
                    page = await context.new_page()
                    await page.goto(url)
                    await wait_ready(page)
                    await open_view(page, view)
                    await page.evaluate("() => { window.tmuxView.marks.length = 0; window.__markers.length = 0; }")
                    seconds = interval_ms / 1000
                    command = (
                        f"for i in $(seq 1 {rounds}); do printf 'M%d %s\\n' $i $EPOCHREALTIME; sleep {seconds}; done; "
                        "echo bench-$((40+2))"
                    )
                    done = await session.call_tool(
                        "run", {"target": pane, "command": command, "timeout_secs": 60 + rounds * seconds * 4}
                    )
                    ran = done.structured_content
                    assert ran["status"] == "completed", ran
                    end = (await session.call_tool("pane_info", {"target": pane})).structured_content["cursor"]
                    await page.wait_for_function(
                        "([id, at]) => window.tmuxView.views[id].written >= at", arg=[view, end], timeout=60_000
                    )
                    marks = await page.evaluate("id => window.tmuxView.marks.filter((m) => m.id === id)", view)
                    carried = await page.evaluate("() => window.__markers")
                    await context.close()
        by_offset = {m["offset"]: m for m in marks}
        server_page: list[float] = []
        shell_page: list[float] = []
        seen: set[int] = set()
        for frame in carried:
            mark = by_offset.get(frame["offset"])
            if mark is None:
                continue
            server_page.append((mark["writtenUs"] - mark["serverUs"]) / 1000)
            for n, printed_us in frame["markers"]:
                seen.add(n)
                shell_page.append((mark["writtenUs"] - printed_us) / 1000)
        print(f"command: {' '.join(shlex.quote(a) for a in sys.argv)}")
        print(f"binary:  {binary}")
        print(f"in the pane: {command}")
        print(f"markers seen {len(seen)} of {rounds}, in {len(server_page)} frames")
        print()
        print("| ms               | count |     p50 |     p95 |     max |")
        print("| ---------------- | ----: | ------: | ------: | ------: |")
        print(row("server → page", server_page))
        print(row("shell → page", shell_page))
    finally:
        tm.kill_tmux()
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--rounds", type=int, default=200, help="markers printed (default 200)")
    parser.add_argument("--interval-ms", type=int, default=20, help="ms between markers (default 20)")
    release, debug = REPO / "target/release/tmux-mcp", REPO / "target/debug/tmux-mcp"
    parser.add_argument(
        "--bin", type=Path, default=release if release.exists() else debug, help="the tmux-mcp binary"
    )
    args = parser.parse_args()
    asyncio.run(bench(args.bin.resolve(), args.rounds, args.interval_ms))


if __name__ == "__main__":
    main()
