"""Corpus encoding on a real local Ray cluster (`ray start --head`, 2 CPUs), then a plain MTEB run.

The cluster's encode must leave nothing for the run to encode, give the run's scores, survive a
worker killed mid-way, and resume from what reached the cache.
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
from airbench_mteb.distributed import EncodeSummary, encode_corpora
from airbench_mteb.models import MINILM
from airbench_mteb.models.embedding_cache import _read_keys_file, forget_loaded_stores
from tests.airbench_mirror import chinese_documents, english_documents

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
    auth = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32)}
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


def test_a_worker_killed_mid_way_is_replaced_and_nothing_is_encoded_twice(cluster_encode: Any) -> None:
    summary, killer, root = cluster_encode
    assert killer.killed is not None, "no worker was killed"
    assert 0 < killer.rows_when_killed < DISTINCT_DOCUMENTS  # the kill came mid-way
    assert summary.corpora == 2 and summary.documents == DOCUMENTS and summary.workers == 2
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
    assert f"{DOCUMENTS} documents, {missing} encoded" in capsys.readouterr().out
    assert len(_keys(_document_shards(partial))) == DISTINCT_DOCUMENTS


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
