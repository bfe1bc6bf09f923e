"""Bad inputs of the writers (one safe writer) and of `encode` (checked before any work).

Every file a command writes (score-submission --output, the package-submission zip, the user catalog
of register-dataset, MTEB result files of run, export-beir's files) is refused by name when a FIFO, a
folder, a read-only file, a file in place of its folder or a link into a missing folder is in the
way; through a symbolic link the target is written, the link and the target's permissions kept.
`encode` refuses options out of range, an embedding cache it cannot fill and a model that is not an
encoder before Ray starts.

The shared data are those of the submission cases (a small AIR-Bench mirror, BM25's predictions over
it and their package); cases change copies under their own folder only. A variable whose value is a
path in the case's folder is listed in the case's ``env`` (so the framework restores it) and set by
the case's command-line builder once the folder exists.
"""

from __future__ import annotations

import json
import os
import stat
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.bad_inputs.cases_submission import NEWS, Shared
from tests.bad_inputs.framework import Case, Workspace

BM25 = "airbench-mteb/bm25"
MINILM = "airbench-mteb/all-MiniLM-L6-v2"
CATALOG_ENV = "AIRBENCH_MTEB_CATALOG"
CACHE_ENV = "AIRBENCH_MTEB_EMBEDDING_CACHE"
SET_BY_THE_CASE = "set by the case once its folder exists"

Argv = Callable[[Workspace], list[str]]
Check = Callable[[Workspace, Any], None]
Where = Callable[[Workspace], Path]


def _shared(ws: Workspace) -> Shared:
    return ws.shared("submission_bm25")


# --------------------------------------------------------------------------- what can be in the way


def _fifo(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)


def _folder(path: Path) -> None:
    (path / "kept").mkdir(parents=True)


