"""Issue 11: typed catalogs of the three families, user catalogs of every family, one task factory."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import warnings
from importlib import resources
from pathlib import Path

import pytest
import pytrec_eval

from airbench_mteb import cli
from airbench_mteb.catalog.airbench import AirBenchEntry, airbench_task_name, packaged_airbench_entries
from airbench_mteb.catalog.cocktail import CocktailEntry
from airbench_mteb.catalog.entries import read_catalog
from airbench_mteb.catalog.irsc import irsc_catalog, read_irsc_catalog
from airbench_mteb.catalog.user import user_catalog
from airbench_mteb.data.errors import DatasetError
from airbench_mteb.tasks.airbench import airbench_task_classes, make_task_class
from airbench_mteb.tasks.cocktail import user_task_class
from airbench_mteb.tasks.irsc import read_manifest
from tests.catalog_counts import AIRBENCH_DATASETS, PACKAGED_TASKS
from tests.conftest import SAMPLE_DATA

BIN = Path(sys.executable).parent
NFCORPUS = SAMPLE_DATA / "cocktail" / "nfcorpus"
LLM = "llama-2-7b-chat-tmp0.2"
QUERIES = ("PLAIN-2", "PLAIN-12", "PLAIN-23")
UNJUDGED = ("MED-4555", "MED-4560", "MED-4427", "MED-4666", "MED-4639")


def _packaged_text(name: str) -> str:
    return resources.files("airbench_mteb.catalog").joinpath(name).read_text(encoding="utf-8")


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


# --- packaged catalogs ---------------------------------------------------------------------------

def test_a_bad_field_in_a_packaged_catalog_names_file_entry_and_field() -> None:
    airbench = json.loads(_packaged_text("airbench.json"))
    airbench["datasets"][4]["release_date"] = "May 2024"
    with pytest.raises(DatasetError) as caught:
        read_catalog(AirBenchEntry, json.dumps(airbench), "airbench.json", airbench_task_name)
    name = read_catalog(AirBenchEntry, _packaged_text("airbench.json"), "airbench.json", airbench_task_name)[4].task_name
    assert str(caught.value).startswith(f"airbench.json: entry 5 ({name}) is malformed: field 'release_date'")

    cocktail = json.loads(_packaged_text("cocktail.json"))
    cocktail["datasets"][1]["md5"] = "not-a-digest"
    with pytest.raises(DatasetError, match=r"cocktail.json: entry 2 \(CocktailDL19\) is malformed: field 'md5'"):
        read_catalog(CocktailEntry, json.dumps(cocktail), "cocktail.json")
    cocktail = json.loads(_packaged_text("cocktail.json"))
    cocktail["datasets"][0]["eval_split"] = ["test"]  # a misspelt field is not silently ignored
    with pytest.raises(DatasetError, match=r"entry 1 \(CocktailMSMARCO\) is malformed: field 'eval_split'"):
        read_catalog(CocktailEntry, json.dumps(cocktail), "cocktail.json")
    cocktail = json.loads(_packaged_text("cocktail.json"))
    del cocktail["datasets"][4]["dev_queries"]  # NFCorpus evaluates a dev split too: its size is needed
    with pytest.raises(DatasetError, match=r"entry 5 \(CocktailNFCorpus\) is malformed: eval_splits \['dev', 'test'\] "
                                           r"must be the paper's split \('test'\) plus 'dev' exactly when dev_queries"):
        read_catalog(CocktailEntry, json.dumps(cocktail), "cocktail.json")

    irsc = json.loads(_packaged_text("irsc.json"))
    irsc["sources"][2]["lang"] = "fr"
    with pytest.raises(DatasetError, match=r"irsc.json: source entry 3 \(xquad-zh\) is malformed: field 'lang'"):
        read_irsc_catalog(json.dumps(irsc), "irsc.json")


def test_the_licence_of_a_task_comes_from_its_entry() -> None:
    assert {cls.metadata.license for cls in airbench_task_classes()[:AIRBENCH_DATASETS]} == {"cc-by-nc-sa-4.0"}
    entry = packaged_airbench_entries()[0].model_copy(update={"license": "cc-by-4.0"})
    assert make_task_class(entry).metadata.license == "cc-by-4.0"
    assert irsc_catalog().license == "not specified"


def test_a_branch_revision_is_warned_about_once_per_entry() -> None:
    irsc = json.loads(_packaged_text("irsc.json"))
    for number, source in enumerate(irsc["sources"]):
        source["name"] = f"catalog-test-{number}"
    irsc["sources"][0]["revision"] = "0123456789abcdef0123456789abcdef01234567"
    catalog = read_irsc_catalog(json.dumps(irsc), "irsc.json")
    with pytest.warns(UserWarning) as caught:
        catalog.hub_sources()
    messages = [str(w.message) for w in caught]
    assert len(messages) == len(irsc["sources"]) - 1 and all("'main', a branch name" in m for m in messages)
    assert not any("catalog-test-0'" in m for m in messages) and any("catalog-test-1'" in m for m in messages)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        catalog.hub_sources()  # already said


# --- user catalogs -------------------------------------------------------------------------------

def cocktail_folder(folder: Path) -> Path:
    """A small `generate cocktail`-style folder from real NFCorpus data: 3 queries, their documents and 5 others."""
    qrels = [row for row in csv.reader((NFCORPUS / "qrels" / "test.tsv").open(encoding="utf-8"), delimiter="\t")
             if row[0] in QUERIES]
    kept = {doc for _, doc, _ in qrels} | set(UNJUDGED)
    (folder / "corpus").mkdir(parents=True)
    (folder / "qrels").mkdir()
    for stem in ("human", LLM):
        rows = [row for row in _rows(NFCORPUS / "corpus" / f"{stem}.jsonl") if row["_id"] in kept]
        (folder / "corpus" / f"{stem}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    queries = [row for row in _rows(NFCORPUS / "queries.jsonl") if row["_id"] in QUERIES]
    (folder / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries), encoding="utf-8")
    (folder / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join("\t".join(row) + "\n" for row in qrels), encoding="utf-8")
    # the fields of the manifest `generate cocktail` writes that registration reads
    manifest = {"generator": "airbench-mteb generate cocktail", "input": str(NFCORPUS), "reference": "human",
                "sources": {LLM: {"name": LLM}}, "splits": {"test": {"queries": len(queries), "judgments": len(qrels)}}}
    (folder / "cocktail.json").write_text(json.dumps(manifest), encoding="utf-8")
    return folder


def irsc_build(folder: Path) -> Path:
    (folder / "irsc").mkdir(parents=True)
    (folder / "irsc" / "manifest.json").write_text(json.dumps({"settings": {"en": {"tasks": {"part": 5}}}}))
    return folder


def _run(args: list[str], catalog: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "AIRBENCH_MTEB_CATALOG": str(catalog), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    return subprocess.run(args, capture_output=True, text=True, env=env, timeout=600)


@pytest.mark.slow
def test_one_broken_entry_per_family_leaves_every_other_task_registered(tmp_path: Path) -> None:
    airbench = packaged_airbench_entries()[0].model_dump(mode="json")
    airbench.update(version="mine", data_dir=str(tmp_path))
    cocktail = {"family": "cocktail", "task_name": "MyRewrites", "data_dir": str(cocktail_folder(tmp_path / "c")),
                "sources": {"human": "human", "llm": LLM}, "splits": ["test"]}
    irsc = {"family": "irsc", "suffix": "mine", "data_dir": str(irsc_build(tmp_path / "b"))}
    broken = [
        {**airbench, "version": "other", "task_type": "quiz"},  # malformed
        {**cocktail, "task_name": "Gone", "data_dir": str(tmp_path / "gone")},  # folder missing
        {**irsc, "family": "beir"},  # unknown family
        {key: value for key, value in airbench.items() if key != "data_dir"} | {"version": "hub"},  # no folder
    ]
    catalog = tmp_path / "catalog.json"
    catalog.write_text(json.dumps({"datasets": [airbench, broken[0], cocktail, broken[1], irsc, *broken[2:]]}))
    irsc_names = [f"{task.name}_mine" for task in irsc_catalog().tasks]
    wanted = [f"mine_{airbench['task_type']}_{airbench['domain']}_{airbench['language']}", "MyRewrites", *irsc_names]
    code = ("import json, mteb; from mteb.get_tasks import _TASKS_REGISTRY as r; "
            f"print(json.dumps([t.metadata.name for t in mteb.get_tasks(tasks={wanted!r})])); "
            "print(sum(c.__module__.startswith('airbench_mteb.') for c in r.values()))")
    done = _run([sys.executable, "-c", code], catalog)
    assert done.returncode == 0, done.stderr[-3000:]
    names, count = done.stdout.splitlines()
    assert sorted(json.loads(names)) == sorted(wanted) and int(count) == PACKAGED_TASKS + len(wanted)
    skipped = [line for line in done.stderr.splitlines() if "airbench-mteb: skipped" in line]
    assert len(skipped) == 4 and all(str(catalog) in line for line in skipped), done.stderr
    for number, reason in ((2, "field 'task_type'"), (4, "is missing"), (6, "unknown family 'beir'"),
                           (7, "no data_dir")):
        assert any(f"entry {number}" in line and reason in line for line in skipped), (number, skipped)


def test_register_dataset_takes_an_irsc_build_and_updates_it_when_registered_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    catalog = tmp_path / "catalog.json"
    monkeypatch.setenv("AIRBENCH_MTEB_CATALOG", str(catalog))
    build = irsc_build(tmp_path / "build")
    assert cli.main(["register-dataset", str(build), "--name", "v2"]) == 0
    assert cli.main(["register-dataset", str(build), "--name", "v2"]) == 0  # the same folder: an update
    assert "IRSCQueryRetrieval_v2" in capsys.readouterr().out
    assert [e.task_names for e in user_catalog().irsc] == [tuple(f"{t.name}_v2" for t in irsc_catalog().tasks)]
    assert len(json.loads(catalog.read_text())["datasets"]) == 1
    other = irsc_build(tmp_path / "other")
    assert cli.main(["register-dataset", str(other), "--name", "v2"]) == 2
    assert "'IRSCQueryRetrieval_v2' is already registered for" in capsys.readouterr().err
    assert cli.main(["register-dataset", str(other), "--name", "IRSC"]) == 0  # IRSCQueryRetrieval_IRSC: no clash
    assert cli.main(["register-dataset", str(tmp_path / "other" / "irsc")]) == 2
    assert "not a generated dataset" in capsys.readouterr().err


def test_a_generators_summary_gives_the_entry_register_dataset_makes_of_its_folder(tmp_path: Path) -> None:
    from airbench_mteb.catalog.user import folder_entry, generated_entry
    from airbench_mteb.generation.summary import GenerationSummary

    build = irsc_build(tmp_path / "build")  # an IRSC run reports its irsc/ folder, not the build folder
    irsc = GenerationSummary(family="IRSC", root=build / "irsc", files=("manifest.json",), counts={})
    assert generated_entry(irsc, "v2") == folder_entry(build, "v2")
    folder = cocktail_folder(tmp_path / "nf")
    made = GenerationSummary(family="co*cktail", root=folder, files=("cocktail.json", "queries.jsonl"), counts={})
    assert generated_entry(made) == folder_entry(folder)
    # what the run reports decides, not what else the folder holds
    with pytest.raises(DatasetError, match="not a generated dataset"):
        generated_entry(GenerationSummary(family="co*cktail", root=folder, files=("queries.jsonl",), counts={}))


@pytest.mark.slow
def test_a_real_generate_cocktail_output_registers_as_a_task_that_loads(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The manifest `generate cocktail` writes is what registration reads (bundled SmolLM2, 5 documents)."""
    source = SAMPLE_DATA / "cocktail" / "nq-utd"
    judged = ("Sports_d63", "Sports_d70", "Sports_d75")
    corpus_in = tmp_path / "input"
    (corpus_in / "qrels").mkdir(parents=True)
    docs = {row["_id"]: row for row in _rows(source / "corpus" / "human.jsonl")}
    (corpus_in / "corpus.jsonl").write_text("".join(json.dumps(docs[i]) + "\n" for i in (*judged, "Music_d610")))
    (corpus_in / "queries.jsonl").write_text(
        "".join(json.dumps(q) + "\n" for q in _rows(source / "queries.jsonl") if q["_id"] == "Sports_q7"))
    qrels = [line for line in (source / "qrels" / "test.tsv").read_text().splitlines()[1:]
             if line.startswith("Sports_q7\t") and line.split("\t")[1] in judged]
    (corpus_in / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "\n".join(qrels) + "\n")
    out = tmp_path / "rewrites"
    catalog = tmp_path / "catalog.json"
    made = _run([str(BIN / "airbench-mteb"), "generate", "cocktail", "--corpus", str(corpus_in), "--out", str(out),
                 "--llm", "smol-t0.2", "--max-words", "80", "--max-tokens", "20", "--seed", "3"], catalog)
    assert made.returncode == 0, made.stderr[-3000:]
    monkeypatch.setenv("AIRBENCH_MTEB_CATALOG", str(catalog))
    assert cli.main(["register-dataset", str(out)]) == 0
    (entry,) = user_catalog().cocktail
    assert entry.task_name == "Cocktail_rewrites" and entry.splits == ("test",)
    assert entry.sources == (("human", "human"), ("smol-t0.2", "smol-t0.2"))
    assert json.loads(catalog.read_text())["datasets"][0]["sources"] == {"human": "human", "smol-t0.2": "smol-t0.2"}
    task = user_task_class(entry)()
    task.load_data()
    assert set(task.dataset) == {"human", "smol-t0.2", "mixed", "mixed-all-relevant"}
    assert len(task.dataset["mixed"]["test"]["corpus"]) == 2 * len(_rows(out / "corpus" / "human.jsonl"))


