"""The bad-input suite: every case gets a one-line error naming its culprit, or a correct result."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.bad_inputs.framework import Outcome, Workspace, all_cases, run_case

CASES = all_cases()


@pytest.fixture(scope="session", autouse=True)
def _shared_root(tmp_path_factory: pytest.TempPathFactory) -> None:
    Workspace.shared_root = tmp_path_factory.mktemp("bad_inputs_shared")


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id, marks=[pytest.mark.slow] if c.slow else []) for c in CASES])
def test_case(case, tmp_path: Path) -> None:
    result = run_case(case, Workspace(tmp_path))
    assert result.outcome in (Outcome.CLEAR_ERROR, Outcome.CORRECT), f"{result.outcome.value}: {result.detail}"
