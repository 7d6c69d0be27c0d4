"""The cooked, durable log through the built binary and the MCP Python SDK:
a progress bar, a readline edit and a multi-line paste cooked to what a
human saw, a full-screen program as one entry, history beyond tmux's
history-limit, and a restart of tmux-mcp that keeps the log and the regions
of a live terminal."""

from __future__ import annotations

import shutil
import stat
import subprocess

import anyio
import mcp
import pytest
from support import TmuxMcp, connecting_call, text_of

pytestmark = pytest.mark.anyio

LIMIT = 60
BASH = {"SHELL": shutil.which("bash") or "/bin/bash"}


async def call(session: mcp.ClientSession, tool: str, **args) -> dict:
    result = await session.call_tool(tool, args)
    assert not result.is_error, text_of(result)
    return result.structured_content


async def terminal(session: mcp.ClientSession, name: str) -> str:
    created = await connecting_call(session.call_tool, "create_terminal", {"name": name})
    assert not created.is_error, text_of(created)
    assert created.structured_content.get("shell_ready"), created.structured_content
    return created.structured_content["pane"]


async def log_texts(session: mcp.ClientSession, pane: str, **args) -> list[str]:
    read = await call(session, "read_log", target=pane, last_lines=400, **args)
    return [line["text"] for line in read["lines"]]


async def at_prompt(session: mcp.ClientSession, pane: str) -> None:
    await call(session, "wait_for_state", target=pane, states=["at_prompt"], timeout_secs=10)


async def test_overwrites_edits_and_pastes_are_cooked_to_what_was_seen(tmux_mcp: TmuxMcp) -> None:
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session(env=BASH) as (session, _):
            pane = await terminal(session, "cooked")
            # A progress bar drawn with carriage returns keeps its last state.
            await call(session, "run", target=pane, command=r"printf 'get  10%%\rget  50%%\rget 100%%\n'")
            texts = await log_texts(session, pane)
            assert "get 100%" in texts, texts
            assert not any("10%" in t or "50%" in t for t in texts if "printf" not in t), texts

            # A readline edit: type "echo helo", go left once, insert "l".
            await call(session, "send_text", target=pane, text="echo helo")
            await call(session, "send_keys", target=pane, keys=["Left"])
            await call(session, "send_text", target=pane, text="l", enter=True)
            await at_prompt(session, pane)
            texts = await log_texts(session, pane)
            typed = [t for t in texts if t.endswith("echo hello")]
            assert len(typed) == 1, texts
            assert not any("helo" in t for t in texts), texts
            assert texts[texts.index(typed[0]) + 1] == "hello", texts

            # A multi-line paste (bracketed, as a terminal pastes): each line
            # of it once, then each output.
            await call(
                session, "paste_text", target=pane, text="echo one\necho two\necho three", bracketed=True, enter=True
            )
            await call(session, "wait_for_output", target=pane, pattern="^three$", timeout_secs=10)
            await at_prompt(session, pane)
            texts = await log_texts(session, pane)
            for word in ["one", "two", "three"]:
                assert sum(1 for t in texts if t.endswith(f"echo {word}")) == 1, texts
                assert word in texts, texts


async def test_read_output_and_read_log_read_the_same_lines(tmux_mcp: TmuxMcp) -> None:
    """One line model: the output read by cursor and the durable log show the
    same lines for a progress bar and a readline edit with cursor motion."""
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session(env=BASH) as (session, _):
            pane = await terminal(session, "same")
            await call(session, "run", target=pane, command=r"printf 'get  10%%\rget  50%%\rget 100%%\n'")
            # Type "echo helo wrld", three to the left, insert "o", then
            # Home and End (cursor motion both ways) before Enter.
            await call(session, "send_text", target=pane, text="echo helo wrld")
            await call(session, "send_keys", target=pane, keys=["Left", "Left", "Left"])
            await call(session, "send_text", target=pane, text="o")
            await call(session, "send_keys", target=pane, keys=["Home", "End"])
            await call(session, "send_keys", target=pane, keys=["Enter"])
            await call(session, "wait_for_output", target=pane, pattern="^helo world$", timeout_secs=10)
            await at_prompt(session, pane)
            read = await call(session, "read_output", target=pane, cursor=0)
            assert read["text"], read
            shown = read["text"].rstrip("\n").split("\n")
            logged = await log_texts(session, pane)
            # The log keeps the prompt the shell waits at as its last line.
            assert shown == logged[: len(shown)] and len(logged) - len(shown) <= 1, (shown, logged)
            assert "get 100%" in shown and not any("10%" in t for t in shown if "printf" not in t), shown
            assert sum(1 for t in shown if t.endswith("echo helo world")) == 1, shown


