"""`--model-kwargs KEY=VALUE`: values read as JSON scalars, keys checked against the model's loader, the
arguments in every label, and a run with arguments filed apart from the default run (MTEB's experiments)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import mteb
import pytest
from hypothesis import given, settings
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
BM25_KEYS = "analysis, b, k1, max_indexes, pruning, pyserini_ties, workers"
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


# --- issue 50: values typed by the loader's annotations, one spelling per value ------------------------------------

FLOAT32_MAX = 3.4028234663852886e38  # numpy.finfo(numpy.float32).max, written out: the oracle is not the code
FLOAT_TAKES = "takes a finite number within float32's range (-3.403e+38 to 3.403e+38)"
BM25_KINDS = {"k1": float, "b": float, "max_indexes": int, "workers": int, "analysis": str, "pyserini_ties": bool,
              "pruning": bool}


def typed_oracle(key: str, text: str) -> Any:
    """What BM25's loader receives for ``key=text``, told from the issue's rules: a bool takes true/false and Python's
    True/False; an int a whole number (80.0 is 80), never a bool; a float any finite number float32 holds, as a float
    (1 is 1.0), never a bool; text only text."""
    value = oracle(text)
    if value is REFUSED:
        return REFUSED
    kind = BM25_KINDS[key]
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if kind is bool:
        if isinstance(value, bool):
            return value
        return value == "True" if isinstance(value, str) and value in ("True", "False") else REFUSED
    if kind is float:
        return abs(float(value)) if number and value == 0 else float(value) if number and abs(value) <= FLOAT32_MAX \
            else REFUSED
    if kind is int:
        return int(value) if number and float(value).is_integer() else REFUSED
    return value if isinstance(value, str) else REFUSED


def typed(key: str, text: str) -> Any:
    try:
        return model_kwargs([f"{key}={text}"], BM25)[key]
    except OptionError as error:
        assert "\n" not in str(error) and str(error).startswith("--model-kwargs: ")
        return REFUSED


def _spellings(value: float) -> list[str]:
    """Ways JSON writes the number ``value``: shortest, with trailing zeros, in exponent form, as an integer."""
    shortest = json.dumps(value)
    spellings = [shortest, f"{value:.17e}", f"{value:.17E}"]
    if "e" not in shortest and "E" not in shortest:
        spellings.append(shortest + "00")
    if value.is_integer() and abs(value) < 1e18:
        spellings.append(str(int(value)))
    return spellings


numbers = st.one_of(st.integers(-10**40, 10**40), st.floats(allow_nan=False, allow_infinity=False))
value_texts = st.one_of(texts, numbers.map(json.dumps), st.floats(allow_nan=False, allow_infinity=False).map(
    lambda x: f"{x:.17e}"), st.sampled_from(["True", "False", "true", "false", "1", "1.0", "1.00", "80.0", "80.5",
                                             "1e308", "-1e39", "3.4e38", "2", "yes", "lucene", '"1"']))


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(sorted(BM25_KINDS)), value_texts)
def test_each_value_is_refused_in_one_line_or_received_as_its_type_says(key: str, text: str) -> None:
    expected, got = typed_oracle(key, text), typed(key, text)
    assert got == expected and type(got) is type(expected), (key, text, got, expected)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["k1", "b", "max_indexes"]), st.floats(-1e30, 1e30, allow_nan=False))
def test_equal_values_are_one_experiment_whatever_their_spelling(key: str, value: float) -> None:
    received = {text: typed(key, text) for text in _spellings(value)}
    if all(v is REFUSED for v in received.values()):
        return
    assert len({type(v) for v in received.values()}) == 1, received
    folders = {mteb.get_model_meta(BM25, experiment_kwargs={key: v}).experiment_name for v in received.values()}
    labels = {model_label(BM25, {key: v}) for v in received.values()}
    assert len(folders) == len(labels) == 1, (received, folders, labels)


def test_pythons_false_is_the_bool_and_its_experiment_that_of_json_false() -> None:
    """Finding 1: ``pyserini_ties=False`` was the text "False" (truthy), filed in the folder of JSON's false."""
    assert model_kwargs(["pyserini_ties=False"], BM25) == model_kwargs(["pyserini_ties=false"], BM25) == {
        "pyserini_ties": False}
    assert model_kwargs(["pyserini_ties=True"], BM25) == {"pyserini_ties": True}
    with model_with_arguments(BM25, None, model_kwargs(["pyserini_ties=False"], BM25)):
        assert mteb.get_model(BM25).pyserini_ties is False


