"""Bad inputs of `register-dataset` and of the user catalog it keeps ($AIRBENCH_MTEB_CATALOG).

A generated folder of each family (AIR-Bench's ``catalog_entry.json`` with its files, a co*cktail
folder from real NFCorpus data, an IRSC build's manifest) broken in one way per case: missing or
malformed files, manifests of the wrong shape, official versions, packaged task and benchmark
names, names no task may have, a folder registered under a second name. Registration refuses each
with one line naming the culprit; a good folder is registered with the entry its files describe.
A catalog file broken by hand is read with the broken entry skipped (a warning naming it) and every
other entry usable: their task classes build, and the packaged tasks are all there.

Every case has a catalog of its own in its folder: the variable is listed in the case's ``env`` (so
the framework restores it) and set by the case's builder once the folder exists.
"""

from __future__ import annotations

import json
import os
import shutil
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.bad_inputs.framework import Case, Workspace, shared_data

CATALOG_ENV = "AIRBENCH_MTEB_CATALOG"
SET_BY_THE_CASE = "set by the case once its folder exists"
NAME_RULE = "a task name holds ASCII letters, digits"
OFFICIAL = "is an official AIR-Bench release"
LLM = "llama-2-7b-chat-tmp0.2"  # the LLM source of the shared co*cktail folder
FOLDER = object()  # in place of a file's content: a folder there instead
BENCH, COCKTAIL, BUILD = "my-bench", "nf-small", "build"  # the folders a case makes in its own folder

Argv = Callable[[Workspace], list[str]]
Make = Callable[[Workspace], Path]
Change = Callable[[Path], None]
Check = Callable[[Workspace, Any], None]


@shared_data("catalog_cocktail")
def _cocktail_data(folder: Path) -> Path:
    from tests.test_catalogs import cocktail_folder

    return cocktail_folder(folder / COCKTAIL)


def _catalog(ws: Workspace) -> Path:
    return ws.tmp / "catalog.json"


def _use_catalog(ws: Workspace) -> Path:
    os.environ[CATALOG_ENV] = str(_catalog(ws))  # listed in the case's env: restored afterwards
    return _catalog(ws)


def _usable(ws: Workspace) -> Any:
    """The usable entries of the case's catalog (checks run after the case's environment is restored)."""
    from airbench_mteb.catalog.user import user_catalog
    from airbench_mteb.settings import settings_applied

    with settings_applied(user_catalog=_catalog(ws)):
        return user_catalog()


def _case(case_id: str, **kwargs: Any) -> Case:
    return Case(f"catalog-{case_id}", env={CATALOG_ENV: SET_BY_THE_CASE}, **kwargs)


# --------------------------------------------------------------------------- the folders


def _write(path: Path, content: Any) -> None:
    """``content`` at ``path``: a folder for ``FOLDER``, bytes and text as they are, anything else as JSON."""
    if path.is_file():
        path.unlink()
    path.parent.mkdir(parents=True, exist_ok=True)
    if content is FOLDER:
        path.mkdir()
    elif isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")


def _once(name: str, build: Callable[[Workspace, Path], None], change: Change | None) -> Make:
    """The case's folder ``name``, built by ``build`` and then changed, the first time it is asked for."""
    def make(ws: Workspace) -> Path:
        folder = ws.tmp / name
        if not folder.exists():
            build(ws, folder)
            if change is not None:
                change(folder)
        return folder
    return make


def _airbench(change: Change | None = None, version: str = "custom", **fields: Any) -> Make:
    """A `generate airbench` output (the entry of AIR-Bench_24.05_qa_news_en with ``version`` and ``fields``)."""
    def build(ws: Workspace, folder: Path) -> None:
        from tests.test_name_clashes import generated_airbench_folder

        generated_airbench_folder(folder, version, **fields)
    return _once(BENCH, build, change)


def _cocktail(change: Change | None = None, name: str = COCKTAIL) -> Make:
    """A copy of the shared co*cktail folder."""
    return _once(name, lambda ws, folder: shutil.copytree(ws.shared("catalog_cocktail"), folder), change)


def _irsc(manifest: Any = None, name: str = BUILD) -> Make:
    """An IRSC build whose manifest is ``manifest`` (default: the smallest good one)."""
    def build(ws: Workspace, folder: Path) -> None:
        from tests.test_catalogs import irsc_build

        irsc_build(folder)
    return _once(name, build, None if manifest is None else _replace("irsc/manifest.json", manifest))


