"""llama.cpp in a worker process of its own: a native crash or an unusable GGUF file is one line, never the caller's end.

Every in-process use of llama.cpp (the generators' default LLM, the yes/no reranker) goes through
:class:`LlamaProcess`. Model files are checked before llama.cpp sees them (:func:`check_gguf`), since llama.cpp
itself may crash on a damaged one; calls run in ``models/llamacpp_worker.py``, whose death by a signal is reported
with the model, the build's CPU features and the portable rebuild (:data:`PORTABLE_BUILD`).
"""

from __future__ import annotations

import functools
import json
import math
import mmap
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import weakref
from pathlib import Path
from typing import IO, Any

from airbench_mteb.data.errors import ModelError
from airbench_mteb.models import llamacpp_worker

# The build the install recipe (README, .ci/run, docs) makes: x86-64 features every machine of ours has, and none
# of the AMX kernels that crash llama.cpp's decode on CPUs that have AMX (ggml-org/llama.cpp #11115, #19184, #20824).
PORTABLE_BUILD = ('CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON '
                  '-DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"')
LLAMA_CPP_PYTHON = "llama-cpp-python==0.3.36"
REBUILD = f"{PORTABLE_BUILD} pip install --force-reinstall --no-deps --no-cache-dir {LLAMA_CPP_PYTHON}"

# -P: the caller's working folder is not put on the worker's path (a json.py there must not shadow the stdlib)
_RUN_WORKER = "import runpy, sys; runpy.run_path(sys.argv[1], run_name='__main__')"


def check_gguf(path: Path) -> None:
    """Raise :class:`ModelError` naming ``path`` unless it is a whole GGUF file: readable header, metadata and tensor
    table, every tensor's data inside the file, and nothing after the last tensor but its alignment padding."""
    if not path.is_file():
        raise ModelError(f"{path}: no such model file")
    status = path.stat()
    _check_gguf(str(path.resolve()), status.st_size, status.st_mtime_ns)


