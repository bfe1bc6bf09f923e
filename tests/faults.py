"""Fault injection for the crash-safety suite: commands run in forked children that can be SIGKILLed at
any moment, a loopback LLM that counts what it answered, and checks of what a killed run leaves behind.

Children are forked from a process that imported the plugin, mteb and sentence-transformers but never
computed anything, so a trial costs the command's work, not its imports (15 s on a loaded machine).
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import traceback
import urllib.error
import urllib.request
import warnings
import zipfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tests.llm_servers import JsonHandler, LoopbackServer

PRELOADED = ("airbench_mteb.cli", "mteb", "sentence_transformers", "airbench_mteb.generation.airbench",
             "airbench_mteb.generation.cocktail", "airbench_mteb.data.cocktail_source")


def preload() -> None:
    """Import what every command needs once, in the parent, before any child is forked."""
    for name in PRELOADED:
        importlib.import_module(name)
    from airbench_mteb.cli import build_parser

    build_parser()


def _warning_to_stderr(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                       file: object = None, line: str | None = None) -> None:
    sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))


@dataclass(frozen=True)
class Outcome:
    returncode: int  # -9: SIGKILLed
    log: str
    seconds: float


def cli(argv: Sequence[str]) -> Callable[[], int]:
    def job() -> int:
        from airbench_mteb.cli import main

        return main(list(argv))
    return job


def run_forked(job: Callable[[], int], log_path: Path, *, env: Mapping[str, str] | None = None,
               kill_after: float | None = None, setup: Callable[[], None] | None = None,
               on_start: Callable[[int], None] | None = None) -> Outcome:
    """Run ``job`` in a forked child (stdout and stderr into ``log_path``); SIGKILL it ``kill_after``
    seconds after the fork if it is still running. ``on_start(pid)`` runs in the parent right after
    the fork (e.g. to tell a server which process to kill)."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    log_path.touch()  # a child killed before it opened the log still has one
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:  # the child: never returns into the caller's stack
        code = 1
        try:
            fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            os.dup2(fd, 1)
            os.dup2(fd, 2)
            # under pytest sys.stdout/stderr are capture objects, not the file descriptors
            sys.stdout = open(1, "w", buffering=1, closefd=False)
            sys.stderr = open(2, "w", buffering=1, closefd=False)
            warnings.showwarning = _warning_to_stderr  # pytest records warnings instead of printing them
            os.environ.update(env or {})
            if "torch" in sys.modules:
                # torch's OpenMP pool does not survive fork: a child that uses it after the parent did
                # waits forever; one thread runs inline
                sys.modules["torch"].set_num_threads(1)
            if setup is not None:
                setup()
            code = int(job() or 0)
        except SystemExit as error:
            code = error.code if isinstance(error.code, int) else 1
        except BaseException:
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    if on_start is not None:
        on_start(pid)
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if kill_after is not None and time.monotonic() - started >= kill_after:
            os.kill(pid, signal.SIGKILL)
            _, status = os.waitpid(pid, 0)
            break
        time.sleep(0.01)
    return Outcome(os.waitstatus_to_exitcode(status), log_path.read_text(errors="replace"),
                   time.monotonic() - started)


# --- what a killed run leaves behind ----------------------------------------------------------------

def visible_files(root: Path) -> Iterator[Path]:
    """Files a reader would take for results: none under a hidden name (temporary and work files)."""
    if not root.exists():
        return
    for path in sorted(root.rglob("*")):
        if path.is_file() and not any(part.startswith(".") for part in path.relative_to(root).parts):
            yield path


def _problem(path: Path) -> str | None:
    """Why ``path`` is not a complete file of its kind, or None (kinds without a check pass)."""
    data = path.read_bytes()
    suffix = path.suffix
    try:
        if suffix == ".json":
            json.loads(data)
        elif suffix in (".jsonl", ".tsv"):
            if data and not data.endswith(b"\n"):
                return "last line unterminated"
            if suffix == ".jsonl":
                for line in data.splitlines():
                    json.loads(line)
        elif suffix == ".zip":
            with zipfile.ZipFile(path) as archive:
                bad = archive.testzip()
            return f"bad member {bad}" if bad else None
        elif suffix == ".npy":
            np.load(path, mmap_mode="r")
        elif suffix == ".keys":
            from airbench_mteb.models.embedding_cache.store import _TRAILER_BYTES, _TRAILER_MAGIC

            return None if data[-_TRAILER_BYTES:].startswith(_TRAILER_MAGIC) else "no checksum trailer"
        elif suffix in (".sqlite", ".db"):
            with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as connection:
                (verdict,) = connection.execute("PRAGMA integrity_check").fetchone()
            return None if verdict == "ok" else verdict
        elif suffix == ".png":
            return None if data.endswith(b"IEND\xaeB`\x82") else "no IEND chunk"
    except (ValueError, zipfile.BadZipFile, sqlite3.Error, OSError) as error:
        return str(error)
    return None


def half_written(*roots: Path) -> list[str]:
    """Visible files under ``roots`` that are not complete: each as ``path: reason``."""
    return [f"{path}: {problem}" for root in roots for path in visible_files(root)
            if (problem := _problem(path)) is not None]


