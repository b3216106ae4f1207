"""What a heatmap's design costs the server the first time a size of cells is drawn: built, or resized.

Run from the repository root:  python bench/design_cost.py [--repeats 15]

A design is built once per process for each look and kept (ui.drawing.render); a slider that changes a matrix's
width changes its cells, and a size of cells not drawn before needed a design of its own. ui.drawing.resize
makes it from the one built for the default cells instead. This prints, for the heatmap and the grid of maps,
the median time of building a design with Altair (as the first student to reach a size waited for it) and of
resizing the one built for charts.CELL_PX, over every label look (charts.design_cell) at both type scales.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from ui.drawing import charts, resize  # noqa: E402


def design(builder, **settings) -> dict:
    spec = builder(**settings).to_dict(validate=False)
    spec.pop("data", None)
    return spec


def median_ms(work, repeats: int, *args, **kwargs) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        work(*args, **kwargs)
        times.append(time.perf_counter() - start)
    return 1000 * statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15, help="timings per builder, cell size and scale (15)")
    args = parser.parse_args()
    builders = {"heatmap": (charts.heatmap_chart, {"annotate": True}), "grid of maps": (charts.grid_chart, {})}
    print("| design | cells | built (ms) | resized (ms) | ratio |\n|---|---|---|---|---|")
    for name, (builder, settings) in builders.items():
        for scale in (1.0, 1.5):
            base = design(builder, cell_px=charts.CELL_PX, font_scale=scale, **settings)
            built, resized = [], []
            for cell in sorted({charts.design_cell(c, scale) for c in range(1, 120)}):
                built.append(median_ms(design, args.repeats, builder, cell_px=cell, font_scale=scale, **settings))
                resized.append(median_ms(resize.for_cells, args.repeats, base, cell, scale))
            b, r = statistics.median(built), statistics.median(resized)
            print(f"| {name}, type x{scale:g} | {len(built)} looks | {b:.1f} | {r:.3f} | {b / r:.0f} |")


if __name__ == "__main__":
    main()
