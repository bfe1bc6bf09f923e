"""AIR-Bench tasks: catalog coverage, metadata, and a real evaluation on a local mirror."""

from __future__ import annotations

import json
from pathlib import Path

import mteb
import pytest
import pytrec_eval

import airbench_mteb  # noqa: F401
from airbench_mteb.catalog import airbench_entries
from tests.catalog_counts import airbench_benchmark_sizes

# The official AIR-Bench catalog (facts of both releases) that catalog/airbench.json is built from
CATALOG = json.loads((Path(__file__).parent / "data" / "airbench_catalog.json").read_text(encoding="utf-8"))


def test_every_dataset_of_both_versions_is_a_task() -> None:
    expected = {
        (version, task_type, domain, language, dataset)
        for version, types in CATALOG.items() for task_type, domains in types.items()
        for domain, languages in domains.items() for language, datasets in languages.items() for dataset in datasets
    }
    assert {version for version, *_ in expected} == set(CATALOG)  # the fact file was read whole
    keys = [(e, (e.version, e.task_type, e.domain, e.language, e.dataset)) for e in airbench_entries()]
    assert expected <= {key for _, key in keys}  # the catalog may hold more (a dataset added by its recipe)
    for entry, key in keys:
        task = mteb.get_task(entry.task_name)
        if key in expected:
            version, task_type, domain, language, dataset = key
            assert task.metadata.eval_splits == CATALOG[version][task_type][domain][language][dataset]["splits"]
        assert task.metadata.main_score == ("ndcg_at_10" if entry.task_type == "qa" else "recall_at_10")
        assert task.metadata.annotations_creators == "LM-generated and reviewed"
        assert task.metadata.is_public  # corpus, queries and dev qrels are open; gated test qrels only close the test split


def test_split_rules_of_the_versions() -> None:
    for entry in airbench_entries():
        if entry.version == "AIR-Bench_24.04":
            assert entry.splits == ("test",)
        elif entry.task_type == "qa":
            assert entry.splits == (("dev",) if entry.domain == "msmarco" else ("dev", "test"))


def test_selection_by_name_type_language_and_domain() -> None:
    assert [t.metadata.name for t in mteb.get_tasks(tasks=["AIR-Bench_24.05_qa_law_de"])] == ["AIR-Bench_24.05_qa_law_de"]
    legal = mteb.get_tasks(domains=["Legal"], exclude_private=False)
    assert {"AIR-Bench_24.05_qa_law_de", "AIR-Bench_24.04_long-doc_law_en_lex_files_300K-400K"} <= {t.metadata.name for t in legal}
    korean = {t.metadata.name for t in mteb.get_tasks(languages=["kor"], task_types=["Retrieval"], exclude_private=False)}
    assert {"AIR-Bench_24.05_qa_wiki_ko", "AIR-Bench_24.05_qa_news_ko", "AIR-Bench_24.05_qa_web_ko"} <= korean
    public = {t.metadata.name for t in mteb.get_tasks(task_types=["Retrieval"])}
    assert {"AIR-Bench_24.05_qa_msmarco_en", "AIR-Bench_24.05_qa_law_de"} <= public


def test_benchmarks_per_version_and_type() -> None:
    sizes = airbench_benchmark_sizes()
    assert {"AIR-Bench_24.05", "AIR-Bench_24.04_long-doc"} <= set(sizes)
    assert {name: len(mteb.get_benchmark(name).tasks) for name in sizes} == sizes


def _pytrec_scores(qrels: dict, run: dict) -> dict[str, float]:
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "recall.10", "map_cut.10"})
    per_query = evaluator.evaluate(run)
    mean = lambda key: sum(q[key] for q in per_query.values()) / len(per_query)  # noqa: E731
    return {"ndcg_at_10": mean("ndcg_cut_10"), "recall_at_10": mean("recall_10"), "map_at_10": mean("map_cut_10")}


@pytest.mark.parametrize("name", ["AIR-Bench_24.05_qa_news_en", "AIR-Bench_24.05_long-doc_arxiv_en_llama2"])
@pytest.mark.slow
def test_real_evaluation_matches_pytrec_eval(name: str, use_mirror: Path, tmp_path: Path) -> None:
    task = mteb.get_task(name)
    model = mteb.get_model("airbench-mteb/all-MiniLM-L6-v2")
    result = mteb.evaluate(model, task, cache=None, prediction_folder=tmp_path)[0]
    predictions = json.loads(next(tmp_path.glob("*.json")).read_text())
    task.load_data()
    for split in task.metadata.eval_splits:
        scores = result.scores[split][0]
        run = predictions[split]["default"] if "default" in predictions.get(split, {}) else predictions["default"][split]
        qrels = task.dataset["default"][split]["relevant_docs"]
        reference = _pytrec_scores(qrels, run)
        for key, value in reference.items():
            assert scores[key] == pytest.approx(value, abs=1e-5), (split, key)
        assert scores["main_score"] == scores[task.metadata.main_score]
        assert scores["ndcg_at_10"] > 0.3  # the query is a sentence of its positive: easy, not random