def _replace(relative: str, content: Any) -> Change:
    return lambda folder: _write(folder / relative, content)


def _remove(relative: str) -> Change:
    def change(folder: Path) -> None:
        target = folder / relative
        shutil.rmtree(target) if target.is_dir() else target.unlink()
    return change


def _edit(file: str, **fields: Any) -> Change:
    """The JSON object in ``file`` with ``fields`` set (a field set to None is removed)."""
    def change(folder: Path) -> None:
        merged = {**json.loads((folder / file).read_text()), **fields}
        _write(folder / file, {key: value for key, value in merged.items() if value is not None})
    return change


def _renamed_source(label: str) -> Change:
    """The LLM source (its corpus file too) renamed ``label``."""
    def change(folder: Path) -> None:
        (folder / "corpus" / f"{LLM}.jsonl").rename(folder / "corpus" / f"{label}.jsonl")
        _edit("cocktail.json", sources={label: {"name": label}})(folder)
    return change


def _irsc_tasks(tasks: Any) -> dict[str, Any]:
    return {"settings": {"en": {"tasks": tasks}}}


# --------------------------------------------------------------------------- register-dataset


def _register(make: Make, *options: str, first: Argv | None = None) -> Argv:
    """`register-dataset <make's folder> options`, after the registration ``first`` (which must work)."""
    def argv(ws: Workspace) -> list[str]:
        from airbench_mteb.cli import main

        _use_catalog(ws)
        if first is not None:
            assert main(first(ws)) == 0, f"the first registration failed: {first(ws)}"
        return ["register-dataset", str(make(ws)), *options]
    return argv


def _in(folder: str, relative: str = "") -> Callable[[Workspace], str]:
    """The error names this path of the case's folder."""
    return lambda ws: str(ws.tmp / folder / relative).rstrip("/")


def _cocktail_entry(ws: Workspace, name: str, folder: Path | None = None) -> dict[str, Any]:
    """The fields of a co*cktail entry registration writes, as the folder's files say."""
    return {"family": "cocktail", "task_name": name, "data_dir": str((folder or ws.tmp / COCKTAIL).resolve()),
            "sources": {"human": "human", LLM: LLM}, "splits": ["test"]}


def _catalog_holds(expected: Callable[[Workspace], list[Any]]) -> Check:
    """The catalog file holds these entries (each compared on the fields given); every usable name is unique."""
    def check(ws: Workspace, value: Any) -> None:
        from airbench_mteb.catalog.user import task_names

        entries, wanted = json.loads(_catalog(ws).read_text(encoding="utf-8"))["datasets"], expected(ws)
        assert len(entries) == len(wanted), entries
        for entry, fields in zip(entries, wanted, strict=True):
            shown = {key: entry.get(key) for key in fields} if isinstance(fields, dict) else entry
            assert shown == fields, (entry, fields)
        usable = _usable(ws)
        names = [name for family in (usable.airbench, usable.cocktail, usable.irsc) for e in family
                 for name in task_names(e)]
        assert names and len(names) == len(set(names)), names
    return check


def _cocktail_named(name: str, folder: str = COCKTAIL) -> Check:
    return _catalog_holds(lambda ws: [_cocktail_entry(ws, name, ws.tmp / folder)])


def _check_airbench(ws: Workspace, value: Any) -> None:
    source = json.loads((ws.tmp / BENCH / "catalog_entry.json").read_text())
    expected = f"{source['version']}_{source['task_type']}_{source['domain']}_{source['language']}"
    (entry,) = json.loads(_catalog(ws).read_text())["datasets"]
    assert entry["data_dir"] == str((ws.tmp / BENCH).resolve()) and entry["family"] == "airbench", entry
    assert [e.task_name for e in _usable(ws).airbench] == [expected] == ["custom_qa_cooking_en"]


def _irsc_named(suffix: str) -> Check:
    def check(ws: Workspace, value: Any) -> None:
        from airbench_mteb.catalog.irsc import irsc_catalog

        (build,) = _usable(ws).irsc
        assert build.task_names == tuple(f"{task.name}_{suffix}" for task in irsc_catalog().tasks), build.task_names
        assert build.data_dir == str((ws.tmp / BUILD).resolve())
    return check


