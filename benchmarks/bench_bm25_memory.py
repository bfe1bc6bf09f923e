"""BM25's index size, disk, search time and memory against Pyserini 0.22.1, whole processes, at AIR-Bench's corpus shapes.

Four synthetic corpora in the ``AIR-Bench_24.05_qa_msmarco_en`` hub layout (:mod:`msmarco_mirror`), each of
2,000 dev queries six words of its one relevant document:

* ``passages``: 1,000,000 MS MARCO-like passages of 20-100 words (mean 60), words of the MiniLM WordPiece
  vocabulary (21,358 words) drawn by Zipf's law;
* ``long``: 300,000 long documents of 334-1,000 words (mean 667, qa_wiki_en 24.04's), the same words;
* ``passages-real`` and ``long-real``: the same shapes with a realistic vocabulary
  (:func:`msmarco_mirror.realistic_vocabulary`): the words of the ``wordfreq`` package's large lists at their
  frequencies in real text (English 96 % of the words drawn, German, French and Spanish 1 % each) and 1 % rare
  tokens (numbers, typos, made-up names and codes) from 3,000,000 of them: about 0.9 M and 2.0 M distinct words.

Per corpus, each step in processes of its own on 2 cores:

1. **plugin, first run**: ``airbench-mteb run -m airbench-mteb/bm25 -t <task> --eval-splits dev`` (the console
   script, as a user types it) with an empty index store: index, search at depth 1,000, evaluation (the Arrow
   corpus is prebuilt before, as a user's earlier runs leave it);
2. **Pyserini, first run**: ``python -m pyserini.index.lucene --collection JsonCollection --generator
   DefaultLuceneDocumentGenerator --threads 2`` into an empty folder, then ``python -m pyserini.search.lucene
   --bm25 --hits 1000 --threads 2`` (times added, the larger peak);
3. **search only**: one process per engine opens the index built above, then times searching every query at
   k = 10, 100 and 1,000: the plugin's ``search`` (MTEB's ``SearchProtocol``, as ``mteb`` calls it; its
   default 2 processes here; rank-safe pruning on, then again with ``pruning=False``, every posting scored, for
   the pruned/exhaustive ratio), Pyserini's ``LuceneSearcher.batch_search(threads=2)`` (BM25 k1 0.9, b 0.4; the hits
   left as Java objects, its fastest). The top 10 of both are compared: the same set of ids, or else
   differing only in documents tied at the 10th score (each engine decides such ties its own way).

Measured: index bytes (the files' sizes) and bytes per posting (postings: Lucene's count, ``sumDocFreq`` of the
``contents`` field, which the plugin's identical analysis shares; the plugin's manifest's count where Pyserini is
not run); **peak disk while building**: the peak growth, sampled every 0.2 s, of the disk blocks allocated in the
folders the build writes (plugin: its index store, ``TMPDIR`` and cache; Pyserini: its index folder and
``java.io.tmpdir``); **peak RSS**: the peak of the whole process tree's summed RSS, and of its PSS (pages shared by
forked workers counted once), sampled every 0.2 s from ``/proc/<pid>/smaps_rollup``. With ``--runs`` above 1 each
figure is the median of the rounds. Last line: ``bm25_index_over_pyserini=<the largest index-bytes ratio>``.

Setup (Pyserini in a venv of its own; a JDK 11 or later, e.g. Debian's ``apt-get install openjdk-17-jdk-headless``;
the realistic vocabularies need ``pip install wordfreq`` in the plugin's environment)::

    python3 -m venv pyserini-venv
    pyserini-venv/bin/pip install pyserini==0.22.1 faiss-cpu

Run: ``python benchmarks/bench_bm25_memory.py --pyserini-python pyserini-venv/bin/python [--corpora ...]
[--scale 0.05] [--queries 2000] [--runs 1] [--keep DIR]`` (``--scale`` scales every corpus's documents, and the
rare tokens, for a quick look; ``--keep`` keeps the generated mirrors there for later runs). Without Pyserini the
benchmark says so in one line and measures the plugin alone.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, fields
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from msmarco_mirror import RARE_TOKENS, TASK, realistic_vocabulary, write_mirror


@dataclass(frozen=True)
class Corpus:
    documents: int
    words: tuple[int, int]  # words per document, inclusive range
    realistic: bool  # the realistic vocabulary (else the MiniLM words)

    def describe(self, documents: int) -> str:
        vocabulary = "realistic vocabulary (wordfreq en/de/fr/es + rare tokens)" if self.realistic else "MiniLM words"
        return f"{documents:,} documents of {self.words[0]}-{self.words[1]} words, {vocabulary}"


CORPORA = {"passages": Corpus(1_000_000, (20, 100), False), "long": Corpus(300_000, (334, 1000), False),
           "passages-real": Corpus(1_000_000, (20, 100), True), "long-real": Corpus(300_000, (334, 1000), True)}
QUERIES, HITS, THREADS, K1, B = 2000, 1000, 2, 0.9, 0.4
SEARCH_K = (10, 100, HITS)  # the depths searches are timed at
SAMPLE_SECONDS = 0.2


@dataclass
class Measure:
    seconds: float
    rss_mb: float  # peak of the process tree's summed RSS
    pss_mb: float  # peak of its summed PSS
    disk_mb: float  # peak growth of the watched folders' allocated blocks
    largest_mb: float  # peak RSS of the largest single process (what /usr/bin/time's maximum resident size reports)

    def __add__(self, other: Measure) -> Measure:  # two commands in a row: times add, the larger peaks
        return Measure(self.seconds + other.seconds, max(self.rss_mb, other.rss_mb), max(self.pss_mb, other.pss_mb),
                       max(self.disk_mb, other.disk_mb), max(self.largest_mb, other.largest_mb))


def median(measures: list[Measure]) -> Measure:
    return Measure(*(statistics.median(getattr(m, f.name) for m in measures) for f in fields(Measure)))


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


def _memory_kb(pids: list[int]) -> tuple[int, int, int]:
    """Summed RSS and PSS of the processes and the largest RSS of one, in kB (a process that ended meanwhile
    counts 0)."""
    rss = pss = largest = 0
    for pid in pids:
        try:
            lines = Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()
        except OSError:
            continue
        values = {line.split(":")[0]: int(line.split()[1]) for line in lines[1:] if line.endswith("kB")}
        rss += values.get("Rss", 0)
        pss += values.get("Pss", 0)
        largest = max(largest, values.get("Rss", 0))
    return rss, pss, largest


def allocated_bytes(folders: list[Path]) -> int:
    """Disk blocks allocated to the files under ``folders`` (sparse files count what is written), in bytes; files
    that vanish while counted count 0."""
    total = 0
    for folder in folders:
        for parent, _, names in os.walk(folder):
            for name in names:
                try:
                    total += os.lstat(os.path.join(parent, name)).st_blocks * 512
                except OSError:
                    continue
    return total


def file_bytes(folder: Path) -> int:
    """The sizes of the files under ``folder``."""
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())


def measured(command: list[str], env: dict[str, str], log: Path, watch: tuple[Path, ...] = ()) -> Measure:
    """Run ``command`` to its end, its process tree's memory and the ``watch`` folders' disk sampled; fails on a
    non-zero exit."""
    disk_before = allocated_bytes(list(watch))
    peak_disk = peak_rss = peak_pss = peak_largest = 0
    started = time.perf_counter()
    with log.open("ab") as output:
        process = subprocess.Popen(command, env=env, stdout=output, stderr=subprocess.STDOUT)
        while process.poll() is None:
            rss, pss, largest = _memory_kb(_tree(process.pid))
            peak_rss, peak_pss, peak_largest = max(peak_rss, rss), max(peak_pss, pss), max(peak_largest, largest)
            if watch:
                peak_disk = max(peak_disk, allocated_bytes(list(watch)) - disk_before)
            time.sleep(SAMPLE_SECONDS)
    seconds = time.perf_counter() - started
    if process.returncode:
        raise SystemExit(f"bench_bm25_memory: {' '.join(command[:4])} exited {process.returncode}; see {log}")
    return Measure(seconds, peak_rss / 1024, peak_pss / 1024, peak_disk / 1e6, peak_largest / 1024)


def ratio(ours: float, theirs: float) -> str:
    return f"{ours / theirs:.2f}x" if theirs else "n/a"


def top10_agreement(ours: dict[str, list[list]], theirs: dict[str, list[list]],
                    tolerance: float = 1e-4) -> tuple[int, int, int]:
    """Of the queries of ``ours`` (each a list of ``[id, score]``): those whose top 10 is the same set of ids in both
    runs; those where it is not, but both have the same lowest score and every id in only one of them scores it
    (documents tied at the cut-off, which each engine decides its own way); and the queries compared."""
    same = tied = 0
    for query, hits in ours.items():
        mine, other = dict(hits), dict(theirs.get(query, ()))
        if mine.keys() == other.keys():
            same += 1
        elif mine and len(mine) == len(other) and abs(min(mine.values()) - min(other.values())) <= tolerance and all(
                abs(scores[doc] - min(scores.values())) <= tolerance
                for scores, others in ((mine, other), (other, mine)) for doc in scores.keys() - others.keys()):
            tied += 1
    return same, tied, len(ours)


def find_count(manifest: object, name: str = "postings") -> int | None:
    """The first integer value under key ``name`` anywhere in a parsed JSON manifest (any format version)."""
    if isinstance(manifest, dict):
        if isinstance(manifest.get(name), int):
            return manifest[name]
        manifest = list(manifest.values())
    if isinstance(manifest, list):
        for value in manifest:
            found = find_count(value, name)
            if found is not None:
                return found
    return None


# ---- the plugin

def _plugin_env(work: Path, mirror: Path) -> dict[str, str]:
    return {**os.environ, "AIRBENCH_MTEB_DATA_DIR": str(mirror), "HF_DATASETS_CACHE": str(work / "hf"),
            "MTEB_CACHE": str(work / "mteb"), "AIRBENCH_MTEB_CACHE": str(work / "plugin-cache"),
            "AIRBENCH_MTEB_BM25_INDEX": str(work / "bm25-store"), "AIRBENCH_MTEB_EMBEDDING_CACHE": "off",
            "TMPDIR": str(work / "plugin-tmp"), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TQDM_DISABLE": "1"}


def _plugin_command(work: Path) -> list[str]:
    script = Path(sys.executable).with_name("airbench-mteb")
    return [str(script), "run", "-m", "airbench-mteb/bm25", "-t", TASK, "--eval-splits", "dev", "--output-folder",
            str(work / "results"), "--overwrite-strategy", "always", "--no-ci"]


def _prebuild_arrow(work: Path, mirror: Path) -> None:
    """The task's data loaded once, so its Arrow corpus exists before the timed runs (as after a user's first)."""
    code = (f"import mteb, airbench_mteb; t = mteb.get_task({TASK!r}, eval_splits=['dev']); t.load_data(); "
            "print(len(t.dataset['default']['dev']['corpus']))")
    subprocess.run([sys.executable, "-c", code], env=_plugin_env(work, mirror), check=True, stdout=subprocess.DEVNULL)


# Opens the stored index (MTEB's SearchProtocol: ``index`` then ``search``) and times the searches alone.
_PLUGIN_SEARCH = """
import json, sys, time
import mteb
task = mteb.get_task(sys.argv[1], eval_splits=["dev"])
task.load_data()
split = task.dataset["default"]["dev"]
model = mteb.get_model("airbench-mteb/bm25")
where = dict(task_metadata=task.metadata, hf_split="dev", hf_subset="default", encode_kwargs={"show_progress_bar": False})
model.index(split["corpus"], **where)
seconds, exhaustive, top10 = {}, {}, {}
model.search(split["queries"].select(range(min(100, len(split["queries"])))), top_k=10, **where)  # warm, untimed
for k in (10, 100, 1000):  # pruned and exhaustive one after the other at each k: the same machine's state
    for pruning, times in ((True, seconds), (False, exhaustive)):
        model.pruning = pruning
        started = time.perf_counter()
        run = model.search(split["queries"], top_k=k, **where)
        times[k] = time.perf_counter() - started
        if k == 10 and pruning:
            top10 = {query: sorted(scores.items(), key=lambda hit: -hit[1]) for query, scores in run.items()}
        del run
