"""The command line answers at once: help and argument errors import no model library (issue 49).

Each command's module imports what its command runs inside the function that runs it, and the package leaves
registering with mteb to the command line (after its arguments are parsed), so ``--help`` of every command and
every argument error are answered without mteb, torch, datasets, transformers or sentence-transformers. mteb's own
commands (``run``, ``available-tasks``, ``available-benchmarks``) are the exception: their parsers are mteb's.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from airbench_mteb.cli import MTEB_COMMANDS, build_parser

ROOT = Path(__file__).resolve().parent.parent
MODEL_LIBRARIES = ("mteb", "torch", "datasets", "transformers", "sentence_transformers")
# this checkout's package, whatever the environment has installed
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH"))))}

# Run as a script named like the console script, so the package sees the command line it is imported by; every
# argv in one process: a library imported by any of them is still in sys.modules at the end.
PROBE = """
import contextlib, io, json, sys
from airbench_mteb.cli import main
codes = []
for argv in json.loads(sys.argv[1]):
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            codes.append(main(argv))
        except SystemExit as exit:
            codes.append(exit.code)
print(json.dumps({"codes": codes, "modules": sorted(sys.modules)}))
"""


def _commands(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command and nested command (``generate irsc``) the parser has, as argv prefixes."""
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += [(*prefix, name), *_commands(sub, (*prefix, name))]
    return found


def _probe(argvs: list[list[str]], tmp_path: Path) -> dict[str, list]:
    script = tmp_path / "airbench-mteb"
    script.write_text(PROBE)
    done = subprocess.run([sys.executable, str(script), json.dumps(argvs)], capture_output=True, text=True,
                          timeout=300, cwd=ROOT, env=ENV)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


def _libraries(modules: list[str]) -> list[str]:
    return sorted({name.split(".")[0] for name in modules} & set(MODEL_LIBRARIES))


def test_every_command_is_found() -> None:
    commands = _commands(build_parser())
    assert {("report",), ("generate", "irsc"), *((name,) for name in MTEB_COMMANDS)} <= set(commands)
    assert _commands(build_parser(with_mteb=False)) == commands  # mteb's own as their names: the same commands


def test_help_and_argument_errors_import_no_model_library(tmp_path: Path) -> None:
    commands = [list(command) for command in _commands(build_parser()) if command[0] not in MTEB_COMMANDS]
    argvs = [["--help"], [], ["no-such-command"], *([*command, "--help"] for command in commands),
             *([*command, "--no-such-option"] for command in commands)]
    found = _probe(argvs, tmp_path)
    assert found["codes"] == [0, 2, 2] + [0] * len(commands) + [2] * len(commands)
    assert _libraries(found["modules"]) == []


def test_mteb_commands_help_imports_no_torch(tmp_path: Path) -> None:
    """mteb's own parsers need mteb; still no torch nor sentence-transformers for their help."""
    found = _probe([[name, "--help"] for name in MTEB_COMMANDS], tmp_path)
    assert found["codes"] == [0] * len(MTEB_COMMANDS)
    assert not {"torch", "sentence_transformers"} & set(_libraries(found["modules"]))


def test_python_m_is_the_command_line_too() -> None:
    """``python -m airbench_mteb.cli`` defers registering as the console script does."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "airbench_mteb.cli", "--help"],
                          capture_output=True, text=True, timeout=300, cwd=ROOT, env=ENV)
    assert done.returncode == 0, done.stderr[-3000:]
    imported = [line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")]
    assert "airbench_mteb.errors" in imported and _libraries(imported) == []
