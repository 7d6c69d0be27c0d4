"""The browser of the web view's tests (tests/python/test_web*.py): Debian's
headless Chromium (`/usr/bin/chromium`, which scripts/setup installs), driven
by Playwright for Python (pinned in .venv by scripts/setup; never
`playwright install`: no browser of Playwright's own is used).

`chromium()` starts the browser, `page_at()` opens a page and waits for the
view's test API (`window.tmuxView`, docs/web-view.md) to be ready; the other
helpers read and drive that API. Everything is async (the tests run on
anyio's asyncio backend, beside the MCP Python client).

Without /usr/bin/chromium the tests are skipped, except under CI (the
environment variable CI set), where they fail: a CI that does not run them
must not pass for one that does.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Browser, ConsoleMessage, Error, Page, async_playwright

#: Debian's Chromium.
CHROMIUM = Path("/usr/bin/chromium")

#: Milliseconds any one wait on the page may take (Playwright's deadline).
PAGE_LIMIT_MS = 20_000


def require_chromium() -> None:
    """Skips the test when there is no Chromium, or fails it under CI."""
    if CHROMIUM.exists():
        return
    why = f"{CHROMIUM} is not installed (scripts/setup installs Debian's chromium)"
    if os.environ.get("CI"):
        pytest.fail(why)
    pytest.skip(why)


@contextlib.asynccontextmanager
async def chromium(home: Path | None = None) -> AsyncIterator[Browser]:
    """A headless Chromium, with a private HOME (`home`, else a temporary
    directory) and a fresh profile. `--no-sandbox`: CI runs as root, where
    Chromium's sandbox does not start."""
    require_chromium()
    with contextlib.ExitStack() as stack:
        if home is None:
            home = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="tmux-mcp-chromium-")))
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "LANG": "C.UTF-8",
            "TMPDIR": str(home),
        }
        async with async_playwright() as p:
            browser = await p.chromium.launch(
                executable_path=str(CHROMIUM),
                headless=True,
                args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
                env=env,
            )
            try:
                yield browser
            finally:
                await browser.close()


@contextlib.asynccontextmanager
async def page_at(
    browser: Browser,
    url: str,
    *,
    width: int = 1600,
    height: int = 1000,
    ready: bool = True,
    init_script: str | None = None,
) -> AsyncIterator[Page]:
    """A page (in a context of its own: its own cookies) at `url`, once
    `window.tmuxView.ready` resolved (unless `ready` is False), with
    `init_script` run before the page's own scripts. The page's console
    messages and errors are printed (pytest shows them for a failed
    test)."""
    context = await browser.new_context(viewport={"width": width, "height": height})
    try:
        if init_script is not None:
            await context.add_init_script(init_script)
        page = await context.new_page()
        page.set_default_timeout(PAGE_LIMIT_MS)

        def console(message: ConsoleMessage) -> None:
            print(f"[page console {message.type}] {message.text}")

        page.on("console", console)
        page.on("pageerror", lambda error: print(f"[page error] {error}"))
        await page.goto(url)
        if ready:
            await wait_ready(page)
        yield page
    finally:
        await context.close()


async def wait_ready(page: Page) -> None:
    """Waits for `window.tmuxView.ready` (the first list of terminals)."""
    await page.wait_for_function("() => window.tmuxView !== undefined")
    await page.evaluate("() => window.tmuxView.ready.then(() => true)")


async def open_view(page: Page, terminal: str) -> None:
    """Opens a view of `terminal` (`HOST:%PANE`) and waits until its first
    snapshot is written into its xterm.js terminal."""
    await page.evaluate("id => window.tmuxView.open(id).then(() => true)", terminal)


async def screen_text(page: Page, terminal: str) -> list[str]:
    """The visible rows of the view of `terminal`, trailing spaces removed."""
    return await page.evaluate("id => window.tmuxView.screenText(id)", terminal)


async def buffer_text(page: Page, terminal: str) -> list[str]:
    """Every row of the view's buffer, scrollback included."""
    return await page.evaluate("id => window.tmuxView.bufferText(id)", terminal)


async def view_state(page: Page, terminal: str) -> dict[str, Any]:
    """`{offset, written, cols, rows}` of the view of `terminal`."""
    return await page.evaluate(
        """id => {
            const v = window.tmuxView.views[id];
            return {offset: v.offset, written: v.written, cols: v.term.cols, rows: v.term.rows};
        }""",
        terminal,
    )


async def wait_for_screen(page: Page, terminal: str, rows: list[str], timeout_ms: int = PAGE_LIMIT_MS) -> None:
    """Waits, on the page (the check runs there as the terminal is written),
    until the visible rows of `terminal` are `rows` (trailing spaces removed
    from both). On a timeout, the assertion shows both screens."""
    expected = [row.rstrip(" ") for row in rows]
    try:
        await page.wait_for_function(
            """([id, rows]) => {
                const v = window.tmuxView.views[id];
                if (!v) return false;
                const got = window.tmuxView.screenText(id);
                return got.length === rows.length && got.every((row, i) => row === rows[i]);
            }""",
            arg=[terminal, expected],
            timeout=timeout_ms,
        )
    except Error as error:
        got = await screen_text(page, terminal)
        diff = [f"{i:3} page {g!r}\n    tmux {e!r}" for i, (g, e) in enumerate(zip(got, expected)) if g != e]
        raise AssertionError(
            f"the page's screen of {terminal} did not become tmux's ({error.message.splitlines()[0]}); "
            f"{len(got)} rows against {len(expected)}; differing rows:\n" + "\n".join(diff)
        ) from None