def _name_cases() -> list[Case]:
    """Names no task may have (one rule for every family) and names that others hold."""
    refused = {"space": "my task", "unicode": "tâche", "slash": "a/b", "backslash": "a\\b", "tab": "a\tb",
               "newline": "a\nb", "bell": "a\x07b", "empty": "", "leading-dash": "-x", "dot": ".",
               "too-long": "x" * 201}
    cases = [_case(f"cocktail-name-{what}", argv=_register(_cocktail(), f"--name={name}"),
                   error=f"{name!r} is not allowed: {NAME_RULE}") for what, name in refused.items()]
    cases += [_case(f"irsc-name-{what}", argv=_register(_irsc(), f"--name={name}"),
                    error=f"{name!r} is not allowed: {NAME_RULE}")
              for what, name in (("space", "v 2"), ("unicode", "ü"), ("slash", "v/2"), ("empty", ""))]
    cases += [_case(f"airbench-domain-{what}", argv=_register(_airbench(domain=domain)),
                    error=f"domain {domain!r} is not allowed: {NAME_RULE}")
              for what, domain in (("space", "my law"), ("unicode", "küche"), ("slash", "law/en"), ("newline", "a\nb"))]
    held = {"packaged-task": ("CocktailNFCorpus", "the name of a built-in co*cktail task"),
            "packaged-airbench-task": ("AIR-Bench_24.05_qa_news_en", "the name of a built-in AIR-Bench task"),
            "airbench-benchmark": ("AIR-Bench_24.05_qa", "the name of a benchmark"),
            "irsc-benchmark": ("IRSC", "the name of a benchmark"), "mteb-benchmark": ("BEIR", "the name of a benchmark"),
            "mteb-benchmark-alias": ("MTEB", "the name of a benchmark"),
            "mteb-task": ("NFCorpus", "already the name of a task (mteb.")}
    cases += [_case(f"cocktail-name-{what}", argv=_register(_cocktail(), "--name", name), error=f"{name!r} is {holder}")
              for what, (name, holder) in held.items()]
    return [*cases,
            _case("cocktail-name-dots-dashes", argv=_register(_cocktail(), "--name", "my.task-v1_2"),
                  check=_cocktail_named("my.task-v1_2")),
            _case("cocktail-name-default", argv=_register(_cocktail()), check=_cocktail_named("Cocktail_nf-small")),
            _case("cocktail-default-name-from-odd-folder", argv=_register(_cocktail(name="my nf (v2)")),
                  check=_cocktail_named("Cocktail_my_nf__v2_", folder="my nf (v2)"))]


def _registration(make: Make, *options: str) -> Argv:
    return lambda ws: ["register-dataset", str(make(ws)), *options]


def _second_name_cases() -> list[Case]:
    as_first = _registration(_cocktail(), "--name", "First")
    return [
        _case("cocktail-second-name", argv=_register(_cocktail(), "--name", "Second", first=as_first),
              error="already registered as First"),
        _case("cocktail-second-name-replace", argv=_register(_cocktail(), "--name", "Second", "--replace", first=as_first),
              check=_cocktail_named("Second")),
        _case("cocktail-same-name-again", argv=_register(_cocktail(), "--name", "First", first=as_first),
              check=_cocktail_named("First")),
        _case("cocktail-name-of-another-folder", argv=_register(_cocktail(name="other"), "--name", "First", first=as_first),
              error=lambda ws: f"'First' is already registered for {(ws.tmp / COCKTAIL).resolve()}"),
        _case("irsc-second-name", argv=_register(_irsc(), "--name", "b", first=_registration(_irsc(), "--name", "a")),
              error="already registered as IRSCQueryRetrieval_a"),
        _case("airbench-second-version", argv=_register(_new_version, first=_registration(_airbench())),
              error="already registered as custom_qa_news_en"),
    ]


def _new_version(ws: Workspace) -> Path:
    """The registered AIR-Bench folder given another version afterwards (its files moved where they now belong)."""
    folder = ws.tmp / BENCH
    _edit("catalog_entry.json", version="custom2")(folder)
    for files in folder.glob("AIR-Bench/*/custom"):
        files.rename(files.with_name("custom2"))
    return folder


def _without(field: str) -> Change:
    return _edit("catalog_entry.json", **{field: None})


