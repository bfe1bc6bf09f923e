"""Crash-safety scenarios: each SIGKILLs a command at seeded random moments, re-runs it and compares
with an uninterrupted run. Shared by ``tests/test_crash_safety.py`` (a few trials) and
``benchmarks/bench_faults.py`` (30 or more).

A trial's figures:
- ``lost_items``: finished work present after the kill (cache shards' keys, journal records) that
  the resumed run no longer has;
- ``repeated_calls``: LLM requests the loopback server answered more than once across the killed
  run and its resume (with one call in flight, every answered call was received and stored);
- ``score_mismatches``: resumed runs whose scores or published files differ from the uninterrupted run;
- ``half_written``: visible files a kill left incomplete (checked before the resume).
"""

from __future__ import annotations

import hashlib
import json
import random
import shutil
import zipfile
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

from tests.conftest import SAMPLE_DATA
from tests.faults import (
    Outcome,
    cache_keys,
    cli,
    half_written,
    journal_records,
    result_scores,
    run_forked,
    scores_differ,
    tree,
    visible_files,
)
from tests.llm_servers import CountingProxy, kill_at

MODEL = "airbench-mteb/all-MiniLM-L6-v2"
TASK = "AIR-Bench_24.05_qa_news_en"
NQ_UTD = SAMPLE_DATA / "cocktail" / "nq-utd"
# saved in chunks this small, a 40-document corpus is resumable at 5 points instead of 1
CACHE_CHUNK = 8
# a kill drawn after the command finished is no kill trial; draw again, this many times per trial at most
MAX_ATTEMPTS = 20


