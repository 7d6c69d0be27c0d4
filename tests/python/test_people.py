"""A terminal shared by a person and an agent: the person is a real tmux
client attached on a pseudo-terminal (`tmux attach`, its keys written to the
pty as a keyboard would), the agent the MCP Python SDK driving the built
binary. Neither may corrupt the other's work: an agent never types over a
person's half-typed line, and a person who only watches does not block the
agent but is named in its replies.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import select
import struct
import subprocess
import termios
import time
from typing import Iterator

import anyio
import mcp
import pytest
from support import TmuxMcp, connecting_call, text_of
from test_shell_integration import SHELLS, call, shell_path

pytestmark = pytest.mark.anyio

#: Upper bound for one test's conversation with the server.
LIMIT = 90


class Person:
    """A person at a real terminal: `tmux attach` on a pseudo-terminal."""

    def __init__(self, tm: TmuxMcp, session: str) -> None:
        self.master, slave = os.openpty()
        # 100x30, as a terminal window would tell the kernel.
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
        self.process = subprocess.Popen(  # a client of tm.socket, a private tmux socket
            [tm.tmux, "-S", str(tm.socket), "attach-session", "-t", session],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=tm.env(),
            start_new_session=True,
        )
        os.close(slave)
        self.seen = b""

    def read_until(self, needle: bytes, timeout: float = 20) -> None:
        """Reads what tmux draws on the person's terminal until `needle`
        (blocking on the pty: each read returns when bytes arrive)."""
        deadline = time.monotonic() + timeout
        while needle not in self.seen:
            left = deadline - time.monotonic()
            assert left > 0, f"{needle!r} never drawn; last: {self.seen[-300:]!r}"
            ready, _, _ = select.select([self.master], [], [], left)
            if ready:
                self.seen += os.read(self.master, 65536)

    def type(self, text: str) -> None:
        """Keys, as a keyboard sends them."""
        os.write(self.master, text.encode())

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)
        os.close(self.master)


@contextlib.contextmanager
def attached(tm: TmuxMcp, session: str, ready: bytes) -> Iterator[Person]:
    """A person attached to `session`, once their terminal shows `ready`."""
    person = Person(tm, session)
    try:
        person.read_until(ready)
        yield person
    finally:
        person.close()


def screen(tm: TmuxMcp, pane: str) -> str:
    return subprocess.run(  # tm.socket: a private tmux socket
        [tm.tmux, "-S", str(tm.socket), "capture-pane", "-p", "-t", pane],
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def refused_for_a_person(result: mcp.types.CallToolResult) -> str:
    text = text_of(result)
    assert result.is_error, text
    assert "human_typing" in text, text
    meta = (result.meta or {}).get("tmux-mcp/error") or {}
    assert (meta.get("kind"), meta.get("retryable")) == ("human_typing", True), result.meta
    return text


async def terminal_at_prompt(session: mcp.ClientSession, name: str) -> tuple[str, dict]:
    """A new terminal `name`, once its shell shows its prompt."""
    created = await connecting_call(session.call_tool, "create_terminal", {"name": name})
    assert not created.is_error, text_of(created)
    pane = created.structured_content["pane"]
    ready = await call(session, "wait_for_state", target=pane, states=["at_prompt"], timeout_secs=20)
    assert ready["status"] == "matched", ready
    return pane, ready


@pytest.mark.parametrize("shell", SHELLS)
async def test_the_agent_never_types_over_a_persons_half_typed_line(tmux_mcp: TmuxMcp, shell: str) -> None:
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session(env={"SHELL": shell_path(shell)}) as (session, _):
            pane, ready = await terminal_at_prompt(session, "shared")
            cursor = ready["cursor"]
            with attached(tmux_mcp, "shared", b"\x1b[") as person:
                person.type("echo half-typed-by-human")
                echoed = await call(
                    session, "wait_for_output", target=pane, pattern="half-typed-by-human",
                    literal=True, cursor=cursor, timeout_secs=20,
                )
                assert echoed["status"] == "matched", echoed
                for tool, args in [
                    ("run", {"command": "echo from-agent", "timeout_secs": 5}),
                    ("send_text", {"text": "echo from-agent", "enter": True}),
                    ("paste_text", {"text": "echo from-agent", "enter": True}),
                ]:
                    result = await session.call_tool(tool, {"target": pane, **args})
                    text = refused_for_a_person(result)
                    # The refusal never repeats what the person typed.
                    assert "half-typed-by-human" not in text, text
                # The person's line is intact, and nothing of the agent's ran.
                shown = screen(tmux_mcp, pane)
                assert shown.rstrip().endswith("echo half-typed-by-human"), shown
                assert "from-agent" not in shown, shown

                # Once the person clears the line and the moment of typing
                # is over, the agent's turn comes: a line check alone (the
                # text set by tmux itself, which no client typed) still
                # refuses, and an empty line lets the agent run.
                person.type("\x15")  # C-u
                subprocess.run(  # tmux_mcp.socket: a private tmux socket
                    [tmux_mcp.tmux, "-S", str(tmux_mcp.socket), "send-keys", "-t", pane, "-l", "echo left-by-someone"],
                    check=True,
                )
                await call(
                    session, "wait_for_output", target=pane, pattern="left-by-someone",
                    literal=True, timeout_secs=20,
                )
                # A true timer: the person's last key (C-u) must be older
                # than the seconds that count as typing.
                await anyio.sleep(3.5)
                result = await session.call_tool("run", {"target": pane, "command": "echo from-agent"})
                text = refused_for_a_person(result)
                assert "command line holds text" in text, text


@pytest.mark.parametrize("shell", SHELLS)
async def test_a_person_who_only_watches_does_not_block_and_is_named(tmux_mcp: TmuxMcp, shell: str) -> None:
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session(env={"SHELL": shell_path(shell)}) as (session, _):
            pane, ready = await terminal_at_prompt(session, "watched")
            with attached(tmux_mcp, "watched", b"\x1b[") as person:
                clients = subprocess.run(  # tmux_mcp.socket: a private tmux socket
                    [tmux_mcp.tmux, "-S", str(tmux_mcp.socket), "list-clients", "-F", "#{client_control_mode} #{client_name}"],
                    capture_output=True, text=True, check=True,
                ).stdout.split("\n")
                names = [line.split(" ", 1)[1] for line in clients if line.startswith("0 ")]
                assert len(names) == 1, clients
                result = await session.call_tool("run", {"target": pane, "command": "echo from-agent-42"})
                assert not result.is_error, text_of(result)
                done = result.structured_content
                assert (done["status"], done["exit_status"]) == ("completed", 0), done
                assert "from-agent-42" in done["output"], done
                assert done["sharing"]["watched_by"] == names, done
                assert f"A person watches this terminal (tmux client {names[0]})" in text_of(result)
                sent = await call(session, "send_text", target=pane, text="echo typed-by-agent", enter=True)
                assert sent["sharing"]["watched_by"] == names, sent
                person.read_until(b"typed-by-agent")
                info = await call(session, "pane_info", target=pane)
                people = info["people"]
                assert people["watching"] == names and "typing" not in people, people
                # Since when: the client's attach time, to the second.
                assert [c["client"] for c in people["clients"]] == names, people
                assert people["clients"][0]["attached_at"].endswith("Z"), people
                listed = await call(session, "list_terminals")
                entries = [p for s in listed["sessions"] for w in s["windows"] for p in w["panes"]]
                assert [p.get("people", {}).get("watching") for p in entries if p["id"] == pane] == [names], entries
            # Gone with the person.
            info = await call(session, "pane_info", target=pane)
            assert info["people"] == {}, info["people"]


async def test_human_input_allow_types_over_a_line_it_did_not_type(tmux_mcp: TmuxMcp) -> None:
    """`--human-input allow`: the server's choice to type anyway."""
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session("--human-input", "allow", env={"SHELL": shell_path("bash")}) as (session, _):
            pane, ready = await terminal_at_prompt(session, "allowed")
            subprocess.run(  # tmux_mcp.socket: a private tmux socket
                [tmux_mcp.tmux, "-S", str(tmux_mcp.socket), "send-keys", "-t", pane, "-l", "echo left-"],
                check=True,
            )
            await call(session, "wait_for_output", target=pane, pattern="left-", literal=True, cursor=ready["cursor"], timeout_secs=20)
            done = await call(session, "run", target=pane, command="echo over")
            assert "left-echo over" in done["output"], done


