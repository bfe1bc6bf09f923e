"""AIR-Bench's ``qa_msmarco_en`` at its real size, end to end: BM25, the dense path, and the top-k merge.

The synthetic mirror (:mod:`msmarco_mirror`) has the real task's shape by default: 8,872,840 passages,
6,319 dev queries, searched to depth 1,000. Each stage runs in a fresh process (caches shared, as a
user's later runs share them) and prints its wall time and peak memory (the process's VmHWM):

* ``bm25``: ``airbench-mteb run -m airbench-mteb/bm25`` on the dev split (load, index, search, scoring);
* ``rerank``: BM25 re-ranking the top ``RERANK_TOP_K`` of the ``bm25`` stage's predictions (written by that
  stage when this one runs), as ``--previous-results`` does: index again, score only each query's candidates.
  The same scorer on its own top 100 must give the same nDCG@10 (compared and printed);
* ``dense``: ``mteb.evaluate`` of a dense model through the plugin (length-ordered encoding, top k merged
  on the model's device): on a GPU the random-weight BERT-base of ``bench_dense_floor.py``, on a CPU a
  stand-in (feature hashing of words into 256 dimensions: it measures the pipeline, not a model);
* ``merge``: the per-chunk top-k merge alone, on the same vectors (random unit vectors, 64 dimensions,
  chunks of 50,000 passages: MTEB's default): MTEB's ``chunked_full_corpus_search`` (per-chunk
  ``torch.topk`` then a Python heap per query) on ``--mteb-chunks`` chunks, against the plugin's
  :class:`~airbench_mteb.models.topk_search.TopKMerge` on the same chunks; their results are checked
  equal. MTEB's merge does the same work for every chunk (a ``topk`` of k+1 and k+1 heap operations per
  query), so it is timed on a few; the plugin's first chunk takes a ``topk``, later ones only key what passes
  the running bar, so it is timed on every chunk of ``--docs`` (scores made per chunk, untimed). The ratio is
  MTEB's time per chunk times the chunks over the plugin's measured total.

``--docs`` and ``--queries`` scale it down (run here on a 2-core machine at reduced size). Run:
``python benchmarks/bench_full_size.py [--docs N] [--queries N] [--steps bm25 dense merge] [--mteb-chunks 2]
[--keep DIR]`` (``rerank`` runs only when named, and needs ``bm25``); the last line is ``full_size_bm25_s=... merge_ratio_vs_mteb=...``.
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
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from bench_scale import hashing_encoder
from msmarco_mirror import TASK, write_mirror

DOCUMENTS, QUERIES, DEPTH = 8_872_840, 6_319, 1000
MTEB_CHUNK = 50_000  # SearchEncoderWrapper's corpus_chunk_size
MERGE_DIMENSION = 64
STEPS = ("bm25", "rerank", "dense", "merge")
DEFAULT_STEPS = ("bm25", "dense", "merge")  # the three; rerank on request
RERANK_TOP_K = 100  # AIR-Bench's rerank_top_k


def _vm_hwm_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _dense_model(work: Path) -> Any:
    import torch

    if not torch.cuda.is_available():
        return hashing_encoder()
    from bench_dense_floor import build_model

    from airbench_mteb.models.local import local_model_meta

    folder = work / "bert-base-random"
    build_model(folder)
    return local_model_meta(folder).load_model()


# ----------------------------------------------------------------------------- stages (child processes)

def _bm25(out: Path, options: list[str]) -> dict:
    """``airbench-mteb run -m airbench-mteb/bm25`` with ``options``; its nDCG@10."""
    from airbench_mteb.cli import main as cli_main

    results = out.parent / f"{out.stem}-results"
    code = cli_main(["run", "-m", "airbench-mteb/bm25", "-t", TASK, "--eval-splits", "dev", "--output-folder",
                     str(results), "--overwrite-strategy", "always", "--no-ci", *options])
    if code:
        raise SystemExit(code)
    scores = json.loads(next(results.rglob(f"{TASK}.json")).read_text())["scores"]["dev"][0]
    return {"ndcg_at_10": scores["ndcg_at_10"]}


def _dense(out: Path) -> dict:
    import mteb

    import airbench_mteb  # noqa: F401  (registers the tasks when the start-up hook is off)

    model = _dense_model(out.parent)
    result = mteb.evaluate(model, mteb.get_tasks(tasks=[TASK], eval_splits=["dev"]), cache=None,
                           overwrite_strategy="always", show_progress_bar=False)
    return {"ndcg_at_10": result.task_results[0].get_score(), "model": str(model.mteb_model_meta.name)}


def _merge(documents: int, queries: int, mteb_chunks: int) -> dict:
    """MTEB's merge on ``mteb_chunks`` chunks of scores and the plugin's on every chunk of ``documents``; the
    scores of a chunk are made from its number (both merges see the same), their making is not timed, and the
    two merges' results after ``mteb_chunks`` chunks are checked equal."""
    import pyarrow as pa
    import torch
    from datasets import Dataset
    from mteb import TaskMetadata
    from mteb.models.search_wrappers import chunked_full_corpus_search

    from airbench_mteb.models.topk_search import TopKMerge, id_ranks, scores_of

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")  # both merges on the same one

    def unit(rows: int, seed: int) -> torch.Tensor:
        vectors = torch.randn(rows, MERGE_DIMENSION, generator=torch.Generator().manual_seed(seed)).to(device)
        return vectors / vectors.norm(dim=1, keepdim=True)

    query_vectors = unit(queries, seed=0)
    chunks = -(-documents // MTEB_CHUNK)
    making = [0.0]

    def chunk_scores(number: int) -> torch.Tensor:
        started = time.perf_counter()
        width = min(MTEB_CHUNK, documents - number * MTEB_CHUNK)
        scores = query_vectors @ unit(width, seed=number + 1).T
        if device.type == "cuda":
            torch.cuda.synchronize()
        making[0] += time.perf_counter() - started
        return scores

    mteb_chunks = min(mteb_chunks, chunks)
    ids = [f"doc{n}" for n in range(documents)]
    corpus = Dataset.from_dict({"id": ids, "text": [""] * len(ids)})
    metadata = TaskMetadata(
        name="MergeBenchmark", description="scores served per chunk", reference=None,
        dataset={"path": "local/merge", "revision": "0"}, type="Retrieval", category="t2t", modalities=["text"],
        eval_splits=["dev"], eval_langs=["eng-Latn"], main_score="ndcg_at_10", date=None, domains=None,
        task_subtypes=None, license=None, annotations_creators=None, dialect=None, sample_creation=None,
        bibtex_citation="")
    served = iter(range(mteb_chunks))
    started = time.perf_counter()
    heaps = chunked_full_corpus_search(
        task_corpus=corpus.select(range(min(documents, mteb_chunks * MTEB_CHUNK))), corpus_chunk_size=MTEB_CHUNK,
        query_idx_to_id={q: f"q{q}" for q in range(queries)}, query_embeddings=query_vectors, task_metadata=metadata,
        hf_subset="default", hf_split="dev", top_k=DEPTH, encode_kwargs={"show_progress_bar": False},
        encode_fn=lambda loader, **_: next(served), similarity_fn=lambda _queries, number: chunk_scores(number),
        search_k_offset=1)
    mteb_per_chunk = (time.perf_counter() - started - making[0]) / mteb_chunks

    sorted_ids, ranks = id_ranks(corpus)
    ranks = torch.as_tensor(ranks, device=device)
    merge = TopKMerge(queries, DEPTH, device)
    ours, compared = [], None
    for number in range(chunks):
        scores = chunk_scores(number)
        started = time.perf_counter()
        merge.add(scores, ranks[number * MTEB_CHUNK:(number + 1) * MTEB_CHUNK])
        if device.type == "cuda":
            torch.cuda.synchronize()
        ours.append(time.perf_counter() - started)
        if number + 1 == mteb_chunks:
            compared = merge.best().cpu()
    # MTEB keeps the larger id among equal scores, as the keys do; its heaps hold the documents of the first
    # mteb_chunks chunks, whose ids rank as in the whole corpus
    doc_ids = sorted_ids.take(pa.array((compared & 0xFFFFFFFF).numpy().ravel())).to_pylist()
    our_scores = scores_of(compared).tolist()
    width = compared.shape[1]
    equal = all(
        sorted(heaps[f"q{q}"], reverse=True) == list(zip(our_scores[q], doc_ids[q * width:(q + 1) * width], strict=True))
        for q in range(queries))
    return {"mteb_s_per_chunk": mteb_per_chunk, "mteb_chunks": mteb_chunks, "plugin_first_chunk_s": ours[0],
            "plugin_later_chunk_s": sum(ours[1:]) / max(1, len(ours) - 1), "chunks": chunks,
            "mteb_full_s": mteb_per_chunk * chunks, "plugin_full_s": sum(ours), "equal": equal, "queries": queries,
            "device": str(device)}


def _child(step: str, out: Path, documents: int, queries: int, mteb_chunks: int, keep_predictions: bool) -> None:
    import datasets

    datasets.disable_progress_bars()
    started = time.perf_counter()
    predictions = out.parent / "bm25-predictions"
    first_stage = ["--prediction-folder", str(predictions)] if keep_predictions else []
    detail = {"bm25": lambda: _bm25(out, first_stage),
              "rerank": lambda: _bm25(out, ["--previous-results", str(predictions), "--rerank-top-k", str(RERANK_TOP_K)]),
              "dense": lambda: _dense(out),
              "merge": lambda: _merge(documents, queries, mteb_chunks)}[step]()
    out.write_text(json.dumps({"seconds": time.perf_counter() - started, "peak_mb": _vm_hwm_mb(), **detail}))


# ----------------------------------------------------------------------------- parent

def measure(step: str, mirror: Path, work: Path, documents: int, queries: int, mteb_chunks: int,
            keep_predictions: bool) -> dict:
    out = work / f"{step}.json"
    env = {**os.environ, "AIRBENCH_MTEB_DATA_DIR": str(mirror), "HF_DATASETS_CACHE": str(work / "hf"),
           "AIRBENCH_MTEB_EMBEDDING_CACHE": "off", "MTEB_CACHE": str(work / "mteb"),
           "AIRBENCH_MTEB_CACHE": str(work / "plugin-cache"), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    started = time.perf_counter()
    subprocess.run([sys.executable, __file__, "--child", step, str(out), str(documents), str(queries), str(mteb_chunks),
                    str(int(keep_predictions))],
                   env=env, check=True)
    return {**json.loads(out.read_text()), "wall_s": time.perf_counter() - started}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=DOCUMENTS, help=f"passages (default {DOCUMENTS:,}, the real size)")
    parser.add_argument("--queries", type=int, default=QUERIES, help=f"dev queries (default {QUERIES:,})")
    parser.add_argument("--steps", nargs="+", choices=STEPS, default=list(DEFAULT_STEPS))
    parser.add_argument("--mteb-chunks", type=int, default=2, help="chunks of 50,000 MTEB's merge is timed on")
    parser.add_argument("--keep", type=Path, default=None, help="build the mirror here and keep it (reused later)")
    parser.add_argument("--child", nargs=6, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child[0], Path(args.child[1]), *(int(value) for value in args.child[2:5]), args.child[5] == "1")
        return
    if "rerank" in args.steps and "bm25" not in args.steps:
        parser.error("--steps rerank re-ranks the bm25 step's predictions: name bm25 too")
    figures: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="bench_full_size_") as tmp:
        root = args.keep or Path(tmp)
        mirror, work = root / f"mirror-{args.docs}-{args.queries}", root / "work"
        started = time.perf_counter()
        if {"bm25", "rerank", "dense"} & set(args.steps) and not (mirror / "complete").is_file():
            shutil.rmtree(mirror, ignore_errors=True)
            write_mirror(mirror, args.docs, args.queries)
            (mirror / "complete").touch()
        print(f"{args.docs:,} passages, {args.queries:,} queries, depth {DEPTH:,}: mirror ready in "
              f"{time.perf_counter() - started:.1f} s", flush=True)
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        for step in (s for s in STEPS if s in args.steps):
            figures[step] = f = measure(step, mirror, work, args.docs, args.queries, args.mteb_chunks,
                                        keep_predictions="rerank" in args.steps)
            extra = {k: v for k, v in f.items() if k not in ("seconds", "peak_mb", "wall_s")}
            print(f"  {step:<6} {f['wall_s']:8.1f} s whole process ({f['seconds']:.1f} s after start-up), "
                  f"peak memory {f['peak_mb']:,.0f} MB   {extra}", flush=True)
    if "rerank" in figures:
        same = figures["rerank"]["ndcg_at_10"] == figures["bm25"]["ndcg_at_10"]
        print(f"BM25 re-ranking its own top {RERANK_TOP_K} of {args.queries:,} queries: {figures['rerank']['wall_s']:.1f} s "
              f"whole process; nDCG@10 equal to the first stage's: {same}")
    merge = figures.get("merge")
    if merge is not None:
        print(f"merge on {merge['device']}, per chunk of {MTEB_CHUNK:,} at {merge['queries']:,} queries x depth {DEPTH:,}: MTEB "
              f"{merge['mteb_s_per_chunk']:.2f} s (mean of {merge['mteb_chunks']}, each the same work); plugin "
              f"{merge['plugin_first_chunk_s']:.3f} s the first, {merge['plugin_later_chunk_s']:.3f} s the mean of the "
              f"others; results after {merge['mteb_chunks']} chunks equal: {merge['equal']}")
        print(f"merge over all {merge['chunks']} chunks of {args.docs:,} documents: MTEB {merge['mteb_full_s']:.0f} s "
              f"(its time per chunk x chunks), plugin {merge['plugin_full_s']:.1f} s (measured)")
    bm25 = f"{figures['bm25']['wall_s']:.1f}" if "bm25" in figures else "n/a"
    ratio = f"{merge['mteb_full_s'] / merge['plugin_full_s']:.1f}" if merge else "n/a"
    print(f"full_size_bm25_s={bm25} merge_ratio_vs_mteb={ratio}")

if __name__ == "__main__":
    main()
