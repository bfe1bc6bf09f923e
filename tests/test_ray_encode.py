"""Corpus encoding on a real local Ray cluster (`ray start --head`, 2 CPUs), then a plain MTEB run.

The cluster's encode must leave nothing for the run to encode, give the run's scores, survive a
worker killed mid-way, and resume from what reached the cache. What a user can get wrong (options,
the cache folder, the model) is refused before Ray starts; the summary counts only what was stored
and read back; an error inside a worker reaches the user as one line.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mteb
import numpy as np
import pytest

from airbench_mteb import cli
from airbench_mteb.data.errors import DatasetError, OptionError
from airbench_mteb.distributed import EncodeSummary, encode_corpora
from airbench_mteb.models import MINILM
from airbench_mteb.models.embedding_cache import EmbeddingCacheWarning, forget_loaded_stores
from airbench_mteb.models.embedding_cache.store import _read_keys_file
from tests.airbench_mirror import chinese_documents, english_documents

pytest.importorskip("ray", reason="needs the distributed extra: pip install 'airbench-mteb[distributed]'")

TASKS = ["AIR-Bench_24.05_qa_news_en", "AIR-Bench_24.05_qa_news_zh"]  # dev and test share each corpus
DOCUMENTS = 240  # 120 English + 120 Chinese documents in the test mirror...
DISTINCT_DOCUMENTS = len(set(english_documents())) + len(set(chinese_documents()))  # ...a few share a text
ROWS_PER_BLOCK = 8


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


@pytest.fixture(scope="module")
def ray_head() -> Iterator[tuple[str, int]]:
    """A head node in the foreground of a child process (so its workers are our descendants); killed after.

    Ray 2.60 clusters require a token: head and driver share a fresh one through the environment.
    """
    port = _free_port()
    temp_dir = Path(f"/tmp/rayh1_{os.getpid()}")  # short: Ray's socket paths must stay under 108 bytes
    # the session's token when conftest set one: Ray keeps the mode and token it read first in this process
    auth = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": os.environ.get("RAY_AUTH_TOKEN") or secrets.token_hex(32)}
    saved = {name: os.environ.get(name) for name in auth}
    os.environ.update(auth)
    process = subprocess.Popen(
        [str(Path(sys.executable).with_name("ray")), "start", "--head", "--block", f"--port={port}", "--num-cpus=2",
         "--include-dashboard=false", "--disable-usage-stats", f"--temp-dir={temp_dir}",
         f"--dashboard-agent-listen-port={_free_port()}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        env={**os.environ, "OMP_NUM_THREADS": "1"})
    try:
        deadline = time.monotonic() + 120
        while not any("raylet" in _cmdline(pid) for pid in _descendants(process.pid)):
            assert process.poll() is None and time.monotonic() < deadline, "ray start --head did not come up"
            time.sleep(0.5)
        yield f"127.0.0.1:{port}", process.pid
    finally:
        # SIGTERM makes the head drain for 30 s; nothing here needs a graceful stop
        for pid in [*_descendants(process.pid), process.pid]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        process.wait(30)
        shutil.rmtree(temp_dir, ignore_errors=True)
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _document_shards(root: Path) -> list[Path]:
    """The finished shards (their keys files) of the corpus namespaces; queries have their own."""
    return sorted(root.rglob("document-*/*.keys"))


def _rows(shards: list[Path]) -> int:
    return sum(np.load(path.with_suffix(".npy"), mmap_mode="r").shape[0] for path in shards)


def _stored_rows(root: Path) -> int:
    return _rows(_document_shards(root))


def _keys(shards: list[Path]) -> set[tuple[int, int]]:
    return {(int(hi), int(lo)) for path in shards for hi, lo in _read_keys_file(path.read_bytes())[0]}


class _WorkerKiller(threading.Thread):
    """SIGKILLs one Ray Data worker of our cluster as soon as the first chunk reached the cache."""

    def __init__(self, head_pid: int, root: Path) -> None:
        super().__init__(daemon=True)
        self.head_pid, self.root = head_pid, root
        self.killed: int | None = None
        self.rows_when_killed = 0
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set() and self.killed is None:
            rows = _stored_rows(self.root) if self.root.is_dir() else 0
            workers = [pid for pid in _descendants(self.head_pid) if "MapWorker" in _cmdline(pid)]
            if rows and workers:
                os.kill(workers[0], signal.SIGKILL)
                self.killed, self.rows_when_killed = workers[0], rows
            time.sleep(0.02)


@pytest.fixture(scope="module")
def cluster_encode(ray_head: tuple[str, int], airbench_mirror: Path, tmp_path_factory: pytest.TempPathFactory
                   ) -> tuple[EncodeSummary, _WorkerKiller, Path]:
    """Two workers encode the mirror's corpora; one of them is killed mid-way."""
    address, head_pid = ray_head
    root = tmp_path_factory.mktemp("cluster_cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AIRBENCH_MTEB_DATA_DIR", str(airbench_mirror))
        killer = _WorkerKiller(head_pid, root)
        killer.start()
        try:
            summary = encode_corpora(MINILM, mteb.get_tasks(tasks=TASKS), ray_address=address, num_workers=2,
                                     cache_root=root, rows_per_block=ROWS_PER_BLOCK)
        finally:
            killer.stop.set()
            killer.join()
    return summary, killer, root


