"""`generate cocktail` and `generate cocktail-report` on real NQ-UTD documents (co*cktail's own data).

The LLM is the bundled SmolLM2 GGUF in process (two sources: temperatures 0.2 and 0.7); the answers
are short (40 tokens) so a full run of 6 documents x 2 sources takes about half a minute here.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from huggingface_hub import DatasetCard

from airbench_mteb.commands.generate_cocktail import parse_llm_spec
from airbench_mteb.data.errors import DatasetError
from airbench_mteb.data.retrieval_data import Document
from airbench_mteb.generation.cocktail import CocktailConfig, LLMSource, generate
from airbench_mteb.generation.cocktail.answers import REFUSED, REWRITTEN, UNPARSED, is_refusal, parse_answer
from airbench_mteb.generation.cocktail.corpus import read_input
from airbench_mteb.generation.cocktail.prompts import rewrite_messages
from airbench_mteb.generation.cocktail.quality import jaccard, overlap, random_partners, terms
from airbench_mteb.generation.cocktail.sampling import sample_corpus
from airbench_mteb.generation.errors import GenerationError
from airbench_mteb.generation.llm import Completion, LLMClient, LLMParams, ParseError, ResponseCache
from airbench_mteb.generation.llm.local_server import llama_server
from tests.conftest import SAMPLE_DATA
from tests.llm_servers import CountingProxy, kill_at

NQ_UTD = SAMPLE_DATA / "cocktail" / "nq-utd"
QUERIES = ("Sports_q7", "Sports_q8")
# judged for those queries (Sports_d64 has 85 words: --max-words 80 leaves it out), then judged for others only
JUDGED = ("Sports_d63", "Sports_d70", "Sports_d64", "Sports_d75", "Sports_d79", "Sports_d78")
OTHERS = ("Music_d610", "Sports_d39", "Scientific_d319")
SOURCES = ("smol-t0.2", "smol-t0.7")
CLI_ARGS = ["--llm", SOURCES[0], "--llm", SOURCES[1], "llamacpp", "temperature=0.7", "--max-docs", "6",
            "--max-words", "80", "--max-tokens", "40", "--seed", "3", "--concurrency", "2"]


def read_rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def nq_utd_qrels() -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    with (NQ_UTD / "qrels" / "test.tsv").open(encoding="utf-8") as handle:
        for qid, doc_id, grade in list(csv.reader(handle, delimiter="\t"))[1:]:
            qrels.setdefault(qid, {})[doc_id] = int(grade)
    return qrels


@pytest.fixture(scope="module")
def small_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A BEIR folder of 9 real NQ-UTD documents, 2 queries and their judgments on those documents."""
    folder = tmp_path_factory.mktemp("input") / "nq-utd-small"
    (folder / "qrels").mkdir(parents=True)
    docs = {row["_id"]: row for row in read_rows(NQ_UTD / "corpus" / "human.jsonl")}
    lines = [json.dumps({"_id": i, "title": docs[i]["title"], "text": docs[i]["text"]}) for i in JUDGED + OTHERS]
    (folder / "corpus.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    queries = [row for row in read_rows(NQ_UTD / "queries.jsonl") if row["_id"] in QUERIES]
    (folder / "queries.jsonl").write_text("\n".join(json.dumps(q) for q in queries) + "\n", encoding="utf-8")
    qrels = nq_utd_qrels()
    judgments = [f"{q}\t{d}\t{g}" for q in QUERIES for d, g in qrels[q].items() if d in JUDGED]
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "\n".join(judgments) + "\n")
    return folder


def start_cli(corpus: Path, out: Path) -> subprocess.Popen:
    """`airbench-mteb generate cocktail` in its own process, so it can be SIGKILLed."""
    script = ("import argparse, sys\n"
              "from airbench_mteb.commands import generate\n"
              "parser = argparse.ArgumentParser(); generate.register(parser.add_subparsers())\n"
              "args = parser.parse_args(sys.argv[1:]); sys.exit(args.func(args))\n")
    return subprocess.Popen([sys.executable, "-c", script, "generate", "cocktail", "--corpus", str(corpus),
                             "--out", str(out), *CLI_ARGS], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)