async def test_a_full_screen_program_is_one_entry(tmux_mcp: TmuxMcp) -> None:
    vim = shutil.which("vim") or shutil.which("vi")
    if vim is None:
        pytest.skip("vim is not installed (scripts/setup installs it)")
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session(env=BASH) as (session, _):
            pane = await terminal(session, "vim")
            await call(session, "run", target=pane, command="echo before-vim")
            await call(session, "send_text", target=pane, text=f"{vim} -u NONE -N +'normal 300Ohello' notes.txt", enter=True)
            await call(session, "wait_for_output", target=pane, pattern="hello", timeout_secs=10)
            during = await call(session, "read_log", target=pane)
            assert during["full_screen"], during
            await call(session, "send_keys", target=pane, keys=["Escape"])
            await call(session, "send_text", target=pane, text=":q!", enter=True)
            await at_prompt(session, pane)
            await call(session, "run", target=pane, command="echo after-vim")
            read = await call(session, "read_log", target=pane, last_lines=50)
            lines = read["lines"]
            screens = [line for line in lines if line.get("kind") == "screen"]
            assert len(screens) == 1, lines
            assert "full-screen program" in screens[0]["text"]
            assert not any(line["text"] == "hello" for line in lines), lines
            texts = [line["text"] for line in lines]
            assert texts.index("before-vim") < lines.index(screens[0]) < texts.index("after-vim"), texts
            assert not read["full_screen"]


async def test_the_log_outlives_history_limit_and_a_restart(tmux_mcp: TmuxMcp) -> None:
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session("--history-limit", "100", env=BASH) as (session, _):
            pane = await terminal(session, "durable")
            await call(session, "run", target=pane, command="seq 1 600")
            await call(session, "run", target=pane, command="false")
            await call(session, "run", target=pane, command="echo before-restart")
            # tmux's scrollback holds 100 lines; the log holds them all.
            scrollback = await call(session, "search_output", target=pane, pattern="^7$")
            assert scrollback["total_matches"] == 0, scrollback
            found = await call(session, "search_log", target=pane, pattern="^7$")
            assert found["total_matches"] == 1, found
            seven = found["matches"][0]["n"]
            before = await call(session, "list_regions", target=pane)
            assert [r["command"] for r in before["regions"]] == ["seq 1 600", "false", "echo before-restart"]
            assert before["regions"][0]["first_line"] <= seven <= before["regions"][0]["last_line"]
            marker = await call(session, "search_log", target=pane, pattern="^before-restart$")
            marker_line = marker["matches"][0]["n"]

        logs = list((tmux_mcp.state / "logs").iterdir())
        assert len(logs) == 1, logs
        files = list(logs[0].iterdir())
        assert files and all(stat.S_IMODE(f.stat().st_mode) == 0o600 for f in files), files
        assert stat.S_IMODE(logs[0].stat().st_mode) == 0o700

        # A new tmux-mcp process on the same tmux server and state directory.
        async with tmux_mcp.session("--history-limit", "100", env=BASH) as (session, _):
            again = await call(session, "search_log", target=pane, pattern="^7$")
            assert [m["n"] for m in again["matches"]] == [seven], again
            read = await call(session, "read_log", target=pane, from_line=marker_line, last_lines=5)
            assert read["lines"][0]["text"] == "before-restart", read
            regions = await call(session, "list_regions", target=pane)
            old = regions["regions"]
            assert [(r["command"], r["exit_status"], r.get("recovered")) for r in old] == [
                ("seq 1 600", 0, True),
                ("false", 1, True),
                ("echo before-restart", 0, True),
            ], old
            one = await call(session, "read_region", target=pane, id=old[2]["id"])
            assert one["output"] == "before-restart", one
            # The shell carries on where it was; new commands follow.
            done = await call(session, "run", target=pane, command="echo after-restart")
            assert done["exit_status"] == 0 and "after-restart" in done["output"], done
            regions = await call(session, "list_regions", target=pane)
            assert [r["command"] for r in regions["regions"]][-1] == "echo after-restart"
            assert regions["regions"][-1]["id"] == 4
            texts = await log_texts(session, pane)
            restarted = [t for t in texts if t.startswith("[tmux-mcp restarted")]
            assert len(restarted) == 1 and texts.index(restarted[0]) > texts.index("before-restart"), texts
            assert "after-restart" in texts