json.dump({"seconds": seconds, "exhaustive": exhaustive, "top10": top10}, open(sys.argv[2], "w"))
"""


# ---- Pyserini

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


def _pyserini_env(work: Path) -> dict[str, str]:
    tmp = work / "pyserini-tmp"
    tmp.mkdir(exist_ok=True)
    return {**os.environ, "JAVA_TOOL_OPTIONS": f"-Djava.io.tmpdir={tmp}", "TMPDIR": str(tmp), "TQDM_DISABLE": "1"}


# Times ``batch_search`` alone at k = 10, 100 and 1,000, then reads Lucene's postings count of the ``contents`` field.
_PYSERINI_SEARCH = f"""
import json, sys, time
from pyserini.search.lucene import LuceneSearcher
from pyserini.index.lucene import IndexReader
from jnius import autoclass
index, topics, out = sys.argv[1:4]
rows = [line.rstrip("\\n").split("\\t", 1) for line in open(topics, encoding="utf-8")]
ids, texts = [row[0] for row in rows], [row[1] for row in rows]
searcher = LuceneSearcher(index)
searcher.set_bm25({K1}, {B})
seconds, top10 = {{}}, {{}}
for k in (10, 100, 1000):
    started = time.perf_counter()
    hits = searcher.batch_search(texts, ids, k=k, threads={THREADS})
    seconds[k] = time.perf_counter() - started
    if k == 10:
        top10 = {{query: [[hit.docid, hit.score] for hit in hits[query]] for query in ids}}
    del hits
