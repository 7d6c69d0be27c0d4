"""Live resources through the MCP Python SDK, on both protocol generations.

`legacy` is a `ClientSession` with the `initialize` handshake (2025-11-25),
which subscribes with `resources/subscribe`; `modern` is `mcp.Client` in
`mode="auto"`, which adopts 2026-07-28 through `server/discover` and
subscribes with `subscriptions/listen`. Every notification either client
receives is recorded by its `message_handler` with the time it arrived.
"""

from __future__ import annotations

import contextlib
import json
import re
import time
import warnings
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import anyio
import mcp
import mcp.types as types
import pytest
from mcp import ClientSession, stdio_client
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from support import HANDSHAKE_PROTOCOL, TmuxMcp, connecting_call, text_of

pytestmark = pytest.mark.anyio

#: Upper bound for one test's conversation with the server.
LIMIT = 60

#: How soon after new output a subscriber must hear of it, at the latest: a
#: bound for a loaded machine, not the figure (an update after a quiet
#: period is sent at once, in milliseconds; the test prints what it measured).
LATENCY = 3.0

#: The server's debounce: at most one update of a resource per this many
#: seconds (`DEBOUNCE` in tmux-mcp/src/subscriptions.rs).
DEBOUNCE = 0.1

GENERATIONS = ["legacy", "modern"]


@dataclass
class Seen:
    """Notifications as they arrived: (time.time(), method, uri or None)."""

    items: list[tuple[float, str, str | None]] = field(default_factory=list)
    #: Set (and replaced) on each notification, for `until`.
    changed: anyio.Event = field(default_factory=anyio.Event)

    async def handler(self, message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            self.items.append((time.time(), "updated", message.params.uri))
        elif isinstance(message, types.ResourceListChangedNotification):
            self.items.append((time.time(), "list_changed", None))
        else:
            return
        self.changed.set()
        self.changed = anyio.Event()

    def updates(self, uri: str | None = None, after: float = 0.0) -> list[float]:
        return [t for t, m, u in self.items if m == "updated" and (uri is None or u == uri) and t >= after]

    def list_changes(self, after: float = 0.0) -> list[float]:
        return [t for t, m, _ in self.items if m == "list_changed" and t >= after]


@dataclass
class Peer:
    """One connected client of either generation."""

    generation: str
    client: Any
    seen: Seen
    protocol: str

    async def call(self, name: str, args: dict[str, Any]) -> types.CallToolResult:
        result = await connecting_call(self.client.call_tool, name, args)
        assert not result.is_error, text_of(result)
        return result

    async def read(self, uri: str) -> str:
        if self.generation == "modern":
            result = await self.client.read_resource(uri, cache_mode="bypass")
        else:
            result = await self.client.read_resource(uri)
        assert len(result.contents) == 1, result
        assert result.contents[0].uri == uri
        return result.contents[0].text

    @contextlib.asynccontextmanager
    async def subscribed(self, uris: list[str], list_changed: bool = False) -> AsyncIterator[None]:
        """Subscribed to `uris` inside the block, unsubscribed after it."""
        if self.generation == "modern":
            async with self.client.listen(resource_subscriptions=uris, resources_list_changed=list_changed) as sub:
                assert sorted(sub.honored.resource_subscriptions or []) == sorted(uris)
                yield
            return
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MCPDeprecationWarning)  # the legacy generation on purpose
            for uri in uris:
                await self.client.subscribe_resource(uri)
        yield
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MCPDeprecationWarning)  # the legacy generation on purpose
            for uri in uris:
                await self.client.unsubscribe_resource(uri)


@contextlib.asynccontextmanager
async def connect(tmux_mcp: TmuxMcp, generation: str) -> AsyncIterator[Peer]:
    seen = Seen()
    if generation == "modern":
        async with mcp.Client(tmux_mcp.params(), mode="auto", message_handler=seen.handler) as client:
            assert client.protocol_version == "2026-07-28"
            caps = client.server_capabilities.resources
            assert caps is not None and caps.subscribe and caps.list_changed
            yield Peer(generation, client, seen, client.protocol_version)
        return
    with tmux_mcp.log.open("a") as errlog:
        async with stdio_client(tmux_mcp.params(), errlog=errlog) as (read, write):
            async with ClientSession(read, write, message_handler=seen.handler) as session:
                init = await session.initialize()
                assert init.protocol_version == HANDSHAKE_PROTOCOL
                caps = init.capabilities.resources
                assert caps is not None and caps.subscribe and caps.list_changed
                yield Peer(generation, session, seen, init.protocol_version)


