"""`--model-kwargs KEY=VALUE`: values read as JSON scalars, keys checked against the model's loader, the
arguments in every label, and a run with arguments filed apart from the default run (MTEB's experiments)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import mteb
import pytest
from hypothesis import given
from hypothesis import strategies as st

import airbench_mteb  # noqa: F401  (registers tasks and models)
from airbench_mteb.cli import main
from airbench_mteb.commands.model_kwargs import model_kwargs, parse_model_kwargs, parse_value
from airbench_mteb.data.errors import DatasetError, OptionError
from airbench_mteb.data.predictions import Predictions, one_model, predictions_path, read_predictions
from airbench_mteb.models.arguments import accepted_kwargs, meta_label, model_label
from airbench_mteb.registry import model_with_arguments
from airbench_mteb.report.compare import read_model_predictions
from airbench_mteb.results.reading import read_results
from tests.conftest import SAMPLE_DATA

BM25 = "airbench-mteb/bm25"
BM25_KEYS = "analysis, b, k1, max_indexes, pyserini_ties, workers"
REFUSED = "refused"


def oracle(text: str) -> Any:
    """What a VALUE means, told from the rules: strict JSON numbers (finite), true/false and non-empty strings are
    themselves; null, "", arrays, objects and non-finite numbers are refused; anything else (not JSON) is text."""
    try:
        value = json.loads(text, parse_constant=lambda constant: (_ for _ in ()).throw(ValueError(constant)))
    except ValueError:
        return text if text else REFUSED
    if value is None or value == "" or isinstance(value, (list, dict)):
        return REFUSED
    if isinstance(value, float) and not math.isfinite(value):
        return REFUSED
    return value


def parsed(text: str) -> Any:
    try:
        return parse_value(text)
    except OptionError:
        return REFUSED


scalars = st.one_of(st.integers(), st.floats(allow_nan=False, allow_infinity=False), st.booleans(),
                    st.text(min_size=1), st.none(), st.just(""), st.lists(st.integers(), max_size=2))
texts = st.one_of(scalars.map(json.dumps), st.text(), st.sampled_from(["NaN", "-Infinity", "1e999", "words", " 1.5 ",
                                                                       "tru", "'x'", "[1", "{}", "01"]))


@given(texts)
def test_a_value_is_read_as_the_rules_say(text: str) -> None:
    expected, got = oracle(text), parsed(text)
    assert got == expected and type(got) is type(expected)


@given(st.one_of(st.integers(), st.floats(allow_nan=False, allow_infinity=False), st.booleans(), st.text(min_size=1)))
def test_a_json_scalar_comes_back_as_itself(value: Any) -> None:
    got = parse_value(json.dumps(value))
    assert got == value and type(got) is type(value)


def test_key_value_pairs() -> None:
    assert parse_model_kwargs(["k1=1.2", "b=0.75", "analysis=words", 'note="a=b"', "flag=true"]) == {
        "k1": 1.2, "b": 0.75, "analysis": "words", "note": "a=b", "flag": True}
    for items, message in ((["k1"], "not KEY=VALUE"), (["=1"], "not KEY=VALUE"), (["k-1=1"], "not KEY=VALUE"),
                           (["k1=1", "k1=2"], "'k1' is given twice"), (["device=cpu"], "set by MTEB itself"),
                           (["k1=null"], "names no value"), (["k1=[1]"], "not a JSON scalar")):
        with pytest.raises(OptionError, match=message):
            parse_model_kwargs(items)


def test_a_key_the_loader_does_not_take_is_refused_listing_those_it_takes() -> None:
    assert ", ".join(accepted_kwargs(mteb.get_model_meta(BM25).loader) or ()) == BM25_KEYS
    assert model_kwargs(["k1=1.2", "b=0.75"], BM25) == {"k1": 1.2, "b": 0.75}
    with pytest.raises(OptionError, match=rf"--model-kwargs: {BM25} does not take 'k2' \(it takes: {BM25_KEYS}\)"):
        model_kwargs(["k2=1"], BM25)
    # a loader taking **kwargs (sentence-transformers) takes any keyword
    assert accepted_kwargs(lambda model_name, revision=None, **kwargs: None) is None


@pytest.mark.parametrize("command", [
    ["run", "-t", "CocktailNQUTD"],
    ["bias", "-t", "CocktailNQUTD"],
])
def test_the_cli_refuses_a_wrong_key_in_one_line(command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*command, "-m", BM25, "--data-dir", str(SAMPLE_DATA), "--model-kwargs", "k2=1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"does not take 'k2' (it takes: {BM25_KEYS})" in err


def test_the_label_names_the_arguments_as_mteb_does() -> None:
    assert model_label(BM25) == model_label(BM25, {}) == BM25
    assert model_label(BM25, {"k1": 1.2, "b": 0.75}) == "airbench-mteb/bm25 (b=0.75, k1=1.2)"
    meta = mteb.get_model_meta(BM25, experiment_kwargs={"k1": 1.2, "b": 0.75})
    assert meta_label(meta) == meta.model_name_with_experiment == "airbench-mteb/bm25 (b=0.75, k1=1.2)"


def test_a_model_with_arguments_loads_them_and_is_filed_apart(tmp_path: Path) -> None:
    cache = mteb.ResultCache(tmp_path)
    default = mteb.get_model(BM25)
    with model_with_arguments(BM25, None, {"k1": 1.2, "b": 0.75}):
        tuned = mteb.get_model(BM25)  # as `mteb run -m` loads it
        assert mteb.get_model_meta(BM25).experiment_kwargs == {"k1": 1.2, "b": 0.75}
    assert (tuned.k1, tuned.b, default.k1, default.b) == (1.2, 0.75, 0.9, 0.4)
    assert mteb.get_model_meta(BM25).experiment_kwargs is None  # the registry is as it was
    paths = [cache.get_task_result_path("CocktailNQUTD", model.mteb_model_meta) for model in (default, tuned)]
    assert paths[0].parent != paths[1].parent and paths[1].parent.name == "b_0.75__k1_1.2"
    assert paths[1].parent.parent.name == "experiments"


def test_a_value_the_loader_refuses_is_one_option_error() -> None:
    with model_with_arguments(BM25, None, {"k1": -1}), pytest.raises(OptionError, match=r"k1=-1\): the model's loader"):
        mteb.get_model(BM25)


@pytest.mark.slow
def test_a_run_with_arguments_beside_the_default_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The same task run twice into one folder: two results files, two labels, the default one untouched."""
    command = ["run", "-m", BM25, "-t", "CocktailNQUTD", "--eval-splits", "test", "--data-dir", str(SAMPLE_DATA),
               "--output-folder", str(tmp_path), "--prediction-folder", str(tmp_path / "predictions")]
    assert main(command) == 0
    default = next(tmp_path.rglob("CocktailNQUTD.json"))
    before = default.read_bytes()
    assert main([*command, "--model-kwargs", "k1=1.2", "b=0.75"]) == 0
    out = capsys.readouterr().out
    assert "airbench-mteb/bm25 (b=0.75, k1=1.2):" in out and "experiments/b_0.75__k1_1.2/CocktailNQUTD.json" in out
    assert default.read_bytes() == before
    found = {r.label: r.result for r in read_results(tmp_path).found}
    assert set(found) == {BM25, "airbench-mteb/bm25 (b=0.75, k1=1.2)"}
    mixed = {label: next(s for s in r.scores["test"] if s["hf_subset"] == "mixed-all-relevant")["ndcg_at_1"]
             for label, r in found.items()}
    assert mixed == {BM25: pytest.approx(0.75), "airbench-mteb/bm25 (b=0.75, k1=1.2)": pytest.approx(0.76875)}
    rankings = json.loads((tmp_path / "predictions" / "CocktailNQUTD_predictions.json").read_text())
    assert rankings["mteb_model_meta"]["experiment_kwargs"] == {"b": 0.75, "k1": 1.2}  # replaced, never mixed