def test_a_cocktail_folder_may_not_take_a_packaged_name_and_needs_its_manifest(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    catalog = tmp_path / "catalog.json"
    monkeypatch.setenv("AIRBENCH_MTEB_CATALOG", str(catalog))
    folder = cocktail_folder(tmp_path / "nf")
    assert cli.main(["register-dataset", str(folder), "--name", "CocktailNFCorpus"]) == 2
    assert "'CocktailNFCorpus' is the name of a built-in co*cktail task; pass another --name" in capsys.readouterr().err
    assert not catalog.exists()
    (folder / "corpus" / f"{LLM}.jsonl").unlink()
    assert cli.main(["register-dataset", str(folder)]) == 2
    assert f"the corpus file of source '{LLM}' is missing" in capsys.readouterr().err


def test_the_irsc_manifest_is_read_once_per_version_of_the_file(tmp_path: Path) -> None:
    root = irsc_build(tmp_path) / "irsc"
    first = read_manifest(root)
    assert read_manifest(root) is first
    (root / "manifest.json").write_text(json.dumps({"settings": {"zh": {"tasks": {"keyword": 3}}}}))
    assert list(read_manifest(root)["settings"]) == ["zh"]


@pytest.mark.slow
def test_a_generated_cocktail_folder_registers_lists_and_runs(tmp_path: Path) -> None:
    """The done-when path of issue 11: register-dataset, (mteb's and our) available-tasks and run, all as commands."""
    folder = cocktail_folder(tmp_path / "nf-small")
    catalog = tmp_path / "catalog.json"
    done = _run([str(BIN / "airbench-mteb"), "register-dataset", str(folder)], catalog)
    assert done.returncode == 0, done.stderr
    assert "Cocktail_nf-small" in done.stdout
    for cli_name in ("mteb", "airbench-mteb"):
        listed = _run([str(BIN / cli_name), "available-tasks"], catalog)
        assert listed.returncode == 0 and "Cocktail_nf-small" in listed.stdout, listed.stderr[-2000:]
    run = _run([str(BIN / "airbench-mteb"), "run", "-m", "airbench-mteb/bm25", "-t", "Cocktail_nf-small",
                "--output-folder", str(tmp_path / "results"), "--prediction-folder", str(tmp_path / "predictions"),
                "--no-co2-tracker"], catalog)
    assert run.returncode == 0, run.stderr[-3000:]
    scores = json.loads(next((tmp_path / "results").rglob("Cocktail_nf-small.json")).read_text())["scores"]["test"]
    by_subset = {s["hf_subset"]: s for s in scores}
    assert set(by_subset) == {"human", LLM, "mixed", "mixed-all-relevant"}
    # nDCG@1 of the human corpus alone, recomputed from the saved rankings and the folder's qrels
    predictions = json.loads(next((tmp_path / "predictions").rglob("*.json")).read_text())["human"]["test"]
    qrels: dict[str, dict[str, int]] = {}
    for qid, doc, grade in list(csv.reader((folder / "qrels" / "test.tsv").open(), delimiter="\t"))[1:]:
        qrels.setdefault(qid, {})[f"{doc}-human"] = int(grade)
    per_query = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.1"}).evaluate(predictions)
    expected = sum(q["ndcg_cut_1"] for q in per_query.values()) / len(qrels)
    assert by_subset["human"]["ndcg_at_1"] == pytest.approx(expected, abs=1e-5)
    assert 0 < expected


# --- issue 18: register-dataset refuses what the catalog cannot keep -----------------------------

def test_a_user_catalog_path_that_is_a_folder_is_an_error_naming_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    folder_catalog = tmp_path / "catalog.json"
    folder_catalog.mkdir()
    monkeypatch.setenv("AIRBENCH_MTEB_CATALOG", str(folder_catalog))
    assert cli.main(["register-dataset", str(cocktail_folder(tmp_path / "nf"))]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith(f"{folder_catalog}: is a folder; point AIRBENCH_MTEB_CATALOG at the catalog's JSON file")
    assert len(err.splitlines()) == 1 and not list(folder_catalog.iterdir())
    with pytest.warns(UserWarning, match=f"none of the datasets in the user catalog is registered: {folder_catalog}: "
                                         "is a folder"):
        assert user_catalog().cocktail == ()


@pytest.mark.parametrize("family", ["cocktail", "irsc"])
def test_registering_a_folder_under_a_second_name_needs_replace(
        family: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    catalog = tmp_path / "catalog.json"
    monkeypatch.setenv("AIRBENCH_MTEB_CATALOG", str(catalog))
    folder = cocktail_folder(tmp_path / "nf") if family == "cocktail" else irsc_build(tmp_path / "build")
    first, second = ("First", "Second") if family == "cocktail" else ("IRSCQueryRetrieval_first", "IRSCQueryRetrieval_second")
    assert cli.main(["register-dataset", str(folder), "--name", "First" if family == "cocktail" else "first"]) == 0
    assert cli.main(["register-dataset", str(folder), "--name", "Second" if family == "cocktail" else "second"]) == 2
    err = capsys.readouterr().err
    assert f"{folder.resolve()}: already registered as {first}" in err and f"--replace to register it as {second}" in err
    names = [name for e in (*user_catalog().cocktail, *user_catalog().irsc) for name in e.task_names]
    assert first in names and second not in names
    assert cli.main(["register-dataset", str(folder), "--name", "Second" if family == "cocktail" else "second",
                     "--replace"]) == 0
    names = [name for e in (*user_catalog().cocktail, *user_catalog().irsc) for name in e.task_names]
    assert second in names and first not in names and len(json.loads(catalog.read_text())["datasets"]) == 1


@pytest.mark.parametrize("manifest, culprit", [
    ({"settings": {"en": {"tasks": {"part": -5}}}}, "settings.en.tasks.part': Input should be greater than or equal to 0"),
    ({"settings": {"en": {"tasks": {"paragraph": 5}}}}, "settings.en.tasks.paragraph.[key]': Input should be 'query'"),
    ({"settings": {"fr": {"tasks": {"part": 5}}}}, "settings.fr.[key]': Input should be 'en'"),
    ({"settings": {"en": {"tasks": {"part": "5"}}}}, "settings.en.tasks.part': Input should be a valid integer"),
    ({"settings": {"en": {"tasks": {}}}}, "settings.en.tasks'"),
    ({"settings": {"en": ["part"]}}, "settings.en'"),
    ({"settings": {}}, "field 'settings'"),
    ({"seed": 3}, "field 'settings': Field required"),
    ({"settings": {"en": {"tasks": {"part": 5}}}, "skipped": [{"setting": "zh"}]}, "field 'skipped.0.task'"),
    (["settings"], "the IRSC manifest is malformed"),
])
def test_an_irsc_manifest_is_checked_at_registration_as_the_tasks_read_it(
        manifest: object, culprit: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture) -> None:
    catalog = tmp_path / "catalog.json"
    monkeypatch.setenv("AIRBENCH_MTEB_CATALOG", str(catalog))
    build = irsc_build(tmp_path / "build")
    (build / "irsc" / "manifest.json").write_text(json.dumps(manifest))
    assert cli.main(["register-dataset", str(build)]) == 2
    err = capsys.readouterr().err.strip()
    assert f"{build / 'irsc' / 'manifest.json'}: the IRSC manifest is malformed" in err and culprit in err, err
    assert len(err.splitlines()) == 1 and not catalog.exists()
    with pytest.raises(DatasetError, match="the IRSC manifest is malformed"):
        read_manifest(build / "irsc")  # what the tasks read


@pytest.mark.parametrize("change, culprit", [
    ({"sources": "llama-2-7b-chat-tmp0.2"}, '"sources" must be an object {label: description}'),
    ({"sources": ["llama-2-7b-chat-tmp0.2"]}, '"sources" must be an object'),
    ({"sources": {}}, '"sources" must be an object'),
    ({"reference": ["human"]}, '"reference" must be the label of the reference source'),
])
def test_a_cocktail_manifest_of_the_wrong_shape_says_what_is_due(
        change: dict, culprit: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture) -> None:
    monkeypatch.setenv("AIRBENCH_MTEB_CATALOG", str(tmp_path / "catalog.json"))
    folder = cocktail_folder(tmp_path / "nf")
    manifest = json.loads((folder / "cocktail.json").read_text()) | change
    (folder / "cocktail.json").write_text(json.dumps(manifest))
    assert cli.main(["register-dataset", str(folder)]) == 2
    err = capsys.readouterr().err.strip()
    assert f"{folder / 'cocktail.json'}: {culprit}" in err and len(err.splitlines()) == 1, err
