"""`tmux-mcp call TOOL`: every tool from the shell (issue 21, must-show 1).

Each call is the built binary run as a process, as a script or an agent's
shell tool runs it, on the fixture's private tmux server and state directory
(the same flags `support.TmuxMcp.params` gives an MCP server). A call runs
in its own process unless a shared `serve --unix` server is named or serves
the state directory; both ways are tested, and against MCP clients (the
Python SDK) on the same tmux server.
"""

from __future__ import annotations

import json
import subprocess
import warnings
from pathlib import Path

import anyio
import pytest
from support import TMUX_DIED, TmuxMcp, connecting_call, text_of

pytestmark = pytest.mark.anyio

#: Upper bound for one call (seconds).
CALL_LIMIT = 60


def cli(tm: TmuxMcp, *args: str, actor: str | None = None) -> subprocess.CompletedProcess[str]:
    """`tmux-mcp [--actor A] call ARGS…` on the fixture's tmux server, with
    the audit log on; standard output is a pipe, so results are JSON."""
    argv = tm.command("--audit-log", str(tm.audit), *(["--actor", actor] if actor else []), "call", *args)
    return subprocess.run(  # acts on tm.socket, a private tmux socket (--socket-path in tm.command)
        argv,
        capture_output=True,
        text=True,
        env=tm.env(),
        cwd=str(tm.home),
        timeout=CALL_LIMIT,
        check=False,
    )


def ok(tm: TmuxMcp, *args: str, actor: str | None = None) -> dict:
    """A call that must succeed: its JSON result."""
    done = cli(tm, *args, actor=actor)
    if done.returncode == 1 and TMUX_DIED in done.stderr:
        # tmux 3.3a can abort during a first connection (see support.connecting_call).
        warnings.warn(f"tmux died during tmux-mcp's first connection; {args[0]} retried once", stacklevel=2)
        done = cli(tm, *args, actor=actor)
    assert done.returncode == 0, (done.returncode, done.stdout, done.stderr)
    return json.loads(done.stdout)


def test_a_terminal_and_runs_from_the_shell(tmux_mcp: TmuxMcp) -> None:
    made = ok(tmux_mcp, "create_terminal", "{}")
    pane = made["pane"]
    assert made["shell_integration"] == "bash" and made["shell_ready"], made

    ran = ok(tmux_mcp, "run", json.dumps({"target": pane, "command": "false | true"}))
    assert (ran["status"], ran["exit_status"], ran["pipestatus"]) == ("completed", 0, [1, 0]), ran

    # The same call with flags; --exit-status gives the command's own status.
    for command, status in (("true", 0), ("false", 1), ("exit_with() { return $1; }; exit_with 7", 7)):
        done = cli(tmux_mcp, "run", "--target", pane, "--command", command, "--exit-status")
        assert done.returncode == status, (command, done.returncode, done.stdout, done.stderr)
        assert json.loads(done.stdout)["exit_status"] == status

    # The text reply instead of JSON.
    text = cli(tmux_mcp, "run", "--target", pane, "--command", "echo from-the-cli", "--text")
    assert text.returncode == 0 and "from-the-cli" in text.stdout and not text.stdout.startswith("{"), text

    # A wait in its own process: the cursor counts from that process's start.
    typed = ok(tmux_mcp, "send_text", "--target", pane, "--text", "sleep 1; echo mark-$((6*7))", "--enter")
    assert typed, typed
    waited = ok(tmux_mcp, "wait_for_output", "--target", pane, "--pattern", "mark-42", "--cursor", "0")
    assert waited["status"] == "matched" and waited["cursor"] > 0, waited

    # The regions of every call's runs are the terminal's, whichever process
    # ran them (each process counts its output from 0 again).
    regions = [r["command"] for r in ok(tmux_mcp, "list_regions", "--target", pane)["regions"]]
    runs = ["false | true", "true", "false", "exit_with() { return $1; }; exit_with 7", "echo from-the-cli"]
    assert [c for c in regions if c in runs] == runs, regions

    # Who called: the CLI's client name, or --actor.
    ok(tmux_mcp, "list_terminals", actor="script-7")
    actors = [(r["actor"], r["tool"]) for r in tmux_mcp.audit_records()]
    assert ("tmux-mcp-call", "run") in actors and ("script-7", "list_terminals") in actors, actors


def test_bad_usage_exits_2_and_names_what_is_wrong(tmux_mcp: TmuxMcp) -> None:
    pane = ok(tmux_mcp, "create_terminal", "{}")["pane"]
    for args, named in (
        (["run", "--target", pane, "--colour", "red"], 'no argument "colour"'),
        (["run", json.dumps({"target": pane, "command": "true", "timeout_secs": "soon"})], "timeout_secs"),
        (["run", "{not json"], "not valid JSON"),
        (["no_such_tool"], 'no tool "no_such_tool"'),
        (["kill_pane", json.dumps({"target": pane})], "not enabled"),
        (["list_terminals", "--exit-status"], "--exit-status is for run"),
    ):
        done = cli(tmux_mcp, *args)
        assert done.returncode == 2, (args, done.returncode, done.stdout, done.stderr)
        assert named in done.stderr, (args, done.stderr)
    # A tool error is 1, with the message on standard error.
    done = cli(tmux_mcp, "run", "--target", "%999", "--command", "true")
    assert done.returncode == 1 and "%999" in done.stderr, done
    assert json.loads(done.stdout)["is_error"] is True


