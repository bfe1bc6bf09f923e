"""`bias` on a user's own mixed corpus with source labels and no qrels: ΔNDSR alone (BM25 on real NQ-UTD)."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import mteb
import pytest
from scipy import stats

import airbench_mteb  # noqa: F401  (registers tasks and models)
from airbench_mteb import cli
from airbench_mteb.data.errors import OptionError
from airbench_mteb.data.per_query import per_query_path, read_kept
from airbench_mteb.mteb_compat import RESULTS_FILE_DECIMALS
from airbench_mteb.tasks.cocktail import make_source_bias_task
from tests.conftest import SAMPLE_DATA

NQ_UTD = SAMPLE_DATA / "cocktail" / "nq-utd"
LLM_FILE = "llama-2-7b-chat-tmp0.2"
SOURCES = ["human", f"llm={LLM_FILE}"]
TOLERANCE = 10 ** -RESULTS_FILE_DECIMALS  # MTEB's writer rounds every score to these decimals


@pytest.fixture()
def unlabelled(tmp_path: Path) -> Path:
    """NQ-UTD without its qrels: two sources' corpora and the 80 queries."""
    folder = Path(shutil.copytree(NQ_UTD, tmp_path / "mine"))
    shutil.rmtree(folder / "qrels")
    return folder


def test_a_folder_without_qrels_has_one_split_and_the_mixed_setting_only(unlabelled: Path) -> None:
    task = make_source_bias_task(unlabelled, SOURCES, name="MineExposure")
    assert (task.metadata.eval_splits, task.hf_subsets, task.labelled) == (["test"], ["mixed"], False)
    with pytest.raises(OptionError, match=r"--settings human: .*holds no <split>.tsv, so only the mixed setting"):
        make_source_bias_task(unlabelled, SOURCES, settings=["human", "mixed"])
    with pytest.raises(OptionError, match=r"--eval-splits dev test: .*name one"):
        make_source_bias_task(unlabelled, SOURCES, splits=["dev", "test"])


@pytest.mark.slow
def test_bias_on_a_corpus_without_qrels_reports_the_source_exposure_of_every_query(
        unlabelled: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "results"
    assert cli.main(["bias", "-m", "airbench-mteb/bm25", "--data-dir", str(unlabelled), "--sources", *SOURCES,
                     "--name", "MineExposure", "--output-folder", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "ΔNDSR@1:llm" in printed and "document id ascending" in printed
    (path,) = out.rglob("MineExposure.json")
    (row,) = json.loads(path.read_text(encoding="utf-8"))["scores"]["test"]
    assert row["hf_subset"] == "mixed" and math.isnan(row["ndcg_at_1"])
    exposure = row["source_bias"]
    assert exposure["ndsr_queries"] == 80 and exposure["ndsr_tie_order"] == "doc_id_ascending"
    assert not any(key.startswith(("share_at_", "relative_delta_")) for key in exposure)

    kept = read_kept(per_query_path(path)).scores["test"]["mixed"]
    assert len(kept.query_ids) == 80
    for k in (1, 5, 100):
        for suffix in ("", "_tie_neutral"):
            differences = kept.metrics[f"ndsr_at_{k}_human{suffix}"] - kept.metrics[f"ndsr_at_{k}_llm{suffix}"]
            assert exposure[f"delta_ndsr_at_{k}_llm{suffix}"] == pytest.approx(differences.mean(), abs=TOLERANCE)
            assert exposure[f"delta_ndsr_at_{k}_llm{suffix}_p_value"] == pytest.approx(
                stats.ttest_1samp(differences, 0.0).pvalue, abs=TOLERANCE)

    # the same ranking of the same 80 queries, with qrels: the co*cktail results carry the same ΔNDSR
    labelled = make_source_bias_task(NQ_UTD, SOURCES, name="MineLabelled", settings=["mixed"])
    result = mteb.evaluate(mteb.get_model("airbench-mteb/bm25"), labelled, cache=None,
                           show_progress_bar=False).task_results[0]
    (mixed,) = result.scores["test"]
    numbers = {key: value for key, value in exposure.items() if not isinstance(value, str)}
    assert {key: mixed["source_bias"][key] for key in numbers} == pytest.approx(numbers, abs=TOLERANCE)
    assert all(mixed["source_bias"][key] == value for key, value in exposure.items() if key not in numbers)
