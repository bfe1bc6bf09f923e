"""The one safe writer (issue 18, finding 4): only a regular file or an absent path is ever replaced.

A FIFO, a device, a folder, a socket or a read-only file at the path is refused by name before
anything is written; a symbolic link is written through to its target and stays a link; an
existing file keeps its permissions; a failed write leaves the old content.
"""

from __future__ import annotations

import os
import socket
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from airbench_mteb.data.errors import DatasetError
from airbench_mteb.data.files import atomic_write, write_jsonl


def _write(path: Path | str, text: str = "new\n") -> None:
    with atomic_write(path) as handle:
        handle.write(text)


def _leftovers(folder: Path) -> list[str]:
    """Temporary files a failed write might have left behind."""
    return sorted(name for name in os.listdir(folder) if name.endswith(".tmp"))


def test_a_fifo_is_refused_by_name_and_stays_a_fifo(tmp_path: Path) -> None:
    fifo = tmp_path / "out.json"
    os.mkfifo(fifo)
    with pytest.raises(DatasetError, match=r"out\.json: is a FIFO"):
        write_jsonl(fifo, [{"id": "1"}])
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert _leftovers(tmp_path) == []


def _identity(path: str) -> tuple[int, ...]:
    info = os.lstat(path)
    return info.st_ino, info.st_mode, info.st_rdev, info.st_uid, info.st_gid, info.st_ctime_ns


def test_a_character_device_is_refused_and_left_untouched(monkeypatch: pytest.MonkeyPatch) -> None:
    # /dev/null is not ours: only its refusal is tested, and that nothing about it changed. A writer
    # that would rename over it (as the old one did, as root) is stopped before it can
    def never_over_dev_null(source: object, target: object, *args: object, **kwargs: object) -> None:
        raise AssertionError(f"the writer renamed {source} over {target}")

    monkeypatch.setattr(os, "replace", never_over_dev_null)
    monkeypatch.setattr(os, "rename", never_over_dev_null)
    before, entries = _identity("/dev/null"), set(os.listdir("/dev"))
    with pytest.raises(DatasetError, match="/dev/null: is a character device"):
        _write("/dev/null")
    assert _identity("/dev/null") == before
    assert set(os.listdir("/dev")) == entries


def test_a_folder_is_refused_and_its_content_kept(tmp_path: Path) -> None:
    folder = tmp_path / "catalog.json"
    folder.mkdir()
    (folder / "kept").write_text("mine")
    with pytest.raises(DatasetError, match=r"catalog\.json: is a folder"):
        _write(folder)
    assert os.listdir(folder) == ["kept"] and (folder / "kept").read_text() == "mine"


@pytest.fixture()
def short_folder() -> Iterator[Path]:
    """A folder with a short path: a socket's path must stay under 108 bytes."""
    with tempfile.TemporaryDirectory(dir="/tmp") as folder:
        yield Path(folder)


def test_a_socket_is_refused(short_folder: Path) -> None:
    path = short_folder / "s"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(path))
        with pytest.raises(DatasetError, match="is a socket"):
            _write(path)
        assert stat.S_ISSOCK(os.lstat(path).st_mode)


def test_a_symlink_is_written_through_to_its_target_and_stays_a_link(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "links").mkdir()
    target = tmp_path / "real" / "catalog.json"
    target.write_text("old")
    target.chmod(0o640)
    link = tmp_path / "links" / "catalog.json"
    link.symlink_to(Path("..") / "real" / "catalog.json")
    _write(link, "updated")
    assert link.is_symlink() and os.readlink(link) == "../real/catalog.json"
    assert target.read_text() == "updated"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert _leftovers(tmp_path / "real") == [] and _leftovers(tmp_path / "links") == []


def test_a_dangling_symlink_creates_its_target_when_the_target_folder_exists(tmp_path: Path) -> None:
    link = tmp_path / "results.json"
    link.symlink_to(tmp_path / "elsewhere.json")
    _write(link, "created")
    assert link.is_symlink() and (tmp_path / "elsewhere.json").read_text() == "created"


