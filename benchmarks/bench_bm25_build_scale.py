"""The BM25 index build and search at the size of AIR-Bench 24.04's largest corpora, without the analysis stage.

``bench_bm25_memory.py`` measures whole ``airbench-mteb run`` processes against Pyserini at 300,000 long documents;
this one rehearses what grows with the corpus, at ``qa_wiki_en`` 24.04's size by default: 6,740,000 documents of
334-1,000 tokens (mean 667) drawn with Zipf frequencies (s = 1) from a vocabulary of 2,000,000 terms, fed to
:class:`~airbench_mteb.models.bm25.build.IndexWriter` as analysed batches of 1,000 documents (made here with numpy,
as the analysers' worker processes would send them; their own memory is per batch and is measured by the other
benchmark), merged on every core, then opened memory-mapped and searched (200 queries of six terms, depth 1,000).
It prints the build's time, peak RSS (``VmHWM``: this one process; each merge process holds about ``MERGE_ENTRIES /
workers`` postings more) and the peak of its anonymous memory, sampled, the index's bytes per posting and per
document, and the search's time. Disk: about 16 bytes per posting while building.

Run: ``python benchmarks/bench_bm25_build_scale.py [--documents 6740000] [--vocabulary 2000000] [--folder DIR]``;
the last line is ``build_peak_rss_gb=<value>``.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from tqdm import tqdm

from airbench_mteb.models.bm25.build import AnalysedBatch, IndexWriter, _BatchPairs
from airbench_mteb.models.bm25.index import BM25Index
from airbench_mteb.models.bm25.worker_pool import available_cores

BATCH = 1000
LENGTHS = (334, 1000)


def _status_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    return 0


class AnonymousPeak(threading.Thread):
    """The peak of this process's anonymous resident memory (``RssAnon``), sampled every 0.2 s."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.peak_kb = 0
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.wait(0.2):
            self.peak_kb = max(self.peak_kb, _status_kb("RssAnon"))


def batches(documents: int, vocabulary: int, seed: int = 0) -> Iterator[AnalysedBatch]:
    """Analysed batches of synthetic documents, made as they are consumed."""
    rng = np.random.default_rng(seed)
    cdf = np.cumsum(1 / np.arange(1, vocabulary + 1))
    cdf /= cdf[-1]
    for start in range(0, documents, BATCH):
        count = min(BATCH, documents - start)
        lengths = rng.integers(LENGTHS[0], LENGTHS[1] + 1, size=count)
        drawn = np.searchsorted(cdf, rng.random(int(lengths.sum())))
        terms, local = np.unique(drawn, return_inverse=True)
        yield AnalysedBatch(pc.cast(pa.array(terms), pa.string()), _BatchPairs.of(local.astype(np.int64), lengths))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=6_740_000)
    parser.add_argument("--vocabulary", type=int, default=2_000_000)
    parser.add_argument("--folder", type=Path, default=None, help="where the index is written (default: a temporary one)")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bm25-scale-", dir=args.folder))
    sampler = AnonymousPeak()
    sampler.start()
    try:
        started = time.perf_counter()
        writer = IndexWriter(folder, k1=0.9, b=0.4, workers=available_cores())  # the merge on every core
        progress = tqdm(batches(args.documents, args.vocabulary), total=-(-args.documents // BATCH), unit="batch",
                        file=sys.stderr, mininterval=30)
        for number, batch in enumerate(progress):
            writer.add(batch)
            if number % 500 == 0:  # the memory so far, for a run that is stopped before its end
                progress.set_postfix_str(f"peak RSS {_status_kb('VmHWM') / 2**20:.2f} GB, anonymous "
                                         f"{sampler.peak_kb / 2**20:.2f} GB", refresh=False)
        counts = writer.finish()  # the index header: documents, terms, postings
        build_s = time.perf_counter() - started
        build_rss_kb, build_anon_kb = _status_kb("VmHWM"), sampler.peak_kb
        index = BM25Index.open(folder, counts)
        rng = np.random.default_rng(1)
        queries = [rng.integers(0, min(counts.terms, 50_000), size=6).tolist() for _ in range(200)]
        started = time.perf_counter()
        results = list(index.search(queries, 1000))
        search_s = time.perf_counter() - started
        index_bytes = sum(f.stat().st_size for f in folder.iterdir())
        print(f"{counts.documents:,} documents, {counts.terms:,} terms, {counts.postings:,} postings "
              f"({counts.postings / counts.documents:.0f} per document)")
        print(f"build {build_s:,.0f} s, peak RSS {build_rss_kb / 2**20:.2f} GB, peak anonymous "
              f"{build_anon_kb / 2**20:.2f} GB; index {index_bytes / 1e9:.2f} GB on disk = "
              f"{index_bytes / counts.postings:.2f} bytes per posting, {index_bytes / counts.documents:,.0f} per document")
        print(f"search of {len(queries)} queries (depth 1,000, one process): {search_s:.1f} s, "
              f"{sum(len(r[0]) for r in results):,} results; peak RSS now {_status_kb('VmHWM') / 2**20:.2f} GB")
        print(f"build_peak_rss_gb={build_rss_kb / 2**20:.2f}")
    finally:
        sampler.stop.set()
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