@pytest.mark.slow
def test_a_worker_killed_mid_way_is_replaced_and_nothing_is_encoded_twice(cluster_encode: Any) -> None:
    summary, killer, root = cluster_encode
    assert killer.killed is not None, "no worker was killed"
    assert 0 < killer.rows_when_killed < DISTINCT_DOCUMENTS  # the kill came mid-way
    assert summary.corpora == 2 and summary.documents == DOCUMENTS and summary.workers == 2
    assert summary.stored == DOCUMENTS and summary.complete  # every document read back from the folder
    # every text is in the cache, and no block was stored twice: the retried one encoded only what was
    # not stored yet (a text that occurs twice may be stored twice, by two workers meeting it at once)
    assert len(_keys(_document_shards(root))) == DISTINCT_DOCUMENTS
    assert _stored_rows(root) <= DOCUMENTS
    assert summary.encoded <= DOCUMENTS


def _evaluate(root: Path | str, monkeypatch: pytest.MonkeyPatch, mirror: Path) -> tuple[dict[str, Any], int]:
    """A plain mteb.evaluate run (dev splits); returns its scores and how many corpus documents the model encoded."""
    from mteb.types import PromptType

    monkeypatch.setenv("AIRBENCH_MTEB_EMBEDDING_CACHE", str(root))
    monkeypatch.setenv("AIRBENCH_MTEB_DATA_DIR", str(mirror))
    forget_loaded_stores()
    model = mteb.get_model(MINILM)
    encode, documents = model.encode, []

    def counting(inputs: Any, **kwargs: Any) -> Any:
        if kwargs.get("prompt_type") == PromptType.document:
            documents.append(len(inputs.dataset))
        return encode(inputs, **kwargs)

    model.encode = counting
    results = mteb.evaluate(model, mteb.get_tasks(tasks=TASKS, eval_splits=["dev"]), cache=None)
    return {r.task_name: r.scores for r in results}, sum(documents)