def _airbench_cases() -> list[Case]:
    entry = "catalog_entry.json"
    return [
        _case("airbench-ok", argv=_register(_airbench(domain="cooking")), check=_check_airbench),
        _case("airbench-official-2405", argv=_register(_airbench(version="AIR-Bench_24.05", domain="cooking")),
              error=f"'AIR-Bench_24.05' {OFFICIAL}"),
        _case("airbench-official-2404", argv=_register(_airbench(version="AIR-Bench_24.04", domain="cooking")),
              error=f"'AIR-Bench_24.04' {OFFICIAL}"),
        _case("airbench-with-name-option", argv=_register(_airbench(), "--name", "mine"), error="--name"),
        _case("airbench-entry-bad-json", argv=_register(_airbench(_replace(entry, '{"version": '))),
              error=_in(BENCH, entry)),
        _case("airbench-entry-a-list", argv=_register(_airbench(_replace(entry, ["custom"]))),
              error="a JSON object is due, got list"),
        _case("airbench-entry-not-utf8", argv=_register(_airbench(_replace(entry, b'{"version": "\xff"}'))),
              error="not valid UTF-8"),
        _case("airbench-entry-a-folder", argv=_register(_airbench(_replace(entry, FOLDER))),
              error=lambda ws: f"{ws.tmp / BENCH / entry}: cannot be read"),
        _case("airbench-entry-no-splits", argv=_register(_airbench(_without("splits"))), error="field 'splits'"),
        _case("airbench-entry-unknown-field", argv=_register(_airbench(_edit(entry, famliy="airbench"))),
              error="field 'famliy'"),
        _case("airbench-entry-bad-task-type", argv=_register(_airbench(task_type="quiz")), error="field 'task_type'"),
        _case("airbench-missing-corpus", argv=_register(_airbench(_remove_all("corpus_default.jsonl"))),
              error="corpus_default.jsonl: missing"),
        _case("airbench-missing-queries", argv=_register(_airbench(_remove_all("queries_default_dev.jsonl"))),
              error="queries_default_dev.jsonl: missing"),
    ]


def _remove_all(file_name: str) -> Change:
    def change(folder: Path) -> None:
        for path in folder.rglob(file_name):
            path.unlink()
    return change


def _cocktail_cases() -> list[Case]:
    manifest = "cocktail.json"
    return [
        _case("cocktail-manifest-bad-json", argv=_register(_cocktail(_replace(manifest, "{"))),
              error="cocktail.json, line 1: malformed JSON"),
        _case("cocktail-manifest-a-list", argv=_register(_cocktail(_replace(manifest, [1]))),
              error="a JSON object is due, got list"),
        _case("cocktail-sources-a-string", argv=_register(_cocktail(_edit(manifest, sources=LLM))),
              error='"sources" must be an object {label: description}'),
        _case("cocktail-sources-a-list", argv=_register(_cocktail(_edit(manifest, sources=[LLM]))),
              error='"sources" must be an object'),
        _case("cocktail-sources-empty", argv=_register(_cocktail(_edit(manifest, sources={}))),
              error='"sources" must be an object'),
        _case("cocktail-no-reference", argv=_register(_cocktail(_edit(manifest, reference=None))),
              error='"reference" must be the label of the reference source'),
        _case("cocktail-reference-a-number", argv=_register(_cocktail(_edit(manifest, reference=3))),
              error='"reference" must be the label'),
        _case("cocktail-source-named-mixed", argv=_register(_cocktail(_renamed_source("mixed"))),
              error="invalid source mixed"),
        _case("cocktail-source-label-with-space", argv=_register(_cocktail(_renamed_source("my llm"))),
              error="invalid source my llm"),
        _case("cocktail-reference-twice", argv=_register(_cocktail(_edit(manifest, sources={"human": {}}))),
              error="a source-bias task needs at least two sources, got ['human']"),
        _case("cocktail-missing-corpus", argv=_register(_cocktail(_remove(f"corpus/{LLM}.jsonl"))),
              error=f"the corpus file of source '{LLM}' is missing"),
        _case("cocktail-missing-queries", argv=_register(_cocktail(_remove("queries.jsonl"))),
              error="queries.jsonl: the queries file is missing"),
        _case("cocktail-no-qrels", argv=_register(_cocktail(_remove("qrels"))), error="qrels: no qrels/<split>.tsv"),
        _case("cocktail-no-manifest", argv=_register(_cocktail(_remove(manifest))), error="not a generated dataset"),
        _case("no-such-folder", argv=_register(lambda ws: ws.tmp / "nowhere"), error=_in("nowhere")),
        _case("a-file-not-a-folder", argv=_register(_a_file), error=lambda ws: f"{ws.tmp / 'notes.txt'}: not a folder"),
    ]


def _a_file(ws: Workspace) -> Path:
    _write(ws.tmp / "notes.txt", "not a dataset")
    return ws.tmp / "notes.txt"