@dataclass
class Figures:
    kill_trials: int = 0
    lost_items: int = 0
    repeated_calls: int = 0
    score_mismatches: int = 0
    half_written: int = 0
    notes: list[str] = field(default_factory=list)

    def add(self, other: Figures) -> None:
        for name in ("kill_trials", "lost_items", "repeated_calls", "score_mismatches", "half_written"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.notes += other.notes

    def problem(self, where: str, what: str) -> None:
        self.notes.append(f"{where}: {what}")


def small_cache_chunks() -> None:
    from airbench_mteb.models.embedding_cache import wrapper

    wrapper.CHUNK_SIZE = CACHE_CHUNK


def run_argv(mirror: Path, out: Path, save_predictions: bool = False) -> list[str]:
    """`run` of MiniLM on the mirror's task; predictions, when saved, land in ``out`` itself."""
    argv = ["run", "-m", MODEL, "-t", TASK, "--data-dir", str(mirror), "--output-folder", str(out),
            "--no-co2-tracker"]
    return [*argv, "--save_predictions"] if save_predictions else argv


def env_for(cache: Path) -> dict[str, str]:
    return {"AIRBENCH_MTEB_EMBEDDING_CACHE": str(cache)}


def _finished(outcome: Outcome, figures: Figures, where: str) -> bool:
    if outcome.returncode != 0:
        figures.problem(where, f"exit {outcome.returncode}: {outcome.log[-800:]}")
        figures.score_mismatches += 1
        return False
    return True


@dataclass(frozen=True)
class RunReference:
    mirror: Path
    scores: dict
    seconds: float
    predictions: Path


def run_reference(mirror: Path, root: Path) -> RunReference:
    """One uninterrupted `run` into a fresh cache (its predictions feed the packaging scenario)."""
    outcome = run_forked(cli(run_argv(mirror, root / "out", save_predictions=True)), root / "log.txt",
                         env=env_for(root / "cache"), setup=small_cache_chunks)
    assert outcome.returncode == 0, outcome.log[-2000:]
    return RunReference(mirror, result_scores(root / "out"), outcome.seconds, root / "out")


def kill_time(rng: random.Random, seconds: float) -> float:
    return rng.uniform(0.0, 1.0) * seconds


def run_kills(reference: RunReference, root: Path, trials: int, rng: random.Random) -> Figures:
    """(a) `run` killed while it encodes into the embedding cache and writes results."""
    figures = Figures()
    attempt = 0
    while figures.kill_trials < trials and attempt < MAX_ATTEMPTS * trials:
        attempt += 1
        where = f"run trial {attempt}"
        work = root / f"trial-{attempt}"
        cache, out = work / "cache", work / "out"
        job, env = cli(run_argv(reference.mirror, out)), env_for(cache)
        killed = run_forked(job, work / "log.txt", env=env, setup=small_cache_chunks,
                            kill_after=kill_time(rng, reference.seconds))
        if killed.returncode != -9:
            continue  # finished before the kill: not a kill trial
        figures.kill_trials += 1
        broken = half_written(cache, out)
        figures.half_written += len(broken)
        figures.notes += [f"{where}: half-written {b}" for b in broken]
        saved = cache_keys(cache)
        if not _finished(run_forked(job, work / "log.txt", env=env, setup=small_cache_chunks), figures, where):
            continue
        lost = saved - cache_keys(cache)
        figures.lost_items += len(lost)
        if lost:
            figures.problem(where, f"{len(lost)} cached vectors lost")
        if scores_differ(result_scores(out), reference.scores):
            figures.score_mismatches += 1
            figures.problem(where, "scores differ from the uninterrupted run")
        shutil.rmtree(work)
    return figures


def generation_kills(name: str, argv: Callable[[Path], Sequence[str]], proxy: CountingProxy, root: Path,
                     trials: int, rng: random.Random, env: dict[str, str] | None = None) -> Figures:
    """(b) a `generate` command killed when a seeded random LLM request arrives (one call in flight)."""
    figures = Figures()
    proxy.reset()
    reference_out = root / "reference"
    outcome = run_forked(cli(argv(reference_out)), root / "reference.log", env=env)
    assert outcome.returncode == 0, outcome.log[-2000:]
    calls = sum(proxy.answered.values())
    expected = tree(reference_out, skip=lambda p: p.name == "run_account.json")
    for trial in range(1, trials + 1):
        where = f"{name} trial {trial}"
        out = root / f"trial-{trial}"
        proxy.reset()
        holder: dict[str, int] = {}
        request = rng.randint(1, calls)
        proxy.on_request = kill_at(lambda holder=holder: holder.get("pid"), request)
        killed = run_forked(cli(argv(out)), root / f"trial-{trial}.log", env=env,
                            on_start=lambda pid, holder=holder: holder.update(pid=pid))
        proxy.on_request = None
        if killed.returncode != -9:
            figures.problem(where, f"not killed at request {request} (exit {killed.returncode})")
            continue
        figures.kill_trials += 1
        broken = half_written(out)
        figures.half_written += len(broken)
        figures.notes += [f"{where} (request {request}): half-written {b}" for b in broken]
        journal = out / ".work" / "journal.jsonl"
        saved = journal_records(journal)
        if not _finished(run_forked(cli(argv(out)), root / f"trial-{trial}.log", env=env), figures, where):
            continue
        lost = saved - journal_records(journal)
        figures.lost_items += len(lost)
        repeated = sum(n - 1 for n in proxy.answered.values())
        figures.repeated_calls += repeated
        if lost or repeated:
            figures.problem(where, f"killed at request {request}: {len(lost)} journal records lost, "
                                   f"{repeated} answered calls repeated")
        if tree(out, skip=lambda p: p.name == "run_account.json") != expected:
            figures.score_mismatches += 1
            figures.problem(where, f"killed at request {request}: files differ from the uninterrupted run")
        shutil.rmtree(out)
    return figures


def timed_kills(name: str, job: Callable[[Path], Callable[[], int]], root: Path, trials: int,
                rng: random.Random, refusal: str | None = None) -> Figures:
    """A command whose output is one folder, killed at seeded random times and run again to the end.

    ``refusal``: what the command says when re-run over a finished output (killed after it finished
    writing); that re-run only has to leave the output as it is."""
    figures = Figures()
    reference = run_forked(job(root / "reference"), root / "reference.log")
    assert reference.returncode == 0, reference.log[-2000:]
    expected = tree(root / "reference")
    attempt = 0
    while figures.kill_trials < trials and attempt < MAX_ATTEMPTS * trials:
        attempt += 1
        where = f"{name} trial {attempt}"
        out = root / f"trial-{attempt}"
        moment = kill_time(rng, reference.seconds)
        if run_forked(job(out), root / "trial.log", kill_after=moment).returncode != -9:
            shutil.rmtree(out, ignore_errors=True)
            continue
        figures.kill_trials += 1
        broken = half_written(out)
        figures.half_written += len(broken)
        figures.notes += [f"{where} (killed after {moment:.2f} s): half-written {b}" for b in broken]
        resumed = run_forked(job(out), root / "trial.log")
        refused = refusal is not None and resumed.returncode != 0 and refusal in resumed.log
        if not refused and not _finished(resumed, figures, where):
            continue
        if tree(out) != expected:
            figures.score_mismatches += 1
            figures.problem(where, f"killed after {moment:.2f} s: files differ from the uninterrupted run")
        shutil.rmtree(out)
    return figures


def irsc_job(out: Path) -> Callable[[], int]:
    """(c) an offline IRSC build, small enough to take seconds."""
    return cli(["generate", "irsc", "--out", str(out), "--per-task", "2", "--corpus-limit", "20", "--seed", "1"])


def cocktail_zip(root: Path) -> tuple[Path, str]:
    """A zip of the real NQ-UTD co*cktail folder in the hub's layout, and its md5."""
    path = root / "nq-utd.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for file in sorted(NQ_UTD.rglob("*")):
            if file.is_file():
                archive.write(file, Path("nq-utd") / file.relative_to(NQ_UTD))
    return path, hashlib.md5(path.read_bytes()).hexdigest()


def unpack_job(zip_path: Path, md5: str) -> Callable[[Path], Callable[[], int]]:
    """(d) the co*cktail hub zip unpacking that `download` and the co*cktail loader rely on."""
    def job(out: Path) -> Callable[[], int]:
        def unpack() -> int:
            from airbench_mteb.data.cocktail_source import unpack_verified

            unpack_verified(zip_path, md5, out / "unpacked", "nq-utd")
            return 0
        return unpack
    return job


def package_job(reference: RunReference) -> Callable[[Path], Callable[[], int]]:
    """(f) `package-submission` of the reference run's predictions."""
    def job(out: Path) -> Callable[[], int]:
        return cli(["package-submission", "--predictions", str(reference.predictions), "--out", str(out),
                    "--data-dir", str(reference.mirror)])
    return job


def small_cocktail_corpus(root: Path, documents: int = 6) -> Path:
    """A BEIR folder of a few real NQ-UTD documents, the queries that judge them and those judgments."""
    folder = root / "nq-utd-small"
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    rows = [json.loads(line) for line in (NQ_UTD / "corpus" / "human.jsonl").read_text().splitlines()]
    qrels = [line.split("\t") for line in (NQ_UTD / "qrels" / "test.tsv").read_text().splitlines()[1:]]
    first_query = qrels[0][0]
    judged = [d for q, d, _ in qrels if q == first_query][:documents]
    keep = {row["_id"]: row for row in rows if row["_id"] in judged}
    (folder / "corpus.jsonl").write_text("".join(json.dumps({"_id": i, "title": keep[i].get("title", ""),
                                                             "text": keep[i]["text"]}) + "\n" for i in judged))
    queries = [line for line in (NQ_UTD / "queries.jsonl").read_text().splitlines()
               if json.loads(line)["_id"] == first_query]
    (folder / "queries.jsonl").write_text("\n".join(queries) + "\n")
    (folder / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t{g}\n" for q, d, g in qrels
                                                 if q == first_query and d in judged))
    return folder


