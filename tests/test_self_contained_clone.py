"""A clone works with nothing beside it: the data its tests and README need ships with it, the documented examples
write only where .gitignore covers, and the commands behave as Unix tools in a pipe."""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

from airbench_mteb.data.errors import DatasetError
from airbench_mteb.data.sample_data import PACKAGED, sample_files, write_sample_data

ROOT = Path(__file__).resolve().parent.parent
# where the documented commands write: relative folders given to these options
OUTPUT_OPTION = re.compile(r"--(?:out|output-folder|prediction-folder) +([^\s`]+)")
SKIPPED_FOLDERS = {".git", ".venv", "__pycache__", ".pytest_cache", ".ruff_cache", "build", "dist"}


def _code_blocks(markdown: str) -> str:
    return "\n".join(re.findall(r"```(?:bash|sh)\n(.*?)```", markdown, flags=re.S))


def test_the_folders_documented_examples_write_are_git_ignored() -> None:
    ignored = {line.strip().strip("/") for line in (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
               if line.strip() and not line.startswith("#")}
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    written = {match.split("/")[0] for page in pages
               for match in OUTPUT_OPTION.findall(_code_blocks(page.read_text(encoding="utf-8")))
               if not match.startswith(("~", "/", "$", "<"))}
    assert written, "the documented examples write no folder: the pattern no longer matches them"
    assert written - ignored == set()


def test_no_repository_file_points_beside_the_clone() -> None:
    beside = ".." + "/shared"  # spelled in two parts so this file does not name it
    found = []
    for path in ROOT.rglob("*"):
        if path.is_file() and not SKIPPED_FOLDERS & set(path.relative_to(ROOT).parts) and ".egg-info" not in str(path):
            try:
                text = path.read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError):
                continue
            found += [f"{path.relative_to(ROOT)}:{n}" for n, line in enumerate(text.splitlines(), 1) if beside in line]
    assert found == []


def test_sample_data_is_written_as_released_and_rewritten_only_where_damaged(tmp_path: Path) -> None:
    root = write_sample_data(tmp_path / "mirror")
    files = sample_files()
    assert {"cocktail/nfcorpus/qrels/test.tsv", "cocktail/nq-utd/corpus/human.jsonl"} <= set(files)
    for relative, expected in files.items():
        assert hashlib.sha256((root / relative).read_bytes()).hexdigest() == expected["sha256"]
    kept = root / "cocktail/nq-utd/queries.jsonl"
    damaged = root / "cocktail/nq-utd/qrels/test.tsv"
    damaged.write_text("query-id\tcorpus-id\tscore\n", encoding="utf-8")
    kept_stamp = kept.stat().st_mtime_ns
    write_sample_data(root)
    assert hashlib.sha256(damaged.read_bytes()).hexdigest() == files["cocktail/nq-utd/qrels/test.tsv"]["sha256"]
    assert kept.stat().st_mtime_ns == kept_stamp


def test_a_damaged_install_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from airbench_mteb.data import sample_data

    broken = tmp_path / "packaged"
    broken.mkdir()
    (broken / "manifest.json").write_text('{"a.txt": {"sha256": "0", "bytes": 1}}', encoding="utf-8")
    monkeypatch.setattr(sample_data, "PACKAGED", broken)
    monkeypatch.setattr(sample_data, "MANIFEST", broken / "manifest.json")
    with pytest.raises(DatasetError, match=r"a\.txt\.xz.*missing"):
        write_sample_data(tmp_path / "out")
    assert PACKAGED.name == "sample_data"


def test_listing_into_a_reader_that_left_ends_quietly() -> None:
    """`airbench-mteb tasks --json | head`: no BrokenPipeError traceback, the exit status of a command SIGPIPE ended."""
    command = [sys.executable, "-c", "import sys; from airbench_mteb.cli import main; sys.exit(main())", "tasks", "--json"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout is not None
    process.stdout.close()  # the reader is gone before the command writes (it takes seconds to start)
    _, stderr = process.communicate(timeout=300)
    assert process.returncode == 141
    assert "Traceback" not in stderr.decode() and "BrokenPipe" not in stderr.decode()