async def new_pane(peer: Peer) -> str:
    created = await peer.call("create_terminal", {})
    return created.structured_content["pane"]


def screen_uri(pane: str) -> str:
    return f"tmux://pane/{pane.lstrip('%')}/screen"


def log_uri(pane: str) -> str:
    return f"tmux://pane/{pane.lstrip('%')}/log"


async def until(seen: Seen, predicate, what: str, limit: float = 5.0) -> None:
    """Waits until the notifications `seen` recorded satisfy `predicate`
    (woken by each notification, bounded by `limit`)."""
    try:
        with anyio.fail_after(limit):
            while not predicate():
                await seen.changed.wait()
    except TimeoutError:
        pytest.fail(f"no {what} within {limit} s; seen: {seen.items}")


# ---------------------------------------------------------------- listing and reading


@pytest.mark.parametrize("generation", GENERATIONS)
async def test_resources_are_listed_and_read(tmux_mcp: TmuxMcp, generation: str) -> None:
    with anyio.fail_after(LIMIT):
        async with connect(tmux_mcp, generation) as peer:
            templates = await peer.client.list_resource_templates()
            assert {t.uri_template for t in templates.resource_templates} == {
                "tmux://pane/{pane}/screen",
                "tmux://pane/{pane}/log",
            }
            # Before any tool call there is no connection: listing does not start tmux.
            listed = await peer.client.list_resources()
            assert [r.uri for r in listed.resources] == ["tmux://terminals", "tmux://events"]

            pane = await new_pane(peer)
            listed = await peer.client.list_resources()
            uris = {r.uri for r in listed.resources}
            assert {"tmux://terminals", screen_uri(pane), log_uri(pane)} <= uris
            assert not any(u.startswith("tmux://pane/") and "/0/" in u for u in uris if pane != "%0")

            sent = await peer.call(
                "send_text", {"target": pane, "text": "printf 'res %s\\n' AKIAIOSFODNN7EXAMPLE", "enter": True}
            )
            await peer.call(
                "wait_for_output",
                {"target": pane, "pattern": "^res ", "cursor": sent.structured_content["cursor"], "timeout_secs": 10},
            )

            await peer.call("wait_for_idle", {"target": pane, "quiet_secs": 0.3, "timeout_secs": 10})
            screen = await peer.read(screen_uri(pane))
            captured = text_of(await peer.call("capture_screen", {"target": pane}))
            assert screen.splitlines()[1:] == captured.splitlines()[1:], (screen, captured)
            assert screen.startswith(f"Pane {pane} ")
            assert "res [REDACTED:aws-access-key]" in screen.splitlines()
            assert "AKIAIOSFODNN7EXAMPLE" not in screen

            log = await peer.read(log_uri(pane))
            first, _, body = log.partition("\n")
            assert first.startswith(f"Output of pane {pane} from cursor 0 to "), first
            assert "res [REDACTED:aws-access-key]" in body.splitlines()
            assert "AKIAIOSFODNN7EXAMPLE" not in log
            # The spellings %3 and %253 name the same pane.
            assert (await peer.read(f"tmux://pane/{pane}/screen")).splitlines()[-1] == screen.splitlines()[-1]

            tree = json.loads(await peer.read("tmux://terminals"))
            panes = [p["id"] for s in tree["sessions"] for w in s["windows"] for p in w["panes"]]
            assert panes == [pane]

            with pytest.raises(MCPError) as missing:
                await peer.read("tmux://pane/999/screen")
            assert "999" in str(missing.value)
            with pytest.raises(MCPError):
                await peer.read("file:///etc/passwd")


