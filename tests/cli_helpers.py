"""Run the CLI in-process, as a user would from the shell, capturing exit code and output."""

from __future__ import annotations

import sys
from dataclasses import dataclass

import pytest

from training.cli import main


@dataclass
class CliResult:
    code: int
    out: str
    err: str


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> CliResult:
    capsys.readouterr()
    old = sys.argv
    sys.argv = ["rulebreaker", *args]
    code = 0
    try:
        main()
    except SystemExit as e:
        code = int(e.code or 0)
    finally:
        sys.argv = old
    captured = capsys.readouterr()
    return CliResult(code, captured.out, captured.err)
