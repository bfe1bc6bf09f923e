"""The process that runs llama.cpp for :class:`~airbench_mteb.models.llamacpp_process.LlamaProcess`.

llama.cpp is native code: a bad build (its AMX kernels on some CPUs) or a damaged model file can end the process
with a signal, which no ``try`` catches. Run in a process of its own, such a crash ends this worker only, and the
caller reports it in one line. Only the standard library and ``llama_cpp`` are imported here, so the worker starts
from its file path whatever the caller's ``sys.path``.

Protocol: frames of a 4-byte big-endian length and a JSON object, requests on stdin, replies on the original
stdout (fd 1 is pointed at stderr, so that nothing native code prints can corrupt a reply). The first request
configures the model; the worker replies ``{"system_info": ...}`` before loading it (so that a crash while loading
still names the build), then ``{"result": {...}}`` (the model's description) or ``{"error": ...}``. Then one reply
per request ``{"op": ..., "arguments": {...}}``, until stdin ends.
"""

from __future__ import annotations

import json
import os
import struct
import sys
from collections.abc import Callable
from typing import IO, Any

_LENGTH = struct.Struct(">I")


def read_frame(stream: IO[bytes]) -> dict[str, Any] | None:
    """The next frame's object, or None at the end of the stream (the other side is gone)."""
    header = stream.read(_LENGTH.size)
    if len(header) < _LENGTH.size:
        return None
    (length,) = _LENGTH.unpack(header)
    body = stream.read(length)
    if len(body) < length:
        return None
    return json.loads(body)


def write_frame(stream: IO[bytes], message: dict[str, Any]) -> None:
    body = json.dumps(message).encode()
    stream.write(_LENGTH.pack(len(body)) + body)
    stream.flush()


def _operations(llama: Any) -> dict[str, Callable[..., Any]]:
    import llama_cpp

    def chat(**arguments: Any) -> Any:
        llama.reset()  # the prefix cache would make a call's output depend on the call before it
        return llama.create_chat_completion(**arguments)

    def tokenize(text: str, add_bos: bool, special: bool) -> list[int]:
        return llama.tokenize(text.encode(), add_bos=add_bos, special=special)

    def next_logits(tokens: list[int], ids: list[int]) -> list[float]:
        """The logits of ``ids`` for the token after ``tokens``."""
        llama.reset()
        llama.eval(tokens)
        logits = llama_cpp.llama_get_logits_ith(llama.ctx, -1)
        return [float(logits[i]) for i in ids]

    return {"chat": chat, "tokenize": tokenize, "next_logits": next_logits}


def _describe(llama: Any) -> dict[str, Any]:
    text = llama._model.token_get_text
    return {"metadata": dict(llama.metadata), "n_ctx": llama.n_ctx(), "eos": text(llama.token_eos()),
            "bos": text(llama.token_bos())}


def _serve(requests: IO[bytes], replies: IO[bytes]) -> None:
    import llama_cpp

    config = read_frame(requests)
    if config is None:
        return
    write_frame(replies, {"system_info": llama_cpp.llama_print_system_info().decode(errors="replace").strip()})
    try:
        llama = llama_cpp.Llama(model_path=config["model_path"], n_ctx=config["n_ctx"],
                                n_threads=config["n_threads"], n_threads_batch=config["n_threads"],
                                verbose=False, logits_all=config["logits_all"])
    except (ValueError, RuntimeError) as error:  # llama-cpp-python's "Failed to load model from file"
        write_frame(replies, {"error": str(error)})
        return
    write_frame(replies, {"result": _describe(llama)})
    operations = _operations(llama)
    while (request := read_frame(requests)) is not None:
        try:
            reply = {"result": operations[request["op"]](**request["arguments"])}
        except ValueError as error:  # llama-cpp-python raises ValueError for an over-long prompt
            reply = {"error": str(error)}
        write_frame(replies, reply)
    llama.close()


def main() -> None:
    replies = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    _serve(sys.stdin.buffer, replies)


if __name__ == "__main__":
    main()
