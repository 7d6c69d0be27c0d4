"""Secrets masked the same way by every reading tool of the built `tmux-mcp`
binary (docs/security.md, "Redaction"): a window into a private key block
that holds neither its BEGIN nor its END line (a `capture_screen` range, a
`read_output` page) is still masked, and the secret shapes of the built-in
pattern list are masked in `run` and `capture_screen`.

The keys are key-shaped text generated here (base64 of random bytes), not
keys. Everything runs on the private tmux server of the `tmux_mcp` fixture
(conftest.py); the shells get the test's private HOME.
"""

from __future__ import annotations

import base64
import json
import random

import anyio
import pytest
from support import TmuxMcp
from test_replies import LIMIT, RawClient, Server, run

pytestmark = pytest.mark.anyio


def body_lines(count: int, width: int, seed: int) -> list[str]:
    """`count` distinct base64 lines of `width` characters, like a key's body."""
    rng = random.Random(seed)
    lines = []
    for _ in range(count):
        raw = bytes(rng.getrandbits(8) for _ in range(width))
        lines.append(base64.b64encode(raw).decode()[:width])
    return lines


def openssh_key(body: list[str]) -> str:
    return "-----BEGIN OPENSSH PRIVATE KEY-----\n" + "\n".join(body) + "\n-----END OPENSSH PRIVATE KEY-----\n"


def pgp_key(body: list[str]) -> str:
    return (
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n"
        + "\n".join(body)
        + "\n=Xq3B\n-----END PGP PRIVATE KEY BLOCK-----\n"
    )


def leaks(reply: dict, body: list[str]) -> list[str]:
    """The body lines (or their first 24 characters) that a reply shows."""
    wire = json.dumps(reply)
    return [line for line in body if line[:24] in wire]


async def terminal(client: RawClient) -> str:
    created, _ = await client.call("create_terminal", {"width": 100, "height": 40})
    return created["structuredContent"]["pane"]


async def block_lines(client: RawClient, pane: str, lines: int) -> tuple[int, int]:
    """The line numbers of the BEGIN and END lines of the one key block in
    the pane's history (a whole-history capture masks it whole, keeping
    its lines: the mask is on the BEGIN line)."""
    whole, _ = await client.call("capture_screen", {"target": pane, "whole_history": True})
    shown = whole["structuredContent"]
    text = shown["text"].split("\n")
    begin = [i for i, line in enumerate(text) if "[REDACTED:private-key]" in line]
    assert len(begin) == 1, shown["text"]
    first = shown["first_line"] + begin[0]
    return first, first + lines - 1


async def test_windows_into_an_openssh_key_never_show_its_body(tmux_mcp: TmuxMcp) -> None:
    body = body_lines(25, 70, 1)
    key = tmux_mcp.root / "id_test"
    key.write_text(openssh_key(body))
    with anyio.fail_after(LIMIT):
        async with Server(tmux_mcp) as client:
            pane = await terminal(client)
            done, _ = await run(client, pane, f"clear; cat {key}")
            assert not leaks(done, body), done
            begin, end = await block_lines(client, pane, 27)
            # The window, then every six-line window strictly
            # inside the block (neither BEGIN nor END in it).
            windows = [(5, 10)] + [(s, s + 5) for s in range(begin + 1, end - 5)]
            for start, stop in windows:
                shot, _ = await client.call("capture_screen", {"target": pane, "start": start, "end": stop})
                assert not leaks(shot, body), (start, stop, shot["structuredContent"]["text"])
            # A window holding only BEGIN's neighbour, and one ending just before END.
            for start, stop in [(begin + 1, begin + 1), (end - 3, end - 1)]:
                shot, _ = await client.call("capture_screen", {"target": pane, "start": start, "end": stop})
                assert not leaks(shot, body), (start, stop, shot["structuredContent"]["text"])
                assert "[REDACTED:private-key]" in shot["structuredContent"]["text"], shot


async def test_a_long_pgp_key_is_masked_in_every_screen_window(tmux_mcp: TmuxMcp) -> None:
    body = body_lines(297, 64, 2)
    key = tmux_mcp.root / "secret.asc"
    key.write_text(pgp_key(body))
    assert len(key.read_text()) > 19_000
    with anyio.fail_after(LIMIT):
        async with Server(tmux_mcp) as client:
            pane = await terminal(client)
            done, _ = await run(client, pane, f"clear; cat {key}; echo after-the-key")
            assert not leaks(done, body), done
            # BEGIN, the blank line, the body, the checksum, END.
            begin, end = await block_lines(client, pane, 301)
            windows = [(-200, -150), (begin + 2, begin + 40), (begin + 100, begin + 150), (end - 60, end - 1)]
            for start, stop in windows:
                shot, _ = await client.call("capture_screen", {"target": pane, "start": start, "end": stop})
                shown = shot["structuredContent"]
                assert not leaks(shot, body), (start, stop, shown["text"])
                # The window keeps its lines and says what is there.
                assert shown["first_line"] == start, shown
                assert "[REDACTED:private-key]" in shown["text"], shown