def _read_only(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('{"datasets": []}')
    path.chmod(0o444)


def _file_in_place_of_its_folder(path: Path) -> None:
    path.parent.parent.mkdir(parents=True, exist_ok=True)
    path.parent.write_text("a file")


def _link_into_a_missing_folder(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(Path("missing") / path.name)


# obstacle -> (how it is made, the words of the error after the path)
OBSTACLES: dict[str, tuple[Callable[[Path], None], str]] = {
    "fifo": (_fifo, "is a FIFO"),
    "folder": (_folder, "is a folder"),
    "read-only": (_read_only, "is read-only"),
    "under-a-file": (_file_in_place_of_its_folder, "cannot be written: a part of its path is a file"),
    "link-into-nowhere": (_link_into_a_missing_folder, "cannot be written (a symbolic link to"),
}


def _blocked(where: Where, argv: Callable[[Workspace, Path], list[str]], obstacle: str) -> Argv:
    """``argv`` writing to ``where``, with the obstacle put there first."""
    def build(ws: Workspace) -> list[str]:
        path = where(ws)
        OBSTACLES[obstacle][0](path)
        return argv(ws, path)
    return build


def _named(where: Where, obstacle: str) -> Callable[[Workspace], str]:
    """The one-line error names the path as the user gave it, then what is in the way."""
    return lambda ws: f"{where(ws)}: {OBSTACLES[obstacle][1]}"


def _writer_cases(prefix: str, where: Where, argv: Callable[[Workspace, Path], list[str]],
                  obstacles: tuple[str, ...] = tuple(OBSTACLES)) -> list[Case]:
    return [Case(f"writers-{prefix}-{obstacle}", argv=_blocked(where, argv, obstacle), error=_named(where, obstacle))
            for obstacle in obstacles]


def _link(where: Where, target_name: str, *, dangling: bool = False, mode: int = 0o640,
          content: str = "{}") -> Callable[[Workspace], Path]:
    """``where`` made a relative link to ``target_name`` beside it (a file of ``mode``, or nothing if dangling)."""
    def make(ws: Workspace) -> Path:
        link = where(ws)
        link.parent.mkdir(parents=True, exist_ok=True)
        if not dangling:
            (link.parent / target_name).write_text(content)
            (link.parent / target_name).chmod(mode)
        link.symlink_to(target_name)
        return link
    return make


def _through_link(where: Where, target_name: str, written: Callable[[Workspace, Path], None],
                  mode: int | None = 0o640) -> Check:
    """The link is still the same link, its target holds what ``written`` checks, with its mode kept."""
    def check(ws: Workspace, value: Any) -> None:
        link = where(ws)
        assert link.is_symlink() and os.readlink(link) == target_name, "the link was replaced"
        target = link.parent / target_name
        written(ws, target)
        if mode is not None:
            assert stat.S_IMODE(target.stat().st_mode) == mode, oct(target.stat().st_mode)
    return check


# --------------------------------------------------------------------------- score-submission --output


def _scores_json(ws: Workspace) -> Path:
    return ws.tmp / "out" / "scores.json"


def _score(ws: Workspace, output: Path) -> list[str]:
    return ["score-submission", str(_shared(ws).package), "--data-dir", str(_shared(ws).mirror),
            "--output", str(output)]


def _scores_written(ws: Workspace, path: Path) -> None:
    rows = json.loads(path.read_text())
    assert NEWS in {row["task_name"] for row in rows}, rows


def _score_into(make: Callable[[Workspace], Path]) -> Argv:
    return lambda ws: _score(ws, make(ws))


# --------------------------------------------------------------------------- package-submission's zip


def _zip(ws: Workspace) -> Path:
    return ws.tmp / "out" / _shared(ws).package.name


def _package(ws: Workspace, zip_path: Path) -> list[str]:
    return ["package-submission", "--predictions", str(_shared(ws).predictions), "--out", str(zip_path.parent),
            "--data-dir", str(_shared(ws).mirror), "--overwrite"]


def _same_package(ws: Workspace, path: Path) -> None:
    with zipfile.ZipFile(path) as written, zipfile.ZipFile(_shared(ws).package) as expected:
        assert sorted(written.namelist()) == sorted(expected.namelist())
        for name in expected.namelist():
            assert json.loads(written.read(name)) == json.loads(expected.read(name)), name


# --------------------------------------------------------------------------- register-dataset's catalog


def _cocktail_folder(ws: Workspace) -> Path:
    """The smallest `generate cocktail`-style folder register-dataset accepts: two sources, one judgment."""
    folder = ws.tmp / "my-cocktail"
    (folder / "corpus").mkdir(parents=True)
    (folder / "qrels").mkdir()
    (folder / "cocktail.json").write_text(json.dumps({"reference": "human", "sources": {"llm": {"model": "m"}}}))
    for label, texts in (("human", ("a cat", "a dog")), ("llm", ("a feline", "a canine"))):
        rows = [{"_id": f"d{i}", "text": text} for i, text in enumerate(texts)]
        (folder / "corpus" / f"{label}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (folder / "queries.jsonl").write_text(json.dumps({"_id": "q0", "text": "cat"}) + "\n")
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq0\td0\t1\n")
    return folder


def _catalog(ws: Workspace) -> Path:
    return ws.tmp / "config" / "catalog.json"


def _register(ws: Workspace, catalog: Path) -> list[str]:
    os.environ[CATALOG_ENV] = str(catalog)  # listed in the case's env: restored afterwards
    return ["register-dataset", str(_cocktail_folder(ws))]


def _catalog_cases() -> list[Case]:
    # a FIFO or a folder is refused when the catalog is read, before the writer is reached
    return [Case(f"writers-catalog-{obstacle}", argv=_blocked(_catalog, _register, obstacle),
                 error=_named(_catalog, obstacle) if obstacle not in ("fifo", "folder") else lambda ws: str(_catalog(ws)),
                 env={CATALOG_ENV: SET_BY_THE_CASE})
            for obstacle in OBSTACLES]


def _registered(ws: Workspace, path: Path) -> None:
    entries = json.loads(path.read_text())["datasets"]
    assert [e["task_name"] for e in entries] == ["Cocktail_my-cocktail"], entries


def _register_into(make: Callable[[Workspace], Path]) -> Argv:
    return lambda ws: _register(ws, make(ws))


def _private_catalog(ws: Workspace) -> Path:
    path = _catalog(ws)
    path.parent.mkdir(parents=True)
    path.write_text('{"datasets": []}')
    path.chmod(0o600)
    return path


def _check_private_catalog(ws: Workspace, value: Any) -> None:
    _registered(ws, _catalog(ws))
    assert stat.S_IMODE(_catalog(ws).stat().st_mode) == 0o600


# --------------------------------------------------------------------------- run's result file, export-beir


def _result(ws: Workspace) -> Path:
    import mteb
    from mteb.cache import ResultCache

    meta = mteb.get_model_meta(BM25)
    return ResultCache(ws.tmp / "results").get_task_result_path(NEWS, meta.name, meta.revision)


def _run(ws: Workspace, result: Path) -> list[str]:
    return ["run", "-m", BM25, "-t", NEWS, "--eval-splits", "dev", "--data-dir", str(_shared(ws).mirror),
            "--output-folder", str(ws.tmp / "results"), "--overwrite-strategy", "always"]


def _result_written(ws: Workspace, path: Path) -> None:
    written = json.loads(path.read_text())
    assert written["task_name"] == NEWS and "dev" in written["scores"], written


def _beir_corpus(ws: Workspace) -> Path:
    return ws.tmp / "beir" / "corpus.jsonl"


def _export(ws: Workspace, corpus: Path) -> list[str]:
    return ["export-beir", "-t", NEWS, "--splits", "dev", "--data-dir", str(_shared(ws).mirror),
            "--out", str(corpus.parent)]


# --------------------------------------------------------------------------- encode


def _encode(*options: str, model: str = MINILM) -> Argv:
    return lambda ws: ["encode", "-m", model, "-t", NEWS, "--data-dir", str(_shared(ws).mirror), *options]


def _encode_with_cache(relative: str, prepare: Callable[[Path], None]) -> Argv:
    """`encode` with the embedding cache variable naming ``ws.tmp/relative``, prepared first."""
    def build(ws: Workspace) -> list[str]:
        prepare(ws.tmp)
        os.environ[CACHE_ENV] = str(ws.tmp / relative)  # listed in the case's env: restored afterwards
        return _encode()(ws)
    return build


def _cache_named(relative: str, words: str) -> Callable[[Workspace], str]:
    return lambda ws: f"the embedding cache {ws.tmp / relative} (${CACHE_ENV}) {words}"


def _encode_option_cases() -> list[Case]:
    bad = [("--num-workers", "0"), ("--num-workers", "-1"), ("--rows-per-block", "0"), ("--rows-per-block", "-3"),
           ("--batch-size", "0"), ("--batch-size", "-5"), ("--gpus-per-worker", "-1"), ("--gpus-per-worker", "nan"),
           ("--gpus-per-worker", "inf")]
    return [Case(f"writers-encode{option}-{value}", argv=_encode(option, value), error=f"({option}) must be")
            for option, value in bad]


def _encode_cache_cases() -> list[Case]:
    caches = {
        "a-file": ("cache", lambda tmp: (tmp / "cache").write_text("vectors?"), "is not a folder"),
        "fifo": ("cache", lambda tmp: os.mkfifo(tmp / "cache"), "is not a folder"),
        "read-only": ("cache", lambda tmp: (tmp / "cache").mkdir(mode=0o555), "is a read-only folder"),
        "under-a-file": ("cache/vectors", lambda tmp: (tmp / "cache").write_text("a file"), "cannot be created"),
    }
    return [Case(f"writers-encode-cache-{name}", argv=_encode_with_cache(relative, prepare),
                 error=_cache_named(relative, words), env={CACHE_ENV: SET_BY_THE_CASE})
            for name, (relative, prepare, words) in caches.items()]


CASES: list[Case] = [
    # score-submission --output (a folder there is the submission cases' own)
    *_writer_cases("score-output", _scores_json, _score, ("fifo", "read-only", "under-a-file", "link-into-nowhere")),
    Case("writers-score-output-symlink", argv=_score_into(_link(_scores_json, "kept.json")),
         check=_through_link(_scores_json, "kept.json", _scores_written)),
    Case("writers-score-output-dangling-symlink", argv=_score_into(_link(_scores_json, "new.json", dangling=True)),
         check=_through_link(_scores_json, "new.json", _scores_written, mode=None)),
    # package-submission: the zip in --out
    *_writer_cases("package-zip", _zip, _package, ("fifo", "folder", "read-only", "link-into-nowhere")),
    Case("writers-package-zip-symlink", argv=lambda ws: _package(ws, _link(_zip, "kept.zip")(ws)),
         check=_through_link(_zip, "kept.zip", _same_package)),
    # register-dataset: the user catalog ($AIRBENCH_MTEB_CATALOG)
    *_catalog_cases(),
    Case("writers-catalog-symlink", argv=_register_into(_link(_catalog, "real.json", mode=0o600, content='{"datasets": []}')),
         check=_through_link(_catalog, "real.json", _registered, mode=0o600), env={CATALOG_ENV: SET_BY_THE_CASE}),
    Case("writers-catalog-dangling-symlink", argv=_register_into(_link(_catalog, "new.json", dangling=True)),
         check=_through_link(_catalog, "new.json", _registered, mode=None), env={CATALOG_ENV: SET_BY_THE_CASE}),
    Case("writers-catalog-keeps-permissions", argv=_register_into(_private_catalog), check=_check_private_catalog,
         env={CATALOG_ENV: SET_BY_THE_CASE}),
    # run: MTEB's result file
    *_writer_cases("run-result", _result, _run, ("fifo", "folder", "read-only")),
    Case("writers-run-result-symlink", argv=lambda ws: _run(ws, _link(_result, "kept.json")(ws)),
         check=_through_link(_result, "kept.json", _result_written)),
    # export-beir: the corpus file in --out
    *_writer_cases("export-beir-corpus", _beir_corpus, _export, ("fifo", "folder", "read-only")),
    # encode: options, the embedding cache, the model, all before Ray starts
    *_encode_option_cases(),
    Case("writers-encode-cache-off", argv=_encode(), error=f"switched off (${CACHE_ENV})", env={CACHE_ENV: "off"}),
    *_encode_cache_cases(),
    Case("writers-encode-not-an-encoder", argv=_encode(model=BM25), error=f"{BM25} is a sparse model, not an encoder"),
]
