"""Every bad-input case of the project, run as a user would meet it, and what each gave.

The cases are the tables in ``tests/bad_inputs/cases_*.py`` (commands and readers of every family:
closed-book, leaderboard packages, re-ranking, register-dataset, data files, encode, settings,
generators, writers, significance). Each expects a one-line error naming its culprit, or a result
checked against an independent computation. This prints one line per case that did not get that, a
count per area, and last the tally:
``inputs=N clear_errors=N correct=N tracebacks=0 silent_wrong=0`` (unclear errors are printed too).

Run from the repository root: ``python benchmarks/bench_bad_inputs.py [-k SUBSTRING]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-k", default="", help="run only the cases whose id contains this")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    for name, value in (("HF_HUB_OFFLINE", "1"), ("HF_DATASETS_OFFLINE", "1"), ("TOKENIZERS_PARALLELISM", "false")):
        os.environ.setdefault(name, value)
    from tqdm import tqdm

    from tests.bad_inputs.framework import Outcome, Workspace, all_cases, run_case, tally

    cases = [c for c in all_cases() if args.k in c.id]
    with tempfile.TemporaryDirectory(prefix="bad_inputs_") as tmp:
        root = Path(tmp)
        # the same isolation the test suite gives: no user catalog, cache or results touched
        os.environ.update({"MTEB_CACHE": str(root / "mteb"), "AIRBENCH_MTEB_CATALOG": str(root / "catalog.json"),
                           "AIRBENCH_MTEB_EMBEDDING_CACHE": str(root / "embeddings"),
                           "AIRBENCH_MTEB_CACHE": str(root / "plugin-cache")})
        Workspace.shared_root = root / "shared"
        results = [run_case(case, Workspace(root / "cases" / case.id)) for case in tqdm(cases, desc="cases")]
    per_area: Counter[tuple[str, str]] = Counter((r.case.id.split("-")[0], r.outcome.value) for r in results)
    for area in sorted({a for a, _ in per_area}):
        print(f"{area:<14} " + " ".join(f"{o.value}={per_area[area, o.value]}" for o in Outcome))
    for result in results:
        if result.outcome not in (Outcome.CLEAR_ERROR, Outcome.CORRECT):
            detail = " | ".join(line for line in result.detail.strip().splitlines()[-3:])
            print(f"{result.outcome.value}: {result.case.id}: {detail}")
    counts = tally(results)
    print(f"unclear_errors={counts['unclear_errors']}")
    print(" ".join(f"{k}={counts[k]}" for k in ("inputs", "clear_errors", "correct", "tracebacks", "silent_wrong")))


if __name__ == "__main__":
    main()
