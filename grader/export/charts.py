"""Chart geometry for the HTML report: numbers in, rectangles and colours out, no markup.

The report draws its pictures as inline SVG from these plain dataclasses
(the template owns every tag), so a page needs no plotting library, no
network and no script, and a batch of hundreds of pages renders in
milliseconds each in the process that writes the cards, which never
imports torch or matplotlib.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from grader.words import count

# A white-to-navy sequential ramp (ColorBrewer YlGnBu): weight 0 reads as empty paper, 1 as ink.
RAMP = ("#ffffd9", "#edf8b1", "#c7e9b4", "#7fcdbb", "#41b6c4", "#1d91c0", "#225ea8", "#253494", "#081d58")
FUTURE_FILL = "#f1f1f1"  # a masked (future) cell that correctly holds no weight
NONFINITE_FILL = "#c51b7d"  # NaN or inf: a magenta no weight on RAMP can take, and not the leak's red
LEAK = 5e-4  # weight above this in the future half is drawn as a leak (the card keeps 4 decimals)
AXIS_GUTTER = 22  # room for an axis title
CHAR_WIDTH = 7.5  # px per label character at the report's label size


@dataclass(frozen=True)
class Cell:
    x: float
    y: float
    fill: str
    ink: str  # text colour readable on ``fill``
    text: str  # annotation ('' when the map is too large to annotate)
    tip: str  # hover text
    future: bool  # above the diagonal: a position the causal mask forbids
    leak: bool  # future and holding weight
    nonfinite: str = ""  # "NaN", "inf" or "-inf" where the value is not a number the ramp can show


@dataclass(frozen=True)
class Label:
    x: float
    y: float
    text: str


@dataclass(frozen=True)
class Heatmap:
    """One T x S weight matrix: rows = the token that looks (query), columns = the token looked at (key)."""

    key: str  # unique on the page (SVG pattern ids)
    width: float
    height: float
    cell: float
    left: float
    top: float
    cells: tuple[Cell, ...]
    rows: tuple[Label, ...]
    cols: tuple[Label, ...]
    boundary: str  # SVG path data: the staircase between past and future
    font: float
    leaks: int
    nonfinite: tuple[str, ...] = ()  # "<query> looks at <key>: NaN" for each NaN/inf cell, in reading order

    @property
    def grid_width(self) -> float:
        return self.width - self.left - 6

    @property
    def grid_height(self) -> float:
        return self.height - self.top - 6


def colour(value: float) -> str:
    """``value`` in [0, 1] on RAMP, interpolated linearly in RGB."""
    v = min(max(value, 0.0), 1.0) * (len(RAMP) - 1)
    i = min(int(v), len(RAMP) - 2)
    t = v - i
    a, b = _rgb(RAMP[i]), _rgb(RAMP[i + 1])
    return "#" + "".join(f"{round(x + (y - x) * t):02x}" for x, y in zip(a, b))


def ink_for(fill: str) -> str:
    """Black or white, whichever reads better on ``fill`` (relative luminance)."""
    r, g, b = (c / 255 for c in _rgb(fill))
    return "#111111" if 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.45 else "#ffffff"


def heatmap(key: str, matrix: Sequence[Sequence[float]], labels: Sequence[str], *, cell: float | None = None,
            annotate: bool | None = None) -> Heatmap:
    """Lay out ``matrix`` (square, rows = queries) with ``labels`` on both axes.

    Small maps (T <= 4) get their values written in the cells; larger ones
    carry them as hover text. The future half is hatched by the template and
    outlined by ``boundary``; a future cell holding weight is a ``leak``.
    """
    n = len(matrix)
    if n == 0 or any(len(row) != n for row in matrix) or len(labels) != n:
        raise ValueError(f"a heatmap needs a square matrix with one label per row; got {count(n, 'row')}")
    cell = cell or (64.0 if n <= 4 else 30.0 if n <= 8 else 26.0)
    annotate = n <= 4 if annotate is None else annotate
    font = 15.0 if n <= 4 else 12.0
    longest = max(len(str(t)) for t in labels)
    left = AXIS_GUTTER + longest * CHAR_WIDTH + 10
    top = AXIS_GUTTER + (22.0 if n <= 4 else 18.0)
    cells = []
    for r, row in enumerate(matrix):
        for c, value in enumerate(row):
            value = float(value)  # "NaN", "inf" and "-inf" (the card's words for them) read as floats too
            future = c > r
            odd = nonfinite_word(value)
            leak = future and not odd and abs(value) > LEAK
            fill = NONFINITE_FILL if odd else FUTURE_FILL if future and not leak else colour(value)
            shown = odd or f"{value:.4f}"
            cells.append(Cell(
                x=left + c * cell, y=top + r * cell, fill=fill, ink=ink_for(fill),
                text=(odd or f"{value:.3f}") if annotate else "",
                tip=f"{labels[r]} looks at {labels[c]}: {shown}" + (" (future: masked)" if future else ""),
                future=future, leak=leak, nonfinite=odd,
            ))
    rows = tuple(Label(left - 8, top + (r + 0.5) * cell, str(t)) for r, t in enumerate(labels))
    cols = tuple(Label(left + (c + 0.5) * cell, top - 8, str(t)) for c, t in enumerate(labels))
    path = [f"M{left + cell:g},{top:g}"]
    for _ in range(n - 1):
        path.append(f"v{cell:g}h{cell:g}")
    odd_cells = tuple(f"{labels[i // n]} looks at {labels[i % n]}: {c.nonfinite}"
                      for i, c in enumerate(cells) if c.nonfinite)
    return Heatmap(key, left + n * cell + 6, top + n * cell + 6, cell, left, top, tuple(cells), rows, cols,
                   "".join(path), font, sum(c.leak for c in cells), odd_cells)


def nonfinite_word(value: float) -> str:
    """"NaN", "inf" or "-inf" for a value no colour on RAMP can show; "" for a finite one."""
    if math.isfinite(value):
        return ""
    return "NaN" if value != value else ("inf" if value > 0 else "-inf")


@dataclass(frozen=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    fill: str
    text: str
    tip: str


@dataclass(frozen=True)
class Tick:
    y: float
    text: str


@dataclass(frozen=True)
class BarChart:
    """Grouped bars: one group per head, one bar per series."""

    width: float
    height: float
    left: float
    top: float
    bottom: float  # y of the baseline
    bars: tuple[Bar, ...]
    groups: tuple[Label, ...]
    ticks: tuple[Tick, ...]
    line_y: float | None  # the dashed reference line
    line_text: str
    colours: tuple[str, ...] = ()  # one per series, for the legend


SERIES_COLOURS = ("#225ea8", "#9a9a9a")


def bar_chart(series: Sequence[Sequence[float]], names: Sequence[str], group_label: str,
              line: float | None = None, line_text: str = "") -> BarChart:
    """Grouped bars for ``series`` (each a list of values per group), y from 0, with a dashed ``line``."""
    groups = max(len(s) for s in series)
    series = [[float(v) for v in s] for s in series]  # the card's "NaN" / "inf" words read as floats
    top_value = max([*(v for s in series for v in s if math.isfinite(v)), line or 0.0, 1e-9])
    step = _nice_step(top_value)
    y_max = math.ceil(top_value * 1.12 / step) * step
    left, top, plot_h = 48.0, 18.0, 210.0
    group_w = 30.0 * len(series) + 26.0
    width = left + groups * group_w + 16.0
    bottom = top + plot_h
    bars = []
    for g in range(groups):
        for k, values in enumerate(series):
            if g >= len(values):
                continue
            odd = nonfinite_word(values[g])
            v = 0.0 if odd else max(values[g], 0.0)
            h = plot_h * v / y_max
            bars.append(Bar(left + g * group_w + 13.0 + 30.0 * k, bottom - h, 26.0, h, SERIES_COLOURS[k % 2],
                            odd or f"{values[g]:.2f}", f"{names[k]}, {group_label} {g}: {odd or f'{values[g]:.4f}'}"))
    labels = tuple(Label(left + g * group_w + group_w / 2, bottom + 16, f"{group_label} {g}") for g in range(groups))
    ticks = tuple(Tick(bottom - plot_h * (i * step) / y_max, f"{i * step:g}")
                  for i in range(int(round(y_max / step)) + 1))
    line_y = bottom - plot_h * line / y_max if line is not None else None
    return BarChart(width, bottom + 30, left, top, bottom, tuple(bars), labels, ticks, line_y, line_text,
                    tuple(SERIES_COLOURS[k % 2] for k in range(len(series))))


def legend_stops(n: int = 9) -> tuple[tuple[float, str], ...]:
    """Gradient stops (offset %, colour) for the colour scale's legend."""
    return tuple((round(100 * i / (n - 1), 2), colour(i / (n - 1))) for i in range(n))


def _nice_step(top: float) -> float:
    """A round tick step giving 3-6 ticks up to ``top``."""
    raw = top / 4
    magnitude = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if raw <= m * magnitude:
            return m * magnitude
    return 10 * magnitude


def _rgb(hex_colour: str) -> tuple[int, int, int]:
    h = hex_colour.lstrip("#")
    return int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16)