@functools.lru_cache(maxsize=64)
def _check_gguf(path: str, size: int, mtime_ns: int) -> None:
    with open(path, "rb") as handle:
        if handle.read(4) != b"GGUF":
            raise ModelError(f"{path}: not a GGUF model file (it does not start with the bytes 'GGUF')")
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            try:
                end, alignment = gguf_layout(data)
            except _Truncated:
                raise ModelError(f"{path}: truncated GGUF file ({size:,} bytes end inside its header)") from None
            except ValueError as error:
                raise ModelError(f"{path}: a damaged GGUF file ({error})") from None
    if size < end:
        raise ModelError(f"{path}: truncated GGUF file ({size:,} bytes; its tensors end at byte {end:,})")
    if size > -(-end // alignment) * alignment:
        raise ModelError(f"{path}: {size - end:,} bytes after the GGUF file's last tensor (a damaged or "
                         "concatenated file)")


class _Truncated(Exception):
    """The header reads past the end of the file."""


# GGUF's metadata value types: struct format of the fixed-size ones; 8 is a string, 9 an array
_SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
_STRING, _ARRAY = 8, 9


def gguf_layout(data: bytes | mmap.mmap) -> tuple[int, int]:
    """(the byte where the last tensor's data ends, the alignment) of a GGUF file (versions 2 and 3), read from its
    header alone. Raises ``_Truncated`` or ``ValueError`` (what is wrong)."""
    from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType

    position = 4

    def read(fmt: str) -> Any:
        nonlocal position
        width = struct.calcsize("<" + fmt)
        if position + width > len(data):
            raise _Truncated
        (value,) = struct.unpack_from("<" + fmt, data, position)
        position += width
        return value

    def skip(count: int) -> None:
        nonlocal position
        if position + count > len(data):
            raise _Truncated
        position += count

    def string() -> bytes:
        length = read("Q")
        skip(length)
        return bytes(data[position - length:position])

    def value(kind: int) -> Any:
        if kind in _SCALARS:
            return read(_SCALARS[kind])
        if kind == _STRING:
            return skip(read("Q"))
        if kind != _ARRAY:
            raise ValueError(f"unknown metadata type {kind} at byte {position - 4}")
        element, count = read("I"), read("Q")
        if element in _SCALARS:
            return skip(count * struct.calcsize(_SCALARS[element]))
        if count > len(data):
            raise _Truncated
        for _ in range(count):
            value(element)
        return None

    version = read("I")
    if version not in (2, 3):
        raise ValueError(f"GGUF version {version}; llama.cpp reads versions 2 and 3")
    tensors, entries = read("Q"), read("Q")
    if tensors > len(data) or entries > len(data):
        raise _Truncated
    alignment = 32
    for _ in range(entries):
        key = string()
        kind = read("I")
        if key == b"general.alignment" and kind == 4:
            alignment = read("I")
        else:
            value(kind)
    if alignment <= 0 or alignment & (alignment - 1):
        raise ValueError(f"alignment {alignment} is not a power of two")
    extents = []
    for _ in range(tensors):
        name = string()
        shape = [read("Q") for _ in range(read("I"))]
        kind, offset = read("I"), read("Q")
        try:
            block, block_bytes = GGML_QUANT_SIZES[GGMLQuantizationType(kind)]
        except (ValueError, KeyError):
            raise ValueError(f"tensor {name.decode(errors='replace')!r} has unknown type {kind}") from None
        extents.append((offset, math.prod(shape) * block_bytes // block))
    if not extents:
        raise ValueError("no tensors")
    start = -(-position // alignment) * alignment
    return start + max(offset + length for offset, length in extents), alignment


class LlamaProcess:
    """A GGUF model loaded by ``llama_cpp.Llama`` in a worker process; :meth:`request` runs one operation of
    ``llamacpp_worker`` on it (one at a time). After a crash the next request starts a fresh worker."""

    def __init__(self, model_path: Path, *, n_ctx: int = 2048, n_threads: int | None = 1,
                 logits_all: bool = False) -> None:
        check_gguf(model_path)
        self.path = model_path
        self._config = {"model_path": str(model_path), "n_ctx": n_ctx, "n_threads": n_threads,
                        "logits_all": logits_all}
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._stderr: IO[bytes] | None = None
        self.system_info = ""
        with self._lock:
            self.description: dict[str, Any] = self._start()

    def _start(self) -> dict[str, Any]:
        self._stderr = tempfile.TemporaryFile()
        self._process = subprocess.Popen([sys.executable, "-P", "-c", _RUN_WORKER, llamacpp_worker.__file__],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr)
        weakref.finalize(self, _stop, self._process)
        self._send(self._config, "loading the model")
        self.system_info = self._receive("loading the model")["system_info"]
        reply = self._receive("loading the model")
        if "error" in reply:
            self.close()
            raise ModelError(f"{self.path}: llama.cpp cannot load this model: {reply['error']}")
        return reply["result"]

    def request(self, op: str, **arguments: Any) -> Any:
        """The result of ``op`` (``chat``, ``tokenize``, ``next_logits``); :class:`ModelError` for a request llama.cpp
        refuses (e.g. a prompt longer than the context) and for a crash of the worker."""
        with self._lock:
            if self._process is None:
                self._start()
            self._send({"op": op, "arguments": arguments}, op)
            reply = self._receive(op)
        if "error" in reply:
            raise ModelError(f"llama.cpp refused the request: {reply['error']}")
        return reply["result"]

    def _send(self, message: dict[str, Any], doing: str) -> None:
        assert self._process is not None and self._process.stdin is not None
        try:
            llamacpp_worker.write_frame(self._process.stdin, message)
        except (BrokenPipeError, OSError):
            raise self._crashed(doing) from None

    def _receive(self, doing: str) -> dict[str, Any]:
        assert self._process is not None and self._process.stdout is not None
        try:
            reply = llamacpp_worker.read_frame(self._process.stdout)
        except (OSError, json.JSONDecodeError):
            reply = None
        if reply is None:
            raise self._crashed(doing)
        return reply

    def _crashed(self, doing: str) -> ModelError:
        assert self._process is not None
        try:
            code = self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            code = self._process.wait()
        how = f"signal {signal.Signals(-code).name}" if code < 0 else f"exit status {code}"
        last = self._last_stderr_line()
        self._process = None
        build = f"; its build: {self.system_info}" if self.system_info else ""
        said = f"; it said: {last}" if last else ""
        return ModelError(f"llama.cpp crashed ({how}) while {doing} with {self.path}{said}{build}; if the crash "
                          f"repeats, rebuild llama-cpp-python portably: {REBUILD}")

    def _last_stderr_line(self) -> str:
        if self._stderr is None:
            return ""
        self._stderr.seek(0)
        lines = [line.strip() for line in self._stderr.read().decode(errors="replace").splitlines() if line.strip()]
        return lines[-1][:300] if lines else ""

    def close(self) -> None:
        if self._process is not None:
            _stop(self._process)
            self._process = None


def _stop(process: subprocess.Popen[bytes]) -> None:
    """End the worker: closing its stdin ends its loop; one that does not end is killed."""
    if process.stdin is not None and not process.stdin.closed:
        try:
            process.stdin.close()
        except OSError:
            pass
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    if process.stdout is not None:
        process.stdout.close()
