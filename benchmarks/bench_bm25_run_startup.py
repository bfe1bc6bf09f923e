"""`airbench-mteb run -m airbench-mteb/bm25` as a whole command: this tree against a baseline commit, in one run.

Each round runs the same small command, BM25 on CocktailNQUTD from the shipped sample data with its index already
stored (so what is timed is start-up, task loading, search and evaluation, not indexing), once with this tree's
package and once with the baseline's, alternating which goes first. The baseline is checked out with
``git worktree add`` into a temporary folder and put first on ``PYTHONPATH``: the same interpreter and installed
libraries run both. Prints each tree's median and, last, ``bm25_run_time_ratio=<this tree / baseline>``.

The default baseline, ``01bcaa2^``, is the last commit whose BM25 run went through the plugin's own copy of mteb's
``run`` steps (``mteb_compat.run_without_torch``); since 01bcaa2 it goes through mteb's own ``run`` with torch's
import deferred (``mteb_compat.torch_deferred``).

    python benchmarks/bench_bm25_run_startup.py [--baseline REV] [--rounds N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLI = "import sys; from airbench_mteb.cli import main; sys.exit(main())"
TASK = "CocktailNQUTD"


def _env(tree: Path, scratch: Path, name: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(tree), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
            "AIRBENCH_MTEB_CACHE": str(scratch / f"cache-{name}"), "MTEB_CACHE": str(scratch / f"mteb-{name}"),
            "AIRBENCH_MTEB_BM25_INDEX": str(scratch / f"index-{name}")}


def _run(tree: Path, scratch: Path, name: str, sample: Path, out: Path) -> float:
    """Seconds of one ``airbench-mteb run`` of BM25 with ``tree``'s package (a new results folder each time)."""
    command = [sys.executable, "-c", CLI, "run", "-m", "airbench-mteb/bm25", "-t", TASK, "--data-dir", str(sample),
               "--output-folder", str(out)]
    start = time.perf_counter()
    done = subprocess.run(command, env=_env(tree, scratch, name), capture_output=True, text=True, cwd=scratch)
    seconds = time.perf_counter() - start
    if done.returncode:
        raise SystemExit(f"{name}: {' '.join(command)} failed:\n{done.stderr[-3000:]}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="01bcaa2^", help="the commit to compare with (default: %(default)s)")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-bm25-run-") as folder:
        scratch = Path(folder)
        baseline = scratch / "baseline"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(baseline), args.baseline],
                       check=True, capture_output=True)
        try:
            sample = scratch / "sample-data"
            subprocess.run([sys.executable, "-c", CLI, "sample-data", "--out", str(sample)],
                           env=_env(ROOT, scratch, "this"), check=True, capture_output=True)
            trees = {"this tree": ROOT, f"baseline {args.baseline}": baseline}
            for name, tree in trees.items():  # each builds and stores its index once, untimed
                _run(tree, scratch, name.split()[0], sample, scratch / f"warm-{name.split()[0]}")
            times: dict[str, list[float]] = {name: [] for name in trees}
            for round_ in range(args.rounds):
                order = list(trees.items()) if round_ % 2 == 0 else list(reversed(trees.items()))
                for name, tree in order:
                    out = scratch / f"results-{name.split()[0]}-{round_}"
                    times[name].append(_run(tree, scratch, name.split()[0], sample, out))
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(baseline)],
                           check=False, capture_output=True)
    medians = {name: statistics.median(values) for name, values in times.items()}
    load = os.getloadavg()[0]
    print(f"`airbench-mteb run -m airbench-mteb/bm25 -t {TASK}` (index stored), {args.rounds} rounds, "
          f"1-minute load average {load:.1f} at the end:")
    for name, values in times.items():
        print(f"  {name}: median {medians[name]:.2f} s (min {min(values):.2f}, max {max(values):.2f})")
    this, base = medians.values()
    print(f"bm25_run_time_ratio={this / base:.2f}")


if __name__ == "__main__":
    main()