def log_dirs(tmux_mcp: TmuxMcp) -> dict[str, int]:
    """Each log directory's name, with the tmux server process it names."""
    root = tmux_mcp.state / "logs"
    return {d.name: int((d / "server").read_text()) for d in root.iterdir()} if root.exists() else {}


async def test_logs_of_panes_that_ended_unseen_are_removed(tmux_mcp: TmuxMcp) -> None:
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session(env=BASH) as (session, _):
            kept = await terminal(session, "kept")
            closed = await terminal(session, "closed")
            for pane in (kept, closed):
                await call(session, "run", target=pane, command="echo logged")
        first = log_dirs(tmux_mcp)
        assert len(first) == 2 and len(set(first.values())) == 1, first

        # The pane ends while no tmux-mcp watches it.
        subprocess.run(
            [tmux_mcp.tmux, "-S", str(tmux_mcp.socket), "kill-pane", "-t", closed],
            check=True,
            capture_output=True,
            timeout=10,
        )
        async with tmux_mcp.session(env=BASH) as (session, _):
            # The first call connects; the log of the pane that is gone went
            # before it was answered, the living pane's stayed.
            again = await call(session, "read_log", target=kept)
            assert "logged" in [line["text"] for line in again["lines"]], again
            assert log_dirs(tmux_mcp).keys() == {name for name in first if name.startswith(kept.lstrip("%") + "-")}

        # The whole server ends unseen: the next server's first connection
        # removes the logs of the old server's panes, whose process is gone.
        tmux_mcp.kill_tmux()
        async with tmux_mcp.session(env=BASH) as (session, _):
            fresh = await terminal(session, "fresh")
            await call(session, "run", target=fresh, command="echo new")
        last = log_dirs(tmux_mcp)
        assert len(last) == 1 and not last.keys() & first.keys(), (first, last)


async def test_a_record_cut_short_on_disk_loses_nothing_written_after_it(tmux_mcp: TmuxMcp) -> None:
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session(env=BASH) as (session, _):
            pane = await terminal(session, "cut")
            await call(session, "run", target=pane, command="echo first-run")
        (log_dir,) = (tmux_mcp.state / "logs").iterdir()
        # What a crash in the middle of a write leaves at the end of the log:
        # a record cut in the middle of a multi-byte character, no newline.
        record = '{"t":"l","n":90,"s":1,"at":0,"x":"caf\u00e9"}\n'.encode()
        cut = record[: record.index("\u00e9".encode()) + 1]
        with open(log_dir / "log.jsonl", "ab") as log:
            log.write(cut)

        # A later run writes more lines and regions after the bad record.
        async with tmux_mcp.session(env=BASH) as (session, _):
            for command in ["echo second-run-a", "echo second-run-b", "true"]:
                await call(session, "run", target=pane, command=command)
            texts = await log_texts(session, pane)
            assert "first-run" in texts, texts
        assert cut in (log_dir / "log.jsonl").read_bytes()

        # And the next restart still reads all of it back, saying what it skipped.
        async with tmux_mcp.session(env=BASH) as (session, _):
            texts = await log_texts(session, pane)
            for word in ["first-run", "second-run-a", "second-run-b"]:
                assert word in texts, texts
            assert texts.index("first-run") < texts.index("second-run-a") < texts.index("second-run-b"), texts
            restarts = [t for t in texts if t.startswith("[tmux-mcp restarted")]
            assert len(restarts) == 2, texts
            for restart in restarts:
                assert "1 record of this log on disk could not be read" in restart, restart
            regions = await call(session, "list_regions", target=pane)
            assert [(r["command"], r.get("recovered")) for r in regions["regions"]] == [
                ("echo first-run", True),
                ("echo second-run-a", True),
                ("echo second-run-b", True),
                ("true", True),
            ], regions
            last = await call(session, "read_region", target=pane, id=regions["regions"][2]["id"])
            assert last["output"] == "second-run-b", last