def cocktail_argv(corpus: Path, base_url: str) -> Callable[[Path], list[str]]:
    def argv(out: Path) -> list[str]:
        return ["generate", "cocktail", "--corpus", str(corpus), "--out", str(out), "--max-docs", "6",
                "--max-words", "80", "--max-tokens", "40", "--seed", "3", "--concurrency", "1",
                "--llm", "x", "openai", "model=smollm2", f"base-url={base_url}", "temperature=0.2"]
    return argv


def airbench_argv(base_url: str) -> Callable[[Path], list[str]]:
    from tests.test_generation_llm import CLI_ARGS

    def argv(out: Path) -> list[str]:
        return ["generate", "airbench", *CLI_ARGS, "--out", str(out), "--backend", "openai",
                "--base-url", base_url, "--model", "smollm2", "--concurrency", "1"]
    return argv


def encode_kills(reference: RunReference, root: Path, trials: int, rng: random.Random) -> Figures:
    """(e) `encode` on a local Ray cluster killed at a random moment, run again, then a `run` that must
    encode nothing and score like the uninterrupted run."""
    figures = Figures()
    argv = ["encode", "-m", MODEL, "-t", TASK, "--data-dir", str(reference.mirror), "--num-workers", "1",
            "--rows-per-block", str(CACHE_CHUNK)]
    first = run_forked(cli(argv), root / "reference.log", env=env_for(root / "reference-cache"))
    assert first.returncode == 0, first.log[-2000:]
    expected = cache_keys(root / "reference-cache")
    attempt = 0
    while figures.kill_trials < trials and attempt < MAX_ATTEMPTS * trials:
        attempt += 1
        where = f"encode trial {attempt}"
        cache = root / f"cache-{attempt}"
        moment = kill_time(rng, first.seconds)
        if run_forked(cli(argv), root / "trial.log", env=env_for(cache), kill_after=moment).returncode != -9:
            shutil.rmtree(cache, ignore_errors=True)
            continue
        figures.kill_trials += 1
        broken = half_written(cache)
        figures.half_written += len(broken)
        figures.notes += [f"{where} (killed after {moment:.2f} s): half-written {b}" for b in broken]
        saved = cache_keys(cache)
        if not _finished(run_forked(cli(argv), root / "trial.log", env=env_for(cache)), figures, where):
            continue
        after = cache_keys(cache)
        figures.lost_items += len(saved - after)
        if saved - after or not expected <= after:
            figures.score_mismatches += not expected <= after
            figures.problem(where, f"{len(saved - after)} cached vectors lost, {len(expected - after)} missing")
        shutil.rmtree(cache)
    return figures


