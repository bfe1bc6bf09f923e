"""The leaderboard picture of the README and docs/leaderboard.md, from the page's own offline example.

``EXAMPLE`` is what docs/leaderboard.md runs (its cog block shows it): the AIR-Bench layout example written by
``airbench-mteb sample-data --layout airbench``, two BM25 variants and BM25 re-ranked by MiniLM, then the
leaderboard. ``python tools/leaderboard_picture.py`` runs it in a scratch folder and draws the QA table of its
``leaderboard.json`` (nDCG@10 with each cell's 95 % interval, the rank groups shaded) as ``docs/img/leaderboard.png``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PICTURE = ROOT / "docs" / "img" / "leaderboard.png"
EXAMPLE = """airbench-mteb sample-data --layout airbench --out airbench-mirror
TASKS="AIR-Bench_24.05_qa_healthcare_en AIR-Bench_24.05_qa_news_en"
airbench-mteb run -m airbench-mteb/bm25 -t $TASKS --data-dir airbench-mirror --eval-splits dev \\
    --output-folder leaderboard-results --prediction-folder leaderboard-predictions/bm25
airbench-mteb run -m airbench-mteb/bm25-words -t $TASKS --data-dir airbench-mirror --eval-splits dev \\
    --output-folder leaderboard-results
airbench-mteb run -m airbench-mteb/all-MiniLM-L6-v2 --previous-results leaderboard-predictions/bm25 --rerank-top-k 10 \\
    -t $TASKS --data-dir airbench-mirror --eval-splits dev --output-folder leaderboard-results
airbench-mteb leaderboard --results leaderboard-results/results --split dev --out leaderboard"""


def draw_table(board: dict, path: Path) -> Path:
    """The QA tab at its default metric as a table picture: Rank, Group, Retriever, Reranker, Average, columns."""
    from airbench_mteb.report.figures import png, pyplot
    from airbench_mteb.report.protocol import write_files

    plt = pyplot()
    qa = board["tabs"]["qa"]
    metric = qa["default_metric"]
    columns = [column["name"] for column in qa["columns"]]
    header = ["Rank", "Group", "Retriever", "Reranker", "Average", *columns]
    rows = []
    for row in qa["metrics"][metric]["rows"]:
        cells = [row["cells"].get(column) or {} for column in columns]
        rows.append([str(row["rank"]), str(row["group"]), row["retriever"], row["reranker"],
                     _with_ci(row["average"], row.get("average_ci")),
                     *(_with_ci(cell.get("shown"), cell.get("ci")) for cell in cells)])
    figure, axes = plt.subplots(figsize=(11.8, 0.5 + 0.42 * (len(rows) + 1)), dpi=100)
    axes.axis("off")
    table = axes.table(cellText=rows, colLabels=header, loc="center", cellLoc="left")
    table.auto_set_font_size(False)
    table.set_fontsize(9)
    table.scale(1, 1.5)
    table.auto_set_column_width(list(range(len(header))))
    shades = ("#ffffff", "#eef3fb")
    for (line, _), cell in table.get_celld().items():
        if line == 0:
            cell.set_text_props(weight="bold")
        elif rows[line - 1][1] != "None":  # rows of one rank group share a shade
            cell.set_facecolor(shades[int(rows[line - 1][1]) % 2])
    axes.set_title(f"AIR-Bench leaderboard view, QA tab, {metric} x 100 on dev [95 % interval] (layout example)",
                   fontsize=10)
    figure.tight_layout()
    return write_files(path.parent, {path.name: png(figure)})[0]


def _with_ci(value: object, ci: list[float] | None) -> str:
    shown = f"{value:.2f}" if isinstance(value, int | float) else str(value)
    return f"{shown} [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else shown


def main() -> int:
    sys.path.insert(0, str(ROOT))
    from tools.docs_examples import Page

    page = Page("leaderboard")
    page.run(EXAMPLE)
    print(draw_table(json.loads(page.path("leaderboard/leaderboard.json").read_text(encoding="utf-8")), PICTURE))
    return 0


if __name__ == "__main__":
    sys.exit(main())