terms = autoclass("org.apache.lucene.index.MultiTerms").getTerms(IndexReader(index).reader, "contents")
json.dump({{"seconds": seconds, "top10": top10, "postings": terms.getSumDocFreq(), "terms": terms.size()}}, open(out, "w"))
"""


def pyserini_first_run(python: Path, corpus: Path, topics: Path, work: Path, log: Path) -> tuple[Measure, Measure]:
    """Index into an empty folder (disk watched), then search every query at depth 1,000: the two measures."""
    index = work / "pyserini-index"
    shutil.rmtree(index, ignore_errors=True)
    index.mkdir()
    env = _pyserini_env(work)
    indexing = measured([str(python), "-m", "pyserini.index.lucene", "--collection", "JsonCollection", "--input",
                         str(corpus), "--index", str(index), "--generator", "DefaultLuceneDocumentGenerator",
                         "--threads", str(THREADS)], env, log, watch=(index, work / "pyserini-tmp"))
    searching = measured([str(python), "-m", "pyserini.search.lucene", "--index", str(index), "--topics", str(topics),
                          "--output", str(work / "pyserini-run.txt"), "--bm25", "--hits", str(HITS), "--threads",
                          str(THREADS), "--batch-size", "16"], env, log)
    return indexing, searching


# ---- one corpus

@dataclass
class Figures:
    """One corpus's figures (the medians of its rounds)."""

    name: str
    documents: int
    postings: int | None
    terms: int | None
    ours_bytes: int
    ours_first: Measure
    ours_search: dict[int, float]
    theirs_bytes: int | None = None
    theirs_index: Measure | None = None
    theirs_first: Measure | None = None
    theirs_search: dict[int, float] | None = None
    agreement: tuple[int, int, int] | None = None
    ours_exhaustive: dict[int, float] | None = None  # the plugin's search with every posting scored (no pruning)

    def index_ratio(self) -> float | None:
        return self.ours_bytes / self.theirs_bytes if self.theirs_bytes else None


