"""Crash safety in figures: SIGKILL every long-running command at seeded random moments, re-run it and
compare with an uninterrupted run; then shared, full, read-only and corrupted storage.

    python benchmarks/bench_faults.py [--trials 30] [--seed 0] [--only run irsc ...]

The last five lines are ``kill_trials``, ``lost_items``, ``repeated_calls``, ``score_mismatches`` and
``half_written`` (``name=value``); all but the first must be 0. Every non-zero figure is explained
above them (command, trial, what differed). The fast subset is ``tests/test_crash_safety.py``.

MTEB 2.26 writes a result JSON in place (``TaskResult.to_disk``); the plugin writes it beside the target
and renames it (``registry.write_results_atomically``), and the ``storage`` scenario's full disk checks that.
Each trial takes seconds (unpack, package, generate cocktail) to about half a minute (run, generate irsc,
generate airbench, encode on Ray) on 2 shared cores.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("OMP_NUM_THREADS", "1")

SCENARIOS = ("run", "generate-airbench", "generate-cocktail", "irsc", "unpack", "package", "encode", "storage")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=30, help="SIGKILLs per command")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", nargs="*", choices=SCENARIOS, default=list(SCENARIOS))
    args = parser.parse_args()

    root = Path(tempfile.mkdtemp(prefix="bench_faults_"))
    os.environ["MTEB_CACHE"] = str(root / "mteb")
    os.environ["AIRBENCH_MTEB_CATALOG"] = str(root / "user_catalog.json")

    from tests.fault_scenarios import Figures, Suite, mirror_for
    from tests.faults import preload

    preload()
    figures = Figures()
    with ExitStack() as stack:
        suite = Suite(mirror_for(root / "mirror"), root, stack)
        for name in args.only:
            started = time.monotonic()
            scenario = getattr(suite, name.replace("-", "_"))
            part = scenario(root / name, args.trials, random.Random(f"{args.seed}-{name}"))
            print(f"{name}: {part.kill_trials} kills, {time.monotonic() - started:.0f} s, "
                  f"{len(part.notes)} notes", flush=True)
            figures.add(part)
    for note in figures.notes:
        print(note)
    for name in ("kill_trials", "lost_items", "repeated_calls", "score_mismatches", "half_written"):
        print(f"{name}={getattr(figures, name)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
