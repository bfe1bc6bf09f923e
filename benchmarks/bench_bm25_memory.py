"""BM25's memory, time and index reuse against Pyserini 0.22.1, whole processes, at AIR-Bench's corpus shapes.

Two synthetic corpora in the ``AIR-Bench_24.05_qa_msmarco_en`` hub layout (:mod:`msmarco_mirror`: Zipf-drawn
English words, each of 200 dev queries six words of its one relevant passage):

* ``passages``: 1,000,000 MS MARCO-like passages of 20-100 words (mean 60);
* ``long``: 300,000 long documents of 334-1,000 words (mean 667, qa_wiki_en 24.04's).

For each corpus, ``--runs`` rounds (default 3), each of:

1. the plugin with an empty index store: ``airbench-mteb run -m airbench-mteb/bm25 -t <task> --eval-splits dev``
   (the console script, as a user types it; the Arrow corpus is prebuilt once before the rounds, as a user's
   earlier runs leave it; 2 cores);
2. the same command again: the stored index is read, nothing indexed;
3. Pyserini: ``python -m pyserini.index.lucene --collection JsonCollection --generator
   DefaultLuceneDocumentGenerator --threads 2`` into an empty folder, then ``python -m pyserini.search.lucene
   --bm25 --hits 1000 --threads 2`` (its time is the two processes' sum, its memory the larger peak).

Memory is sampled every 0.2 s over each command's whole process tree from ``/proc/<pid>/smaps_rollup``: the peak
of the summed PSS (resident memory, pages shared by forked workers counted once: fair to both sides) and of its
anonymous part (memory the process allocated, without the mapped files' pages it has touched). Each figure is the
median of the rounds. Printed per corpus: time and peak ratios (plugin first run over Pyserini) and the second
run's time over the first; last line ``bm25_peak_over_pyserini=<the larger of the two corpora's PSS ratios>``.

Pyserini lives in its own venv (Java 17 from Debian)::

    python3 -m venv /work/pyserini-venv
    /work/pyserini-venv/bin/pip install torch==2.13.0
    /work/pyserini-venv/bin/pip install --no-deps pyserini==0.22.1
    /work/pyserini-venv/bin/pip install pyjnius transformers faiss-cpu scipy scikit-learn onnxruntime numpy pandas tqdm pyyaml

Without it the benchmark says so in one line and measures the plugin alone. Run:
``python benchmarks/bench_bm25_memory.py [--pyserini-python /work/pyserini-venv/bin/python] [--corpora passages long]
[--runs 3] [--docs N] [--keep DIR]`` (``--docs`` scales both corpora to N documents, for a quick look).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from msmarco_mirror import TASK, write_mirror

CORPORA = {"passages": (1_000_000, (20, 100)), "long": (300_000, (334, 1000))}
QUERIES, HITS, THREADS = 200, 1000, 2
JAVA_HOME = "/usr/lib/jvm/java-17-openjdk-amd64"
DEFAULT_PYSERINI = Path("/work/pyserini-venv/bin/python")


@dataclass
class Measure:
    seconds: float
    pss_mb: float  # peak of the process tree's summed PSS
    anon_mb: float  # peak of its anonymous part

    def __add__(self, other: Measure) -> Measure:  # two commands in a row: times add, the larger peak
        return Measure(self.seconds + other.seconds, max(self.pss_mb, other.pss_mb), max(self.anon_mb, other.anon_mb))


def _tree(pid: int) -> list[int]:
    """``pid`` and its descendants, from each thread's ``/proc/<pid>/task/<tid>/children`` (cheap: the tree only)."""
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        try:
            for task in os.listdir(f"/proc/{current}/task"):
                todo += map(int, Path(f"/proc/{current}/task/{task}/children").read_text().split())
        except OSError:  # ended meanwhile
            continue
    return found


def _memory_kb(pids: list[int]) -> tuple[int, int]:
    """Summed PSS and anonymous PSS of the processes, in kB (a process that ended meanwhile counts 0)."""
    pss = anon = 0
    for pid in pids:
        try:
            lines = Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()
        except OSError:
            continue
        fields = {line.split(":")[0]: int(line.split()[1]) for line in lines[1:] if line.endswith("kB")}
        pss += fields.get("Pss", 0)
        anon += fields.get("Pss_Anon", 0)
    return pss, anon