def _run_check(reference: RunReference, root: Path, figures: Figures, where: str, cache: Path, out: Path,
               expect_success: bool = True) -> Outcome:
    """One `run` against prepared storage: the exit status expected, nothing half-written, and when it
    succeeds the reference scores."""
    outcome = run_forked(cli(run_argv(reference.mirror, out)), root / f"{where}.log", env=env_for(cache),
                         setup=small_cache_chunks)
    broken = half_written(cache, out)
    figures.half_written += len(broken)
    figures.notes += [f"{where}: half-written {b}" for b in broken]
    if (outcome.returncode == 0) != expect_success:
        figures.score_mismatches += 1
        figures.problem(where, f"exit {outcome.returncode}, expected {'0' if expect_success else 'an error'}: "
                               f"{outcome.log[-600:]}")
    elif expect_success and scores_differ(result_scores(out), reference.scores):
        figures.score_mismatches += 1
        figures.problem(where, "scores differ from the uninterrupted run")
    return outcome


def shared_storage(reference: RunReference, root: Path, figures: Figures) -> None:
    """Two `run`s at once on one embedding cache and one results folder: both succeed, same scores."""
    import os

    cache, out = root / "cache", root / "out"
    argv, env = run_argv(reference.mirror, out), env_for(cache)
    pids = []
    for number in (1, 2):
        pid = os.fork()
        if pid == 0:
            code = run_forked(cli(argv), root / f"shared-{number}.log", env=env, setup=small_cache_chunks).returncode
            os._exit(code & 0xFF)
        pids.append(pid)
    codes = [os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) for pid in pids]
    if codes != [0, 0]:
        figures.score_mismatches += 1
        figures.problem("shared cache and results", f"exits {codes}")
    broken = half_written(cache, out)
    figures.half_written += len(broken)
    figures.notes += [f"shared cache and results: half-written {b}" for b in broken]
    if scores_differ(result_scores(out), reference.scores):
        figures.score_mismatches += 1
        figures.problem("shared cache and results", "scores differ from the uninterrupted run")
    # a third run on what the two left must be served entirely by the cache and score the same
    _run_check(reference, root, figures, "after the shared runs", cache, root / "out-after")