def _irsc_cases() -> list[Case]:
    bad = {
        "negative-count": (_irsc_tasks({"part": -5}), "settings.en.tasks.part': Input should be greater than or equal to 0"),
        "unknown-task-type": (_irsc_tasks({"paragraph": 5}), "settings.en.tasks.paragraph.[key]'"),
        "unknown-setting": ({"settings": {"fr": {"tasks": {"part": 5}}}}, "settings.fr.[key]'"),
        "count-a-string": (_irsc_tasks({"part": "5"}), "settings.en.tasks.part': Input should be a valid integer"),
        "count-a-bool": (_irsc_tasks({"part": True}), "settings.en.tasks.part': Input should be a valid integer"),
        "count-a-float": (_irsc_tasks({"part": 5.5}), "settings.en.tasks.part'"),
        "no-tasks": (_irsc_tasks({}), "settings.en.tasks'"),
        "settings-a-list": ({"settings": ["en"]}, "field 'settings': Input should be a valid dictionary"),
        "no-settings": ({"format": 1}, "field 'settings': Field required"),
        "skipped-incomplete": ({**_irsc_tasks({"part": 5}), "skipped": [{"setting": "zh"}]}, "field 'skipped.0.task'"),
        "skipped-not-a-list": ({**_irsc_tasks({"part": 5}), "skipped": "none"}, "field 'skipped'"),
        "not-an-object": (["en"], "the IRSC manifest is malformed"),
        "bad-json": ('{"settings": ', "manifest.json, line 1: malformed JSON"),
        "a-folder": (FOLDER, "manifest.json: cannot be read"),
    }
    good = {**_irsc_tasks({"part": 5, "title": 0}), "seed": 3, "llm": None, "skipped": []}
    return [*(_case(f"irsc-manifest-{what}", argv=_register(_irsc(content)), error=culprit)
              for what, (content, culprit) in bad.items()),
            _case("irsc-ok", argv=_register(_irsc(), "--name", "v2"), check=_irsc_named("v2")),
            _case("irsc-ok-with-provenance", argv=_register(_irsc(good), "--name", "v3"), check=_irsc_named("v3"))]


# --------------------------------------------------------------------------- the catalog file itself


def _catalog_file(content: Any) -> Argv:
    """Put ``content`` at the case's catalog path, then register the co*cktail folder."""
    def argv(ws: Workspace) -> list[str]:
        _write(_use_catalog(ws), content)
        return ["register-dataset", str(_cocktail()(ws))]
    return argv


def _file_cases() -> list[Case]:
    return [
        _case("file-a-folder", argv=_catalog_file(FOLDER), error=lambda ws: f"{_catalog(ws)}: is a folder"),
        _case("file-bad-json", argv=_catalog_file('{"datasets": ['), error=lambda ws: f"{_catalog(ws)}: not a catalog"),
        _case("file-datasets-not-a-list", argv=_catalog_file({"datasets": {}}),
              error='"datasets" holds dict, not a list'),
        _case("file-not-utf8", argv=_catalog_file(b'{"datasets": ["\xff"]}'),
              error=lambda ws: f"{_catalog(ws)}: not valid UTF-8"),
        _case("file-keeps-entries-it-cannot-read", argv=_catalog_file({"datasets": [3]}),
              check=_catalog_holds(lambda ws: [3, _cocktail_entry(ws, "Cocktail_nf-small")])),
    ]


def _read_catalog(ws: Workspace) -> tuple[Any, list[str]]:
    """The usable entries of the case's catalog, every warning reading gave, and the co*cktail task classes built."""
    from airbench_mteb.catalog.user import user_catalog
    from airbench_mteb.tasks.cocktail import user_task_class

    _use_catalog(ws)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        usable = user_catalog()
    for entry in usable.cocktail:  # what registering them with mteb builds
        user_task_class(entry)
    return usable, [str(w.message) for w in caught]


def _read(content: Callable[[Workspace], list[Any]] | Any) -> Callable[[Workspace], Any]:
    """Read a catalog file holding these datasets (a function of the workspace), or this content."""
    def call(ws: Workspace) -> tuple[Any, list[str]]:
        _write(_catalog(ws), {"datasets": content(ws)} if callable(content) else content)
        return _read_catalog(ws)
    return call


def _skipped(number: int, *words: str, kept: tuple[str, ...] = ("Good",)) -> Check:
    """Entry ``number`` was skipped with a warning naming the catalog, it and ``words``; ``kept`` are usable."""
    def check(ws: Workspace, value: Any) -> None:
        from airbench_mteb.catalog.user import task_names

        usable, messages = value
        names = [name for family in (usable.airbench, usable.cocktail, usable.irsc) for e in family
                 for name in task_names(e)]
        assert names == list(kept), names
        assert any(f"entry {number}" in m and str(_catalog(ws)) in m and all(w in m for w in words)
                   for m in messages), messages
    return check


