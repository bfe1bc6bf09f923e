"""Serve the bundled GGUF (or any GGUF) with llama-cpp-python's OpenAI-compatible server on loopback.

Used by the tests and benchmarks, and handy for trying the ``openai`` backend without a GPU.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from airbench_mteb.generation.errors import GenerationError
from airbench_mteb.generation.llm.llamacpp_backend import default_model_path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def llama_server(model: str | Path | None = None, alias: str = "smollm2", n_ctx: int = 2048,
                 startup_timeout: float = 60.0, extra_args: Sequence[str] = ()) -> Iterator[str]:
    """Start ``python -m llama_cpp.server`` on a free loopback port; yield its ``/v1`` base URL; stop it.

    ``extra_args`` go to the server as they are (e.g. ``("--chat_format", "llama-2")``)."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(model or default_model_path()),
         "--model_alias", alias, "--host", "127.0.0.1", "--port", str(port), "--n_threads", "1",
         "--n_threads_batch", "1", "--n_ctx", str(n_ctx), "--interrupt_requests", "False", *extra_args],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + startup_timeout
        while True:
            try:
                urllib.request.urlopen(f"{base}/models", timeout=1).read()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise GenerationError("llama_cpp.server did not start (pip install "
                                          "'llama-cpp-python[server]')") from None
                time.sleep(0.2)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