def _content(path: Path) -> bytes | dict[str, bytes]:
    """A file's bytes; a zip's members' bytes by name (members carry the time they were packed)."""
    if path.suffix != ".zip":
        return path.read_bytes()
    with zipfile.ZipFile(path) as archive:
        return {name: archive.read(name) for name in sorted(archive.namelist())}


def tree(root: Path, skip: Callable[[Path], bool] = lambda _: False) -> dict[str, bytes | dict[str, bytes]]:
    """Every visible file under ``root`` by relative path (what two runs must agree on)."""
    return {str(p.relative_to(root)): _content(p) for p in visible_files(root) if not skip(p)}


def cache_keys(root: Path) -> set[bytes]:
    """Keys of the finished shards of an embedding cache (a shard is finished once its keys file exists)."""
    from airbench_mteb.models.embedding_cache.keys import KEY_BYTES
    from airbench_mteb.models.embedding_cache.store import _read_keys_file

    keys: set[bytes] = set()
    for path in visible_files(root):
        if path.suffix == ".keys":
            raw, _ = _read_keys_file(path.read_bytes())
            keys.update(bytes(row) for row in raw.view(np.uint8).reshape(-1, KEY_BYTES))
    return keys


def journal_records(path: Path) -> set[tuple[str, str]]:
    """(kind, key) of every complete record of a generation journal (a torn last line is not one)."""
    if not path.is_file():
        return set()
    records = set()
    for line in path.read_bytes().split(b"\n")[:-1]:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        records.add((record["kind"], str(record["key"])))
    return records


def result_scores(output: Path) -> dict[str, dict]:
    """Task name -> ``scores`` of every mteb result file under ``output``."""
    scores = {}
    for path in visible_files(output):
        if path.suffix == ".json" and path.name != "model_meta.json":
            data = json.loads(path.read_text())
            if "scores" in data:
                scores[data["task_name"]] = data["scores"]
    return scores


def scores_differ(a: dict, b: dict, tolerance: float = 1e-6) -> bool:
    """True if the two score trees differ in shape, in a label, or in a number by more than ``tolerance``."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() != b.keys() or any(scores_differ(a[k], b[k], tolerance) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) != len(b) or any(scores_differ(x, y, tolerance) for x, y in zip(a, b, strict=True))
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return abs(a - b) > tolerance
    return a != b


# --- an LLM that answers each distinct request from a real server once ------------------------------

class ReplayingUpstream(LoopbackServer):
    """Forwards each distinct request body to a real OpenAI-compatible server once and answers repeats
    from memory, so trials that make the same seeded calls again cost no generation time. Put a
    :class:`tests.llm_servers.CountingProxy` in front: it counts what reaches the client."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.rstrip("/")
        self._answers: dict[str, tuple[int, bytes]] = {}
        self._lock = threading.Lock()
        replay = self

        class Handler(JsonHandler):
            def do_GET(self) -> None:
                with urllib.request.urlopen(replay.upstream + self.path.removeprefix("/v1")) as response:
                    self._send(response.status, response.read())

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                digest = hashlib.sha256(self.path.encode() + b"\0" + body).hexdigest()
                with replay._lock:
                    known = replay._answers.get(digest)
                if known is None:
                    request = urllib.request.Request(replay.upstream + self.path.removeprefix("/v1"), data=body,
                                                     headers={"Content-Type": "application/json"})
                    try:
                        with urllib.request.urlopen(request) as response:
                            known = (response.status, response.read())
                    except urllib.error.HTTPError as error:
                        known = (error.code, error.read())
                    if known[0] == 200:
                        with replay._lock:
                            replay._answers[digest] = known
                self._send(*known)

        self._serve(Handler)


# --- file systems that fill up or refuse writes ------------------------------------------------------

def _mount(*args: str) -> None:
    subprocess.run(["mount", *args], check=True, capture_output=True, text=True)


def mount_refused(probe: Path) -> str | None:
    """None if this process may mount file systems, else why not (to skip with a reason)."""
    probe.mkdir(parents=True, exist_ok=True)
    try:
        _mount("-t", "tmpfs", "-o", "size=64k", "tmpfs", str(probe))
    except (subprocess.CalledProcessError, FileNotFoundError) as error:
        return f"mounting a tmpfs is refused here: {getattr(error, 'stderr', error)}".strip()
    subprocess.run(["umount", str(probe)], check=True)
    return None


@contextmanager
def small_filesystem(path: Path, size: str) -> Iterator[Path]:
    """A tmpfs of ``size`` (e.g. ``"96k"``) mounted at ``path``: writes past it fail with ENOSPC."""
    path.mkdir(parents=True, exist_ok=True)
    _mount("-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path))
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def grow(path: Path, size: str) -> None:
    """Give a mounted :func:`small_filesystem` more room (the disk was cleaned up)."""
    _mount("-o", f"remount,size={size}", str(path))


@contextmanager
def read_only(path: Path) -> Iterator[Path]:
    """``path`` bind-mounted onto itself read-only: even root gets EROFS on writes."""
    _mount("--bind", str(path), str(path))
    try:
        _mount("-o", "remount,bind,ro", str(path))
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)
