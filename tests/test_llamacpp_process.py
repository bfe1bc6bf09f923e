"""llama.cpp never takes the caller down (issue 50, item 1): the install recipe builds it portably (no AMX kernels,
which crash its decode on CPUs that have AMX), a damaged or foreign GGUF file is one line naming it, and a native
crash of llama.cpp ends its worker process only: one line naming the model and the build, and the next call works."""

from __future__ import annotations

import os
import re
import shutil
import signal
from pathlib import Path

import pytest

pytest.importorskip("llama_cpp")

from airbench_mteb.cli import main
from airbench_mteb.data.errors import ModelError
from airbench_mteb.generation.errors import GenerationError
from airbench_mteb.generation.llm.llamacpp_backend import LlamaCppBackend, default_model_path
from airbench_mteb.models.llamacpp_process import PORTABLE_BUILD, LlamaProcess, check_gguf


def test_the_installed_llama_cpp_has_no_amx_kernels() -> None:
    """What the tests run is the portable build: a wheel built without the recipe's CMAKE_ARGS (pip reuses a cached
    one) fails here by name instead of crashing on a CPU with AMX."""
    import llama_cpp

    features = llama_cpp.llama_print_system_info().decode()
    enabled = re.findall(r"(AMX\w*) = 1", features)
    assert not enabled, (f"llama-cpp-python was built with {enabled}: rebuild it as the README's install command "
                         f"does ({features})")


@pytest.fixture(scope="module")
def model_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("gguf") / "model.gguf"
    shutil.copyfile(default_model_path(), path)
    return path


def _damaged(model: Path, folder: Path, how: str) -> Path:
    path = folder / f"{how}.gguf"
    data = model.read_bytes()
    path.write_bytes({"truncated": data[:len(data) // 2], "trailing": data + b"\1" * 4096,
                      "header-only": data[:64],
                      "version-99": data[:4] + (99).to_bytes(4, "little") + data[8:],
                      "not-gguf": b"PK\3\4" + data[4:4096], "empty": b""}[how])
    return path


@pytest.mark.parametrize(("how", "said"), [
    ("truncated", "truncated GGUF file"),
    ("trailing", "bytes after the GGUF file's last tensor"),
    ("header-only", "truncated GGUF file (64 bytes end inside its header)"),
    ("version-99", "a damaged GGUF file (GGUF version 99; llama.cpp reads versions 2 and 3)"),
    ("not-gguf", "not a GGUF model file"),
    ("empty", "not a GGUF model file"),
])
def test_a_gguf_file_llama_cpp_cannot_use_is_one_line_naming_it(model_copy: Path, tmp_path: Path, how: str,
                                                                  said: str) -> None:
    path = _damaged(model_copy, tmp_path, how)
    with pytest.raises(ModelError, match=re.escape(str(path.resolve()))) as error:
        check_gguf(path)
    assert said in str(error.value) and "\n" not in str(error.value)
    with pytest.raises(GenerationError, match=re.escape(said)):
        LlamaCppBackend(path)


def test_the_whole_model_file_passes_its_check(model_copy: Path) -> None:
    check_gguf(model_copy)


def test_the_generate_command_names_a_damaged_model_in_one_line(model_copy: Path, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    path = _damaged(model_copy, tmp_path, "truncated")
    corpus = tmp_path / "corpus.jsonl"
    text = " ".join(["Rivers carry water, sand and stones from the mountains down to the sea."] * 5)
    corpus.write_text(f'{{"_id": "d1", "text": "{text}"}}\n')
    code = main(["generate", "airbench", "--corpus", str(corpus), "--domain", "nature", "--language", "en",
                 "--num-queries", "1", "--out", str(tmp_path / "out"), "--model", str(path)])
    lines = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and str(path.resolve()) in lines[0] and "truncated" in lines[0], lines


@pytest.mark.slow
def test_a_crash_of_llama_cpp_is_one_error_and_the_next_call_starts_afresh(model_copy: Path) -> None:
    """The worker is ended by SIGSEGV, as llama.cpp's AMX decode ends it: the caller gets one ModelError naming the
    signal, the model and the build, lives on, and its next call runs in a fresh worker."""
    llama = LlamaProcess(model_copy)
    tokens = llama.request("tokenize", text="Name one colour.", add_bos=False, special=False)
    assert tokens and all(isinstance(t, int) for t in tokens)
    assert llama._process is not None
    os.kill(llama._process.pid, signal.SIGSEGV)
    with pytest.raises(ModelError) as error:
        llama.request("tokenize", text="Name one colour.", add_bos=False, special=False)
    message = str(error.value)
    assert "crashed (signal SIGSEGV)" in message and str(model_copy) in message and "\n" not in message
    assert llama.system_info and llama.system_info in message and PORTABLE_BUILD in message
    assert llama.request("tokenize", text="Name one colour.", add_bos=False, special=False) == tokens
    llama.close()


@pytest.mark.slow
def test_a_crash_during_a_completion_is_a_generation_error(model_copy: Path) -> None:
    """Killed while it generates: the generators' own error (they keep what their journal holds and stop, or count
    the item as failed), never the end of the interpreter."""
    import asyncio
    import threading

    from airbench_mteb.generation.llm import LLMParams

    backend = LlamaCppBackend(model_copy)
    process = backend._llama._process
    assert process is not None
    threading.Timer(0.3, os.kill, (process.pid, signal.SIGSEGV)).start()
    params = LLMParams(temperature=0.0, max_tokens=1500, seed=1)  # far longer than 0.3 s at ~40 tokens/s
    with pytest.raises(GenerationError, match=r"crashed \(signal SIGSEGV\) while chat"):
        asyncio.run(backend.complete([{"role": "user", "content": "Count from 1 to 500, one number a line."}], params))
    asyncio.run(backend.aclose())