async def test_the_log_says_what_it_leaves_out(tmux_mcp: TmuxMcp) -> None:
    with anyio.fail_after(LIMIT):
        async with connect(tmux_mcp, "legacy") as peer:
            pane = await new_pane(peer)
            sent = await peer.call(
                "send_text", {"target": pane, "text": "seq 1 20000; echo seq-done", "enter": True}
            )
            await peer.call(
                "wait_for_output",
                {"target": pane, "pattern": "^seq-done", "cursor": sent.structured_content["cursor"], "timeout_secs": 10},
            )
            log = await peer.read(log_uri(pane))
            first, _, body = log.partition("\n")
            found = re.match(rf"Output of pane {pane} from cursor (\d+) to (\d+) .*; the (\d+) bytes before cursor \1 are left out \(read_output target={pane} cursor=0 reads them\)", first)
            assert found, first
            start, end, left = (int(g) for g in found.groups())
            assert left == start > 0 and end - start <= 32 * 1024
            assert "seq-done" in body.splitlines() and "20000" in body.splitlines()


# ---------------------------------------------------------------- subscriptions


async def pane_time(peer: Peer, pane: str, mark: str, cursor: int) -> float:
    """The $EPOCHREALTIME the pane printed after `mark`."""
    found = await peer.call(
        "wait_for_output",
        {"target": pane, "pattern": rf"^{mark}=[0-9.]+$", "cursor": cursor, "timeout_secs": 10},
    )
    return float(found.structured_content["text"].split("=", 1)[1])


@pytest.mark.parametrize("generation", GENERATIONS)
async def test_a_subscriber_hears_of_output_quickly_and_at_most_ten_times_a_second(
    tmux_mcp: TmuxMcp, generation: str
) -> None:
    with anyio.fail_after(LIMIT):
        async with connect(tmux_mcp, generation) as peer, connect(tmux_mcp, "legacy") as bystander:
            pane = await new_pane(peer)
            screen, log = screen_uri(pane), log_uri(pane)
            # The bystander is connected to the same tmux server and reads the
            # pane, but subscribes to nothing.
            await bystander.call("pane_info", {"target": pane})
            async with peer.subscribed([screen, log]):
                # Latency: the pane prints the time after a quiet half second,
                # and both resources are updated after it, well within seconds.
                latencies = []
                for i in range(3):
                    sent = await peer.call(
                        "send_text",
                        {"target": pane, "text": f"sleep 0.5; printf 'T{i}=%s\\n' \"$EPOCHREALTIME\"", "enter": True},
                    )
                    printed = await pane_time(peer, pane, f"T{i}", sent.structured_content["cursor"])
                    await until(peer.seen, lambda: peer.seen.updates(screen, after=printed), "an update after the output")
                    await until(peer.seen, lambda: peer.seen.updates(log, after=printed), "an update of the log after the output")
                    latencies.append(min(peer.seen.updates(screen, after=printed)) - printed)
                print(f"{generation}: update latency after output {[round(x * 1000, 1) for x in latencies]} ms")
                assert max(latencies) < LATENCY, latencies

                # Rate: `yes` floods the pane for 2 s. Its end is waited for as
                # quiet, not as a line printed after it: tmux may discard
                # output of a flood (flow control), reported as a loss.
                # The rate is counted over the whole window, from before the
                # flood's first update was sent to after its last one arrived,
                # so late or bunched delivery on a loaded machine cannot
                # inflate it; the gaps between arrivals are only printed.
                await peer.call("send_text", {"target": pane, "text": "timeout 2 yes", "enter": True})
                began = time.time()
                await peer.call("wait_for_idle", {"target": pane, "quiet_secs": 0.5, "timeout_secs": 30})
                flood = peer.seen.updates(screen, after=began)
                window = time.time() - began
                gaps = [b - a for a, b in zip(flood, flood[1:])]
                busiest = max((sum(1 for t in flood if s <= t < s + 1.0) for s in flood), default=0)
                print(
                    f"{generation}: {len(flood)} updates of the screen in {window:.2f} s of flood, "
                    f"at most {busiest} in any second, shortest gap {min(gaps, default=0) * 1000:.1f} ms"
                )
                # Updates keep coming while the output flows (not only one at
                # its start: about 20 in the 2 s) ...
                assert len(flood) >= 5, flood
                # ... at most one per debounce period (plus one sent as the
                # window opened); without the debounce every %output line of
                # the flood would bring one, hundreds a second.
                assert len(flood) <= window / DEBOUNCE + 2, (len(flood), window, gaps)
                assert abs(len(peer.seen.updates(log, after=began)) - len(flood)) <= 1

            # Unsubscribed: no more updates, while output still flows (after
            # a second for any update already in flight to arrive).
            await anyio.sleep(1.0)
            quiet_from = time.time()
            await peer.call("send_text", {"target": pane, "text": "timeout 1 yes", "enter": True})
            await peer.call("wait_for_idle", {"target": pane, "quiet_secs": 0.5, "timeout_secs": 30})
            assert peer.seen.updates(after=quiet_from) == []
    assert bystander.seen.updates() == [], "a client that did not subscribe got updates"