def test_help_and_list_come_from_the_tools(tmux_mcp: TmuxMcp) -> None:
    listed = cli(tmux_mcp, "--list")
    assert listed.returncode == 0, listed
    names = [line.split()[0] for line in listed.stdout.splitlines()]
    assert "run" in names and "wait_for_output" in names and "kill_pane" not in names, names
    helped = cli(tmux_mcp, "run", "--help")
    assert helped.returncode == 0, helped
    assert helped.stdout.startswith("tmux-mcp call run"), helped.stdout
    for part in ("--command <string>", "--timeout-secs <number>", "Result (printed as JSON", "pipestatus"):
        assert part in helped.stdout, (part, helped.stdout)


async def test_the_cli_and_mcp_clients_see_the_same_terminals(tmux_mcp: TmuxMcp) -> None:
    from_cli = ok(tmux_mcp, "create_terminal", '{"name":"made-by-cli"}')["pane"]
    with anyio.fail_after(CALL_LIMIT):
        async with tmux_mcp.session() as (session, _):
            listed = await connecting_call(session.call_tool, "list_terminals", {})
            assert from_cli in text_of(listed), text_of(listed)
            made = await session.call_tool("create_terminal", {"name": "made-by-mcp"})
            from_mcp = made.structured_content["pane"]
            ran = await session.call_tool("run", {"target": from_cli, "command": "echo mcp-was-here"})
            assert ran.structured_content["exit_status"] == 0, text_of(ran)
    panes = json.dumps(ok(tmux_mcp, "list_terminals"))
    assert from_mcp in panes and "made-by-mcp" in panes, panes
    regions = ok(tmux_mcp, "list_regions", "--target", from_cli)["regions"]
    assert "echo mcp-was-here" in [r["command"] for r in regions], regions


def test_calls_through_a_shared_server_keep_its_runs_cursors_and_actors(tmux_mcp: TmuxMcp) -> None:
    socket = tmux_mcp.root / "shared" / "mcp.sock"
    server = tmux_mcp.serve_unix(socket)
    server.ready()
    via = ("--unix", str(socket))
    pane = ok(tmux_mcp, "create_terminal", "{}", *via, actor="cli-a")["pane"]
    ran = ok(tmux_mcp, "run", "--target", pane, "--command", "echo one", *via, actor="cli-a")
    assert ran["exit_status"] == 0, ran

    # A run that outlasts its call is resumed by the next call, by run_id.
    slow = cli(tmux_mcp, "run", "--target", pane, "--command", "sleep 2; echo slow-done", "--timeout-secs", "0.2", *via)
    assert slow.returncode == 0, slow
    running = json.loads(slow.stdout)
    assert running["status"] == "running", running
    assert f"tmux-mcp call run '{{\"run_id\":\"{running['run_id']}\"}}'" in slow.stderr, slow.stderr
    resumed = ok(tmux_mcp, "run", "--run-id", running["run_id"], *via)
    assert resumed["status"] == "completed" and "slow-done" in resumed["output"], resumed

    # A cursor from one call continues in the next.
    ok(tmux_mcp, "send_text", "--target", pane, "--text", "echo after-$((40+2))", "--enter", *via)
    waited = ok(
        tmux_mcp, "wait_for_output", "--target", pane, "--pattern", "after-42", "--cursor", str(resumed["cursor"]), *via
    )
    assert waited["status"] == "matched", waited

    # Without --unix, the server serving this state directory is found.
    found = ok(tmux_mcp, "run", "--target", pane, "--command", "echo found", actor="cli-b")
    assert found["exit_status"] == 0, found
    server.kill()
    records = tmux_mcp.audit_records()
    by_actor = {(r["actor"], r["tool"]) for r in records}
    assert {("cli-a", "create_terminal"), ("cli-a", "run"), ("tmux-mcp-call", "run"), ("cli-b", "run")} <= by_actor, (
        by_actor
    )
    # The shared server kept them all: one process, one audit log line each.
    assert len([r for r in records if r["tool"] == "run"]) == 4, records


def test_an_unreachable_shared_server_is_a_clear_failure(tmux_mcp: TmuxMcp) -> None:
    missing = Path(tmux_mcp.root) / "nobody.sock"
    done = cli(tmux_mcp, "list_terminals", "--unix", str(missing))
    assert done.returncode == 1, done
    assert "cannot reach the shared server" in done.stderr and "serve --unix" in done.stderr, done.stderr