@functools.cache
def _realistic_vocabulary(rare: int) -> tuple:
    try:  # the same for both realistic corpora: drawn once
        return realistic_vocabulary(rare=rare)
    except ImportError as error:
        raise SystemExit(f"bench_bm25_memory: the realistic corpora need the wordfreq package ({error}): pip install "
                         "wordfreq, or leave them out with --corpora passages long") from None


def _mirror(root: Path, name: str, corpus: Corpus, documents: int, queries: int, scale: float) -> Path:
    mirror = root / f"mirror-{name}-{documents}-{queries}"
    if not (mirror / "complete").is_file():
        shutil.rmtree(mirror, ignore_errors=True)
        words = _realistic_vocabulary(max(1, round(RARE_TOKENS * scale))) if corpus.realistic else None
        write_mirror(mirror, documents, queries, passage_words=corpus.words, words=words)
        (mirror / "complete").touch()
    return mirror


def corpus_figures(name: str, corpus: Corpus, scale: float, queries: int, root: Path, runs: int,
                   python: Path | None) -> Figures:
    """Measure one corpus and print its lines."""
    documents = max(queries, round(corpus.documents * scale))
    mirror = _mirror(root, name, corpus, documents, queries, scale)
    work = root / f"work-{name}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    log = work / "commands.log"
    _prebuild_arrow(work, mirror)
    inputs = _pyserini_inputs(mirror, work / "pyserini-input") if python else None
    env, command = _plugin_env(work, mirror), _plugin_command(work)
    store, plugin_tmp = work / "bm25-store", work / "plugin-tmp"
    first, ours_search, ours_exhaustive, index_runs, theirs_search = [], [], [], [], []
    found: dict = {}
    load = [os.getloadavg()[0]]
    for _ in range(runs):
        shutil.rmtree(store, ignore_errors=True)
        shutil.rmtree(plugin_tmp, ignore_errors=True)
        for folder in (store, plugin_tmp, work / "plugin-cache"):
            folder.mkdir(parents=True, exist_ok=True)
        first.append(measured(command, env, log, watch=(store, plugin_tmp, work / "plugin-cache")))
        out = work / "plugin-search.json"
        measured([sys.executable, "-c", _PLUGIN_SEARCH, TASK, str(out)], env, log)
        found["ours"] = json.loads(out.read_text())
        ours_search.append({int(k): v for k, v in found["ours"]["seconds"].items()})
        ours_exhaustive.append({int(k): v for k, v in found["ours"]["exhaustive"].items()})
        load.append(os.getloadavg()[0])
        if inputs:
            index_runs.append(pyserini_first_run(python, *inputs, work, log))
            out = work / "pyserini-search.json"
            measured([str(python), "-c", _PYSERINI_SEARCH, str(work / "pyserini-index"), str(inputs[1]), str(out)],
                     _pyserini_env(work), log)
            found["theirs"] = json.loads(out.read_text())
            theirs_search.append({int(k): v for k, v in found["theirs"]["seconds"].items()})
            load.append(os.getloadavg()[0])
    manifests = [json.loads(path.read_text()) for path in store.rglob("manifest.json")]
    ours_postings = find_count(manifests[0]) if manifests else None
    figures = Figures(name, documents, ours_postings, None, file_bytes(store), median(first),
                      {k: statistics.median(s[k] for s in ours_search) for k in SEARCH_K})
    figures.ours_exhaustive = {k: statistics.median(s[k] for s in ours_exhaustive) for k in SEARCH_K}
    if inputs:
        theirs = found["theirs"]
        figures.postings, figures.terms = theirs["postings"], theirs["terms"]
        figures.theirs_bytes = file_bytes(work / "pyserini-index")
        figures.theirs_index = median([indexing for indexing, _ in index_runs])
        figures.theirs_first = median([indexing + searching for indexing, searching in index_runs])
        figures.theirs_search = {k: statistics.median(s[k] for s in theirs_search) for k in SEARCH_K}
        figures.agreement = top10_agreement(found["ours"]["top10"], theirs["top10"])
        if ours_postings is not None and ours_postings != theirs["postings"]:
            print(f"  ({name}: the plugin's manifest counts {ours_postings:,} postings, Lucene {theirs['postings']:,})")
    _print_corpus(figures, corpus, queries, runs, load)
    return figures


