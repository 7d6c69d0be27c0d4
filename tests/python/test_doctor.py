"""`tmux-mcp doctor [--json]`, run as the built binary: what it reports with
tmux on PATH (the private server not started, then running), without tmux on
PATH, and for a token file others can read."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from support import TmuxMcp

#: The name of the doctor's check of the tmux program: a key of its JSON
#: report, not a command (the doctor starts no tmux).
PROGRAM_CHECK = "tmux"

CHECKS = {"config", PROGRAM_CHECK, "socket_dir", "server", "state_dir", "shell_integration", "token_file", "hosts"}


def doctor(tmux_mcp: TmuxMcp, *args: str, env: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
    """Runs `tmux-mcp doctor --json` on the test's private socket; returns
    the exit status and the parsed report (it must be one JSON object)."""
    done = subprocess.run(
        tmux_mcp.command("doctor", "--json", *args),
        env=tmux_mcp.env(env),
        cwd=str(tmux_mcp.home),
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    lines = done.stdout.splitlines()
    assert len(lines) == 1, done.stdout
    return done.returncode, json.loads(lines[0])


def by_name(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    checks = {c["name"]: c for c in report["checks"]}
    for check in report["checks"]:
        assert check["status"] in {"ok", "warn", "fail", "skipped"}, check
        assert isinstance(check["message"], str) and check["message"], check
        assert "hint" in check, check
    return checks


def test_doctor_with_tmux_sees_the_private_server_before_and_after_it_starts(tmux_mcp: TmuxMcp) -> None:
    status, report = doctor(tmux_mcp)
    checks = by_name(report)
    assert set(checks) == CHECKS
    assert status == 0 and report["ok"] is True, report
    assert isinstance(report["version"], str)
    found = checks[PROGRAM_CHECK]
    assert found["status"] == "ok", found
    assert found["path"] == tmux_mcp.tmux
    assert found["version"] and found["supported"] is True
    assert found["features"]["control_mode"] is True
    server = checks["server"]
    assert server["status"] == "ok" and server["running"] is False, server
    assert "not started yet" in server["message"] and "first use" in server["message"]
    # The doctor started nothing.
    assert not tmux_mcp.socket.exists()
    assert checks["socket_dir"]["status"] == "ok" and checks["socket_dir"]["path"] == str(tmux_mcp.root)
    assert checks["shell_integration"]["kind"] == "bash"
    assert checks["hosts"]["status"] == "skipped"

    subprocess.run([tmux_mcp.tmux, "-S", str(tmux_mcp.socket), "new-session", "-d", "-s", "doc"], env=tmux_mcp.env(), check=True)
    status, report = doctor(tmux_mcp)
    server = by_name(report)["server"]
    assert status == 0, report
    assert server["status"] == "ok" and server["running"] is True, server
    assert "reachable" in server["message"]

    # --no-shell-integration is reported as such.
    _, report = doctor(tmux_mcp, env={"TMUX_MCP_NO_SHELL_INTEGRATION": "true"})
    shell = by_name(report)["shell_integration"]
    assert shell["status"] == "skipped" and shell["enabled"] is False, shell


def test_doctor_without_tmux_on_path_fails_that_check_and_reports_the_rest(tmux_mcp: TmuxMcp, tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    status, report = doctor(tmux_mcp, env={"PATH": str(empty)})
    checks = by_name(report)
    assert status == 1 and report["ok"] is False
    assert set(checks) == CHECKS
    missing = checks[PROGRAM_CHECK]
    assert missing["status"] == "fail", missing
    assert "not found" in missing["message"]
    assert "--tmux" in missing["hint"]
    # Everything that does not need tmux is still checked.
    assert checks["server"]["status"] == "ok" and checks["server"]["running"] is False
    assert checks["state_dir"]["status"] == "ok"
    assert [c["name"] for c in report["checks"] if c["status"] == "fail"] == [PROGRAM_CHECK]

    # The table form says the same to a person, with the exit status.
    table = subprocess.run(
        [str(tmux_mcp.bin), "--socket-path", str(tmux_mcp.socket), "doctor"],
        env=tmux_mcp.env({"PATH": str(empty)}),
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert table.returncode == 1
    assert "FAIL" in table.stdout and "tmux not found" in table.stdout and "fix:" in table.stdout
    assert "1 check failed." in table.stdout


def test_doctor_checks_the_token_file_mode(tmux_mcp: TmuxMcp) -> None:
    token = tmux_mcp.root / "token"
    token.write_text("a-secret-of-enough-characters\n")
    token.chmod(0o644)
    status, report = doctor(tmux_mcp, "--token-file", str(token))
    check = by_name(report)["token_file"]
    assert status == 1
    assert check["status"] == "fail" and check["mode"] == "0644", check
    assert "chmod 600" in check["hint"]

    token.chmod(0o600)
    status, report = doctor(tmux_mcp, env={"TMUX_MCP_TOKEN_FILE": str(token)})
    check = by_name(report)["token_file"]
    assert status == 0, report
    assert check["status"] == "ok" and check["mode"] == "0600", check

    _, report = doctor(tmux_mcp, "--token-file", str(tmux_mcp.root / "absent"))
    check = by_name(report)["token_file"]
    assert check["status"] == "ok" and check["exists"] is False, check

    # Without --token-file: the default one serve --http uses, in the
    # state directory.
    tmux_mcp.state.mkdir(mode=0o700, exist_ok=True)
    default = tmux_mcp.state / "http-token"
    default.write_text("secret\n")
    default.chmod(0o640)
    status, report = doctor(tmux_mcp)
    check = by_name(report)["token_file"]
    assert status == 1 and check["status"] == "fail" and check["path"] == str(default), check


def test_doctor_reports_a_bad_configuration_as_a_failed_check(tmux_mcp: TmuxMcp) -> None:
    status, report = doctor(tmux_mcp, env={"TMUX_MCP_HISTORY_LIMIT": "5"})
    checks = by_name(report)
    assert status == 1
    assert checks["config"]["status"] == "fail" and "--history-limit" in checks["config"]["message"]
    assert set(checks) == CHECKS


def test_doctor_reads_the_shell_version(tmux_mcp: TmuxMcp, tmp_path: Path) -> None:
    _, report = doctor(tmux_mcp)
    shell = by_name(report)["shell_integration"]
    assert shell["status"] == "ok" and "bash" in shell["shell_version"], shell

    # A bash too old for the hooks (PS0 came in 4.4) is a warning.
    old = tmp_path / "bash"
    old.write_text("#!/bin/sh\necho 'GNU bash, version 4.3.48(1)-release'\n")
    old.chmod(0o755)
    status, report = doctor(tmux_mcp, env={"SHELL": str(old)})
    shell = by_name(report)["shell_integration"]
    assert status == 0
    assert shell["status"] == "warn" and "4.4" in shell["message"], shell