def test_a_dangling_symlink_into_a_missing_folder_is_refused(tmp_path: Path) -> None:
    link = tmp_path / "results.json"
    link.symlink_to(tmp_path / "missing" / "results.json")
    with pytest.raises(DatasetError, match=r"results\.json: cannot be written .*missing does not exist"):
        _write(link)
    assert not (tmp_path / "missing").exists() and link.is_symlink()


def test_a_read_only_file_is_refused_even_for_root(tmp_path: Path) -> None:
    path = tmp_path / "catalog.json"
    path.write_text("old")
    path.chmod(0o444)
    with pytest.raises(DatasetError, match=r"catalog\.json: is read-only \(mode -r--r--r--\)"):
        _write(path)
    assert path.read_text() == "old" and stat.S_IMODE(path.stat().st_mode) == 0o444


@pytest.mark.parametrize("mode", [0o600, 0o640, 0o664])
def test_an_existing_file_keeps_its_permissions(tmp_path: Path, mode: int) -> None:
    path = tmp_path / "out.tsv"
    path.write_text("old")
    path.chmod(mode)
    _write(path)
    assert path.read_text() == "new\n" and stat.S_IMODE(path.stat().st_mode) == mode


def test_a_new_file_gets_the_permissions_of_a_plain_open(tmp_path: Path) -> None:
    umask = os.umask(0o022)
    try:
        _write(tmp_path / "new.json")
    finally:
        os.umask(umask)
    assert stat.S_IMODE((tmp_path / "new.json").stat().st_mode) == 0o644


def test_a_failure_mid_write_keeps_the_old_content(tmp_path: Path) -> None:
    path = tmp_path / "catalog.json"
    path.write_text("old")
    with pytest.raises(RuntimeError, match="disk full"), atomic_write(path) as handle:
        handle.write("half of the new")
        raise RuntimeError("disk full")
    assert path.read_text() == "old" and _leftovers(tmp_path) == []


def test_a_file_in_the_place_of_a_folder_is_named(tmp_path: Path) -> None:
    (tmp_path / "out").write_text("a file")
    with pytest.raises(DatasetError, match=r"out/report\.md: cannot be written: a part of its path is a file"):
        _write(tmp_path / "out" / "report.md")
    assert (tmp_path / "out").read_text() == "a file"


def test_mteb_result_files_go_through_the_safe_writer(tmp_path: Path) -> None:
    from mteb.results.task_result import TaskResult

    import airbench_mteb  # noqa: F401  (wraps TaskResult.to_disk for the plugin's tasks)

    result = TaskResult(dataset_revision="r", task_name="CocktailNFCorpus", mteb_version="2", scores={},
                        evaluation_time=1.0)
    fifo = tmp_path / "T.json"
    os.mkfifo(fifo)
    with pytest.raises(DatasetError, match=r"T\.json: is a FIFO"):
        result.to_disk(fifo)
    target = tmp_path / "kept.json"
    target.write_text("{}")
    target.chmod(0o640)
    link = tmp_path / "U.json"
    link.symlink_to(target)
    result.to_disk(link)
    assert link.is_symlink() and '"task_name": "CocktailNFCorpus"' in target.read_text()
    assert stat.S_IMODE(target.stat().st_mode) == 0o640


def test_a_read_only_journal_is_refused(tmp_path: Path) -> None:
    from airbench_mteb.generation.store import Journal

    path = tmp_path / "journal.jsonl"
    path.write_text("")
    path.chmod(0o444)
    with pytest.raises(DatasetError, match=r"journal\.jsonl: is read-only"):
        Journal(path)


def test_a_file_where_a_build_folder_is_due_is_refused(tmp_path: Path) -> None:
    from airbench_mteb.generation.irsc.output import publish

    (tmp_path / "irsc").write_text("not a build")
    with pytest.raises(DatasetError, match="irsc: is a file, where a folder is due"):
        publish(tmp_path, lambda staging: staging.mkdir())
    assert (tmp_path / "irsc").read_text() == "not a build"
    publish(tmp_path / "fresh", lambda staging: (staging.mkdir(parents=True), (staging / "manifest.json").touch()))
    assert (tmp_path / "fresh" / "irsc" / "manifest.json").is_file()
