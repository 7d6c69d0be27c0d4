"""Replies an agent can use, measured on the wire: the whole JSON-RPC reply of
the built `tmux-mcp` binary within its size budget, failure-looking lines
first, how to read the rest, lost output reported, secrets masked across
fields and writes.

Sizes are measured on the bytes `tmux-mcp` writes to its standard output, so
these tests speak JSON-RPC over the child's pipes themselves (`RawClient`)
instead of through the SDK's `ClientSession`, which only hands back parsed
messages. Everything runs on the private tmux server of the `tmux_mcp`
fixture (conftest.py).
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

import anyio
import pytest
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream
from support import HANDSHAKE_PROTOCOL, TMUX_DIED, TmuxMcp

pytestmark = pytest.mark.anyio

#: Upper bound for one test's conversation with the server.
LIMIT = 60

#: The default size budget of a whole reply (docs/tools.md, "Replies").
REPLY_BUDGET = 8192


class RawClient:
    """A minimal MCP client over the child's stdin and stdout: one JSON
    object per line each way, and the exact byte length of every reply."""

    def __init__(self, process: Process) -> None:
        self.process = process
        assert process.stdout is not None and process.stdin is not None
        self.stdout = BufferedByteReceiveStream(process.stdout)
        self.next_id = 0

    async def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        await self.process.stdin.send((json.dumps(message) + "\n").encode())

    async def request(self, method: str, params: dict[str, Any]) -> tuple[dict[str, Any], int]:
        """Sends a request; returns its response and the response line's
        length in bytes (without the newline). Notifications the server
        sends meanwhile (progress, logging) are skipped."""
        self.next_id += 1
        rid = self.next_id
        await self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        while True:
            line = await self.stdout.receive_until(b"\n", 64 << 20)
            message = json.loads(line)
            if message.get("id") == rid and ("result" in message or "error" in message):
                return message, len(line)

    async def initialize(self) -> None:
        response, _ = await self.request(
            "initialize",
            {
                "protocolVersion": HANDSHAKE_PROTOCOL,
                "capabilities": {},
                "clientInfo": {"name": "test_replies", "version": "0"},
            },
        )
        assert "result" in response, response
        await self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    async def call(self, tool: str, args: dict[str, Any]) -> tuple[dict[str, Any], int]:
        """A tool call: the `result` object and the whole response's size.
        A first call that met tmux dying on a fresh server (see
        support.connecting_call) is retried once."""
        response, size = await self.request("tools/call", {"name": tool, "arguments": args})
        result = response["result"]
        if result.get("isError") and TMUX_DIED in text(result):
            response, size = await self.request("tools/call", {"name": tool, "arguments": args})
            result = response["result"]
        assert not result.get("isError"), text(result)
        return result, size


def text(result: dict[str, Any]) -> str:
    return "\n".join(block["text"] for block in result["content"] if block.get("type") == "text")


def tool_call(rid: int, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {"name": tool, "arguments": args}}


class Server:
    """A running `tmux-mcp` child and a `RawClient` on it."""

    def __init__(self, tmux_mcp: TmuxMcp, *args: str) -> None:
        self.tmux_mcp = tmux_mcp
        self.params = tmux_mcp.params(*args)
        self.process: Process | None = None
        self.client: RawClient | None = None

    async def __aenter__(self) -> RawClient:
        errlog = self.tmux_mcp.log.open("ab")
        self.process = await anyio.open_process(
            [self.params.command, *self.params.args],
            env=self.params.env,
            cwd=self.params.cwd,
            stderr=errlog,
        )
        errlog.close()
        self.client = RawClient(self.process)
        await self.client.initialize()
        return self.client

    async def __aexit__(self, *exc: object) -> None:
        assert self.process is not None
        if self.process.stdin is not None:
            await self.process.stdin.aclose()
        with anyio.move_on_after(10):
            await self.process.wait()
        if self.process.returncode is None:
            self.process.kill()
            await self.process.wait()


async def new_pane(client: RawClient) -> str:
    created, _ = await client.call("create_terminal", {})
    return created["structuredContent"]["pane"]


async def run(client: RawClient, pane: str, command: str, **args: Any) -> tuple[dict[str, Any], int]:
    return await client.call("run", {"target": pane, "command": command, **args})


# ---------------------------------------------------------------- size and shape


async def test_a_long_failing_run_fits_the_budget_with_the_failure_first(tmux_mcp: TmuxMcp) -> None:
    with anyio.fail_after(LIMIT):
        async with Server(tmux_mcp) as client:
            pane = await new_pane(client)
            command = (
                "for i in $(seq 1 2000); do "
                'if [ $i = 1017 ]; then echo "FAIL: test_17 expected 3 got 4"; '
                'else echo "ok $i: test_$i passed in 0.0${i}s"; fi; done; false'
            )
            result, size = await run(client, pane, command)
            print(f"2,000-line run with one FAIL: reply {size} bytes")
            assert size <= REPLY_BUDGET, size
            done = result["structuredContent"]
            assert done["status"] == "completed" and done["exit_status"] == 1
            assert done["output_bytes"] > 50_000
            # The failing line leads, in both forms of the reply.
            said = text(result)
            fail = said.index("FAIL: test_17 expected 3 got 4")
            assert fail < said.index("ok 1: test_1 passed")
            assert fail < said.index("ok 2000: test_2000 passed")
            assert done["highlights"][0]["text"] == "FAIL: test_17 expected 3 got 4"
            # The large output is in the text once; the structured form points to it.
            assert done["output"] is None
            assert said.count("ok 1999: test_1999 passed") == 1
            # How to read the rest: the omitted ranges and the read_output call.
            assert done["omitted"], done
            first = done["omitted"]["from_cursor"]
            assert f"read_output target={pane} cursor={first}" in said
            page, page_size = await client.call("read_output", {"target": pane, "cursor": first})
            assert page_size <= REPLY_BUDGET
            assert page["structuredContent"]["text"].startswith("ok ")


async def test_a_hundred_thousand_lines_are_bounded_and_say_how_to_read_the_rest(tmux_mcp: TmuxMcp) -> None:
    with anyio.fail_after(LIMIT):
        async with Server(tmux_mcp) as client:
            pane = await new_pane(client)
            result, size = await run(client, pane, "seq 1 100000")
            print(f"seq 1 100000: reply {size} bytes")
            assert size <= REPLY_BUDGET, size
            done = result["structuredContent"]
            said = text(result)
            assert done["exit_status"] == 0
            assert said.splitlines().count("1") == 1 and "\n100000" in said
            assert done["omitted"] and f"read_output target={pane} cursor=" in said
            # The rest reads back in pages, each within the budget too.
            cursor = done["omitted"]["from_cursor"]
            page, page_size = await client.call("read_output", {"target": pane, "cursor": cursor})
            assert page_size <= REPLY_BUDGET, page_size
            shown = page["structuredContent"]
            assert shown["text"] and shown["more"] is True
            assert shown["next_cursor"] > cursor


# ---------------------------------------------------------------- loss


def control_clients(tmux_mcp: TmuxMcp) -> list[str]:
    listed = subprocess.run(
        [tmux_mcp.tmux, "-S", str(tmux_mcp.socket), "list-clients", "-F", "#{client_name} #{client_control_mode}"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=10,
        check=True,
    )
    return [name for name, control in (line.split() for line in listed.stdout.splitlines()) if control == "1"]


def tmux(tmux_mcp: TmuxMcp, *args: str) -> None:
    subprocess.run(
        [tmux_mcp.tmux, "-S", str(tmux_mcp.socket), *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=10,
        check=True,
    )


async def test_a_flood_with_loss_says_what_is_missing_where_and_why(tmux_mcp: TmuxMcp) -> None:
    """10 MB of output (15 MB through the pty) through a 64 KiB pane log
    (eviction), and tmux pausing the pane in the middle of it (what
    `pause-after` does when tmux-mcp falls behind; forced here with
    `refresh-client -A PANE:pause` on tmux-mcp's control clients, so that it
    happens on every run): the run's reply says how much was evicted and
    where, and where tmux discarded output (tmux does not say how much)."""
    with anyio.fail_after(LIMIT):
        async with Server(tmux_mcp, "--pane-log-bytes", "65536") as client:
            pane = await new_pane(client)
            command = "yes | head -c 10000000; echo flood-done"
            # Two requests at once: the run, and a wait that answers as soon
            # as the flood is under way (a line that is just "y"; the typed
            # command line is not one).
            await client.send(tool_call(1001, "run", {"target": pane, "command": command}))
            await client.send(
                tool_call(1002, "wait_for_output", {"target": pane, "pattern": "^y$", "timeout_secs": 20})
            )
            replies: dict[int, tuple[dict[str, Any], int]] = {}
            paused = False
            while 1001 not in replies:
                line = await client.stdout.receive_until(b"\n", 64 << 20)
                message = json.loads(line)
                if message.get("id") in (1001, 1002):
                    replies[message["id"]] = (message, len(line))
                if 1002 in replies and not paused:
                    flowing = replies[1002][0]["result"]["structuredContent"]
                    assert flowing["status"] == "matched", flowing
                    clients = control_clients(tmux_mcp)
                    assert clients, "tmux-mcp has no control client on the server"
                    for name in clients:
                        await anyio.to_thread.run_sync(
                            lambda n=name: tmux(tmux_mcp, "refresh-client", "-t", n, "-A", f"{pane}:pause")
                        )
                    paused = True
            message, size = replies[1001]
            result = message["result"]
            print(f"10 MB flood with a pause: reply {size} bytes")
            said = text(result)
            assert not result.get("isError"), said
            done = result["structuredContent"]
            assert done["status"] == "completed", said
            assert size <= REPLY_BUDGET, size
            losses = done["losses"]
            evicted = [loss for loss in losses if loss["why"] == "evicted"]
            discarded = [loss for loss in losses if loss["why"] == "paused"]
            assert len(evicted) == 1 and evicted[0]["bytes"] > 10_000_000, losses
            assert evicted[0]["from_cursor"] == done["output_cursor"]
            assert evicted[0]["to_cursor"] - evicted[0]["from_cursor"] == evicted[0]["bytes"]
            assert discarded and discarded[0]["bytes"] is None, losses
            assert done["output_cursor"] <= discarded[0]["from_cursor"] <= done["cursor"]
            assert done["missed_bytes"] == evicted[0]["bytes"]
            # The text says it too: how many, where, why.
            assert f"{evicted[0]['bytes']} bytes (cursors {evicted[0]['from_cursor']} to" in said
            assert "evicted by newer output" in said
            assert "tmux discarded output" in said and f"cursor {discarded[0]['from_cursor']}" in said
            assert "tmux paused the pane because tmux-mcp fell behind; how much is unknown" in said
            assert "flood-done" in said

            # read_output over the same range reports the same losses.
            page, _ = await client.call("read_output", {"target": pane, "cursor": done["output_cursor"]})
            again = page["structuredContent"]
            assert again["missed_bytes"] == evicted[0]["bytes"]
            assert [loss["why"] for loss in again["losses"]][0] == "evicted"


# ---------------------------------------------------------------- secrets


async def wait(client: RawClient, pane: str, pattern: str, **args: Any) -> tuple[dict[str, Any], str]:
    result, size = await client.call("wait_for_output", {"target": pane, "pattern": pattern, "timeout_secs": 10, **args})
    assert size <= REPLY_BUDGET, size
    return result["structuredContent"], json.dumps(result)


async def test_secrets_matched_by_a_wait_or_split_across_writes_are_masked(tmux_mcp: TmuxMcp) -> None:
    token = "ghp_0123456789abcdefghijklmnopqrstuvwxyz"
    with anyio.fail_after(LIMIT):
        async with Server(tmux_mcp) as client:
            pane = await new_pane(client)

            # A wait whose pattern matches a secret's value: the match is
            # redacted together with the text before it. (The typed line
            # spells the value with '', so that only the output matches.)
            sent, _ = await client.call(
                "send_text",
                {"target": pane, "text": "printf 'DB_PASSWORD=hunter2''2-x\\nnext\\n'", "enter": True},
            )
            cursor = sent["structuredContent"]["cursor"]
            found, reply = await wait(client, pane, "hunter22", cursor=cursor)
            assert found["status"] == "matched", found
            assert "hunter22" not in reply, reply
            assert found["text"] == "[REDACTED:password]"
            assert found["before"].endswith("\nDB_PASSWORD=")
            # The value goes on after the match ("-x"): that field shows the
            # mask too. (tmux may hand the two lines over in two pieces, so
            # "next" need not have arrived with the match.)
            assert found["after"].startswith("[REDACTED:password]"), found
            assert "-x" not in found["after"], found

            # A token printed in two writes 0.3 s apart; the typed line
            # spells it with '' so that only the output holds it.
            first, rest = token[:14], token[14:]
            split = f"printf 'tok {first[:2]}''{first[2:]}'; sleep 0.3; printf '{rest} end\\n'"
            sent, _ = await client.call("send_text", {"target": pane, "text": split, "enter": True})
            cursor = sent["structuredContent"]["cursor"]
            # Matched on the first write alone: the token is cut off at the
            # end of the output so far, and still masked.
            early, _ = await wait(client, pane, "ghp_[0-9]+", cursor=cursor)
            assert early["status"] == "matched", early
            assert early["text"] == "[REDACTED:github-token]", early
            assert early["before"].endswith("\ntok "), early
            # Matched after the second write, from a cursor between the two
            # halves: the first half, before the cursor, is still redacted
            # with the match, so the second half is masked too.
            late, _ = await wait(client, pane, "[a-z]{10}", cursor=early["cursor"])
            assert late["status"] == "matched", late
            assert late["text"] == "[REDACTED:github-token]", late
            assert late["after"].startswith("[REDACTED:github-token] end"), late
            # And from before both: one mask over what the two writes printed.
            ended, _ = await wait(client, pane, " end$", cursor=cursor)
            assert ended["status"] == "matched", ended
            assert ended["before"].endswith("\ntok [REDACTED:github-token]"), ended

            # The same output through run and read_output.
            done, size = await run(client, pane, split)
            assert size <= REPLY_BUDGET
            assert done["structuredContent"]["output"] == "tok [REDACTED:github-token] end\n"
            page, _ = await client.call("read_output", {"target": pane, "cursor": cursor})
            assert "\ntok [REDACTED:github-token] end\n" in page["structuredContent"]["text"], page
            assert token not in json.dumps(page)


async def test_a_key_block_on_screen_and_prefixed_names_are_masked_without_over_masking(tmux_mcp: TmuxMcp) -> None:
    body = ["b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW", "QyNTUxOQAAACDcwRlp8CsFhAAAAJjM2w2dzNsNnQAAAAtzc2gtZWQyNTUxOQAAACDcwRl"]
    key = tmux_mcp.root / "key"
    key.write_text("-----BEGIN OPENSSH PRIVATE KEY-----\n" + "\n".join(body) + "\n-----END OPENSSH PRIVATE KEY-----\n")
    with anyio.fail_after(LIMIT):
        async with Server(tmux_mcp) as client:
            pane = await new_pane(client)
            await run(client, pane, f"cat {key}")
            idle, size = await client.call("wait_for_idle", {"target": pane, "quiet_secs": 0.2})
            assert size <= REPLY_BUDGET
            tail = idle["structuredContent"]["screen_tail"]
            for line in body:
                assert line not in json.dumps(idle), tail
            assert any("[REDACTED:private-key]" in line for line in tail), tail

            done, _ = await run(
                client,
                pane,
                "echo DB_PASS''WORD=a1 AWS_SECRET_ACCESS''_KEY=a2 MY_SEC''RET=a3 GITHUB_TO''KEN=a4; "
                "printf 'Password:\\nhello world\\n'",
            )
            output = done["structuredContent"]["output"]
            assert output == (
                "DB_PASSWORD=[REDACTED:password] AWS_SECRET_ACCESS_KEY=[REDACTED:password] "
                "MY_SECRET=[REDACTED:password] GITHUB_TOKEN=[REDACTED:password]\n"
                "Password:\nhello world\n"
            ), output
