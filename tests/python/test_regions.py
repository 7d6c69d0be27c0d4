"""Regions through the built binary and the MCP Python SDK: every command a
terminal ran, with its command line, directory and statuses; read one
(bounded, failure lines first) and search them, with matches in command
lines told apart from output."""

from __future__ import annotations

import json
import shutil

import anyio
import mcp
import pytest
from support import TmuxMcp, connecting_call, text_of

pytestmark = pytest.mark.anyio

LIMIT = 60


async def call(session: mcp.ClientSession, tool: str, **args) -> dict:
    result = await session.call_tool(tool, args)
    assert not result.is_error, text_of(result)
    return result.structured_content


async def test_five_runs_are_five_regions_read_and_searched(tmux_mcp: TmuxMcp) -> None:
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session(env={"SHELL": shutil.which("bash") or "/bin/bash"}) as (session, _):
            created = await connecting_call(session.call_tool, "create_terminal", {"name": "regions"})
            assert not created.is_error, text_of(created)
            pane = created.structured_content["pane"]
            assert (await call(session, "list_regions", target=pane))["total"] == 0

            commands = ["echo one", "false", "cd /tmp", "false | true", "ls /nonexistent-region"]
            for command in commands:
                done = await call(session, "run", target=pane, command=command)
                assert done["status"] == "completed", done
            listed = await call(session, "list_regions", target=pane)
            assert listed["total"] == 5
            regions = listed["regions"]
            assert [r["command"] for r in regions] == commands
            assert [r["exit_status"] for r in regions] == [0, 1, 0, 0, 2]
            assert regions[3]["pipestatus"] == [1, 0]
            assert regions[4]["cwd"] == "/tmp"
            assert all(r["mode"] == "integrated" and r["duration_ms"] is not None for r in regions)

            # A command typed by hand is a region too, its line read back
            # from the shell's echo.
            await call(session, "send_text", target=pane, text="echo typed-by-hand", enter=True)
            await call(session, "wait_for_state", target=pane, states=["at_prompt"], timeout_secs=10)
            listed = await call(session, "list_regions", target=pane, last=1)
            assert (listed["total"], listed["regions"][0]["command"]) == (6, "echo typed-by-hand")

            # Reading one: its output and how it ended.
            one = await call(session, "read_region", target=pane, id=regions[4]["id"])
            assert "No such file or directory" in one["output"]
            assert one["region"]["exit_status"] == 2

            # A long region is bounded and its failure line leads.
            long = "for i in $(seq 1 2000); do if [ $i = 1000 ]; then echo FAIL: test_17; else echo ok $i; fi; done"
            await call(session, "run", target=pane, command=long)
            raw = await session.call_tool("read_region", {"target": pane})
            size = len(json.dumps(raw.model_dump(by_alias=True, exclude_none=True)))
            assert size <= 9000, size
            text = text_of(raw)
            assert text.index("FAIL: test_17") < text.index("ok 1\n"), text[:400]

            # Search: the output match, and the command line that holds the
            # word counted apart.
            await call(session, "run", target=pane, command="echo needle-$((40+2))")
            found = await call(session, "search_regions", target=pane, pattern="needle")
            kinds = sorted((m["in"], m["line"]) for m in found["matches"])
            assert ("output", "needle-42") in kinds, kinds
            assert ("command", "echo needle-$((40+2))") in kinds, kinds
            assert (found["output_matches"], found["command_matches"]) == (1, 1)
            only = await call(session, "search_regions", target=pane, pattern="No such", id=regions[4]["id"])
            assert (only["regions_searched"], only["output_matches"]) == (1, 1)
            missing = await session.call_tool("read_region", {"target": pane, "id": 999})
            assert missing.is_error and "no region 999" in text_of(missing)


async def test_runs_in_a_shell_without_integration_are_regions(tmux_mcp: TmuxMcp) -> None:
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session("--no-shell-integration") as (session, _):
            created = await connecting_call(session.call_tool, "create_terminal", {"name": "wrapped"})
            assert not created.is_error, text_of(created)
            pane = created.structured_content["pane"]
            await call(session, "run", target=pane, command="echo a")
            await call(session, "run", target=pane, command="(exit 3)")
            listed = await call(session, "list_regions", target=pane)
            assert [(r["command"], r["exit_status"], r["mode"]) for r in listed["regions"]] == [
                ("echo a", 0, "wrapped"),
                ("(exit 3)", 3, "wrapped"),
            ]


async def test_a_recovered_region_whose_output_rotated_out_says_so(tmux_mcp: TmuxMcp) -> None:
    # The smallest durable log: the output of `seq` rotates the first
    # command's output out of it.
    args = ("--log-bytes", "65536")
    bash = {"SHELL": shutil.which("bash") or "/bin/bash"}
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session(*args, env=bash) as (session, _):
            created = await connecting_call(session.call_tool, "create_terminal", {"name": "rotated"})
            assert not created.is_error, text_of(created)
            pane = created.structured_content["pane"]
            await call(session, "run", target=pane, command="echo early-output")
            await call(session, "run", target=pane, command="seq 1 20000")

        async with tmux_mcp.session(*args, env=bash) as (session, _):
            listed = await call(session, "list_regions", target=pane)
            early, seq = listed["regions"]
            assert (early["command"], early.get("recovered")) == ("echo early-output", True), early
            one = await session.call_tool("read_region", {"target": pane, "id": early["id"]})
            assert not one.is_error, text_of(one)
            text = text_of(one)
            assert "(no output)" not in text, text
            assert "rotated out of the log" in text, text
            lost = one.structured_content["region"]["output_lost"]
            assert lost == [
                {
                    "why": "rotated_out",
                    "from_line": early["first_line"],
                    "to_line": early["last_line"],
                    "lines": 1,
                    "bytes": early["output_bytes"],
                }
            ], one.structured_content
            assert early["output_lost"] == lost, early
            assert "output rotated out of the log" in text_of(await session.call_tool("list_regions", {"target": pane}))

            # The long command's first lines were dropped while it ran, before
            # its region was written: their number is unknown, the lines up
            # to which they go are known, and its last lines are still there.
            (part,) = seq["output_lost"]
            assert part["why"] == "rotated_out" and part["from_line"] is None and part["lines"] is None, part
            assert seq["first_line"] is not None and part["to_line"] < seq["last_line"], (part, seq)
            assert part["bytes"] is None or 0 < part["bytes"] < seq["output_bytes"], part
            long = await session.call_tool("read_region", {"target": pane, "id": seq["id"]})
            assert "part of its output" in text_of(long) and "rotated out of the log" in text_of(long), text_of(long)[:400]
            # Longer than the reply's budget: it says where to read on.
            more = long.structured_content["more_from_line"]
            assert f"read_log from_line={more}" in text_of(long), text_of(long)[:400]
            assert seq["first_line"] < more <= seq["last_line"], (more, seq)
            found = await call(session, "search_regions", target=pane, pattern="^early-output$")
            assert found["output_matches"] == 0 and found["output_lost"] == [early["id"], seq["id"]], found
            tail = await call(session, "read_log", target=pane, from_line=seq["last_line"], last_lines=1)
            assert tail["lines"][0]["text"] == "20000", tail