@pytest.mark.parametrize("shell", SHELLS)
async def test_what_a_person_ran_is_told_once_in_the_next_reply(tmux_mcp: TmuxMcp, shell: str) -> None:
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session(env={"SHELL": shell_path(shell)}) as (session, _):
            pane, ready = await terminal_at_prompt(session, "told")
            mine = await call(session, "run", target=pane, command="echo from-agent")
            assert mine["status"] == "completed", mine
            with attached(tmux_mcp, "told", b"\x1b[") as person:
                # The person runs two commands, then one whose output says
                # the two are done (its line spells the word apart).
                person.type("false\r")
                person.type("true\r")
                person.type("printf 'mark%s\\n' er-2\r")
                person.read_until(b"marker-2")
                # tmux writes to the person's client and to tmux-mcp's
                # control client separately: the first reply about the pane
                # is a wait until tmux-mcp has it too.
                first = await session.call_tool(
                    "wait_for_output", {"target": pane, "pattern": "marker-2", "cursor": mine["cursor"], "timeout_secs": 20}
                )
                assert first.structured_content["status"] == "matched", first.structured_content
                assert not first.is_error, text_of(first)
                news = (first.meta or {}).get("tmux-mcp/people", {}).get("news", [])
                assert len(news) == 1, (first.meta, [(r["command"], r.get("by_person"), r.get("typed_by")) for r in (await call(session, "list_regions", target=pane))["regions"]])
                ran = [(r["command"], r["exit_status"]) for r in news[0]["ran"]]
                assert ran[:2] == [("false", 1), ("true", 0)], ran
                assert all(r["pane"] == pane for r in news[0]["ran"])
                # The agent's own run is not news.
                assert all("from-agent" not in (c or "") for c, _ in ran), ran
                assert f"a person ran in pane {pane}: `false` → 1, `true` → 0" in text_of(first), text_of(first)
                # Told once: the next reply does not repeat them.
                again = await session.call_tool("pane_info", {"target": pane})
                told = (again.meta or {}).get("tmux-mcp/people", {}).get("news", [])
                assert all(r["command"] not in ("false", "true") for n in told for r in n["ran"]), told
                listed = await call(session, "list_regions", target=pane)
                by = {r["command"]: (r.get("by_person", False), r.get("typed_by")) for r in listed["regions"]}
                assert by["false"] == (True, None) and by["true"] == (True, None), by
                assert by["echo from-agent"][0] is False and by["echo from-agent"][1], by