async def test_a_long_pgp_key_is_masked_in_every_output_page(tmux_mcp: TmuxMcp) -> None:
    body = body_lines(297, 64, 3)
    key = tmux_mcp.root / "secret.asc"
    key.write_text(pgp_key(body))
    with anyio.fail_after(LIMIT):
        async with Server(tmux_mcp) as client:
            pane = await terminal(client)
            done, _ = await run(client, pane, f"clear; cat {key}; echo after-the-key")
            assert not leaks(done, body), done
            # Paging read_output through the whole output, in pages of the
            # default size and in the smallest ones.
            cursor = done["structuredContent"]["output_cursor"]
            assert cursor is not None, done
            for max_bytes in (None, 2048):
                at, pages = cursor, 0
                while True:
                    args = {"target": pane, "cursor": at}
                    if max_bytes is not None:
                        args["max_bytes"] = max_bytes
                    page, _ = await client.call("read_output", args)
                    got = page["structuredContent"]
                    assert not leaks(page, body), (max_bytes, pages, got["text"])
                    pages += 1
                    at = got["next_cursor"]
                    if not got["more"]:
                        break
                assert pages > 3, pages

            # The scrollback form of read_output, ending inside the block's tail.
            last, _ = await client.call("read_output", {"target": pane, "last_lines": 120})
            assert not leaks(last, body), last["structuredContent"]["text"]


SHAPES = [
    # (what the command prints, spelled with '' so only the output holds
    #  the secret; the secret; the mask)
    ("postgres://admin:Pg''Secret1@db.example:5432/app", "PgSecret1", "[REDACTED:password]"),
    ("DATABASE_URL=mysql://u:My''Secret2@h/db", "MySecret2", "[REDACTED:password]"),
    ("Authorization: Basic dXNlcjpw''YXNzd29yZA==", "dXNlcjpwYXNzd29yZA==", "[REDACTED:basic-auth]"),
    ("machine example.com login ann password Net''rcPw3", "NetrcPw3", "[REDACTED:password]"),
    ("mysqldump --password Fl''agPw4 db", "FlagPw4", "[REDACTED:password]"),
    ("psql --password=Fl''agPw5", "FlagPw5", "[REDACTED:password]"),
    ("mysql -uroot -pMy''sqlPw6 db", "MysqlPw6", "[REDACTED:password]"),
    ('{"auths":{"r.io":{"auth":"dXNl''cjpwYXNzd29yZDc="}}}', "dXNlcjpwYXNzd29yZDc=", "[REDACTED:password]"),
    ("api key: Ap''iKey8value", "ApiKey8value", "[REDACTED:password]"),
    ("sk_live_''4eC39HqLyjWDarjtT1zdp7dc", "sk_live_4eC39HqLyjWDarjtT1zdp7dc", "[REDACTED:api-key]"),
    ("glpat-''xXyYzZ0123456789abcd", "glpat-xXyYzZ0123456789abcd", "[REDACTED:gitlab-token]"),
    ("key=AIza''SyA1234567890abcdefghijklmnopqrstuv", "AIzaSyA1234567890abcdefghijklmnopqrstuv", "[REDACTED:google-api-key]"),
    ("ghp_''0123456789abcdefghijklmnopqrstuvwxyz_x", "0123456789abcdefghijklmnopqrstuvwxyz", "[REDACTED:github-token]"),
]


async def test_secret_shapes_are_masked_in_run_and_capture_screen(tmux_mcp: TmuxMcp) -> None:
    script = tmux_mcp.root / "shapes.sh"
    lines = [f"printf '%s\\n' '{printed}'\n" for printed, _, _ in SHAPES]
    lines.append("echo 'password:'; echo --password-file /tmp/pwfile\n")
    script.write_text("".join(lines))
    with anyio.fail_after(LIMIT):
        async with Server(tmux_mcp) as client:
            pane = await terminal(client)
            done, _ = await run(client, pane, f"clear; sh {script}")
            output = done["structuredContent"]["output"]
            shot, _ = await client.call("capture_screen", {"target": pane})
            screen = shot["structuredContent"]["text"]
            for printed, secret, mask in SHAPES:
                for where, text in (("run", output), ("capture_screen", screen)):
                    assert secret not in text, (where, printed, text)
                    assert mask in text, (where, printed, mask, text)
            # Near misses stay as they are.
            for text in (output, screen):
                assert "password:\n" in text, text
                assert "--password-file /tmp/pwfile" in text, text