def cache_disk_full(reference: RunReference, root: Path, figures: Figures) -> None:
    """The cache's disk fills up mid-run: the run goes on without the cache and scores the same."""
    from tests.faults import small_filesystem

    with small_filesystem(root / "cache", "32k") as cache:  # 40 x 384 float32 vectors need 60 KiB
        _run_check(reference, root, figures, "cache disk full", cache, root / "out")


def results_disk_full(reference: RunReference, root: Path, figures: Figures) -> None:
    """The results' disk is full: the run fails without leaving a half-written result, and once space
    is freed a re-run scores like the reference."""
    from tests.faults import grow, small_filesystem

    with small_filesystem(root / "results", "4k") as out:
        _run_check(reference, root, figures, "results disk full", root / "cache", out, expect_success=False)
        grow(out, "4m")
        _run_check(reference, root, figures, "results disk freed", root / "cache", out)


def read_only_storage(reference: RunReference, root: Path, figures: Figures) -> None:
    """A filled read-only cache serves the run; a read-only results folder is an error, not a crash
    that leaves files behind."""
    from tests.faults import read_only

    cache = root / "cache"
    _run_check(reference, root, figures, "filling the cache", cache, root / "out-1")
    with read_only(cache):
        _run_check(reference, root, figures, "read-only cache", cache, root / "out-2")
    (root / "out-3").mkdir()
    with read_only(root / "out-3") as out:
        _run_check(reference, root, figures, "read-only results", root / "cache-2", out, expect_success=False)


def corrupted_shard(reference: RunReference, root: Path, figures: Figures) -> None:
    """Flipped bytes in a cache shard: reported, set aside, re-encoded; the scores do not change."""
    cache = root / "cache"
    _run_check(reference, root, figures, "filling the cache", cache, root / "out-1")
    shard = max(cache.rglob("*.npy"), key=lambda p: p.stat().st_size)
    data = bytearray(shard.read_bytes())
    for offset in range(len(data) - 64, len(data) - 32):
        data[offset] ^= 0xFF
    shard.write_bytes(bytes(data))
    outcome = _run_check(reference, root, figures, "corrupted shard", cache, root / "out-2")
    if shard.stem not in outcome.log or not list(cache.rglob("*.damaged")):
        figures.score_mismatches += 1
        figures.problem("corrupted shard", f"{shard.name} was neither reported nor set aside")