def _nothing_usable(words: str) -> Check:
    """No user entry, one warning naming the catalog and why; the packaged tasks are all there."""
    def check(ws: Workspace, value: Any) -> None:
        from airbench_mteb.catalog import airbench_entries

        usable, messages = value
        assert not (usable.airbench or usable.cocktail or usable.irsc), usable
        assert any("none of the datasets in the user catalog is registered" in m and str(_catalog(ws)) in m
                   and words in m for m in messages), messages
        assert len(airbench_entries()) == 97
    return check


def _good(ws: Workspace, **fields: Any) -> dict[str, Any]:
    return {**_cocktail_entry(ws, "Good", ws.shared("catalog_cocktail")), **fields}


def _with_good(**broken: Any) -> Callable[[Workspace], list[Any]]:
    """The good entry with ``broken`` fields first, then the good entry."""
    return lambda ws: [_good(ws, **broken), _good(ws)]


def _before_good(broken: Callable[[Workspace], Any]) -> Callable[[Workspace], list[Any]]:
    return lambda ws: [broken(ws), _good(ws)]


def _airbench_item(ws: Workspace, **fields: Any) -> dict[str, Any]:
    from airbench_mteb.catalog.airbench import packaged_airbench_entries

    source = next(e for e in packaged_airbench_entries() if e.task_name == "AIR-Bench_24.05_qa_news_en")
    return {**source.model_dump(mode="json"), "revision": "local", "data_dir": str(ws.tmp), **fields}


def _read_cases() -> list[Case]:
    return [
        _case("read-a-folder", call=_read(FOLDER), check=_nothing_usable("is a folder")),
        _case("read-bad-json", call=_read('{"datasets": [}'), check=_nothing_usable("not a catalog")),
        _case("read-empty-file", call=_read(""), check=_nothing_usable("not a catalog")),
        _case("read-official-version", call=_read(_before_good(lambda ws: _airbench_item(ws, domain="cooking"))),
              check=_skipped(1, "'AIR-Bench_24.05'", OFFICIAL)),
        _case("read-official-version-2404",
              call=_read(_before_good(lambda ws: _airbench_item(ws, version="AIR-Bench_24.04", domain="cooking"))),
              check=_skipped(1, "'AIR-Bench_24.04'", OFFICIAL)),
        _case("read-name-with-space", call=_read(_with_good(task_name="my task")), check=_skipped(1, "'my task'", NAME_RULE)),
        _case("read-airbench-domain-slash",
              call=_read(_before_good(lambda ws: _airbench_item(ws, version="v1", domain="a/b"))),
              check=_skipped(1, "(v1_qa_a/b_en)", "domain 'a/b'", NAME_RULE)),
        _case("read-benchmark-name", call=_read(_with_good(task_name="IRSC")),
              check=_skipped(1, "'IRSC' is the name of a benchmark")),
        _case("read-packaged-name", call=_read(_with_good(task_name="CocktailNQ")),
              check=_skipped(1, "'CocktailNQ' is the name of a built-in co*cktail task")),
        _case("read-name-twice", call=_read(lambda ws: [_good(ws), _good(ws, data_dir=str(ws.tmp))]),
              check=_skipped(2, "'Good' is the name of entry 1 of the user catalog")),
        _case("read-unknown-family", call=_read(_with_good(family="beir")), check=_skipped(1, "unknown family 'beir'")),
        _case("read-irsc-suffix-unicode",
              call=_read(_before_good(lambda ws: {"family": "irsc", "suffix": "ü", "data_dir": str(ws.tmp)})),
              check=_skipped(1, "'ü'", NAME_RULE)),
        _case("read-entry-a-number", call=_read(_before_good(lambda ws: 7)), check=_skipped(1, "not an object")),
        _case("read-folder-gone", call=_read(_with_good(task_name="Gone", data_dir="/nowhere/gone")),
              check=_skipped(1, "/nowhere/gone is missing")),
        _case("read-sources-a-string", call=_read(_with_good(task_name="Str", sources="human")),
              check=_skipped(1, "field 'sources'")),
    ]


CASES: list[Case] = [*_name_cases(), *_second_name_cases(), *_airbench_cases(), *_cocktail_cases(), *_irsc_cases(),
                     *_file_cases(), *_read_cases()]