@pytest.mark.slow
def test_a_later_run_encodes_no_document_and_scores_like_a_plain_run(
        cluster_encode: Any, airbench_mirror: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _, _, root = cluster_encode
    after_cluster, encoded = _evaluate(root, monkeypatch, airbench_mirror)
    assert encoded == 0
    plain, plain_encoded = _evaluate("off", monkeypatch, airbench_mirror)
    assert plain_encoded == DOCUMENTS  # without the cache the model encodes every corpus
    for task, scores in plain.items():
        for split, (subset_scores,) in scores.items():
            got = after_cluster[task][split][0]
            for key in ("ndcg_at_10", "recall_at_10", "map_at_10", "mrr_at_10"):
                assert got[key] == pytest.approx(subset_scores[key], abs=1e-6), (task, split, key)


@pytest.mark.slow
def test_rerun_encodes_only_the_chunks_that_never_reached_the_cache(
        cluster_encode: Any, ray_head: tuple[str, int], airbench_mirror: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _, _, root = cluster_encode
    partial = tmp_path / "cache"
    shutil.copytree(root, partial)
    shards = _document_shards(partial)
    lost = shards[::3]  # as if the workers writing them had died first
    missing = len(_keys(lost) - _keys([path for path in shards if path not in lost]))
    for path in lost:
        path.unlink()
    forget_loaded_stores()
    monkeypatch.setenv("AIRBENCH_MTEB_EMBEDDING_CACHE", str(partial))
    code = cli.main(["encode", "-m", MINILM, "-t", *TASKS, "--data-dir", str(airbench_mirror),
                     "--ray-address", ray_head[0], "--num-workers", "1", "--rows-per-block", str(ROWS_PER_BLOCK)])
    assert code == 0
    out = capsys.readouterr().out
    assert f"{DOCUMENTS} documents, {missing} encoded" in out and f"{DOCUMENTS} stored and read back" in out
    assert "encodes no corpus document again" in out
    assert len(_keys(_document_shards(partial))) == DISTINCT_DOCUMENTS


@pytest.mark.slow
def test_corpora_travel_as_arrow_files_or_through_the_object_store(ray_head: tuple[str, int], use_mirror: Path) -> None:
    import ray
    from datasets import Dataset

    from airbench_mteb.distributed.corpora import CorpusSource, corpus_sources

    task = mteb.get_task(TASKS[0])
    task.load_data()
    on_disk = task.dataset["default"]["dev"]["corpus"]
    in_memory = Dataset.from_dict({"id": ["a", "b"], "title": ["T", ""], "text": ["first text", "second text"]})
    ray.init(address=ray_head[0])
    try:
        (source,) = corpus_sources([task])  # dev and test share the corpus: sent once
        assert source.arrow_files and source.table is None and source.hf_split == "dev"
        assert source.open()["text"] == on_disk["text"]
        shuffled = on_disk.select([2, 0, 1])
        task.dataset["default"]["test"]["corpus"] = shuffled  # not what its file holds: goes by value
        _, by_value = corpus_sources([task])
        assert not by_value.arrow_files and by_value.open()["id"] == shuffled["id"]
        kept = CorpusSource(task.metadata, "default", "dev", 2, table=ray.put(in_memory.with_format("arrow")[:]),
                            features=in_memory.features)
        assert kept.open().to_dict() == in_memory.to_dict()
    finally:
        ray.shutdown()


@pytest.mark.slow
def test_an_error_in_a_worker_reaches_the_user_as_its_own_one_line_message(
        ray_head: tuple[str, int], use_mirror: Path, tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(DatasetError) as caught:
        encode_corpora(MINILM, mteb.get_tasks(tasks=TASKS[:1]), ray_address=ray_head[0], cache_root=tmp_path,
                       loader_kwargs={"no_such_option": 1})  # the model cannot load in the worker
    message = str(caught.value)
    assert "\n" not in message and TASKS[0] in message and "no_such_option" in message
    assert "Traceback" not in capfd.readouterr().err


@pytest.mark.slow
def test_gpus_no_node_has_are_a_one_line_error_not_a_silent_wait(ray_head: tuple[str, int], use_mirror: Path,
                                                                  tmp_path: Path) -> None:
    # the head has 2 CPUs and no GPU: Ray would keep the actor pending forever
    with pytest.raises(OptionError, match=r"--gpus-per-worker 0\.5: the Ray cluster's 1 node\(s\) have 0 GPU\(s\), "
                                          r"room for 0 such worker"):
        encode_corpora(MINILM, mteb.get_tasks(tasks=TASKS[:1]), ray_address=ray_head[0], cache_root=tmp_path,
                       gpus_per_worker=0.5)


# --------------------------------------------------------------------------- before Ray starts (no cluster)


@pytest.fixture()
def no_ray(monkeypatch: pytest.MonkeyPatch, use_mirror: Path) -> None:
    """Fails the test the moment the command would start or join a Ray cluster."""
    import airbench_mteb.distributed.encode as module

    def refuse(address: str | None) -> bool:
        raise AssertionError("Ray was started")

    monkeypatch.setattr(module, "_connect", refuse)


def _encode_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """Run `encode`; it must exit 2 with one line on stderr, which is returned."""
    code = cli.main(["encode", "-m", MINILM, "-t", TASKS[0], *argv])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "\n" not in err, (code, err)
    return err


@pytest.mark.usefixtures("no_ray")
@pytest.mark.parametrize(("option", "value"), [
    ("--num-workers", "0"), ("--num-workers", "-1"), ("--rows-per-block", "0"), ("--batch-size", "0"),
    ("--batch-size", "-5"), ("--gpus-per-worker", "-1"), ("--gpus-per-worker", "nan")])
def test_options_out_of_range_are_one_line_errors_before_ray_starts(
        option: str, value: str, capsys: pytest.CaptureFixture[str]) -> None:
    err = _encode_error([option, value], capsys)
    assert option in err and value in err


def _dev_null_identity() -> tuple[int, ...]:
    info = os.lstat("/dev/null")
    return info.st_ino, info.st_mode, info.st_rdev, info.st_ctime_ns


@pytest.mark.usefixtures("no_ray")
@pytest.mark.parametrize("kind", ["off", "/dev/null", "a file", "a read-only folder", "under a file"])
def test_a_cache_that_cannot_keep_vectors_is_refused_before_any_work(
        kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    paths = {"off": "off", "/dev/null": "/dev/null", "a file": str(tmp_path / "cache"),
             "a read-only folder": str(tmp_path / "cache"), "under a file": str(tmp_path / "cache" / "embeddings")}
    if kind in ("a file", "under a file"):
        (tmp_path / "cache").write_text("not a folder")
    elif kind == "a read-only folder":
        (tmp_path / "cache").mkdir(mode=0o555)
    monkeypatch.setenv("AIRBENCH_MTEB_EMBEDDING_CACHE", paths[kind])
    before = _dev_null_identity()
    err = _encode_error([], capsys)
    assert "AIRBENCH_MTEB_EMBEDDING_CACHE" in err
    assert ("switched off" if kind == "off" else paths[kind]) in err
    assert _dev_null_identity() == before


@pytest.mark.usefixtures("no_ray")
def test_a_model_that_is_not_an_encoder_is_refused_up_front(capsys: pytest.CaptureFixture[str]) -> None:
    err = _encode_error(["-m", "airbench-mteb/bm25"], capsys)
    assert "airbench-mteb/bm25" in err and "not an encoder" in err


@pytest.mark.slow
def test_the_summary_counts_only_vectors_read_back_from_the_cache_folder(
        use_mirror: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker, run in this process: writes that fail after the start-up check (a full disk) keep the
    vectors in the worker's memory only, and a shard damaged afterwards cannot be read back."""
    from airbench_mteb.distributed.corpora import corpus_sources
    from airbench_mteb.distributed.encode import _read_back
    from airbench_mteb.distributed.worker import CorpusEncoder
    from airbench_mteb.models.embedding_cache import store as embedding_cache_store

    (source,) = corpus_sources([mteb.get_task(TASKS[0])])
    rows = 12  # one block of the corpus
    batch = {"corpus": np.array([0]), "start": np.array([0]), "stop": np.array([rows])}
    root = tmp_path / "cache"
    forget_loaded_stores()
    worker = CorpusEncoder(mteb.get_model_meta(MINILM), [source], str(root), "cpu",
                           {"batch_size": 32, "show_progress_bar": False}, {})

    def disk_full(*args: Any, **kwargs: Any) -> Any:
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as patch, pytest.warns(EmbeddingCacheWarning, match="cannot write"):
        patch.setattr(embedding_cache_store, "atomic_write", disk_full)
        lost = worker(batch)
    documents, encoded, stored = _read_back([lost], [source], root)
    assert (documents, stored) == (rows, 0) and encoded > 0

    forget_loaded_stores()  # a new worker process: the vectors held in memory are gone
    kept = worker(batch)
    assert _read_back([kept], [source], root) == (rows, int(kept["encoded"][0]), rows)

    shard = next(root.rglob("document-*/*.npy"))
    data = bytearray(shard.read_bytes())
    data[-8:] = bytes(8 * [0xFF])
    shard.write_bytes(bytes(data))
    with pytest.warns(EmbeddingCacheWarning, match=shard.name):
        assert _read_back([kept], [source], root)[2] == 0
    forget_loaded_stores()


def test_encode_claims_a_following_run_encodes_nothing_only_when_it_is_true(
        use_mirror: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import airbench_mteb.distributed as distributed

    summary = EncodeSummary(model=MINILM, revision="r", corpora=1, documents=120, encoded=120, stored=20, workers=1,
                            seconds=1.0, cache_root=tmp_path)
    monkeypatch.setattr(distributed, "encode_corpora", lambda *args, **kwargs: summary)
    code = cli.main(["encode", "-m", MINILM, "-t", TASKS[0]])
    out, err = capsys.readouterr()
    assert code == 2 and "120 encoded" in out and "20 stored and read back" in out
    assert "encodes no corpus document again" not in out
    assert f"{tmp_path}: only 20 of 120 documents are in the embedding cache" in err