def measured(command: list[str], env: dict[str, str], log: Path) -> Measure:
    """Run ``command`` to its end, its whole process tree's memory sampled every 0.2 s; fails on a non-zero exit."""
    started = time.perf_counter()
    with log.open("ab") as output:
        process = subprocess.Popen(command, env=env, stdout=output, stderr=subprocess.STDOUT)
        peak_pss = peak_anon = 0
        while process.poll() is None:
            pss, anon = _memory_kb(_tree(process.pid))
            peak_pss, peak_anon = max(peak_pss, pss), max(peak_anon, anon)
            time.sleep(0.2)
    seconds = time.perf_counter() - started
    if process.returncode:
        raise SystemExit(f"bench_bm25_memory: {command[:4]} exited {process.returncode}; see {log}")
    return Measure(seconds, peak_pss / 1024, peak_anon / 1024)


def _plugin_env(work: Path, mirror: Path) -> dict[str, str]:
    return {**os.environ, "AIRBENCH_MTEB_DATA_DIR": str(mirror), "HF_DATASETS_CACHE": str(work / "hf"),
            "MTEB_CACHE": str(work / "mteb"), "AIRBENCH_MTEB_CACHE": str(work / "plugin-cache"),
            "AIRBENCH_MTEB_BM25_INDEX": str(work / "bm25-store"), "AIRBENCH_MTEB_EMBEDDING_CACHE": "off",
            "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TQDM_DISABLE": "1"}


def _plugin_command(work: Path) -> list[str]:
    script = Path(sys.executable).with_name("airbench-mteb")
    return [str(script), "run", "-m", "airbench-mteb/bm25", "-t", TASK, "--eval-splits", "dev", "--output-folder",
            str(work / "results"), "--overwrite-strategy", "always", "--no-ci"]


def _prebuild_arrow(work: Path, mirror: Path) -> None:
    """The task's data loaded once, so its Arrow corpus exists before the timed runs (as after a user's first)."""
    code = (f"import mteb, airbench_mteb; t = mteb.get_task({TASK!r}, eval_splits=['dev']); t.load_data(); "
            "print(len(t.dataset['default']['dev']['corpus']))")
    subprocess.run([sys.executable, "-c", code], env=_plugin_env(work, mirror), check=True, stdout=subprocess.DEVNULL)


def _pyserini_inputs(mirror: Path, folder: Path) -> tuple[Path, Path]:
    """The mirror's corpus as Pyserini's JSON lines (``id``, ``contents``) and its dev queries as a TSV."""
    from airbench_mteb.catalog import airbench_entries
    from airbench_mteb.data.airbench_source import mirror_file

    entry = next(e for e in airbench_entries() if e.task_name == TASK)
    corpus_folder = folder / "corpus"
    corpus_folder.mkdir(parents=True, exist_ok=True)
    with mirror_file(mirror, entry, entry.corpus_location()).open(encoding="utf-8") as source, \
            (corpus_folder / "corpus.jsonl").open("w", encoding="utf-8") as target:
        for line in source:
            row = json.loads(line)
            target.write(json.dumps({"id": row["id"], "contents": row["text"]}) + "\n")
    topics = folder / "queries.tsv"
    with mirror_file(mirror, entry, entry.queries_location("dev")).open(encoding="utf-8") as source, \
            topics.open("w", encoding="utf-8") as target:
        for line in source:
            row = json.loads(line)
            target.write(f"{row['id']}\t{row['text']}\n")
    return corpus_folder, topics


def pyserini(python: Path, corpus: Path, topics: Path, work: Path, log: Path) -> Measure:
    index = work / "pyserini-index"
    shutil.rmtree(index, ignore_errors=True)
    env = {**os.environ, "JAVA_HOME": JAVA_HOME, "PATH": f"{JAVA_HOME}/bin:{os.environ['PATH']}"}
    indexing = measured([str(python), "-m", "pyserini.index.lucene", "--collection", "JsonCollection", "--input",
                         str(corpus), "--index", str(index), "--generator", "DefaultLuceneDocumentGenerator",
                         "--threads", str(THREADS)], env, log)
    searching = measured([str(python), "-m", "pyserini.search.lucene", "--index", str(index), "--topics", str(topics),
                          "--output", str(work / "pyserini-run.txt"), "--bm25", "--hits", str(HITS), "--threads",
                          str(THREADS), "--batch-size", "16"], env, log)
    return indexing + searching