def _per_posting(size: int | None, postings: int | None) -> str:
    return f"{size / postings:.2f} B/posting" if size and postings else "n/a B/posting"


def _print_corpus(f: Figures, corpus: Corpus, queries: int, runs: int, load: list[float]) -> None:
    o = f.ours_first
    print(f"{f.name}: {corpus.describe(f.documents)}, {queries:,} queries; median of {runs}; 1-min load average "
          f"{min(load):.1f}-{max(load):.1f}", flush=True)
    if f.postings:
        print(f"  {f.postings:,} postings" + (f", {f.terms:,} terms" if f.terms else ""))
    theirs_index = (f"   Pyserini {f.theirs_bytes / 1e6:9,.1f} MB ({_per_posting(f.theirs_bytes, f.postings)})   "
                    f"{ratio(f.ours_bytes, f.theirs_bytes)}" if f.theirs_bytes else "")
    print(f"  index bytes         plugin {f.ours_bytes / 1e6:9,.1f} MB ({_per_posting(f.ours_bytes, f.postings)})"
          + theirs_index)
    theirs_disk = (f"   Pyserini {f.theirs_index.disk_mb:9,.1f} MB ({f.theirs_index.disk_mb * 1e6 / f.theirs_bytes:.2f}x "
                   "its index)" if f.theirs_index and f.theirs_bytes else "")
    print(f"  peak disk building  plugin {o.disk_mb:9,.1f} MB ({o.disk_mb * 1e6 / f.ours_bytes:.2f}x its index)"
          + theirs_disk)
    for k in sorted(f.ours_search):
        theirs = (f"   Pyserini {f.theirs_search[k]:7.2f} s   {ratio(f.ours_search[k], f.theirs_search[k])}"
                  if f.theirs_search else "")
        exhaustive = (f"   (every posting scored {f.ours_exhaustive[k]:.2f} s: pruned/exhaustive "
                      f"{ratio(f.ours_search[k], f.ours_exhaustive[k])})" if f.ours_exhaustive else "")
        print(f"  search only, k={k:<5,} plugin {f.ours_search[k]:7.2f} s" + theirs + exhaustive)
    t = f.theirs_first
    if t:
        print(f"  first run           plugin {o.seconds:7.1f} s   Pyserini {t.seconds:7.1f} s (index "
              f"{f.theirs_index.seconds:.1f} s)   {ratio(o.seconds, t.seconds)}")
        print(f"  peak RSS (tree)     plugin {o.rss_mb:7,.0f} MB  Pyserini {t.rss_mb:7,.0f} MB   {ratio(o.rss_mb, t.rss_mb)}"
              f"   (PSS {o.pss_mb:,.0f} vs {t.pss_mb:,.0f} MB, {ratio(o.pss_mb, t.pss_mb)}; largest process "
              f"{o.largest_mb:,.0f} vs {t.largest_mb:,.0f} MB, {ratio(o.largest_mb, t.largest_mb)})")
        same, tied, compared = f.agreement
        print(f"  top 10: the same ids for {same:,} of {compared:,} queries, {tied:,} more differing only in documents "
              "tied at the 10th score", flush=True)
    else:
        print(f"  first run           plugin {o.seconds:7.1f} s; peak RSS (tree) {o.rss_mb:,.0f} MB, PSS {o.pss_mb:,.0f} MB, "
              f"largest process {o.largest_mb:,.0f} MB", flush=True)


