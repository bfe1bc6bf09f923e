"""The mteb-versions tier: the mteb-facing tests pass on every mteb version of the range setup.cfg states.

Each version is installed alone (``pip install --no-deps --target``; the rest of the environment as it is) into a
folder kept across runs under ``$AIRBENCH_MTEB_VERSIONS_CACHE`` (default ``~/.cache/airbench-mteb/mteb-versions``),
then one pytest process per version, with that folder first on its path, runs the mteb-facing test files (the suite
itself runs them on the installed mteb, which is skipped here). Without PyPI and without the folder, that version's
test is skipped and says so. It runs with ``AIRBENCH_MTEB_VERSIONS_TIER=1``, as .ci/run's step after the README's
test command: ``AIRBENCH_MTEB_VERSIONS_TIER=1 python -m pytest -q -n 2 --dist load tests/test_mteb_versions.py`` (one version a worker).
"""

from __future__ import annotations

import configparser
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from airbench_mteb.mteb_compat import CHECKED_ON

ROOT = Path(__file__).resolve().parents[1]
MTEB_FACING = ("tests/test_mteb_compat.py", "tests/test_registration.py", "tests/test_mteb_conventions.py",
               "tests/test_mteb_facing.py")
CACHE_ENV = "AIRBENCH_MTEB_VERSIONS_CACHE"
# minutes per version: run as .ci/run's own step after the README's test command, not in the working loop
TIER_ENV = "AIRBENCH_MTEB_VERSIONS_TIER"


def _minor(version: str) -> tuple[int, int]:
    major, minor = version.split(".")[:2]
    return int(major), int(minor)


def test_setup_cfg_admits_exactly_the_minor_versions_checked() -> None:
    """``mteb>=A.B,<C.D`` in setup.cfg: every minor version from A.B up to before C.D has its newest release checked
    (mteb_compat.CHECKED_ON), and no other."""
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg", encoding="utf-8")
    (line,) = [line for line in config["options"]["install_requires"].splitlines() if line.startswith("mteb")]
    match = re.fullmatch(r"mteb>=(\d+)\.(\d+),<(\d+)\.(\d+)", line.replace(" ", ""))
    assert match, f"setup.cfg: {line!r} is not of the form mteb>=A.B,<C.D"
    low, high = (int(match[1]), int(match[2])), (int(match[3]), int(match[4]))
    assert low[0] == high[0], "the range stays within one major version"
    assert sorted({_minor(v) for v in CHECKED_ON}) == [(low[0], m) for m in range(low[1], high[1])]
    assert len({_minor(v) for v in CHECKED_ON}) == len(CHECKED_ON), "one release per minor version"


def _cache() -> Path:
    return Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "airbench-mteb" / "mteb-versions")


def mteb_folder(version: str) -> Path:
    """A folder holding mteb ``version`` alone, installed on first use; skips the test when PyPI cannot be reached."""
    folder = _cache() / f"mteb-{version}"
    if (folder / "mteb" / "__init__.py").is_file():
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".mteb-{version}-", dir=folder.parent))
    done = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--disable-pip-version-check",
                           "--target", str(staging), f"mteb=={version}"], capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        pytest.skip(f"mteb {version} is not in {folder} and pip could not install it (no PyPI?): "
                    f"{done.stderr.strip().splitlines()[-1:] or done.returncode}")
    staging.rename(folder)  # whole or not at all: a run stopped half-way leaves only a staging folder
    return folder


@pytest.mark.slow
@pytest.mark.parametrize("version", CHECKED_ON)
def test_the_mteb_facing_tests_pass_on(version: str, tmp_path: Path) -> None:
    from importlib.metadata import version as installed

    if os.environ.get(TIER_ENV) != "1":
        pytest.skip(f"the mteb-versions tier runs with {TIER_ENV}=1 (.ci/run's last step)")
    if installed("mteb") == version:
        pytest.skip(f"mteb {version} is the installed one: the suite runs {', '.join(MTEB_FACING)} on it")
    folder = mteb_folder(version)
    numbers = tmp_path / "numbers.json"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(folder), str(ROOT), os.environ.get("PYTHONPATH", "")]),
           "AIRBENCH_MTEB_NUMBERS": str(numbers), "AIRBENCH_MTEB_MTEB_UNDER_TEST": version}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--basetemp",
                           str(tmp_path / "pytest"), *MTEB_FACING], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=1800)
    assert done.returncode == 0, f"mteb {version}:\n{done.stdout[-6000:]}\n{done.stderr[-3000:]}"
    found = json.loads(numbers.read_text(encoding="utf-8"))
    assert found["mteb"] == version
    print(f"mteb {version}:", json.dumps(found))