@pytest.mark.parametrize(("item", "takes"), [
    ("k1=true", f"k1 {FLOAT_TAKES}"),
    ("b=false", f"b {FLOAT_TAKES}"),
    ("pyserini_ties=2", "pyserini_ties takes true or false"),
    ("pyserini_ties=1", "pyserini_ties takes true or false"),
    ("workers=true", "workers takes a whole number"),
    ("workers=1.5", "workers takes a whole number"),
    ("max_indexes=2.5", "max_indexes takes a whole number"),
    ("k1=1e308", f"k1 {FLOAT_TAKES}"),
    ("analysis=1", "analysis takes text"),
])
def test_a_value_of_another_type_is_refused_naming_the_key_and_what_it_takes(item: str, takes: str,
                                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """Finding 2: these were accepted (k1=true ran as 1, k1=1e308 as infinity: every ranking empty)."""
    with pytest.raises(OptionError) as raised:
        model_kwargs([item], BM25)
    assert str(raised.value) == f"--model-kwargs: {item}: {BM25}'s {takes}"
    assert main(["run", "-m", BM25, "-t", "CocktailNQUTD", "--data-dir", str(SAMPLE_DATA), "--model-kwargs", item]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and takes in err


def test_whole_numbers_are_ints_and_bm25_refuses_an_infinite_k1() -> None:
    assert model_kwargs(["max_indexes=2.0", "workers=3"], BM25) == {"max_indexes": 2, "workers": 3}
    assert type(model_kwargs(["max_indexes=2.0"], BM25)["max_indexes"]) is int
    with pytest.raises(ValueError, match="finite k1"):  # the library path, where no --model-kwargs reads the value
        mteb.get_model_meta(BM25).loader(k1=math.inf)


def test_k1_1_and_1_0_are_one_folder_one_label_one_index() -> None:
    """Finding 3: ``k1=1`` and ``k1=1.0`` ranked alike but were two folders, labels, leaderboard rows and indexes."""
    from airbench_mteb.models.bm25.store import IndexKey

    spelled = [model_kwargs([f"k1={text}"], BM25) for text in ("1", "1.0", "1.00", "1e0")]
    assert all(kwargs == {"k1": 1.0} and type(kwargs["k1"]) is float for kwargs in spelled)
    metas = [mteb.get_model_meta(BM25, experiment_kwargs=kwargs) for kwargs in spelled]
    assert {meta.experiment_name for meta in metas} == {"k1_1.0"}
    assert {model_label(BM25, kwargs) for kwargs in spelled} == {f"{BM25} (k1=1.0)"}
    loader = mteb.get_model_meta(BM25).loader
    keys = {IndexKey("corpus", "r", model.k1, model.b).folder_name for model in (loader(k1=1), loader(k1=1.0))}
    assert len(keys) == 1  # a library call with k1=1 shares the index too


def test_a_loader_taking_any_keyword_types_its_named_parameters_only() -> None:
    from airbench_mteb.models.arguments import argument_kinds

    def loader(model_name: str, revision: str | None = None, *, batch_size: int = 8, flag: bool = False,
               device: Any = None, **kwargs: Any) -> None: ...

    assert argument_kinds(loader) == {"batch_size": frozenset({int}), "flag": frozenset({bool})}
    assert argument_kinds(mteb.get_model_meta(BM25).loader) == {
        "k1": frozenset({float}), "b": frozenset({float}), "max_indexes": frozenset({int}),
        "analysis": frozenset({str}), "pyserini_ties": frozenset({bool}), "workers": frozenset({int}),
        "pruning": frozenset({bool})}