def _median(measures: list[Measure]) -> Measure:
    return Measure(*(statistics.median(getattr(m, name) for m in measures) for name in ("seconds", "pss_mb", "anon_mb")))


def corpus_figures(name: str, documents: int, words: tuple[int, int], root: Path, runs: int,
                   python: Path | None) -> float | None:
    """Measure one corpus; print its lines; return its peak PSS ratio (None without Pyserini)."""
    mirror, work = root / f"mirror-{name}-{documents}", root / f"work-{name}"
    if not (mirror / "complete").is_file():
        shutil.rmtree(mirror, ignore_errors=True)
        write_mirror(mirror, documents, QUERIES, passage_words=words)
        (mirror / "complete").touch()
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    log = work / "commands.log"
    _prebuild_arrow(work, mirror)
    inputs = _pyserini_inputs(mirror, work / "pyserini-input") if python else None
    env, command = _plugin_env(work, mirror), _plugin_command(work)
    first, second, theirs = [], [], []
    for _ in range(runs):
        shutil.rmtree(work / "bm25-store", ignore_errors=True)
        first.append(measured(command, env, log))
        second.append(measured(command, env, log))
        if inputs:
            theirs.append(pyserini(python, *inputs, work, log))
    ours, again = _median(first), _median(second)
    print(f"{name}: {documents:,} documents of {words[0]}-{words[1]} words, {QUERIES} queries, depth {HITS}, "
          f"median of {runs}", flush=True)
    print(f"  plugin first run  {ours.seconds:7.1f} s  peak PSS {ours.pss_mb:7,.0f} MB  anonymous {ours.anon_mb:7,.0f} MB")
    print(f"  plugin second run {again.seconds:7.1f} s  peak PSS {again.pss_mb:7,.0f} MB  anonymous "
          f"{again.anon_mb:7,.0f} MB  ({again.seconds / ours.seconds:.2f}x the first)")
    stored = sum(f.stat().st_size for f in (work / "bm25-store").rglob("*") if f.is_file())
    print(f"  stored index {stored / 1e6:,.0f} MB")
    if not theirs:
        return None
    pyserini_median = _median(theirs)
    print(f"  Pyserini index + search {pyserini_median.seconds:7.1f} s  peak PSS {pyserini_median.pss_mb:7,.0f} MB  "
          f"anonymous {pyserini_median.anon_mb:7,.0f} MB")
    ratio = ours.pss_mb / pyserini_median.pss_mb
    print(f"  {name}: time {ours.seconds / pyserini_median.seconds:.2f}x Pyserini's, peak PSS {ratio:.2f}x, anonymous "
          f"{ours.anon_mb / pyserini_median.anon_mb:.2f}x; second run {again.seconds / ours.seconds:.2f}x the first",
          flush=True)
    return ratio


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pyserini-python", type=Path, default=DEFAULT_PYSERINI)
    parser.add_argument("--corpora", nargs="+", choices=list(CORPORA), default=list(CORPORA))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--docs", type=int, default=None, help="documents of each corpus (default: its own size)")
    parser.add_argument("--keep", type=Path, default=None, help="build the mirrors here and keep them (reused later)")
    args = parser.parse_args()
    python: Path | None = args.pyserini_python
    if not (python and python.is_file() and Path(JAVA_HOME).is_dir()):
        print(f"Pyserini not measured: no {python} or no Java 17 at {JAVA_HOME} (install it as this file's docstring "
              "says)")
        python = None
    ratios = []
    with tempfile.TemporaryDirectory(prefix="bench_bm25_memory_") as tmp:
        root = args.keep or Path(tmp)
        for name in args.corpora:
            documents, words = CORPORA[name]
            ratio = corpus_figures(name, args.docs or documents, words, root, args.runs, python)
            if ratio is not None:
                ratios.append(ratio)
    print(f"bm25_peak_over_pyserini={max(ratios):.2f}" if ratios else "bm25_peak_over_pyserini=n/a")


if __name__ == "__main__":
    main()