def _rankings(folder: Path, task: str, kwargs: dict[str, Any] | None) -> Path:
    path = predictions_path(folder, task)
    folder.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(Predictions(path, task, BM25, "2", {"default": {"test": {"q": {"d": 1.0}}}},
                                           experiment_kwargs=kwargs).to_json()))
    return path


def test_rankings_keep_the_arguments_and_never_pass_for_the_default_run(tmp_path: Path) -> None:
    tuned = read_predictions(_rankings(tmp_path / "tuned", "A", {"k1": 1.2, "b": 0.75}))
    default = read_predictions(_rankings(tmp_path / "default", "A", None))
    assert tuned.model == (BM25, "2", {"k1": 1.2, "b": 0.75}) and default.model == (BM25, "2", {})
    assert "experiment_kwargs" not in json.loads(default.path.read_text())["mteb_model_meta"]  # as MTEB writes it
    with pytest.raises(DatasetError, match="predictions of two models in one folder"):
        one_model([tuned, default])
    # compare (SSCI/RCCI) names each folder by its label: the two runs are two models
    assert read_model_predictions(tmp_path / "tuned").model == "airbench-mteb/bm25 (b=0.75, k1=1.2)"
    assert read_model_predictions(tmp_path / "default").model == BM25


@pytest.mark.slow
def test_bias_names_the_model_with_its_arguments(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bias", "-m", BM25, "--model-kwargs", "k1=1.2", "b=0.75", "-t", "CocktailNQUTD", "--settings", "mixed",
                 "--data-dir", str(SAMPLE_DATA), "--output-folder", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "airbench-mteb/bm25 (b=0.75, k1=1.2)"
    (path,) = tmp_path.rglob("CocktailNQUTD.json")
    assert path.parent.name == "b_0.75__k1_1.2"
    mixed = next(s for s in json.loads(path.read_text())["scores"]["test"] if s["hf_subset"] == "mixed")
    assert mixed["source_bias"]["relative_delta_ndcg_at_1_llm"] == pytest.approx(37.4, abs=0.05)  # the paper's +37.2
