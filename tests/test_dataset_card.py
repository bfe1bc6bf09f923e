"""Dataset cards: hub-style YAML front matter that huggingface_hub reads back."""

from __future__ import annotations

from pathlib import Path

from huggingface_hub import DatasetCard

from airbench_mteb.data.dataset_card import size_category, write_dataset_card


def test_the_card_reads_back_with_its_yaml_fields_and_body(tmp_path: Path) -> None:
    path = tmp_path / "out" / "README.md"
    counts = {"queries": 3, "styles": ("short", "long")}  # shared by two keys, a tuple inside
    body = "# qa_law_en\n\nGenerated from a law corpus: 'quotes', \"double\", émojis ✓.\n"
    write_dataset_card(path, pretty_name="AIR-Bench qa_law_en", license="cc-by-sa-4.0", languages=["en", "zh"],
                       task_categories=["text-retrieval"], task_ids=["document-retrieval"], size=12_345,
                       source_datasets=["extended|pile-of-law"], tags=["mteb", "air-bench"], body=body,
                       provenance={"seed": 11, "llm": {"model": "qwen", "temperature": 0.0}, "before": counts,
                                   "after": counts})
    card = DatasetCard.load(path)
    data = card.data.to_dict()
    assert data["pretty_name"] == "AIR-Bench qa_law_en" and data["license"] == "cc-by-sa-4.0"
    assert data["language"] == ["en", "zh"] and data["size_categories"] == ["10K<n<100K"]
    assert data["task_categories"] == ["text-retrieval"] and data["task_ids"] == ["document-retrieval"]
    assert data["source_datasets"] == ["extended|pile-of-law"] and data["tags"] == ["mteb", "air-bench"]
    assert data["provenance"] == {"seed": 11, "llm": {"model": "qwen", "temperature": 0.0},
                                  "before": {"queries": 3, "styles": ["short", "long"]},
                                  "after": {"queries": 3, "styles": ["short", "long"]}}
    assert "&id" not in path.read_text()  # plain YAML, no anchors a reader must resolve
    assert card.text.strip() == body.strip()
    assert [p.name for p in path.parent.iterdir()] == ["README.md"]  # no temporary file left beside it


def test_size_categories_follow_the_hub_boundaries() -> None:
    assert size_category(0) == "n<1K" and size_category(999) == "n<1K" and size_category(1000) == "1K<n<10K"
    assert size_category(43_500_000) == "10M<n<100M" and size_category(10**13) == "n>1T"