def published(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*"))
            if p.is_file() and ".work" not in p.parts and p.name != "run_account.json"}


def calls(out: Path) -> int:
    return sum(account["calls"] for account in json.loads((out / "run_account.json").read_text()).values())


@pytest.fixture(scope="module")
def generated(small_corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One uninterrupted run through the command line."""
    out = tmp_path_factory.mktemp("generated") / "run"
    process = start_cli(small_corpus, out)
    log, _ = process.communicate(timeout=600)
    assert process.returncode == 0, log
    return out


# --- the prompt, the answer, refusals ---------------------------------------------------------------

def test_the_prompt_is_the_papers_post_instruction_without_query_information() -> None:
    (message,) = rewrite_messages("The SU7 is built on Xiaomi's Modena platform.")
    assert message["content"] == ("Original Text: The SU7 is built on Xiaomi's Modena platform.\nPlease rewrite the "
                                  "above given text. Your answer must be formatted as follows: Rewritten Text: "
                                  "<your rewritten text>.")


ORIGINAL = "Donald Trump said the election was stolen and urged supporters to march on the Capitol."
# opening shapes of real chat-model refusals (Llama-2-chat, GPT, Mistral)
REFUSALS = [
    "I apologize, but I cannot fulfill your request. I'm just an AI, it's not within my programming or ethical "
    "guidelines to create content that promotes misinformation.",
    "I cannot rewrite this text as it contains harmful and false claims.",
    "As an AI language model, I am not able to rewrite content that spreads misinformation.",
    "I'm sorry, but I can't help with rewriting this.",
    "Rewritten Text: I apologize, but I cannot provide a rewritten version of this text.",
    "Sure! Here's my answer:\n\nI'm just an AI and I must respectfully decline to rewrite this text.",
]


@pytest.mark.parametrize("answer", REFUSALS)
def test_refusals_are_recognised(answer: str) -> None:
    parsed = parse_answer(Completion(answer, 50, 30), ORIGINAL, max_tokens=200, require_marker=False)
    assert parsed.status == REFUSED and parsed.text == "" and parsed.excerpt == answer[:200]


def test_what_the_original_itself_says_is_not_a_refusal() -> None:
    original = "I cannot believe we won, said the coach. As an AI researcher, she studies chess engines."
    answer = "Rewritten Text: I can't believe we won, the coach said. She researches chess engines as an AI expert."
    parsed = parse_answer(Completion(answer, 50, 30), original, max_tokens=200, require_marker=False)
    assert parsed.status == REWRITTEN and parsed.text.startswith("I can't believe we won")
    assert not is_refusal("Unfortunately the match was cancelled.", "The match was cancelled.")


def test_answers_are_parsed_after_the_last_marker_or_without_one() -> None:
    def parse(text: str, require: bool = False, tokens_out: int = 30):
        return parse_answer(Completion(text, 50, tokens_out), ORIGINAL, max_tokens=40, require_marker=require)

    assert parse("Rewritten Text: <your rewritten text>\n\n**Rewritten Text:** Trump claimed fraud.").text == \
        "Trump claimed fraud."
    assert parse("Rewritten Text: <Trump claimed fraud.>").text == "Trump claimed fraud."
    assert parse("Sure! Here is the rewritten text:\nTrump claimed fraud.").text == "Trump claimed fraud."
    unmarked = parse("Sure! Here is my version:\nTrump claimed fraud.", tokens_out=40)
    assert (unmarked.text, unmarked.marker, unmarked.truncated) == ("Trump claimed fraud.", False, True)
    assert parse("Original Text: Trump claimed fraud.").text == "Trump claimed fraud."  # the echoed label goes
    with pytest.raises(ParseError, match="no 'Rewritten Text:'"):
        parse("Trump claimed fraud.", require=True)
    with pytest.raises(ParseError, match="empty rewrite"):
        parse("Rewritten Text:   ")


# --- sources and sampling ----------------------------------------------------------------------------

def test_llm_specs() -> None:
    defaults = {"backend": "llamacpp", "model": None, "base_url": None, "temperature": 0.2}
    assert parse_llm_spec(["smol"], **defaults) == LLMSource("smol")
    spec = parse_llm_spec(["gpt-4o-mini-tmp0.2", "openai", "model=gpt-4o-mini", "base-url=http://h:8000/v1",
                           "temperature=0.5"], **defaults)
    assert spec == LLMSource("gpt-4o-mini-tmp0.2", "openai", "gpt-4o-mini", "http://h:8000/v1", 0.5)
    with pytest.raises(GenerationError, match="cannot read 'top_p=1'"):
        parse_llm_spec(["x", "openai", "top_p=1"], **defaults)
    with pytest.raises(GenerationError, match="temperature must be a number"):
        parse_llm_spec(["x", "temperature=hot"], **defaults)


def test_sampling_keeps_every_judged_document_and_tops_up_at_random() -> None:
    """On the whole real NQ-UTD corpus, with an independent count of what must be kept."""
    corpus = {row["_id"]: Document(row["text"], row["title"]) for row in read_rows(NQ_UTD / "corpus" / "human.jsonl")}
    qrels = {"test": {q: docs for q, docs in nq_utd_qrels().items() if q.startswith("Sports")}}
    judged = {d for docs in qrels["test"].values() for d in docs}
    in_range = [d for d, doc in corpus.items() if 10 <= len(doc.text.split()) <= 100]
    sample = sample_corpus(corpus, qrels, max_docs=300, seed=1, max_words=100)
    assert set(judged) & set(in_range) <= set(sample.ids) and len(sample.ids) == 300
    assert set(sample.ids) <= set(in_range)
    assert sample.ids == [d for d in corpus if d in set(sample.ids)]  # corpus order
    assert sample.stats == {"input": 800, "too_short": 0, "too_long": 800 - len(in_range),
                            "judged": len(judged & set(in_range)), "random": 300 - len(judged & set(in_range)),
                            "kept": 300}
    assert sample_corpus(corpus, qrels, max_docs=300, seed=1, max_words=100).ids == sample.ids
    assert sample_corpus(corpus, qrels, max_docs=300, seed=2, max_words=100).ids != sample.ids
    assert len(sample_corpus(corpus, qrels, max_docs=None, seed=1).ids) == 800


def test_bad_input_names_the_file(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match=r"no corpus\.jsonl"):
        read_input(tmp_path)
    (tmp_path / "corpus.jsonl").write_text('{"_id": "a", "text": "x"}\n{"_id": "a", "text": "y"}\n')
    with pytest.raises(DatasetError, match=r"corpus.jsonl.*line 2.*duplicate"):
        read_input(tmp_path)


# --- real runs ---------------------------------------------------------------------------------------

@pytest.mark.slow
def test_a_real_two_llm_run_loads_as_a_multi_source_folder(generated: Path, small_corpus: Path) -> None:
    human = read_rows(generated / "corpus" / "human.jsonl")
    ids = [row["_id"] for row in human]
    # 5 judged documents under 80 words, and one of the 3 others
    assert ids[:5] == ["Sports_d63", "Sports_d70", "Sports_d75", "Sports_d79", "Sports_d78"] and len(ids) == 6
    for source in SOURCES:
        rows = read_rows(generated / "corpus" / f"{source}.jsonl")
        assert [row["_id"] for row in rows] == ids
        for row, original in zip(rows, human, strict=True):
            status = row["metadata"]["rewrite"]
            assert status in (REWRITTEN, REFUSED, UNPARSED)
            assert (row["text"] != original["text"]) == (status == REWRITTEN)
    manifest = json.loads((generated / "cocktail.json").read_text())
    assert manifest["sampling"]["documents"] == {"input": 9, "too_short": 0, "too_long": 1, "judged": 5,
                                                 "random": 1, "kept": 6}
    assert manifest["sources"][SOURCES[1]]["temperature"] == 0.7
    assert sum(manifest["sources"][SOURCES[0]]["outcomes"].values()) == 6
    # the judgment on the document left out is gone; the others are copied
    qrels = (generated / "qrels" / "test.tsv").read_text().splitlines()
    assert qrels[0] == "query-id\tcorpus-id\tscore" and len(qrels) == 1 + 5 and "Sports_d64" not in "".join(qrels)
    assert calls(generated) == 12
    # the card carries the hub's YAML: what the data is, and how it was made
    card = DatasetCard.load(generated / "README.md")
    assert (card.data.license, card.data.language, card.data.size_categories) == ("unknown", ["en"], ["n<1K"])
    assert card.data.task_categories == ["text-retrieval"] and card.data.pretty_name == "co*cktail-style nq-utd-small"
    assert card.data.provenance["sources"][SOURCES[1]]["temperature"] == 0.7
    assert card.text.lstrip().startswith("# co*cktail-style dataset from ")


@pytest.mark.slow
def test_sigkill_then_resume_repeats_no_call_and_writes_the_same_files(generated: Path, small_corpus: Path,
                                                                       tmp_path: Path) -> None:
    out = tmp_path / "killed"
    journal = out / ".work" / "journal.jsonl"
    process = start_cli(small_corpus, out)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if journal.is_file() and journal.read_text().count('"kind": "rewrite"') >= 5:
            break
        time.sleep(0.05)
    os.kill(process.pid, signal.SIGKILL)
    process.communicate(timeout=60)
    assert process.returncode == -9 and not (out / "cocktail.json").exists()
    cache = ResponseCache(out / ".work" / "llm_cache.sqlite")
    answered_before_kill = len(cache)
    cache.close()
    assert 5 <= answered_before_kill < 12

    process = start_cli(small_corpus, out)
    log, _ = process.communicate(timeout=600)
    assert process.returncode == 0, log
    # only the answers the killed run never got are bought, and nothing is lost or journaled twice
    assert calls(out) == calls(generated) - answered_before_kill
    keys = Counter(json.loads(line)["key"] for line in journal.read_text().splitlines()
                   if json.loads(line)["kind"] == "rewrite")
    assert len(keys) == 12 and max(keys.values()) == 1
    assert published(out) == published(generated)


class ScriptedBackend:
    """Answers each rewrite prompt with a string the test wrote: the first whose key the prompt contains."""

    kind, model = "scripted", "refusal-shapes"

    def __init__(self, answers: dict[str, str], default: str) -> None:
        self.answers, self.default = answers, default
        self.identity = {"kind": self.kind, "model": self.model}

    async def complete(self, messages: list[dict[str, str]], params: LLMParams) -> Completion:
        prompt = messages[0]["content"]
        return Completion(next((a for key, a in self.answers.items() if key in prompt), self.default), 100, 20)

    async def aclose(self) -> None:
        pass


def test_refused_and_unparsed_rewrites_keep_the_human_text_with_a_flag(small_corpus: Path, tmp_path: Path) -> None:
    backend = ScriptedBackend({"Ronnie O'Sullivan won the 2023": REFUSALS[0],  # Sports_d63
                               "Ronnie O'Sullivan for his longevity": "Rewritten Text:"},  # Sports_d70
                              default="Rewritten Text: A rewritten news text.")
    docs = {row["_id"]: row["text"] for row in read_rows(small_corpus / "corpus.jsonl")}
    config = CocktailConfig(corpus=str(small_corpus), sources=(LLMSource("scripted", "scripted"),), max_docs=6,
                            seed=3, max_words=80)
    client = LLMClient(backend, ResponseCache(tmp_path / "out" / ".work" / "cache.sqlite"))
    summary = asyncio.run(generate(config, tmp_path / "out", {"scripted": client}))
    client.cache.close()
    rows = {row["_id"]: row for row in read_rows(tmp_path / "out" / "corpus" / "scripted.jsonl")}
    assert rows["Sports_d63"]["text"] == docs["Sports_d63"]
    assert rows["Sports_d63"]["metadata"] == {"rewrite": REFUSED, "marker": False, "truncated": False,
                                              "reason": REFUSALS[0][:200]}
    assert rows["Sports_d70"]["text"] == docs["Sports_d70"]
    assert rows["Sports_d70"]["metadata"]["rewrite"] == UNPARSED  # empty after the marker, 3 attempts
    assert rows["Sports_d75"]["text"] == "A rewritten news text."
    assert summary.counts == {"scripted": {REWRITTEN: 4, REFUSED: 1, UNPARSED: 1}}
    assert summary.llm is not None and summary.llm.calls == client.account.calls > 0
    assert "corpus/scripted.jsonl" in summary.files and ".work/journal.jsonl" not in summary.files
    assert client.account.parse_failures["rewrite:scripted"] == 3
    # a source name reused for another LLM is refused
    other = CocktailConfig(corpus=str(small_corpus), sources=(LLMSource("scripted", "scripted", "other"),),
                           max_docs=6, seed=3, max_words=80)
    with pytest.raises(GenerationError, match="give the new LLM another name"):
        asyncio.run(generate(other, tmp_path / "out", {"scripted": LLMClient(backend)}))


def test_progress_bar_follows_show_progress(small_corpus: Path, tmp_path: Path,
                                            capfd: pytest.CaptureFixture[str]) -> None:
    config = CocktailConfig(corpus=str(small_corpus), sources=(LLMSource("scripted", "scripted"),), max_docs=6,
                            seed=3, max_words=80)
    backend = ScriptedBackend({}, default="Rewritten Text: A rewritten news text.")
    for show_progress in (True, False):
        out = tmp_path / str(show_progress)
        client = LLMClient(backend, ResponseCache(out / ".work" / "cache.sqlite"))
        asyncio.run(generate(config, out, {"scripted": client}, show_progress=show_progress))
        client.cache.close()
        assert ("rewrites" in capfd.readouterr().err) == show_progress


@pytest.mark.slow
def test_the_generated_folder_gives_relative_delta_through_the_bias_command(generated: Path, tmp_path: Path) -> None:
    from airbench_mteb.commands import bias as bias_command

    parser = argparse.ArgumentParser()
    bias_command.register(parser.add_subparsers())
    args = parser.parse_args(["bias", "-m", "airbench-mteb/bm25", "--data-dir", str(generated), "--sources",
                              "human", *SOURCES, "--name", "GeneratedCocktailTest",
                              "--output-folder", str(tmp_path / "results")])
    assert args.func(args) == 0
    (path,) = (tmp_path / "results").rglob("GeneratedCocktailTest.json")
    scores = {s["hf_subset"]: s for s in json.loads(path.read_text())["scores"]["test"]}
    assert set(scores) == {"human", *SOURCES, "mixed", "mixed-all-relevant"}
    bias = scores["mixed"]["source_bias"]
    for source in SOURCES:
        for k in (1, 3, 5):
            human, llm = bias[f"ndcg_at_{k}_human"], bias[f"ndcg_at_{k}_{source}"]
            expected = 0.0 if human + llm == 0 else (human - llm) / ((human + llm) / 2) * 100
            # the results JSON rounds the per-source NDCG to 5 decimals
            assert bias[f"relative_delta_ndcg_at_{k}_{source}"] == pytest.approx(expected, abs=1e-2)


QUALITY_PLOTS = {"lengths.png", "term_similarity.png", "cosine.png", "sole_corpus.png"}


@pytest.fixture(scope="module")
def quality_folder(generated: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The report folder `generate cocktail-report` writes for the generated run."""
    from airbench_mteb.cli import main

    out = tmp_path_factory.mktemp("quality") / "report"
    assert main(["generate", "cocktail-report", "--data", str(generated), "--out", str(out),
                 "--model", "airbench-mteb/bm25"]) == 0
    return out


@pytest.mark.slow
def test_quality_report(generated: Path, quality_folder: Path) -> None:
    figures = json.loads((quality_folder / "report.json").read_text())
    human = {row["_id"]: row["text"] for row in read_rows(generated / "corpus" / "human.jsonl")}
    for source in SOURCES:
        rows = [row for row in read_rows(generated / "corpus" / f"{source}.jsonl")
                if row["metadata"]["rewrite"] == REWRITTEN]
        entry = figures["sources"][source]
        assert entry["rewritten"] == len(rows) >= 2
        # Jaccard of the first rewrite, computed here with Python sets over lower-cased words
        import re

        g = set(re.findall(r"\w+", rows[0]["text"].lower()))
        h = set(re.findall(r"\w+", human[rows[0]["_id"]].lower()))
        assert jaccard(terms(rows[0]["text"]), terms(human[rows[0]["_id"]])) == len(g & h) / len(g | h)
        assert entry["jaccard"]["n"] == len(rows)
        # a rewrite is closer to its own original than to another document's (Table 9)
        assert entry["cosine_matching"]["mean"] > entry["cosine_random"]["mean"]
    for split in figures["sole_corpus"]["airbench-mteb/bm25"].values():
        assert set(split) == {"human", *SOURCES}
    report = (quality_folder / "report.md").read_text()
    assert "Table 9" in report and "Table 8" in report
    for name in figures["plots"]:
        assert (quality_folder / name).read_bytes().startswith(b"\x89PNG")
    assert set(figures["plots"]) == QUALITY_PLOTS


@pytest.mark.slow
def test_quality_plots_are_redrawn_through_the_report_registry(quality_folder: Path, tmp_path: Path) -> None:
    from airbench_mteb.report import PLOTS, ReportRequest, write_report

    assert "cocktail-quality" in PLOTS
    written = write_report(["cocktail-quality"], ReportRequest(out=tmp_path, results=quality_folder))
    assert {path.name for path in written} == QUALITY_PLOTS
    for path in written:
        assert path.read_bytes().startswith(b"\x89PNG") and path.parent == tmp_path
    with pytest.raises(DatasetError, match=r"plot_data\.json"):
        write_report(["cocktail-quality"], ReportRequest(out=tmp_path / "again", results=tmp_path))


def test_term_measures_and_random_pairs() -> None:
    assert jaccard({"a", "b"}, {"b", "c"}) == 1 / 3 and overlap({"a", "b"}, {"b", "c", "d"}) == 1 / 3
    partners = random_partners(7, seed=0)
    assert all(j != i for i, j in enumerate(partners)) and partners == random_partners(7, seed=0)


# --- LLMs behind OpenAI-compatible servers: identities, keys, repeated calls -------------------------

# the 4 documents of at most 40 words (2 judged, 2 others): the endpoint tests need a few calls per source, not 6
SERVER_ARGS = ["--max-docs", "6", "--max-words", "40", "--max-tokens", "40", "--seed", "3"]
SECRET = "sk-env-DO-NOT-STORE-77d2e1"


@pytest.fixture(scope="module")
def two_servers() -> Iterator[tuple[str, str]]:
    """Two real llama.cpp servers serving one GGUF under one model name, ``smollm2``; the second formats
    chats as Llama 2, so the same request gets other text there."""
    with llama_server() as first, llama_server(extra_args=("--chat_format", "llama-2")) as second:
        yield first, second


def server_args(corpus: Path, out: Path, llms: Sequence[tuple[str, str, str]], concurrency: int) -> list[str]:
    args = ["generate", "cocktail", "--corpus", str(corpus), "--out", str(out), *SERVER_ARGS,
            "--concurrency", str(concurrency)]
    for name, url, temperature in llms:
        args += ["--llm", name, "openai", "model=smollm2", f"base-url={url}", f"temperature={temperature}"]
    return args


def rewrites(out: Path, source: str) -> dict[str, tuple[str, str]]:
    return {row["_id"]: (row["metadata"]["rewrite"], row["text"]) for row in read_rows(out / "corpus" / f"{source}.jsonl")}


@pytest.mark.slow
def test_same_named_llms_on_two_endpoints_each_get_their_own_text(two_servers: tuple[str, str], small_corpus: Path,
                                                                 tmp_path: Path) -> None:
    from airbench_mteb.cli import main

    def run(out: Path, *llms: tuple[str, str]) -> dict[str, dict[str, tuple[str, str]]]:
        assert main(server_args(small_corpus, out, [(name, url, "0.2") for name, url in llms], 2)) == 0
        return {name: rewrites(out, name) for name, _ in llms}

    first, second = two_servers
    alone_b = run(tmp_path / "later", ("b", second))["b"]
    # a added later to the folder b was written to: a's calls go to its own endpoint, b's text stays
    later = run(tmp_path / "later", ("a", first), ("b", second))
    assert later["b"] == alone_b and later["a"] != alone_b
    account = json.loads((tmp_path / "later" / "run_account.json").read_text())
    assert account["a (openai:smollm2)"]["calls"] >= 4 and account["b (openai:smollm2)"]["calls"] == 0
    # both sources in one run
    assert run(tmp_path / "both", ("a", first), ("b", second)) == later
    manifest = json.loads((tmp_path / "both" / "cocktail.json").read_text())
    assert manifest["sources"]["b"]["llm"] == {"kind": "openai", "endpoint": second, "model": "smollm2"}


def start_server_cli(corpus: Path, out: Path, url: str) -> subprocess.Popen:
    """`generate cocktail` in its own process (so it can be SIGKILLed), two sources sharing one endpoint,
    4 calls in flight, the API key in the environment."""
    script = "import sys\nfrom airbench_mteb.cli import main\nsys.exit(main(sys.argv[1:]))\n"
    llms = [("x", url, "0.2"), ("y", url, "0.7")]
    return subprocess.Popen([sys.executable, "-c", script, *server_args(corpus, out, llms, 4)],
                            env={**os.environ, "AIRBENCH_MTEB_LLM_API_KEY": SECRET},
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def account_total(out: Path, field: str) -> int:
    return sum(account[field] for account in json.loads((out / "run_account.json").read_text()).values())


@pytest.mark.slow
def test_sigkill_with_calls_in_flight_repeats_only_unanswered_calls_and_writes_no_key(
        two_servers: tuple[str, str], small_corpus: Path, tmp_path: Path) -> None:
    with CountingProxy(two_servers[0]) as proxy:
        out = tmp_path / "killed"
        holder: dict[str, int] = {}
        proxy.on_request = kill_at(lambda: holder.get("pid"), 7)  # 4 in flight: killed with 3-4 unanswered
        process = start_server_cli(small_corpus, out, proxy.base_url)
        holder["pid"] = process.pid
        log, _ = process.communicate(timeout=600)
        assert process.returncode == -9
        cache = ResponseCache(out / ".work" / "llm_cache.sqlite")
        stored, unanswered = len(cache), cache.unanswered()
        cache.close()
        assert stored >= 3 and 1 <= unanswered <= 4

        proxy.on_request = None
        process = start_server_cli(small_corpus, out, proxy.base_url)
        resumed_log, _ = process.communicate(timeout=600)
        assert process.returncode == 0, resumed_log
        cache = ResponseCache(out / ".work" / "llm_cache.sqlite")
        needed, pending = len(cache), cache.unanswered()
        cache.close()
        # every stored answer was used, never bought again; only the calls in flight at the kill were repeated
        assert pending == 0 and account_total(out, "calls") == needed - stored
        assert account_total(out, "repeated") == unanswered
        # the server may have answered some of those after the client died: those are all it answered twice
        assert sum(proxy.answered.values()) - needed == sum(n - 1 for n in proxy.answered.values()) <= unanswered
        manifest = json.loads((out / "cocktail.json").read_text())
        assert [sum(manifest["sources"][s]["outcomes"].values()) for s in ("x", "y")] == [4, 4]
        assert f"Bearer {SECRET}" in proxy.authorization
    for path in out.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path
    assert SECRET not in log + resumed_log
