"""The README's two commands are the ones CI runs and the docs repeat, exactly as typed: the install builds
llama-cpp-python portably (the build a crash message tells to rebuild), and .ci/run calls the README's test command."""

from __future__ import annotations

import re
from pathlib import Path

from airbench_mteb.models.llamacpp_process import PORTABLE_BUILD

ROOT = Path(__file__).resolve().parent.parent


def _bash_blocks(page: str) -> list[str]:
    return re.findall(r"```bash\n(.*?)```", (ROOT / page).read_text(), re.DOTALL)


def test_every_install_recipe_builds_llama_cpp_portably() -> None:
    install = re.compile(r"^.*pip install .*-e \"\.\[all\]\".*$", re.MULTILINE)
    for name in ("README.md", "docs/quickstart.md", ".ci/run"):
        lines = install.findall((ROOT / name).read_text())
        assert lines, f"{name}: no install command"
        assert all(f"{PORTABLE_BUILD} " in line for line in lines), f"{name}: {lines}"


def test_ci_runs_the_readmes_test_command_and_the_quick_start_gives_it() -> None:
    readme = [block.strip() for block in _bash_blocks("README.md") if block.startswith("python -m pytest")]
    assert len(readme) == 1, readme
    ci = [line for line in (ROOT / ".ci/run").read_text().splitlines() if "pytest" in line and not line.startswith("#")]
    assert ci[0] == readme[0]
    # its one other pytest step: the mteb-versions tier, which the README's command skips (minutes per version)
    assert ci[1:] == ["AIRBENCH_MTEB_VERSIONS_TIER=1 python -m pytest -q -n 2 --dist load tests/test_mteb_versions.py"]
    assert readme[0] in [block.strip() for block in _bash_blocks("docs/quickstart.md")]