def corrupted_journal(argv: Callable[[Path], Sequence[str]], reference: Path, proxy: CountingProxy, root: Path,
                      figures: Figures, env: dict[str, str] | None = None) -> None:
    """A torn last journal line is dropped and redone from the LLM cache; a damaged line in the middle
    stops the resume with an error naming the journal and the line."""
    expected = tree(reference, skip=lambda p: p.name == "run_account.json")
    for case in ("torn last line", "damaged middle line"):
        out = root / case.replace(" ", "-")
        shutil.copytree(reference, out)
        journal = out / ".work" / "journal.jsonl"
        lines = journal.read_bytes().split(b"\n")[:-1]
        for path in visible_files(out):  # published files: the resume must write them again
            path.unlink()
        if case == "torn last line":
            lines[-1] = lines[-1][:len(lines[-1]) // 2]
            journal.write_bytes(b"\n".join(lines))
        else:
            middle = len(lines) // 2
            lines[middle] = lines[middle][:10] + b"\xff#" + lines[middle][12:]
            journal.write_bytes(b"\n".join(lines) + b"\n")
        proxy.reset()
        outcome = run_forked(cli(argv(out)), root / f"{out.name}.log", env=env)
        if case == "torn last line":
            ok = (outcome.returncode == 0 and sum(proxy.answered.values()) == 0
                  and tree(out, skip=lambda p: p.name == "run_account.json") == expected)
        else:
            ok = outcome.returncode == 2 and f"line {middle + 1}" in outcome.log and str(journal) in outcome.log
        if not ok:
            figures.score_mismatches += 1
            figures.problem(f"journal with a {case}", f"exit {outcome.returncode}, {sum(proxy.answered.values())} "
                                                      f"calls: {outcome.log[-600:]}")


def mirror_for(root: Path) -> Path:
    """A one-task AIR-Bench mirror of 40 real English news texts (6 dev and 6 test queries)."""
    from airbench_mteb.catalog import airbench_entries
    from tests.airbench_mirror import english_documents, write_entry

    entry = next(e for e in airbench_entries() if e.task_name == TASK)
    write_entry(root, entry, english_documents(40), queries_per_split=6)
    return root


class Suite:
    """Every scenario by name, sharing one mirror, one reference `run` and (started on first use) one
    llama.cpp server behind a replaying, counting proxy."""

    def __init__(self, mirror: Path, root: Path, stack: ExitStack) -> None:
        self.mirror, self.root, self._stack = mirror, root, stack
        self._reference: RunReference | None = None
        self._proxy: CountingProxy | None = None

    @property
    def reference(self) -> RunReference:
        if self._reference is None:
            self._reference = run_reference(self.mirror, self.root / "run-reference")
        return self._reference

    @property
    def proxy(self) -> CountingProxy:
        if self._proxy is None:
            from airbench_mteb.generation.llm.local_server import llama_server
            from tests.faults import ReplayingUpstream

            server = self._stack.enter_context(llama_server())
            replay = self._stack.enter_context(ReplayingUpstream(server))
            self._proxy = self._stack.enter_context(CountingProxy(replay.base_url))
        return self._proxy

    def run(self, root: Path, trials: int, rng: random.Random) -> Figures:
        return run_kills(self.reference, root, trials, rng)

    def generate_airbench(self, root: Path, trials: int, rng: random.Random) -> Figures:
        argv = airbench_argv(self.proxy.base_url)
        figures = generation_kills("generate airbench", argv, self.proxy, root, trials, rng)
        corrupted_journal(argv, root / "reference", self.proxy, root / "journal", figures)
        return figures

    def generate_cocktail(self, root: Path, trials: int, rng: random.Random) -> Figures:
        argv = cocktail_argv(small_cocktail_corpus(root), self.proxy.base_url)
        figures = generation_kills("generate cocktail", argv, self.proxy, root, trials, rng)
        corrupted_journal(argv, root / "reference", self.proxy, root / "journal", figures)
        return figures

    def irsc(self, root: Path, trials: int, rng: random.Random) -> Figures:
        return timed_kills("generate irsc", irsc_job, root, trials, rng)

    def unpack(self, root: Path, trials: int, rng: random.Random) -> Figures:
        root.mkdir(parents=True, exist_ok=True)
        return timed_kills("co*cktail zip unpacking", unpack_job(*cocktail_zip(root)), root, trials, rng)

    def package(self, root: Path, trials: int, rng: random.Random) -> Figures:
        return timed_kills("package-submission", package_job(self.reference), root, trials, rng,
                           refusal="the package already exists")

    def encode(self, root: Path, trials: int, rng: random.Random) -> Figures:
        return encode_kills(self.reference, root, trials, rng)

    def storage(self, root: Path, trials: int, rng: random.Random) -> Figures:
        """Not kills: shared, full, read-only and corrupted storage, once each."""
        from tests.faults import mount_refused

        figures = Figures()
        shared_storage(self.reference, root / "shared", figures)
        corrupted_shard(self.reference, root / "corrupted", figures)
        refused = mount_refused(root / "probe")
        if refused:
            figures.notes.append(f"full-disk and read-only cases skipped: {refused}")
            return figures
        cache_disk_full(self.reference, root / "cache-full", figures)
        read_only_storage(self.reference, root / "read-only", figures)
        results_disk_full(self.reference, root / "results-full", figures)
        return figures