@pytest.mark.parametrize("generation", GENERATIONS)
async def test_list_changed_when_terminals_come_and_go(tmux_mcp: TmuxMcp, generation: str) -> None:
    with anyio.fail_after(LIMIT):
        async with connect(tmux_mcp, generation) as peer:
            async with peer.subscribed(["tmux://terminals"], list_changed=True):
                # The first terminal: the first connection to tmux adds panes
                # to a list that had none.
                before = time.time()
                first = await new_pane(peer)
                await until(peer.seen, lambda: peer.seen.list_changes(after=before), "list_changed after the first terminal")
                # A terminal made by another client on the same server: the
                # change reaches this one through tmux's own notifications.
                async with tmux_mcp.session("--toolsets", "inspect,execute,teardown") as (other, _):
                    before = time.time()
                    made = await connecting_call(other.call_tool, "create_terminal", {})
                    assert not made.is_error, text_of(made)
                    await until(peer.seen, lambda: peer.seen.list_changes(after=before), "list_changed after a new terminal")
                    await until(peer.seen, lambda: peer.seen.updates("tmux://terminals", after=before), "a tree update")
                    listed = {r.uri for r in (await peer.client.list_resources()).resources}
                    second = made.structured_content["pane"]
                    assert screen_uri(second) in listed

                    before = time.time()
                    killed = await other.call_tool("kill_session", {"target": made.structured_content["session"]})
                    assert not killed.is_error, text_of(killed)
                    await until(peer.seen, lambda: peer.seen.list_changes(after=before), "list_changed after a kill")
                    listed = {r.uri for r in (await peer.client.list_resources()).resources}
                    assert screen_uri(second) not in listed and screen_uri(first) in listed


async def test_resources_follow_the_enabled_tools(tmux_mcp: TmuxMcp) -> None:
    """A resource shows what a tool shows, so it is served only when that
    tool is enabled: here read_output and list_terminals are, capture_screen
    is not."""
    with anyio.fail_after(LIMIT):
        async with tmux_mcp.session("--toolsets", "execute", "--tools", "read_output,list_terminals") as (session, init):
            templates = await session.list_resource_templates()
            assert [t.uri_template for t in templates.resource_templates] == ["tmux://pane/{pane}/log"]
            created = await connecting_call(session.call_tool, "create_terminal", {})
            assert not created.is_error, text_of(created)
            pane = created.structured_content["pane"]
            listed = {r.uri for r in (await session.list_resources()).resources}
            assert listed == {"tmux://terminals", log_uri(pane)}
            with pytest.raises(MCPError) as refused:
                await session.read_resource(screen_uri(pane))
            assert "capture_screen is not enabled" in str(refused.value)
            with pytest.raises(MCPError), warnings.catch_warnings():
                warnings.simplefilter("ignore", MCPDeprecationWarning)  # the legacy generation on purpose
                await session.subscribe_resource(screen_uri(pane))
            assert (await session.read_resource(log_uri(pane))).contents[0].text.startswith(f"Output of pane {pane} ")