def summary_table(all_figures: list[Figures]) -> list[str]:
    """The figures as a Markdown table (plugin vs Pyserini, ratio), for docs/performance.md."""
    lines = ["| corpus | postings | index bytes (per posting) | peak disk building | search k=10 | search k=1,000 "
             "| first run | peak RSS, tree (PSS; largest process) |", "|---|---|---|---|---|---|---|---|"]
    for f in all_figures:
        o, t = f.ours_first, f.theirs_first
        if t is None:
            continue
        lines.append(
            f"| {f.name} ({f.documents:,}) | {f.postings:,} "
            f"| {f.ours_bytes / 1e6:,.0f} MB ({f.ours_bytes / f.postings:.2f}) vs {f.theirs_bytes / 1e6:,.0f} MB "
            f"({f.theirs_bytes / f.postings:.2f}): {ratio(f.ours_bytes, f.theirs_bytes)} "
            f"| {o.disk_mb:,.0f} MB vs {f.theirs_index.disk_mb:,.0f} MB "
            f"| {f.ours_search[10]:.2f} s vs {f.theirs_search[10]:.2f} s: {ratio(f.ours_search[10], f.theirs_search[10])} "
            f"| {f.ours_search[HITS]:.2f} s vs {f.theirs_search[HITS]:.2f} s: "
            f"{ratio(f.ours_search[HITS], f.theirs_search[HITS])} "
            f"| {o.seconds:.1f} s vs {t.seconds:.1f} s: {ratio(o.seconds, t.seconds)} "
            f"| {o.rss_mb:,.0f} MB vs {t.rss_mb:,.0f} MB: {ratio(o.rss_mb, t.rss_mb)} "
            f"({o.pss_mb:,.0f} MB vs {t.pss_mb:,.0f} MB: {ratio(o.pss_mb, t.pss_mb)}; {o.largest_mb:,.0f} MB vs "
            f"{t.largest_mb:,.0f} MB: {ratio(o.largest_mb, t.largest_mb)}) |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pyserini-python", type=Path, default=None,
                        help="the python of a venv with pyserini==0.22.1 (and a JDK 11+ on PATH or JAVA_HOME)")
    parser.add_argument("--corpora", nargs="+", choices=list(CORPORA), default=list(CORPORA))
    parser.add_argument("--scale", type=float, default=1.0, help="documents (and rare tokens) as a share of each "
                        "corpus's own size, e.g. 0.05 for a quick look")
    parser.add_argument("--queries", type=int, default=QUERIES)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--keep", type=Path, default=None, help="build the mirrors here and keep them (reused later)")
    args = parser.parse_args()
    python: Path | None = args.pyserini_python
    if python is None or not python.is_file() or (shutil.which("java") is None and "JAVA_HOME" not in os.environ):
        print(f"Pyserini not measured: no Pyserini python ({python}) or no Java (install both as this file's docstring "
              "says)")
        python = None
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=Path(__file__).parent, capture_output=True,
                            text=True).stdout.strip() or "unknown"
    print(f"bench_bm25_memory: commit {commit}, scale {args.scale}, {os.cpu_count()} cores, "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}", flush=True)
    all_figures = []
    with tempfile.TemporaryDirectory(prefix="bench_bm25_memory_") as tmp:
        root = args.keep or Path(tmp)
        for name in args.corpora:
            all_figures.append(corpus_figures(name, CORPORA[name], args.scale, args.queries, root, args.runs, python))
    if python:
        print("\n".join(summary_table(all_figures)))
    ratios = [r for r in (f.index_ratio() for f in all_figures) if r is not None]
    print(f"bm25_index_over_pyserini={max(ratios):.2f}" if ratios else "bm25_index_over_pyserini=n/a")


if __name__ == "__main__":
    main()