async def test_over_person_types_over_a_line_and_is_audited(tmux_mcp: TmuxMcp) -> None:
    """`over_person: true`: the call's explicit override, named in the
    reply and kept in the audit log."""
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session("--audit-log", str(tmux_mcp.audit), env={"SHELL": shell_path("bash")}) as (session, _):
            pane, ready = await terminal_at_prompt(session, "overridden")
            with attached(tmux_mcp, "overridden", b"\x1b[") as person:
                person.type("echo left-")
                await call(session, "wait_for_output", target=pane, pattern="left-", literal=True, cursor=ready["cursor"], timeout_secs=20)
                refused_for_a_person(await session.call_tool("send_text", {"target": pane, "text": "by-agent"}))
                sent = await call(session, "send_text", target=pane, text="by-agent", over_person=True)
                assert sent["sharing"]["typed_over_person"].startswith("/dev/"), sent
                await call(session, "wait_for_output", target=pane, pattern="by-agent", literal=True, cursor=sent["cursor"], timeout_secs=20)
                assert screen(tmux_mcp, pane).rstrip().endswith("echo left-by-agent"), screen(tmux_mcp, pane)
    audited = [r for r in tmux_mcp.audit_records() if r["tool"] == "send_text"]
    assert any((r.get("arguments") or {}).get("over_person") is True for r in audited), audited


async def test_human_input_wait_types_once_the_person_is_done(tmux_mcp: TmuxMcp) -> None:
    """`--human-input wait`: the agent's run waits while the person's line
    is on the prompt, and runs once they submit it."""
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session("--human-input", "wait", env={"SHELL": shell_path("bash")}) as (session, _):
            pane, ready = await terminal_at_prompt(session, "waited")
            with attached(tmux_mcp, "waited", b"\x1b[") as person:
                person.type("echo by-the-person")
                await call(session, "wait_for_output", target=pane, pattern="by-the-person", literal=True, cursor=ready["cursor"], timeout_secs=20)
                async with anyio.create_task_group() as tasks:
                    results: dict = {}

                    async def agent() -> None:
                        results["run"] = await call(session, "run", target=pane, command="echo by-the-agent", timeout_secs=30)

                    tasks.start_soon(agent)
                    # The person finishes their line while the run waits.
                    await anyio.sleep(0.5)  # A true timer: let the run reach its check first.
                    assert "run" not in results, results
                    person.type("\r")
            done = results["run"]
            assert (done["status"], done["output"]) == ("completed", "by-the-agent\n"), done
            assert done["sharing"]["waited_for_person_ms"] > 0, done
            shown = screen(tmux_mcp, pane)
            assert "by-the-person" in shown and "echo by-the-personecho" not in shown, shown
