r"""Pictures (matplotlib, PNG and SVG) of measurement-theoretic evaluation.

* :func:`rank_spacing_plot`: a measure's values over all runs of length N (2021 paper,
  Figures 2-5), from its rank map, exact for small maps and from seeded samples of runs
  at N = 20 or 30 (never enumerating them): value against the fraction of runs at or
  below it (the paper's view) and against phi / number of values (an interval scale is a
  straight line). :func:`spacing_data` gives the points; :func:`sample_runs` the runs.
* :func:`means_scatter`: system means, original against ranked, swapped pairs marked.
* :func:`tau_heatmap`: Kendall's tau between measures.
* :func:`significance_changes_plot`: S2NS and NS2S counts per measure and test.
* :func:`asl_curves_plot`: discriminative power, the ASL curves of each measure and its
  ranked version.
* :func:`hasse_figure`: the weak top-heaviness order (Figure 1), every run up to
  :data:`HASSE_MAX_RUNS` runs, runs per level beyond.
* :func:`balancing_plot`: the balancing index against the run length (2015 paper).

Every function returning a :class:`Picture` gives the SVG text (self-contained: text as
``<text>`` with generic font fallbacks, raster parts inlined, ids unique to the picture,
so several can be embedded in one HTML page) and, with ``out=``, writes ``stem.png`` and
``stem.svg``. Output is deterministic (fixed seeds, no dates in the files).
:func:`spacing_plot`, :func:`hasse_diagram` and :func:`balancing_plot` keep their
file-writing signatures (list of paths).

The figures of a study's report (:func:`study_figures`) are laid out for print: each is
drawn exactly as wide as it is meant to be printed (:attr:`Picture.print_width_in`), one
column of a two-column paper (:data:`COLUMN_WIDTH_IN`, ``\columnwidth``) where it is
legible there, else the page (:data:`TEXT_WIDTH_IN`, ``\textwidth``), and no text in it
is smaller than :data:`MIN_FONT_PT` at that width.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import io
import re
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from irscale.errors import ArgumentError, IrscaleError, MeasureError, check_choice, count_text
from irscale.scales.balancing import balancing_index
from irscale.scales.checks import as_measure
from irscale.scales.orders import positional_weights, weak_covers, weak_level
from irscale.scales.spaces import all_runs
from irscale.validate import integer

EXACT_LIMIT = 20_000  # rank maps with at most this many distinct values are drawn exactly
ENUMERATE_LIMIT = 2**20  # runs enumerated for a measure without a run space
HASSE_MAX_RUNS = 64  # every run drawn: binary N <= 6, 3 levels N <= 3, 4 levels N <= 2
HASSE_MAX_COVERS = 120  # ... and at most this many cover edges (graded covers skip levels)
HASSE_LEVELS_MAX_N = 200  # runs per level are counted up to this N
RASTER_POINTS = 400  # point sets larger than this are inlined as PNG inside the SVG
MEANS_MAX_LINES = 150  # swapped pairs drawn in a panel of the means figure (the widest)
COLUMN_WIDTH_IN = 3.35  # \columnwidth of a two-column paper (acmart 241 pt): single-panel figures
TEXT_WIDTH_IN = 6.9  # \textwidth of a two-column paper (acmart 506 pt): figures of many panels
MIN_FONT_PT = 8.0  # no text of a report figure is smaller at its print width

_RC = {
    "svg.fonttype": "none",
    "svg.hashsalt": "irscale",
    "svg.image_inline": True,
    "font.family": "sans-serif",
    "font.size": 9,
    "axes.titlesize": 9,
    "axes.labelsize": 9,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "legend.fontsize": 8,
    "figure.titlesize": 10,
    "figure.dpi": 100,
    "savefig.dpi": 150,
}


def _plt():
    import matplotlib

    matplotlib.use("Agg")  # files only, no display needed
    import matplotlib.pyplot as plt

    return plt


def _style():
    return _plt().rc_context(_RC)


# -- SVG, files, checks -----------------------------------------------------------------------


@dataclass(frozen=True)
class Picture:
    r"""One figure: ``svg`` (self-contained SVG text, for inline HTML), ``title``, the
    ``files`` written (PNG, SVG; empty without ``out``), ``data`` (what was drawn, per
    figure kind), ``overlaps`` (pairs of texts whose boxes overlap: empty when the
    layout is clean) and a ``caption`` in words. ``figure()`` is the (title, svg,
    caption) triple that :func:`irscale.report.files.write_report` embeds. In Jupyter it
    displays itself.

    ``print_width_in``: the width in inches the figure is drawn for, where it is laid out
    for print (the report's figures: :data:`COLUMN_WIDTH_IN` or :data:`TEXT_WIDTH_IN`,
    :attr:`latex_width`); the figure is exactly that wide, so included at that width
    every text is at least :data:`MIN_FONT_PT` points. None: drawn for the screen.
    ``parts``: Pictures of the figure's parts, each a file of its own beside the figure's
    (each for ``\columnwidth``: see :func:`study_figures`)."""

    svg: str = field(repr=False)
    title: str
    files: tuple[Path, ...] = ()
    data: Any = field(default=None, repr=False)
    overlaps: tuple[tuple[str, str], ...] = ()
    caption: str = ""
    stem: str = ""
    pdf: bytes | None = field(default=None, repr=False)
    print_width_in: float | None = None
    parts: tuple[Picture, ...] = field(default=(), repr=False)

    @property
    def latex_width(self) -> str | None:
        r"""The LaTeX length to include the figure at: ``\columnwidth`` (drawn
        :data:`COLUMN_WIDTH_IN` wide), ``\textwidth`` (:data:`TEXT_WIDTH_IN`: a
        ``figure*`` in a two-column paper) or None (not laid out for print)."""
        if self.print_width_in is None:
            return None
        return "\\columnwidth" if self.print_width_in <= COLUMN_WIDTH_IN else "\\textwidth"

    def figure(self) -> tuple[str, str, str]:
        return (self.title, self.svg, self.caption)

    def _repr_svg_(self) -> str:
        return self.svg


def svg(fig, dpi: int = 150, tight: bool = True) -> str:
    """The figure as a self-contained SVG string for inline embedding: no XML prolog,
    DOCTYPE or metadata (nothing refers outside the string), text as ``<text>``
    elements whose font lists end in a generic family, raster parts inlined as data
    URIs, and every id prefixed with a digest of the picture so that two pictures on one
    page never share an id. The same figure gives the same string. ``tight``: cropped
    to what is drawn (else the figure's size)."""
    buf = io.StringIO()
    with _style():
        fig.savefig(buf, format="svg", bbox_inches="tight" if tight else None, dpi=dpi, metadata={"Date": None})
    s = buf.getvalue()
    s = s[s.index("<svg") :]
    s = re.sub(r"\s*<metadata>.*?</metadata>", "", s, count=1, flags=re.DOTALL)
    p = "irs" + hashlib.sha1(s.encode("utf-8")).hexdigest()[:10] + "-"
    s = re.sub(r'\bid="([^"]+)"', lambda m: f'id="{p}{m.group(1)}"', s)
    s = re.sub(r'href="#([^"]+)"', lambda m: f'href="#{p}{m.group(1)}"', s)
    s = re.sub(r"url\(#([^)]+)\)", lambda m: f"url(#{p}{m.group(1)})", s)
    return re.sub(r"font-family: ([^;\"]+)", _generic_font, s)


def _generic_font(m) -> str:
    """A font list ending in a generic family, so any reader finds a font."""
    fam = m.group(1).rstrip()
    if fam.endswith(("sans-serif", "monospace", "serif", "cursive", "fantasy")):
        return m.group(0)
    return f"font-family: {fam}, {'monospace' if 'mono' in fam.lower() else 'sans-serif'}"


def text_overlaps(fig, tol: float = 1.0) -> list[tuple[str, str]]:
    """Pairs of drawn texts (titles, labels, tick labels, annotations, legends) whose
    boxes overlap by more than ``tol`` pixels both ways at the figure's dpi."""
    from matplotlib.text import Text

    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    hidden: set[int] = set()
    for ax in fig.axes:  # ticks outside the view are laid out but not drawn
        for axis in (ax.xaxis, ax.yaxis):
            lo, hi = sorted(axis.get_view_interval())
            span = (hi - lo) * 1e-9
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                if not (lo - span <= tick.get_loc() <= hi + span) or not tick.get_visible():
                    hidden.update((id(tick.label1), id(tick.label2)))
    boxes, names = [], []
    for t in fig.findobj(Text):
        if id(t) in hidden or not t.get_visible() or not t.get_text().strip() or t.figure is None:
            continue
        if t.axes is not None and not t.axes.get_visible():
            continue
        bb = t.get_window_extent(r)
        if bb.width <= 0 or bb.height <= 0:
            continue
        boxes.append((bb.x0, bb.y0, bb.x1, bb.y1))
        names.append(t.get_text())
    if len(boxes) < 2:
        return []
    b = np.asarray(boxes)
    w = np.minimum(b[:, None, 2], b[None, :, 2]) - np.maximum(b[:, None, 0], b[None, :, 0])
    h = np.minimum(b[:, None, 3], b[None, :, 3]) - np.maximum(b[:, None, 1], b[None, :, 1])
    i, j = np.nonzero(np.triu((w > tol) & (h > tol), 1))
    return [(names[a], names[c]) for a, c in zip(i.tolist(), j.tolist())]


CHECK_OVERLAPS = False  # run text_overlaps on every figure (the tests do; it costs a draw per figure)


def _finish(
    fig,
    title: str,
    out,
    stem: str,
    data=None,
    tight: bool = False,
    caption: str = "",
    pdf: bool = False,
    print_width_in: float | None = None,
    parts: tuple[Picture, ...] = (),
) -> Picture:
    """The overlap check (where :data:`CHECK_OVERLAPS`), SVG text, (with ``pdf``) the PDF
    bytes and (with ``out``) stem.png and stem.svg. The layout is computed once (the check's draw) and then kept;
    ``tight``: crop to the drawn content (figures laid out by hand), else the figure's
    own size. ``print_width_in``: the figure is laid out that wide, for print (never cropped)."""
    if print_width_in is not None and (tight or abs(fig.get_figwidth() - print_width_in) > 1e-9):
        raise AssertionError(f"a figure for print is drawn {print_width_in} in wide, not {fig.get_figwidth()}")
    plt = _plt()
    try:
        with _style():
            overlaps = tuple(text_overlaps(fig)) if CHECK_OVERLAPS else ()
            if CHECK_OVERLAPS and fig.get_layout_engine() is not None:
                fig.set_layout_engine("none")  # positions as the check drew them
            text = svg(fig, tight=tight)
            vector = None
            if pdf:
                if fig.get_layout_engine() is not None:
                    fig.set_layout_engine("none")  # laid out once (by the SVG's draw), not again
                buf = io.BytesIO()
                fig.savefig(
                    buf,
                    format="pdf",
                    bbox_inches="tight" if tight else None,
                    metadata={"CreationDate": None, "ModDate": None, "Creator": None, "Producer": None},
                )
                vector = buf.getvalue()
            files: tuple[Path, ...] = ()
            if out is not None:
                out = Path(out)
                out.mkdir(parents=True, exist_ok=True)
                png, vec = out / f"{stem}.png", out / f"{stem}.svg"
                fig.savefig(png, dpi=150, bbox_inches="tight" if tight else None)
                vec.write_text(text, encoding="utf-8")
                files = (png, vec)
    finally:
        plt.close(fig)
    return Picture(text, title, files, data, overlaps, caption, stem, vector, print_width_in, tuple(parts))


def _stem(*parts) -> str:
    s = "_".join(str(p) for p in parts if p not in (None, ""))
    return re.sub(r"[^A-Za-z0-9_@-]+", "", s.replace("=", "").replace(".", "").replace(",", "_"))[:120] or "figure"


def _text_in(text: str, size: float = MIN_FONT_PT) -> float:
    """The width in inches of the longest line of ``text`` at ``size`` points in the
    figures' font (advance widths, as matplotlib lays text out)."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import TextToPath

    with _style():
        prop = FontProperties(family="sans-serif", size=size)  # the report's font (_RC)
        ttp = TextToPath()
        return (
            max(
                (ttp.get_text_width_height_descent(line, prop, ismath=False)[0] for line in text.split("\n")),
                default=0.0,
            )
            / 72
        )


def _lines_in(n: int, size: float = MIN_FONT_PT) -> float:
    """The height in inches of ``n`` lines of text at ``size`` points (matplotlib's line spacing)."""
    return n * 1.2 * size / 72 if n else 0.0


def _wrap_in(text: str, width_in: float, size: float = 9) -> str:
    """Wrap ``text`` (each of its lines) at word boundaries into lines at most ``width_in``
    inches wide at ``size`` points, measured in the figures' font; a word wider than that
    is a line of its own."""
    out = []
    for para in text.split("\n"):
        line = ""
        for word in para.split(" "):
            trial = f"{line} {word}" if line else word
            if line and _text_in(trial, size) > width_in:
                out.append(line)
                line = word
            else:
                line = trial
        out.append(line)
    return "\n".join(out)


def _wrap(text: str, width_in: float, size: float = 10) -> str:
    """Wrap at the number of characters that fit ``width_in`` inches at ``size`` points."""
    chars = max(20, int(width_in * 72 / (0.55 * size)))
    return "\n".join(textwrap.fill(line, chars) for line in text.split("\n"))


def _luminance(rgba) -> float:
    """WCAG relative luminance of an sRGB colour (components 0..1)."""
    lin = [x / 12.92 if x <= 0.04045 else ((x + 0.055) / 1.055) ** 2.4 for x in rgba[:3]]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast(fg, bg) -> float:
    """WCAG contrast ratio of two colours (1..21; 4.5 is enough for small text)."""
    from matplotlib.colors import to_rgba

    a, b = sorted((_luminance(to_rgba(fg)), _luminance(to_rgba(bg))))
    return (b + 0.05) / (a + 0.05)


def _ink(rgba) -> str:
    """Black or white, whichever contrasts more with a cell or node of colour ``rgba``
    (at least 4.58:1 whatever the colour)."""
    L = _luminance(rgba)
    return "black" if (L + 0.05) / 0.05 >= 1.05 / (L + 0.05) else "white"


_SUP = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def _runs_power(c: int, N: int) -> str:
    """(c+1)^N as plain text with superscript digits (no mathtext: one <text> element)."""
    return f"{c + 1}{str(N).translate(_SUP)}"


def _measure_obj(measure):
    from irscale.measures import FunctionMeasure, parse_measure

    if callable(measure) and not hasattr(measure, "batch"):
        measure = FunctionMeasure(fn=measure, name=getattr(measure, "__name__", "measure"))
    return measure if not isinstance(measure, str) else parse_measure(measure)


def _name(measure) -> str:
    if isinstance(measure, str):
        return measure
    if callable(measure) and not hasattr(measure, "batch"):
        return getattr(measure, "__name__", "measure")
    return str(measure)


# -- spacing of values over all runs, from rank maps ----------------------------------------------


@dataclass(frozen=True)
class Spacing:
    """The points of one spacing panel: distinct values of ``measure`` at run length ``N``
    (``value``, ascending; the measure with RB = N), the fraction of the ``n_runs`` runs
    strictly below each (``below``) and at or below (``frac``: the "max" rank / n_runs),
    and its rank among the ``size`` distinct values (``phi``, the "unq" rank; None when
    not asked for).
    ``exact``: every value is listed; otherwise the values of ``runs`` (``sampled``
    distinct runs drawn with ``seed``). ``run_names``: every run in value order (tiny
    spaces only)."""

    measure: str
    N: int
    levels: int
    c: int
    size: int
    n_runs: int
    engine: str
    exact: bool
    sampled: int
    seed: int | None
    value: np.ndarray
    below: np.ndarray
    frac: np.ndarray
    phi: np.ndarray | None
    runs: np.ndarray | None = field(default=None, repr=False)
    run_names: tuple[str, ...] | None = field(default=None, repr=False)

    @property
    def phi_frac(self) -> np.ndarray | None:
        """phi / size: the ranked measure, in (0, 1]."""
        return None if self.phi is None else self.phi / float(self.size)


def sample_runs(N: int, c: int = 1, samples: int = 2000, seed: int = 0) -> np.ndarray:
    """About ``samples`` distinct runs of length N over grades 0..c, as an (n, N) int8
    matrix in lexicographic order; the same (N, c, samples, seed) give the same runs.

    Every run when there are at most ``samples``; otherwise the 2(N + 1) runs with k
    documents of grade c first or last (the extremes all-0 and all-c among them), a
    quarter of the budget stratified by the number k of relevant documents (k random
    ranks with grades 1..c, for each k = 1..N-1: the tails that uniform draws miss) and
    the rest uniform over REL^N (even coverage of the fraction-of-runs axis)."""
    N = integer("run length N", N, minimum=1)
    c = integer("c (the top grade)", c, minimum=1)
    samples = integer("samples", samples, minimum=1)
    seed = integer("seed", seed, minimum=0)
    if (c + 1) ** N <= samples:
        return all_runs(N, c)
    rng = np.random.default_rng(seed)
    k = np.arange(N + 1)
    top = ((np.arange(N)[None, :] < k[:, None]) * c).astype(np.int8)
    parts = [top, top[:, ::-1]]
    per = max(1, (samples // 4) // max(N - 1, 1))
    for kk in range(1, N):
        pos = np.argsort(rng.random((per, N)), axis=1)[:, :kk]
        g = np.zeros((per, N), dtype=np.int8)
        g[np.repeat(np.arange(per), kk), pos.ravel()] = rng.integers(1, c + 1, per * kk)
        parts.append(g)
    used = sum(len(p) for p in parts)
    parts.append(rng.integers(0, c + 1, size=(max(samples - used, 0), N)).astype(np.int8))
    return np.unique(np.concatenate(parts), axis=0)


def _display(space, keys) -> np.ndarray:
    """The measure's value of exact keys with RB = N (every grade level has N documents)."""
    from irscale.data import TopicStats

    core = np.asarray(space.key_values(keys), dtype=np.float64)
    if space.values_are_keys:  # its key values are the measure's values already
        return core
    div = float(space.normalizer(TopicStats.single([space.N] * (space.c + 1)))[0])
    return core / div if np.isfinite(div) and div > 0 else core


def spacing_data(
    measure,
    N: int,
    levels: int = 2,
    *,
    samples: int = 2000,
    seed: int = 0,
    exact: bool | None = None,
    exact_limit: int = EXACT_LIMIT,
    engine: str = "auto",
    phi: bool = True,
) -> Spacing:
    """The points of a spacing plot of ``measure`` at run length ``N`` from its rank map
    (built or loaded from the cache), never enumerating the runs of a large space.

    ``exact=None`` lists every distinct value where the map has at most ``exact_limit``
    and can list them, else ranks the values of :func:`sample_runs` (``samples``,
    ``seed``); True or False forces either. A measure without a run space (Rprec, bpref)
    is enumerated, up to :data:`ENUMERATE_LIMIT` runs. Cost: one ``rank`` query of the
    sampled keys, remembered in the cache (the same seed is then free). Listed values need
    no "unq" query (their ranks are 1..size); for sampled ones, on a large split map (AP
    at N = 30: about 30 s) it passes once over the map's buckets unless the map is built
    by this call (the build answers it on the way); ``phi=False`` skips it (the quantile
    view needs only run counts)."""
    from irscale.scales.rankmap import build
    from irscale.scales.spaces import space_for

    N = integer("run length N", N, minimum=1)
    levels = integer("levels", levels, minimum=2)
    m = _measure_obj(measure)
    name = _name(measure)
    try:
        space = space_for(m, N, levels - 1)
    except MeasureError:
        if exact is False:
            raise
        return _enumerated_spacing(m, name, N, levels)
    c = space.c
    runs = keys = None
    if exact is not True:
        runs = sample_runs(N, c, samples, seed)
        keys = space.keys(runs)
    rm = build(m, N, levels, engine=engine, queries=keys)
    listed = _listed_keys(rm, exact, exact_limit, name, N)
    # exact is not True unless the values are listed: otherwise runs were sampled
    if listed is not None or (runs is not None and len(runs) == rm.n_runs):
        ukeys = np.asarray(listed) if listed is not None else np.unique(np.asarray(keys))
        runs, sampled, is_exact = None, 0, True
    else:
        assert runs is not None and keys is not None
        ukeys = np.unique(keys)
        if len(runs) == rm.n_runs:  # the sample holds every run
            runs, sampled, is_exact = None, 0, True
        else:
            sampled, is_exact = len(runs), False
    r = rm.rank(ukeys, ("min", "max") + (("unq",) if phi and not is_exact else ()))
    order = np.argsort(r["max"], kind="stable")
    ranks = (
        np.arange(1, len(ukeys) + 1, dtype=np.int64)
        if is_exact
        else np.asarray(r["unq"][order], dtype=np.int64)
        if phi
        else None
    )
    n = float(rm.n_runs)
    value = _display(space, ukeys[order])
    # tiny spaces: every run by name, as the paper's Figure 2
    names = _runs_by_name(rm, space, N, c) if is_exact and rm.n_runs <= 16 else None
    return Spacing(
        name,
        N,
        levels,
        c,
        int(rm.size),
        int(rm.n_runs),
        rm.engine,
        is_exact,
        sampled,
        None if is_exact else seed,
        value,
        (r["min"][order] - 1) / n,
        r["max"][order] / n,
        ranks,
        runs,
        names,
    )


def _listed_keys(rm, exact: bool | None, exact_limit: int, name: str, N: int):
    """Every distinct value's key of rank map ``rm`` where the spacing plot is exact (asked, or
    by default at most ``exact_limit`` values) and the map lists them; else None (sampled)."""
    if not (exact is True or (exact is None and rm.size <= exact_limit)):
        return None
    listed = rm.summary.listed()
    if listed is None and exact is True:
        raise IrscaleError(
            f"the {rm.engine} engine of {name} at N={N} does not list its values; use exact=False (sampled runs)"
        )
    return listed


def _runs_by_name(rm, space, N: int, c: int) -> tuple[str, ...]:
    """Every run of length N over grades 0..c by name (its grades), in the order of its rank
    (runs of one value in their enumeration order)."""
    every = all_runs(N, c)
    le = rm.rank(space.keys(every), ("max",))["max"]
    return tuple("".join(map(str, every[i])) for i in np.lexsort((np.arange(len(every)), le)))


def _enumerated_spacing(m, name: str, N: int, levels: int) -> Spacing:
    """Every run of a measure without a run space, by enumeration."""
    c = levels - 1 if (m.graded and getattr(m, "rel", None) is None) else 1
    total = (c + 1) ** N
    if total > ENUMERATE_LIMIT:
        raise IrscaleError(
            f"{name} has no rank map, and its {c + 1}^{N} = {count_text(total)} runs are more than the "
            f"{ENUMERATE_LIMIT:,} enumerated for a spacing plot; use N <= "
            f"{int(np.log(ENUMERATE_LIMIT) / np.log(c + 1))}"
        )
    fn = as_measure(m, N, c)
    runs = all_runs(N, c)
    keys = fn.order_keys(runs)
    vals = fn.values(runs)
    ukeys, first, counts = np.unique(keys, return_index=True, return_counts=True)
    le = np.cumsum(counts)
    names = None
    if total <= 16:
        names = tuple("".join(map(str, runs[i])) for i in np.argsort(keys, kind="stable"))
    return Spacing(
        name,
        N,
        levels,
        c,
        len(ukeys),
        total,
        "enumerate",
        True,
        0,
        None,
        vals[first],
        (le - counts) / total,
        le / total,
        np.arange(1, len(ukeys) + 1, dtype=np.int64),
        None,
        names,
    )


_VIEWS = {"both": ("quantile", "equispaced"), "quantile": ("quantile",), "equispaced": ("equispaced",)}


def rank_spacing_plot(
    measures,
    Ns,
    levels: int = 2,
    *,
    view: str = "both",
    samples: int = 2000,
    seed: int = 0,
    exact: bool | None = None,
    exact_limit: int = EXACT_LIMIT,
    out: str | Path | None = None,
    stem: str | None = None,
    pdf: bool = False,
    names: Sequence[str] | None = None,
    data: dict | None = None,
) -> Picture:
    """Spacing of each measure's values over all runs of each length N (2021 paper,
    Figures 2-5), from rank maps (:func:`spacing_data`): one column per N, and per
    measure a row for each view. ``view="quantile"``: value against the fraction of runs
    at or below it (the paper's figures; flat steps are ties); ``"equispaced"``: value
    against phi / number of values (an interval scale is the dashed straight line);
    ``"both"``. ``data``: {(measure, N): Spacing}. ``names``: what the figure calls each
    measure (default: its own name; a study on real-valued grades passes the names as
    written for the measures as computed on the grades' levels). ``data``: the
    :class:`Spacing` of each (name, N) computed already (another figure's ``data``), not
    computed again."""
    check_choice("view", view, tuple(_VIEWS))
    measures = [measures] if isinstance(measures, str) or not isinstance(measures, Sequence) else list(measures)
    Ns = [Ns] if isinstance(Ns, (int, np.integer)) else list(Ns)
    if not measures or not Ns:
        raise ArgumentError("rank_spacing_plot needs at least one measure and one run length N")
    views = _VIEWS[view]
    shown = [_name(m) for m in measures] if names is None else [str(n) for n in names]
    if len(shown) != len(measures):
        raise ArgumentError(f"rank_spacing_plot: {len(shown)} names for {len(measures)} measures")
    known = data or {}
    data = {
        (shown[i], int(N)): known.get((shown[i], int(N)))
        or dataclasses.replace(
            spacing_data(
                m,
                int(N),
                levels,
                samples=samples,
                seed=seed,
                exact=exact,
                exact_limit=exact_limit,
                phi="equispaced" in views,
            ),
            measure=shown[i],
        )
        for i, m in enumerate(measures)
        for N in Ns
    }
    plt = _plt()
    panels = [(i, kind, int(N)) for i in range(len(measures)) for kind in views for N in Ns]
    named = max((len(d.run_names or ()) for d in data.values()), default=0)
    if len(Ns) == 1:  # one run length: one or two panels for a column, more in rows of four (two: runs named)
        cols = 1 if len(panels) <= 2 else 2 if named > 8 else 4
    else:  # a column per run length, a row per measure and view
        cols = len(Ns)
    rows = -(-len(panels) // cols)
    W = COLUMN_WIDTH_IN if cols == 1 else TEXT_WIDTH_IN
    title = f"Values of {', '.join(shown)} over all runs of length N ({levels} relevance levels, RB = N)"
    what = {
        "quantile": "value against the fraction of runs at or below it (flat steps are ties)",
        "equispaced": "value against its rank phi / number of values (dashed: equi-spaced, an interval scale)",
    }
    if len(views) == 1:
        sub = what[views[0]].capitalize()
    elif cols == 1 or len(Ns) > 1:
        sub = f"Upper row: {what[views[0]]}; lower row: {what[views[1]]}"
    else:
        sub = f"Left of each pair: {what[views[0]]}; right: {what[views[1]]}"
    heading = _wrap_in(title + "\n" + sub, W - 0.1, 10)
    axes_h = min(W / cols - 0.5, 2.0)
    panel_h = axes_h + _lines_in(2, 9) + _lines_in(1, 9) + 0.3 + (_text_in("0" * 6) if named else 0.0)
    with _style():
        fig = plt.figure(
            figsize=(W, rows * panel_h + _lines_in(heading.count("\n") + 1, 10) + 0.15), layout="constrained"
        )
        fig.get_layout_engine().set(w_pad=0.03, h_pad=0.03, wspace=0.04, hspace=0.04)
        axes = fig.subplots(rows, cols, squeeze=False)
        for k, (i, kind, N) in enumerate(panels):
            r, c = divmod(k, cols)
            _spacing_panel(axes[r][c], data[(shown[i], N)], kind, first_col=c == 0 or len(Ns) == 1)
        for k in range(len(panels), rows * cols):
            axes[k // cols][k % cols].set_visible(False)
        fig.suptitle(heading, fontsize=10)
    stem = stem or _stem(
        "spacing",
        *shown,
        "N" + "_".join(map(str, Ns)),
        f"L{levels}" if levels != 2 else "",
        view,
    )
    return _finish(fig, title, out, stem, data, pdf=pdf, caption=_spacing_caption(data, sub), print_width_in=W)


def _spacing_caption(data: dict, sub: str) -> str:
    parts = []
    for (m, N), d in data.items():
        how = "every value" if d.exact else f"{d.sampled:,} sampled runs (seed {d.seed})"
        parts.append(
            f"{m} at N = {N}: {count_text(d.size, d.c + 1)} distinct values over "
            f"{count_text(d.n_runs, d.c + 1)} runs, {how}"
        )
    return (
        sub
        + ". The x positions are exact: each point's fraction of runs and rank come from the rank map. "
        + "; ".join(parts)
        + "."
    )


def _spacing_panel(ax, d: Spacing, kind: str, first_col: bool):
    from matplotlib.collections import LineCollection

    many = len(d.value) > RASTER_POINTS
    ms = 3.0 if len(d.value) <= 200 else 1.6 if len(d.value) <= 5000 else 1.0
    if kind == "quantile":
        wide = d.frac - d.below > 2e-3  # steps wider than a marker (ties of many runs)
        segs = np.stack([np.column_stack([d.below, d.value]), np.column_stack([d.frac, d.value])], axis=1)[wide]
        ax.add_collection(LineCollection(segs, colors="C0", linewidths=1.6, rasterized=wide.sum() > RASTER_POINTS))
        ax.plot(d.frac, d.value, ".", color="C0", markersize=ms, rasterized=many)
        ax.set_xlim(0, 1)
        ax.autoscale_view(scalex=False)
        if d.run_names:
            n = len(d.run_names)
            ax.set_xticks((np.arange(n) + 0.5) / n)
            ax.set_xticklabels(d.run_names, rotation=90, fontsize=8, family="monospace")
            ax.set_xlabel("runs, ordered by value", fontsize=MIN_FONT_PT)
        else:
            ax.set_xlabel("fraction of runs at or below", fontsize=MIN_FONT_PT)
    else:
        x = d.phi_frac
        assert x is not None  # the equispaced view's spacings are computed with phi
        ax.plot(x, d.value, ".", color="C1", markersize=ms, rasterized=many)
        if len(x) > 1:
            ax.plot([x[0], x[-1]], [d.value[0], d.value[-1]], "--", color="0.35", linewidth=0.8)
        ax.set_xlim(0, 1.02)
        ax.set_xlabel("phi / number of values", fontsize=MIN_FONT_PT)
    how = (
        f"all {_runs_power(d.c, d.N)} runs (exact)"
        if d.exact
        else f"{d.sampled:,} of {_runs_power(d.c, d.N)} runs sampled"
    )
    ax.set_title(f"N = {d.N}: {count_text(d.size, d.c + 1)} values\n{how}")
    if first_col:
        ax.set_ylabel(f"{d.measure}" + ("\n(RB = N)" if _needs_rb(d.measure) else ""), fontsize=MIN_FONT_PT)


def _needs_rb(name: str) -> bool:
    try:
        return bool(_measure_obj(name).needs_recall_base)
    except (IrscaleError, TypeError, AttributeError):  # a user's callable: no recall base
        return False


def spacing_plot(measures: Sequence, Ns: Sequence[int], out: str | Path, levels: int = 2) -> list[Path]:
    """All runs of each length N ordered by the measure against its value (one panel per
    measure and N; the quantile view of :func:`rank_spacing_plot`, from rank maps: any N
    a rank map serves). Returns the PNG and SVG written to ``out``."""
    measures = list(measures)
    stem = "spacing_" + "_".join(
        str(_name(m)).replace("(", "").replace(")", "").replace("=", "").replace(".", "") for m in measures
    )
    return list(rank_spacing_plot(measures, list(Ns), levels, view="quantile", out=out, stem=stem).files)


# -- system means: original against ranked ------------------------------------------------------


def swapped_pairs(original, ranked) -> np.ndarray:
    """Index pairs (i < j) of systems whose order reverses strictly between ``original``
    and ``ranked`` ((k, 2) int array; a tie on either side is no swap)."""
    o = np.asarray(original, dtype=np.float64)
    r = np.asarray(ranked, dtype=np.float64)
    if o.shape != r.shape or o.ndim != 1:
        raise ArgumentError(
            f"original and ranked must be two 1-d arrays of equal length (one mean per system), not "
            f"shapes {o.shape} and {r.shape}"
        )
    s = np.sign(o[:, None] - o[None, :]) * np.sign(r[:, None] - r[None, :])
    i, j = np.nonzero(np.triu(s < 0, 1))
    return np.column_stack([i, j]).astype(np.int64)


def means_scatter(
    original,
    ranked,
    systems: Sequence[str] | None = None,
    *,
    measure: str | None = None,
    label_top: int = 5,
    label_swapped: int = 12,
    max_lines: int = 400,
    xlabel: str | None = None,
    ylabel: str | None = None,
    title: str | None = None,
    out: str | Path | None = None,
    stem: str | None = None,
) -> Picture:
    """Per-system means, original (x) against ranked (y), one point per system. Pairs of
    systems whose order swaps (:func:`swapped_pairs`) are joined by red lines (the
    ``max_lines`` with the widest original gap where there are more) and their systems
    drawn in orange. Labels: the ``label_top`` best systems by original mean and, where
    at most ``label_swapped`` systems swap, every one of them; a label that would
    overlap another is left out. ``data``: {"swapped": [(name, name)], "pairs": (k, 2)
    indices, "labelled": names, "lines": pairs drawn}."""
    o = np.asarray(original, dtype=np.float64)
    r = np.asarray(ranked, dtype=np.float64)
    pairs = swapped_pairs(o, r)
    S = len(o)
    systems = [f"system {k + 1}" for k in range(S)] if systems is None else [str(s) for s in systems]
    if len(systems) != S:
        raise ArgumentError(f"{len(systems)} system names for {S} means")
    in_swap = np.zeros(S, dtype=bool)
    in_swap[pairs.ravel()] = True
    drawn = _widest_pairs(o, pairs, max_lines)
    total = S * (S - 1) // 2
    mname = f" of {measure}" if measure else ""
    title = title or f"System means{mname}, original against ranked: {len(pairs):,} of {total:,} pairs swap order"
    plt = _plt()
    with _style():
        fig, ax = plt.subplots(figsize=(6.4, 5.2), layout="constrained")
        _draw_swaps(ax, o, r, pairs, drawn, in_swap)
        ax.margins(0.07)
        ax.autoscale_view()
        ax.set_xlabel(xlabel or f"mean{(' ' + measure) if measure else ''} (original scale)")
        ax.set_ylabel(ylabel or f"mean{(' ' + measure) if measure else ''} ranked (interval scale)")
        ax.set_title(_wrap(title, 6.2, 9))
        ax.legend(loc="lower right", frameon=True)
        want = list(np.argsort(-o, kind="stable")[:label_top])
        if 0 < in_swap.sum() <= label_swapped:
            want += [k for k in np.flatnonzero(in_swap) if k not in want]
        labelled = _place_labels(fig, ax, o, r, want, systems)
    return _finish(
        fig,
        title,
        out,
        stem or _stem("means", measure or ""),
        {
            "swapped": [(systems[a], systems[b]) for a, b in pairs.tolist()],
            "pairs": pairs,
            "labelled": labelled,
            "lines": drawn,
        },
        caption=f"One point per system: its mean{mname} on the original scale (x) and ranked (y). "
        f"{len(pairs):,} of {total:,} pairs of systems change order (red lines"
        + ("" if len(drawn) == len(pairs) else f", the {len(drawn)} widest drawn")
        + f"); {int(in_swap.sum())} of {S} systems are in at least one such pair (orange).",
    )


def _draw_swaps(ax, o: np.ndarray, r: np.ndarray, pairs: np.ndarray, drawn: np.ndarray, in_swap: np.ndarray) -> None:
    """:func:`means_scatter`'s marks: a red line for each drawn swapped pair, the systems in
    blue, those in a swapped pair in orange, each with its legend entry."""
    from matplotlib.collections import LineCollection

    if len(drawn):
        shown = "" if len(drawn) == len(pairs) else f", the {len(drawn)} widest shown"
        ax.add_collection(
            LineCollection(
                _pair_segments(o, r, drawn),  # type: ignore[arg-type]  # matplotlib's stubs want a Sequence; an (n, 2, 2) array is one
                colors="tab:red",
                linewidths=0.7,
                alpha=0.45,
                zorder=1,
                label=f"swapped pair ({len(pairs):,}{shown})",
                gid="swapped-pairs",
            )
        )
    ax.scatter(o[~in_swap], r[~in_swap], s=18, color="tab:blue", zorder=2, label="keeps its order with every system")
    if in_swap.any():
        ax.scatter(
            o[in_swap],
            r[in_swap],
            s=22,
            color="tab:orange",
            edgecolors="black",
            linewidths=0.4,
            zorder=3,
            label="in a swapped pair",
        )


def means_panels(
    means,
    *,
    title: str | None = None,
    columns: int = 4,
    max_lines: int = MEANS_MAX_LINES,
    out: str | Path | None = None,
    stem: str = "means",
    pdf: bool = False,
    parts: bool = False,
) -> Picture:
    r"""Every measure's system means, original (x) against ranked (y), in one figure: a
    small panel per measure (``columns`` to a row), from a study's ``means`` table
    (columns measure, scale "original"/"ranked", system, mean). As in
    :func:`means_scatter`, the pairs of systems whose order swaps are joined by red lines
    (the ``max_lines`` widest where there are more) and their systems drawn in orange;
    no system is labelled (the means table names them). Laid out for print: up to two
    measures for ``\columnwidth``, more for ``\textwidth``. ``parts``: also each
    measure's panel alone, for ``\columnwidth``, in :attr:`Picture.parts` (stem
    ``<stem>_<slug>``, :func:`measure_slugs`). ``data``: {measure: (k, 2) swapped index
    pairs}."""
    import pandas as pd

    need = {"measure", "scale", "system", "mean"}
    if not isinstance(means, pd.DataFrame) or not need <= set(means.columns):
        have = list(means.columns) if isinstance(means, pd.DataFrame) else type(means).__name__
        raise ArgumentError(
            f"means must be a DataFrame with columns {sorted(need)} (a study's means table); got {have}"
        )
    measures = list(dict.fromkeys(means["measure"]))
    if not measures:
        raise ArgumentError("means_panels needs at least one measure's means")
    W = COLUMN_WIDTH_IN if len(measures) <= 2 else TEXT_WIDTH_IN
    cols = max(1, min(columns, len(measures)))
    rows = -(-len(measures) // cols)
    title = title or "System means, original against ranked, per measure"
    heading = _wrap_in(
        title + " (red lines: pairs of systems that swap order; orange: systems in such a pair)", W - 0.1, 9
    )
    panel_h = min(W / cols, 1.9) + 0.1  # an axes about as tall as wide, its two-line title and tick labels
    H = rows * panel_h + _lines_in(heading.count("\n") + 1, 9) + 0.45
    data, swaps = {}, []
    plt = _plt()
    with _style():
        fig = plt.figure(figsize=(W, H), layout="constrained")
        fig.get_layout_engine().set(w_pad=0.03, h_pad=0.03, wspace=0.04, hspace=0.04)
        axes = fig.subplots(rows, cols, squeeze=False)
        for k, m in enumerate(measures):
            pairs = _means_panel(axes[k // cols][k % cols], m, *_panel_means(means, m), max_lines)
            data[str(m)] = pairs
            swaps.append(len(pairs))
        for k in range(len(measures), rows * cols):
            axes[k // cols][k % cols].set_visible(False)
        fig.supxlabel("system mean, original scale", fontsize=9)
        fig.supylabel("system mean, ranked", fontsize=9)
        fig.suptitle(heading, fontsize=9)
    caption = (
        "One panel per measure, one point per system: its mean on the original scale (x) and ranked (y). "
        "Pairs of systems that change order are joined by red lines"
        + (f" (the {max_lines} widest per panel where there are more)" if max(swaps) > max_lines else "")
        + " and drawn in orange: "
        + "; ".join(f"{m} {n:,}" for m, n in zip(measures, swaps))
        + "."
    )
    pieces: tuple[Picture, ...] = ()
    if parts:
        slugs = measure_slugs(measures)
        pieces = tuple(
            _means_part(m, *_panel_means(means, m), max_lines, f"{stem}_{slugs[m]}", out, pdf) for m in measures
        )
    return _finish(fig, title, out, stem, data, pdf=pdf, caption=caption, print_width_in=W, parts=pieces)


def measure_slugs(names: Sequence[str]) -> dict[str, str]:
    """A file-name part for each measure name: letters, digits, ``-`` and ``_`` only, the
    same for the same name and distinct between names (also ignoring case, for
    case-insensitive file systems); a run length ``@N`` that every name ends with is left
    out (file names carry N already). ``RBP(p=0.8)@20`` -> ``RBP_p0_8``, ``nDCG(base=10)@20``
    -> ``nDCG_base10``.

    >>> measure_slugs(["P@20", "RBP(p=0.8)@20", "nDCG(base=10)@20"])
    {'P@20': 'P', 'RBP(p=0.8)@20': 'RBP_p0_8', 'nDCG(base=10)@20': 'nDCG_base10'}
    """
    names = list(dict.fromkeys(str(n) for n in names))
    tails = {m.group(0) if (m := re.search(r"@\d+$", n)) else None for n in names}
    tail = tails.pop() if len(tails) == 1 else None
    out: dict[str, str] = {}
    taken: set[str] = set()
    for n in names:
        base = n[: -len(tail)] if tail and len(n) > len(tail) else n
        # '=' dropped, a decimal point as '_': never the paper's label (RBP_p08), which no report shows
        slug = re.sub(r"[^A-Za-z0-9-]+", "_", base.replace("=", "")).strip("_") or "measure"
        unique, k = slug, 1
        while unique.lower() in taken:
            k += 1
            unique = f"{slug}-{k}"
        taken.add(unique.lower())
        out[n] = unique
    return out


def _means_part(m: str, o: np.ndarray, r: np.ndarray, max_lines: int, stem: str, out, pdf: bool) -> Picture:
    r"""One measure's panel of :func:`means_panels` alone, for ``\columnwidth``, with its
    axes' labels and a legend."""
    total = len(o) * (len(o) - 1) // 2
    plt = _plt()
    with _style():
        fig = plt.figure(figsize=(COLUMN_WIDTH_IN, 3.0), layout="constrained")
        ax = fig.subplots()
        pairs = _means_panel(ax, m, o, r, max_lines, alone=True)
        drawn = min(len(pairs), max_lines)
        title = f"System means of {m}, original against ranked: {len(pairs):,} of {total:,} pairs swap order"
        fig.suptitle(_wrap_in(title, COLUMN_WIDTH_IN - 0.1, 9), fontsize=9)
        ax.set_xlabel("mean, original scale")
        ax.set_ylabel("mean, ranked (interval scale)")
        ax.legend(loc="best", fontsize=MIN_FONT_PT, handlelength=1.2, borderpad=0.3, labelspacing=0.25)
    return _finish(
        fig,
        title,
        out,
        stem,
        pairs,
        pdf=pdf,
        caption=f"One point per system: its mean of {m} on the original scale (x) and ranked (y). "
        f"{len(pairs):,} of {total:,} pairs of systems change order (red lines"
        + ("" if drawn == len(pairs) else f", the {drawn} widest drawn")
        + "); their systems in orange.",
        print_width_in=COLUMN_WIDTH_IN,
    )


def _widest_pairs(o: np.ndarray, pairs: np.ndarray, max_lines: int) -> np.ndarray:
    """The swapped ``pairs`` to draw: all, or the ``max_lines`` with the widest gap of original means (in order)."""
    if len(pairs) <= max_lines:
        return pairs
    gap = np.abs(o[pairs[:, 0]] - o[pairs[:, 1]])
    return pairs[np.sort(np.argsort(-gap, kind="stable")[:max_lines])]


def _pair_segments(o: np.ndarray, r: np.ndarray, drawn: np.ndarray) -> np.ndarray:
    """The line segments (k, 2, 2) joining the two systems of each pair of ``drawn`` at (original, ranked)."""
    return np.stack(
        [np.column_stack([o[drawn[:, 0]], r[drawn[:, 0]]]), np.column_stack([o[drawn[:, 1]], r[drawn[:, 1]]])],
        axis=1,
    )


def _panel_means(means, m) -> tuple[np.ndarray, np.ndarray]:
    """Measure ``m``'s system means of a study's means table: (original, ranked), ranked in the original's order."""
    rows_m = means[means["measure"] == m]
    o = rows_m[rows_m["scale"] == "original"].set_index("system")["mean"]
    r = rows_m[rows_m["scale"] == "ranked"].set_index("system")["mean"].reindex(o.index)
    return o.to_numpy(np.float64), r.to_numpy(np.float64)


def _means_panel(ax, m, o: np.ndarray, r: np.ndarray, max_lines: int, alone: bool = False) -> np.ndarray:
    """Draw one measure's panel of :func:`means_panels` on ``ax`` (``alone``: a figure of its
    own, with bigger marks, labelled for a legend and no title); return its swapped pairs."""
    from matplotlib.collections import LineCollection
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    pairs = swapped_pairs(o, r)
    drawn = _widest_pairs(o, pairs, max_lines)
    if len(drawn):
        segs = _pair_segments(o, r, drawn)
        what = "swapped pair" + ("" if len(drawn) == len(pairs) else f" ({len(drawn)} widest)")
        ax.add_collection(
            LineCollection(
                segs,  # type: ignore[arg-type]  # an (n, 2, 2) array is a sequence of segments
                colors="tab:red",
                linewidths=0.7 if alone else 0.5,
                alpha=0.5 if alone else 0.4,
                zorder=1,
                label=what,
            )
        )
    in_swap = np.zeros(len(o), dtype=bool)
    in_swap[pairs.ravel()] = True
    size = 14 if alone else 8
    ax.scatter(o[~in_swap], r[~in_swap], s=size, color="tab:blue", zorder=2, linewidths=0, label="keeps its order")
    if in_swap.any():
        ax.scatter(
            o[in_swap], r[in_swap], s=size, color="tab:orange", zorder=3, linewidths=0, label="in a swapped pair"
        )
    ax.margins(0.07)
    ax.autoscale_view()
    for axis in (ax.xaxis, ax.yaxis):  # a few short tick labels, no offset text
        axis.set_major_locator(MaxNLocator(nbins=4 if alone else 3))
        axis.set_major_formatter(FuncFormatter(_compact))
    ax.tick_params(labelsize=MIN_FONT_PT, length=2.5, pad=2)
    if not alone:
        total = len(o) * (len(o) - 1) // 2
        ax.set_title(f"{m}\n{len(pairs):,} of {total:,} pairs swap", fontsize=MIN_FONT_PT)
    return pairs


def _compact(v: float, _pos=None) -> str:
    """A tick label in few characters: ``0.25``, ``40000``, ``4e10`` (from 1e5 up)."""
    if v == 0:
        return "0"
    if 1e-3 <= abs(v) < 1e5:
        return f"{v:.6g}".replace("-", "\u2212")
    mant, exp = f"{v:.2e}".split("e")
    mant = mant.rstrip("0").rstrip(".")
    return f"{mant}e{int(exp)}".replace("-", "\u2212")


_LABEL_BOX = {"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.85}
_LEADER = {"arrowstyle": "-", "color": "0.35", "lw": 0.5, "shrinkA": 0, "shrinkB": 2}


def _place_labels(fig, ax, x, y, which, names) -> list[str]:
    """Annotate points ``which`` greedily (in that order), each at the offset (of eight
    around the point, joined to it by a thin line) that covers the fewest other points;
    a label that would overlap a placed one or the legend, or leave the axes, is dropped."""
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    frame = ax.get_window_extent(r)
    pts = ax.transData.transform(np.column_stack([x, y]))
    taken = []
    leg = ax.get_legend()
    if leg is not None:
        taken.append(leg.get_window_extent(r))
    placed = []
    offsets = [
        ((10, 8), "left", "bottom"),
        ((-10, 8), "right", "bottom"),
        ((10, -8), "left", "top"),
        ((-10, -8), "right", "top"),
        ((0, 14), "center", "bottom"),
        ((0, -14), "center", "top"),
        ((16, 0), "left", "center"),
        ((-16, 0), "right", "center"),
    ]
    for k in which:
        best = None
        for off, ha, va in offsets:
            a = ax.annotate(
                names[k],
                (x[k], y[k]),
                xytext=off,
                textcoords="offset points",
                ha=ha,
                va=va,
                fontsize=8,
                zorder=5,
                bbox=_LABEL_BOX,
                arrowprops=_LEADER,
            )
            a.set_in_layout(False)
            bb = a.get_window_extent(r)
            a.remove()
            inside = bb.x0 >= frame.x0 and bb.x1 <= frame.x1 and bb.y0 >= frame.y0 and bb.y1 <= frame.y1
            if not inside or any(bb.overlaps(t) for t in taken):
                continue
            covered = int(
                (
                    (pts[:, 0] >= bb.x0 - 3)
                    & (pts[:, 0] <= bb.x1 + 3)
                    & (pts[:, 1] >= bb.y0 - 3)
                    & (pts[:, 1] <= bb.y1 + 3)
                ).sum()
            )
            if best is None or covered < best[0]:
                best = (covered, off, ha, va, bb)
        if best is not None:
            _, off, ha, va, bb = best
            a = ax.annotate(
                names[k],
                (x[k], y[k]),
                xytext=off,
                textcoords="offset points",
                ha=ha,
                va=va,
                fontsize=8,
                zorder=5,
                bbox=_LABEL_BOX,
                arrowprops=_LEADER,
            )
            a.set_in_layout(False)
            taken.append(bb)
            placed.append(names[k])
    return placed


# -- heatmaps: Kendall's tau, significance changes -------------------------------------------------


def _matrix(tau, labels, value: str):
    import pandas as pd

    if isinstance(tau, pd.DataFrame) and {"measure_1", "measure_2", value} <= set(tau.columns):
        names = list(dict.fromkeys(list(tau["measure_1"]) + list(tau["measure_2"])))
        pos = {n: k for k, n in enumerate(names)}
        M = np.eye(len(names))
        for a, b, v in zip(tau["measure_1"], tau["measure_2"], tau[value]):
            M[pos[a], pos[b]] = M[pos[b], pos[a]] = float(v)
        return M, names
    if isinstance(tau, pd.DataFrame):
        M = tau.to_numpy(dtype=np.float64)
        labels = labels or [str(x) for x in tau.columns]
    else:
        M = np.asarray(tau, dtype=np.float64)
    if M.ndim != 2 or M.shape[0] != M.shape[1]:
        raise ArgumentError(f"the tau matrix must be square (one row and column per measure), not shape {M.shape}")
    labels = [str(x) for x in labels] if labels is not None else [str(k + 1) for k in range(len(M))]
    if len(labels) != len(M):
        raise ArgumentError(f"{len(labels)} labels for a {len(M)} x {len(M)} matrix")
    return M, labels


def tau_range(*matrices) -> float:
    """The lower end of a tau heatmap's colours: the smallest finite off-diagonal tau of
    ``matrices`` (square arrays) rounded down to a tenth, 0 when there is none; the upper
    end is 1. Two heatmaps drawn with one range can be compared colour for colour."""
    lows = []
    for M in matrices:
        M = np.asarray(M, dtype=np.float64)
        off = M[~np.eye(len(M), dtype=bool)]
        off = off[np.isfinite(off)]
        if len(off):
            lows.append(float(np.floor(off.min() * 10) / 10))
    return min(lows, default=0.0)


def tau_heatmap(
    tau,
    labels: Sequence[str] | None = None,
    *,
    value: str = "tau",
    title: str | None = None,
    decimals: int | None = None,
    vmin: float | None = None,
    columns: Sequence[str] | None = None,
    out: str | Path | None = None,
    stem: str = "tau",
    pdf: bool = False,
) -> Picture:
    r"""Kendall's tau between measures as a heatmap with a colour bar: ``tau`` a square
    DataFrame (labels from its columns), a square array with ``labels``, or a study's
    long table (columns measure_1, measure_2 and ``value``: "tau" or "tau_ranked"; the
    diagonal is 1). Laid out for print (:attr:`Picture.print_width_in`): for
    ``\columnwidth`` where its cells hold two decimals at 8 pt there, else for
    ``\textwidth``. Cells are annotated with 3 decimals where they hold them, else 2,
    else none (``decimals`` overrides) in black or white, whichever reads on the cell. The
    colours span ``vmin`` to 1 (default: the smallest off-diagonal tau rounded down to a
    tenth); give two heatmaps the same ``vmin`` to compare them (:func:`tau_range`).
    ``columns``: only these measures' columns (every row), a part of the heatmap
    (:func:`tau_column_parts`)."""
    M, names = _matrix(tau, labels, value)
    n = len(M)
    cols = list(range(n)) if columns is None else [names.index(c) for c in columns]
    title = title or "Kendall's tau between measures"
    g = _tau_layout(M, names, title, decimals, len(cols))
    decimals, W = g["decimals"], g["width"]
    block = M[:, cols]
    plt = _plt()
    with _style():
        fig = plt.figure(figsize=(W, g["height"]))
        side, wide = n * g["cell"], len(cols) * g["cell"]
        ax = fig.add_axes((g["left"] / W, g["bottom"] / g["height"], wide / W, side / g["height"]))
        vmin = tau_range(M) if vmin is None else float(vmin)
        cmap = plt.get_cmap("viridis").with_extremes(bad="0.85")
        im = ax.imshow(np.ma.masked_invalid(block), cmap=cmap, vmin=min(vmin, 0.99), vmax=1.0, aspect="auto")
        ax.set_xticks(range(len(cols)))
        ax.set_yticks(range(n))
        ax.set_xticklabels([names[c] for c in cols], rotation=90)  # upright names never overlap their neighbours
        ax.set_yticklabels(names)
        if decimals:
            for a in range(n):
                for b in range(len(cols)):
                    if np.isfinite(block[a, b]):
                        ax.text(
                            b,
                            a,
                            f"{block[a, b]:.{decimals}f}",
                            ha="center",
                            va="center",
                            fontsize=MIN_FONT_PT,
                            color=_ink(im.cmap(im.norm(block[a, b]))),
                        )  # inside the axes
        bar = min(side, max(0.9 * side, 1.0))  # the colour bar: as tall as the grid, at least an inch where it can
        cax = fig.add_axes(
            (
                (g["left"] + wide + 0.1) / W,
                (g["bottom"] + (side - bar) / 2) / g["height"],
                0.12 / W,
                bar / g["height"],
            )
        )
        fig.colorbar(im, cax=cax, label="Kendall's tau")
        fig.text(0.5, 1 - 0.05 / g["height"], g["title"], ha="center", va="top", fontsize=9)
    some = "" if len(cols) == n else f" (the columns of {len(cols)} of them)"
    return _finish(
        fig,
        title,
        out,
        stem,
        {"matrix": M, "labels": names, "vmin": min(vmin, 0.99), "columns": [names[c] for c in cols]},
        pdf=pdf,
        caption=f"Kendall's tau between the rankings of systems by each pair of {n} measures{some}"
        + (f", to {decimals} decimals in each cell." if decimals else "; the colour bar gives the values."),
        print_width_in=W,
    )


def tau_column_parts(tau, labels: Sequence[str] | None = None, value: str = "tau") -> list[list[str]]:
    r"""The measures' columns of a tau heatmap (``tau``, ``labels`` and ``value`` as
    :func:`tau_heatmap` takes them) cut into parts of about equal size, each legible at
    ``\columnwidth`` with every tau to two decimals (the widths of its values: two
    decimals of a negative tau are wider): ``[]`` where the whole heatmap fits a column
    already (or no part of it would)."""
    M, names = _matrix(tau, labels, value)
    fits = lambda k: (lambda g: g["width"] == COLUMN_WIDTH_IN and g["decimals"] >= 2)(  # noqa: E731
        _tau_layout(M, names, "", None, k)
    )
    if fits(len(names)):
        return []
    k = next((k for k in range(len(names) - 1, 0, -1) if fits(k)), 0)
    if k == 0:
        return []
    parts = -(-len(names) // k)
    size = -(-len(names) // parts)  # about equal parts, none wider than k
    return [names[i : i + size] for i in range(0, len(names), size)]


_TAU_CELL_MAX = 0.42  # inches: a cell of the tau heatmap holds "0.000" at 8 pt with room


def _tau_layout(M: np.ndarray, names: list[str], title: str, decimals: int | None, columns: int | None = None) -> dict:
    """Where :func:`tau_heatmap` draws, in inches: the print ``width`` (column, else text
    width), the ``cell`` side, the grid's ``left`` and ``bottom``, the figure's ``height``,
    the wrapped ``title`` and the ``decimals`` the cells hold; ``columns``: how many of
    the matrix's columns are drawn (default all; every row is)."""
    rows = max(len(M), 1)
    n = rows if columns is None else max(columns, 1)
    values = M[np.isfinite(M)]
    label = _text_in("\n".join(names))  # the longest name at 8 pt
    tick = 0.1  # a tick and its pad
    bar = 0.1 + 0.12 + tick + _text_in("\u22120.00") + 0.08 + _lines_in(1, 9) + 0.05  # gap, bar, ticks, label
    need = {d: max((_text_in(f"{v:.{d}f}".replace("-", "\u2212")) for v in values), default=0.0) + 0.08 for d in (3, 2)}
    for width in (COLUMN_WIDTH_IN, TEXT_WIDTH_IN):
        room = width - (0.05 + label + tick) - bar
        cell = min(_TAU_CELL_MAX, room / n)
        held = next((d for d in (3, 2) if cell >= need[d]), 0)
        if width == COLUMN_WIDTH_IN and not (cell >= need[2] if decimals != 0 else cell >= _lines_in(1) + 0.03):
            continue  # not legible in a column: the text width
        break
    left = 0.05 + label + tick + (room - n * cell) / 2  # the grid and its colour bar centred
    wrapped = _wrap_in(title, width - 0.1, 9)
    top = 0.05 + _lines_in(wrapped.count("\n") + 1, 9) + 0.1
    bottom = 0.05 + label + tick  # the names upright
    return {
        "width": width,
        "cell": cell,
        "left": left,
        "bottom": bottom,
        "height": bottom + rows * cell + top,
        "title": wrapped,
        "decimals": held if decimals is None else decimals,
    }


def significance_changes_plot(
    changes,
    *,
    delta: bool = True,
    title: str | None = None,
    vmax: float | None = None,
    out: str | Path | None = None,
    stem: str = "significance_changes",
    pdf: bool = False,
) -> Picture:
    """S2NS (significant on the original scale, not on the ranked one) and NS2S counts per
    measure (rows) and test (columns), from a study's ``changes`` table (columns
    measure, test, s2ns, ns2s, and delta_pct for the third panel with ``delta``);
    repeated (measure, test) rows (several collections) are summed, delta_pct averaged.
    S2NS and NS2S share one colour scale, up to ``vmax`` (default: the largest count; give
    the parts of one figure the figure's, so that a colour is one count in all of them).
    ``data``: the matrices as DataFrames."""
    import pandas as pd

    need = {"measure", "test", "s2ns", "ns2s"} | ({"delta_pct"} if delta else set())
    if not isinstance(changes, pd.DataFrame) or not need <= set(changes.columns):
        have = list(changes.columns) if isinstance(changes, pd.DataFrame) else type(changes).__name__
        raise ArgumentError(
            f"changes must be a DataFrame with columns {sorted(need)} (a study's changes table); got {have}"
        )
    rows = list(dict.fromkeys(changes["measure"]))
    cols = list(dict.fromkeys(changes["test"]))
    grid = _changes_grids(changes, rows, cols, delta)
    title = title or "Significance decisions changed by ranking, per measure and test"
    panels = [
        ("s2ns", "S2NS: significant, then not (count of system pairs)"),
        ("ns2s", "NS2S: not significant, then significant (count of system pairs)"),
    ]
    if delta:
        panels.append(("delta_pct", "change of decisions, delta % (S2NS + NS2S over significant pairs)"))
    g = _changes_layout(grid, rows, cols, panels, title)
    W, H = g["width"], g["height"]
    plt = _plt()
    with _style():
        fig = plt.figure(figsize=(W, H))
        if vmax is None:
            vmax = _grid_vmax(grid)
        gw = len(cols) * g["cell"]
        bar = g["rows"]
        ax = None
        for (k, _), (y, heading) in zip(panels, g["panels"]):
            ax = fig.add_axes((g["left"] / W, y / H, gw / W, g["rows"] / H))
            cax = fig.add_axes(((g["left"] + gw + 0.1) / W, (y + (g["rows"] - bar) / 2) / H, 0.1 / W, bar / H))
            _changes_panel(fig, ax, cax, grid[k].to_numpy(dtype=np.float64), k, rows, vmax)
            fig.text(0.05 / W, (y + g["rows"] + 0.04) / H, heading, ha="left", va="bottom", fontsize=9)
            ax.set_xticks(range(len(cols)))
            ax.tick_params(axis="x", labelbottom=False)
        assert ax is not None
        ax.tick_params(axis="x", labelbottom=True)
        ax.set_xticklabels(g["tests"], rotation=90, linespacing=1.0)
        fig.text(0.5, 1 - 0.05 / H, g["title"], ha="center", va="top", fontsize=10)
    return _finish(
        fig,
        title,
        out,
        stem,
        grid,
        pdf=pdf,
        caption="Per measure and test, the system pairs whose significance decision changes when the "
        "measure is replaced by its ranked (interval-scale) version: S2NS significant on the "
        "original scale but not on the ranked one, NS2S the other way"
        + (", and delta %: both over the pairs significant on the original scale." if delta else "."),
        print_width_in=W,
    )


def asl_curves_plot(
    asl,
    *,
    alpha: float = 0.05,
    title: str | None = None,
    out: str | Path | None = None,
    stem: str = "asl_curves",
    pdf: bool = False,
) -> Picture:
    """Discriminative power as ASL curves (Sakai, SIGIR 2006), one panel per measure: each
    test's achieved significance levels sorted, against the share of system pairs (in
    percent), on the original measure (solid) and on its ranked version (dashed), up to
    4 alpha, with alpha marked; ``asl``: a study's ``asl`` frame (columns measure, test,
    scale, percent, asl). Where a curve crosses alpha is the test's discriminative power."""
    import pandas as pd

    need = {"measure", "test", "scale", "percent", "asl"}
    if not isinstance(asl, pd.DataFrame) or not need <= set(asl.columns):
        have = list(asl.columns) if isinstance(asl, pd.DataFrame) else type(asl).__name__
        raise ArgumentError(f"asl must be a DataFrame with columns {sorted(need)} (a study's asl frame); got {have}")
    measures = list(dict.fromkeys(asl["measure"]))
    tests = list(dict.fromkeys(asl["test"]))
    title = title or "Discriminative power: ASL curves, original (solid) and ranked (dashed)"
    W = COLUMN_WIDTH_IN if len(measures) <= 2 else TEXT_WIDTH_IN
    ncols = min(4, len(measures))
    nrows = -(-len(measures) // ncols)
    entry = max(_text_in(str(t)) for t in tests) + 0.4  # a legend entry: line, gap, name, space
    lcols = max(1, min(len(tests), int((W - 0.1) // entry)))
    heading = _wrap_in(title, W - 0.1, 10)
    panel = min((W - 0.3) / ncols, 1.7)  # an axes about as tall as wide, at most 1.7 in
    height = (
        nrows * (panel + _lines_in(1, 9) + 0.1)
        + _lines_in(heading.count("\n") + 1, 10)
        + _lines_in(-(-len(tests) // lcols))
        + 0.55
    )
    top = min(1.0, 4 * alpha)
    plt = _plt()
    colours = plt.get_cmap("tab10")
    with _style():
        fig = plt.figure(figsize=(W, height), layout="constrained")
        fig.get_layout_engine().set(w_pad=0.03, h_pad=0.03, wspace=0.03, hspace=0.03)
        axes = fig.subplots(nrows, ncols, sharex=True, sharey=True, squeeze=False)
        for k, ax in enumerate(axes.ravel()):
            if k >= len(measures):
                ax.set_visible(False)
                continue
            part = asl[asl["measure"] == measures[k]]
            for c, test in enumerate(tests):
                for scale, style in (("original", "-"), ("ranked", "--")):
                    line = part[(part["test"] == test) & (part["scale"] == scale)]
                    if len(line):
                        ax.plot(line["percent"], line["asl"], style, color=colours(c % 10), linewidth=1.0)
            ax.axhline(alpha, color="0.4", linewidth=0.8, linestyle=":")
            ax.set_ylim(0, top)
            ax.set_xlim(0, 100)
            ax.set_xticks([0, 25, 50, 75, 100])
            ax.set_title(measures[k], fontsize=9)
            if k % ncols == 0:
                ax.set_ylabel("ASL (p-value)")
            if k // ncols == nrows - 1 or k + ncols >= len(measures):
                ax.set_xlabel("system pairs (%)")
                ax.tick_params(axis="x", labelbottom=True)
        handles = [plt.Line2D([], [], color=colours(c % 10), linewidth=1.5) for c in range(len(tests))]
        fig.legend(
            handles,
            tests,
            loc="outside lower center",
            ncol=lcols,
            fontsize=MIN_FONT_PT,
            frameon=False,
            handlelength=1.6,
            columnspacing=1.2,
        )
        fig.suptitle(heading, fontsize=10)
    return _finish(
        fig,
        title,
        out,
        stem,
        asl,
        pdf=pdf,
        print_width_in=W,
        caption=f"For each measure and test, every system pair's achieved significance level (p-value), sorted, "
        f"against the share of pairs: on the original measure (solid) and on its ranked version (dashed). The "
        f"dotted line is alpha = {alpha:g}; where a curve crosses it is the test's discriminative power (the share "
        f"of pairs significant). Levels above {top:g} are off the plot.",
    )


def changes_vmax(changes) -> float:
    """The top of the S2NS/NS2S colour scale of a study's ``changes``: the largest count
    (summed over repeated (measure, test) rows), 1 where there is none."""
    rows = list(dict.fromkeys(changes["measure"]))
    cols = list(dict.fromkeys(changes["test"]))
    return _grid_vmax(_changes_grids(changes, rows, cols, False))


def _grid_vmax(grid: dict) -> float:
    """:func:`changes_vmax` of the matrices of :func:`_changes_grids`."""
    counts = np.concatenate([grid["s2ns"].to_numpy(float).ravel(), grid["ns2s"].to_numpy(float).ravel()])
    return float(np.nanmax(counts)) if np.isfinite(counts).any() else 1.0


def changes_test_parts(changes, delta: bool = True) -> list[list[str]]:
    r"""The tests of a significance-changes figure cut into groups of about equal size,
    each of whose figures (every measure, those tests) is laid out for ``\columnwidth``:
    ``[]`` where the whole figure fits a column already (or not even one test would)."""
    rows = list(dict.fromkeys(changes["measure"]))
    cols = list(dict.fromkeys(changes["test"]))
    grid = _changes_grids(changes, rows, cols, delta)
    panels = [("s2ns", ""), ("ns2s", "")] + ([("delta_pct", "")] if delta else [])

    def fits(some: list) -> bool:
        part = {k: v[some] for k, v in grid.items()}
        return _changes_layout(part, rows, some, panels, "")["width"] == COLUMN_WIDTH_IN

    if fits(cols):
        return []
    k = next((k for k in range(len(cols) - 1, 0, -1) if all(fits(cols[i : i + k]) for i in range(0, len(cols), k))), 0)
    if k == 0:
        return []
    parts = -(-len(cols) // k)
    size = -(-len(cols) // parts)  # about equal groups, none larger than k
    even = [cols[i : i + size] for i in range(0, len(cols), size)]
    return even if all(map(fits, even)) else [cols[i : i + k] for i in range(0, len(cols), k)]


def _changes_grids(changes, rows: list, cols: list, delta: bool) -> dict:
    """The matrices (measure x test DataFrames) of :func:`significance_changes_plot`: S2NS and
    NS2S summed over repeated rows, delta_pct (with ``delta``) averaged."""
    return {
        k: changes.pivot_table(
            index="measure", columns="test", values=k, aggfunc="sum" if k != "delta_pct" else "mean", sort=False
        ).reindex(index=rows, columns=cols)
        for k in (["s2ns", "ns2s"] + (["delta_pct"] if delta else []))
    }


def _changes_panel(fig, ax, cax, M: np.ndarray, k: str, rows: list, vmax: float) -> None:
    """Draw one panel of :func:`significance_changes_plot`: matrix ``M`` of column ``k`` as a
    heat map with its values written in, its measures, and its colour bar on ``cax``."""
    plt = _plt()
    cmap = plt.get_cmap("YlOrRd" if k != "delta_pct" else "Purples").with_extremes(bad="0.85")
    im = ax.imshow(
        np.ma.masked_invalid(M),
        cmap=cmap,
        aspect="auto",
        vmin=0,
        vmax=max(vmax, 1.0) if k != "delta_pct" else max(float(np.nanmax(M)) if np.isfinite(M).any() else 1.0, 1.0),
    )
    for a, b in zip(*np.nonzero(np.isfinite(M))):
        ax.text(
            b,
            a,
            _changes_cell(M[a, b], k),
            ha="center",
            va="center",
            fontsize=MIN_FONT_PT,
            color=_ink(im.cmap(im.norm(M[a, b]))),
        )
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(rows)
    fig.colorbar(im, cax=cax, label="pairs" if k != "delta_pct" else "delta %")


def _changes_cell(v: float, k: str) -> str:
    """What a cell of :func:`significance_changes_plot` says: a count, or delta as a percentage."""
    return f"{v:.0f}" if k != "delta_pct" else f"{v:.0f}%"


def _changes_layout(grid: dict, rows: list, cols: list, panels: list, title: str) -> dict:
    """Where :func:`significance_changes_plot` draws, in inches: the print ``width`` (column
    width where the cells and the tests' names fit, else text width), the ``cell`` width,
    the height ``rows`` of each grid, the grids' ``left``, each panel's (bottom,
    wrapped heading), the ``tests``' names wrapped to fit a cell upright, the wrapped
    ``title`` and the figure's ``height``."""
    row_h, tick, line = 0.16, 0.1, _lines_in(1)
    label = _text_in("\n".join(map(str, rows)))
    cells = [_changes_cell(v, k) for k in grid for v in grid[k].to_numpy(dtype=np.float64).ravel() if np.isfinite(v)]
    cell_min = max([_text_in(c) + 0.08 for c in cells] + [line + 0.05])
    vmax = max(
        (float(np.nanmax(grid[k].to_numpy(dtype=np.float64))) for k in grid if grid[k].notna().any().any()), default=1.0
    )
    bar = 0.1 + 0.1 + tick + _text_in(f"{max(vmax, 100):.0f}") + 0.08 + _lines_in(1, 9) + 0.05
    fixed = 0.05 + label + tick + bar
    width = COLUMN_WIDTH_IN if fixed + len(cols) * cell_min <= COLUMN_WIDTH_IN else TEXT_WIDTH_IN
    room = width - fixed
    cell = min(0.55, max(cell_min, room / max(len(cols), 1)))
    fit = max(1, int((cell - 0.04) / line + 1e-9))  # lines of a test's name side by side in a cell, upright
    tests = [_wrap_lines(str(c), fit) for c in cols]
    left = 0.05 + label + tick + max(room - len(cols) * cell, 0) / 2
    wrapped = _wrap_in(title, width - 0.1, 10)
    y = 0.05 + tick + _text_in("\n".join(tests))  # the tests' names, upright
    grid_h = max(len(rows) * row_h, _text_in("delta %", 9) + 0.2)  # at least as tall as a colour bar's label
    placed = []
    for _, heading in reversed(panels):
        h = _wrap_in(heading, width - 0.1, 9)
        placed.append((y, h))
        y += grid_h + 0.04 + _lines_in(h.count("\n") + 1, 9) + 0.12
    height = y - 0.12 + 0.05 + _lines_in(wrapped.count("\n") + 1, 10) + 0.05
    return {
        "width": width,
        "cell": cell,
        "rows": grid_h,
        "left": left,
        "panels": placed[::-1],
        "tests": tests,
        "title": wrapped,
        "height": height,
    }


def _wrap_lines(text: str, lines: int, size: float = MIN_FONT_PT) -> str:
    """``text`` wrapped into at most ``lines`` lines, each as short as that allows (a word is
    never split)."""
    width = max(_text_in(w, size) for w in text.split(" "))
    while True:
        wrapped = _wrap_in(text, width, size)
        if wrapped.count("\n") < lines:
            return wrapped
        width += 0.05


# -- Hasse diagram of the weak order -----------------------------------------------------------------


def weak_level_counts(N: int, c: int = 1) -> np.ndarray:
    """Number of runs at each level 0..c N(N+1)/2 of the weak order's Hasse diagram
    (level = sum of g_k (N - k + 1)), without enumerating runs (float64: exact up to 2^53)."""
    counts = np.zeros(c * N * (N + 1) // 2 + 1)
    counts[0] = 1.0
    top = 0
    for k in range(1, N + 1):
        w = N - k + 1
        new = counts.copy()
        for g in range(1, c + 1):
            new[g * w : top + g * w + 1] += counts[: top + 1]
        counts, top = new, top + c * w
    return counts


def hasse_limit(N: int, levels: int = 2) -> str | None:
    """Why every run of the weak order on REL^N cannot be drawn legibly, or None."""
    runs = levels**N
    if runs > HASSE_MAX_RUNS:
        return f"{levels} levels at N={N} make {count_text(runs, levels)} runs"
    c = levels - 1
    covers = len(weak_covers(N, c)[0])
    if covers > HASSE_MAX_COVERS:
        return f"{levels} levels at N={N} make {covers:,} covers"
    return None


def hasse_figure(
    N: int, levels: int = 2, measure=None, *, view: str = "auto", out: str | Path | None = None, stem: str | None = None
) -> Picture:
    """The weak top-heaviness order on REL^N (2021 paper, Figure 1).

    ``view="runs"``: every run a node (its grades, and the measure's value with RB = N
    when ``measure`` is given), covers as edges, rows the diagram's levels (sum of g_k
    (N - k + 1)), colour the number of relevant documents (sum of grades when graded),
    text in black or white to read on it, 8 pt at the saved size. Drawn up to
    :data:`HASSE_MAX_RUNS` runs and :data:`HASSE_MAX_COVERS` covers (binary N <= 6,
    3 levels N <= 3, 4 levels N <= 2), refused beyond with an IrscaleError.
    ``view="levels"``: the number of runs at each level (any N up to
    :data:`HASSE_LEVELS_MAX_N`). ``"auto"``: runs where they can be drawn, else levels."""
    check_choice("view", view, ("auto", "runs", "levels"))
    N = integer("run length N", N, minimum=1)
    levels = integer("levels", levels, minimum=2)
    why = hasse_limit(N, levels)
    if view == "runs" and why is not None:
        raise IrscaleError(
            f"the Hasse diagram of every run is drawn up to {HASSE_MAX_RUNS} runs and "
            f"{HASSE_MAX_COVERS} covers (binary N <= 6, 3 levels N <= 3, 4 levels N <= 2) to stay "
            f"legible; {why}. Use view='levels' (runs per level of the order, any N up to "
            f"{HASSE_LEVELS_MAX_N}), a smaller N, or rank_spacing_plot for the measure's values"
        )
    if view == "levels" and measure is not None:
        raise ArgumentError(
            "view='levels' counts runs per level and shows no measure values; drop measure= or use view='runs'"
        )
    if view == "levels" or why is not None:
        return _hasse_levels(N, levels, out, stem, note=why if view == "auto" else None, measure=measure)
    return _hasse_runs(N, levels, measure, out, stem)


def _hasse_runs(N: int, levels: int, measure, out, stem) -> Picture:
    from matplotlib.collections import LineCollection
    from matplotlib.colors import BoundaryNorm, ListedColormap
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import TextPath

    c = levels - 1
    runs = all_runs(N, c)
    lo, hi = weak_covers(N, c)
    height = weak_level(runs)
    tone = runs.astype(np.int64).sum(axis=1)
    labels, mname = _hasse_labels(runs, measure, N, c)
    rowsets = _hasse_order(runs, lo, hi, height)
    size = 8
    font = FontProperties(family="monospace", size=size)
    with _style():
        text_w = max(TextPath((0, 0), s, prop=font).get_extents().width for s in labels) / 72
    slot, row = text_w + 0.32, 0.36
    widest = max(len(r) for r in rowsets.values())
    H = int(height.max()) + 1
    ax_w, ax_h = widest * slot + 0.1, (H - 1) * row + 0.4
    fig_w, fig_h = ax_w + 1.3, ax_h + 1.1
    pos = _hasse_positions(rowsets, len(runs), slot, row)
    K = int(tone.max()) + 1
    base = _plt().get_cmap("viridis")
    cmap = ListedColormap([base(x) for x in np.linspace(0.0, 0.92, K)])
    norm = BoundaryNorm(np.arange(K + 1) - 0.5, K)
    plt = _plt()
    with _style():
        fig = plt.figure(figsize=(fig_w, fig_h))
        ax = fig.add_axes([0.25 / fig_w, 0.25 / fig_h, ax_w / fig_w, ax_h / fig_h])
        ax.set_xlim(-ax_w / 2, ax_w / 2)
        ax.set_ylim(-0.2, (H - 1) * row + 0.2)
        ax.add_collection(
            LineCollection(
                np.stack([pos[lo], pos[hi]], axis=1),  # type: ignore[arg-type]  # (n, 2, 2) segments (see above)
                colors="0.55",
                linewidths=0.7,
                zorder=1,
            )
        )
        fills, inks = _draw_hasse_nodes(ax, pos, labels, [cmap(norm(t)) for t in tone], size)
        ax.axis("off")
        cax = fig.add_axes([(ax_w + 0.5) / fig_w, 0.25 / fig_h, 0.15 / fig_w, min(ax_h, 3.0) / fig_h])
        sm = plt.cm.ScalarMappable(norm=norm, cmap=cmap)
        cb = fig.colorbar(sm, cax=cax, ticks=range(K))
        cb.set_label("relevant documents" if c == 1 else "sum of grades")
        what = f"; labels: run and {mname} (RB = N)" if mname else ""
        title = (
            f"Weak top-heaviness order on runs of length N = {N}, {levels} relevance levels: "
            f"{len(runs)} runs, {len(lo)} covers (bottom: worst run, top: best){what}"
        )
        ax.set_title(_wrap(title, max(fig_w - 0.3, 4.5), 9), fontsize=9)
    return _finish(
        fig,
        title,
        out,
        stem or _stem("hasse", f"N{N}", f"L{levels}" if levels != 2 else "", mname or ""),
        {
            "positions": pos,
            "labels": labels,
            "covers": np.column_stack([lo, hi]),
            "fill": fills,
            "ink": inks,
            "fontsize": size,
        },
        tight=True,
        caption=f"Every run of length {N} over grades 0..{c}, from the worst (bottom) to the best (top); "
        "an edge joins a run to one it is immediately below in the weak top-heaviness order (a "
        "relevant document added at the end or moved up a rank), runs on one row are at the same "
        "level; the colour is the number of relevant documents"
        + (" (sum of grades)" if c > 1 else "")
        + (f"; each label gives the run and its {mname}." if mname else "."),
    )


def _hasse_labels(runs: np.ndarray, measure, N: int, c: int) -> tuple[list[str], str | None]:
    """Each run's label (its grades, and the measure's value with RB = N when ``measure`` is
    given) and the measure's name (None without one)."""
    labels = ["".join(map(str, r)) for r in runs]
    if measure is None:
        return labels, None
    vals = as_measure(measure, N, c).values(runs)
    return [f"{s} {v:.3g}" for s, v in zip(labels, vals)], _name(measure)


def _hasse_positions(rowsets: dict[int, list[int]], n: int, slot: float, row: float) -> np.ndarray:
    """Each of the ``n`` runs' (x, y) in the diagram: its row's members side by side, ``slot``
    apart and centred, rows ``row`` apart."""
    pos = np.zeros((n, 2))
    for h, members in rowsets.items():
        for k, node in enumerate(members):
            pos[node] = ((k - (len(members) - 1) / 2) * slot, h * row)
    return pos


def _draw_hasse_nodes(ax, pos: np.ndarray, labels: list[str], fills: list, size: int) -> tuple[list, list]:
    """Write each run's label at its position in a box of its fill colour, in the ink that
    reads on it; return the fills and the inks."""
    inks = []
    for i, fc in enumerate(fills):
        inks.append(_ink(fc))
        ax.text(
            pos[i, 0],
            pos[i, 1],
            labels[i],
            ha="center",
            va="center",
            fontsize=size,
            family="monospace",
            color=_ink(fc),
            zorder=3,
            bbox={"boxstyle": "round,pad=0.3", "fc": fc, "ec": "0.25", "lw": 0.5},
        )
    return fills, inks


def _hasse_order(runs, lo, hi, height) -> dict[int, list[int]]:
    """Nodes of each level, ordered to cross few edges: first by the run read as a
    number (best first), then barycentre sweeps kept only where they cross fewer edges."""
    N = runs.shape[1]
    c = int(runs.max()) if runs.size else 1
    idx = runs.astype(np.int64) @ positional_weights(N, max(c, 1))
    rowsets = {
        int(h): [int(x) for x in np.flatnonzero(height == h)[np.argsort(-idx[height == h], kind="stable")]]
        for h in np.unique(height)
    }

    def xs(rs):
        p = np.zeros(len(runs))
        for members in rs.values():
            for k, node in enumerate(members):
                p[node] = k - (len(members) - 1) / 2
        return p

    def crossings(rs):
        p = xs(rs)
        a, b = p[lo], p[hi]
        ha, hb = height[lo], height[hi]
        same = (ha[:, None] == ha[None, :]) & (hb[:, None] == hb[None, :])
        cross = ((a[:, None] - a[None, :]) * (b[:, None] - b[None, :]) < 0) & same
        return int(np.triu(cross, 1).sum())

    best, best_x = rowsets, crossings(rowsets)
    cur = {h: list(v) for h, v in rowsets.items()}
    for sweep in range(6):
        p = xs(cur)
        up = sweep % 2 == 0
        levels_ = sorted(cur) if up else sorted(cur, reverse=True)
        for h in levels_:
            nb = []
            for node in cur[h]:
                others = lo[hi == node] if up else hi[lo == node]
                nb.append(p[others].mean() if len(others) else p[node])
            cur[h] = [cur[h][k] for k in np.argsort(nb, kind="stable")]
            p = xs(cur)
        x = crossings(cur)
        if x < best_x:
            best, best_x = {h: list(v) for h, v in cur.items()}, x
    return best


def _hasse_levels(N: int, levels: int, out, stem, note: str | None, measure) -> Picture:
    if N > HASSE_LEVELS_MAX_N:
        raise IrscaleError(f"runs per level of the weak order are counted up to N={HASSE_LEVELS_MAX_N}, not N={N}")
    c = levels - 1
    counts = weak_level_counts(N, c)
    lv = np.arange(len(counts))
    plt = _plt()
    title = (
        f"Weak top-heaviness order on runs of length N = {N}, {levels} relevance levels: number of runs at "
        f"each of its {len(counts)} levels ({count_text((c + 1) ** N, c + 1)} runs, widest level "
        f"{count_text(int(counts.max()))})"
    )
    if note:
        title += (
            f"; too many to draw each run ({note}; drawn up to {HASSE_MAX_RUNS} runs and {HASSE_MAX_COVERS} covers)"
        )
        if measure is not None:
            title += f", so {_name(measure)} is not shown"
    with _style():
        fig, ax = plt.subplots(figsize=(6.4, 3.8), layout="constrained")
        ax.stairs(
            counts,
            np.arange(len(lv) + 1) - 0.5,
            fill=True,
            color="C0",
            baseline=0.5 if counts.max() / max(counts.min(), 1) > 1e3 else 0,
        )
        if counts.max() / max(counts.min(), 1) > 1e3:
            ax.set_yscale("log")
        ax.set_xlabel("level: sum of g_k (N - k + 1), worst run (0) to best")
        ax.set_ylabel("runs at the level")
        ax.set_xlim(-0.5, len(lv) - 0.5)
        ax.set_title(_wrap(title, 6.2, 9))
    return _finish(
        fig,
        title,
        out,
        stem or _stem("hasse_levels", f"N{N}", f"L{levels}" if levels != 2 else ""),
        {"levels": lv, "counts": counts},
        caption=f"The number of runs of length {N} over grades 0..{c} at each level of the weak "
        "top-heaviness order's Hasse diagram (level: sum of g_k (N - k + 1)), counted without "
        "enumerating the runs.",
    )


def hasse_diagram(N: int, out: str | Path, measure=None, levels: int = 2) -> list[Path]:
    """The weak top-heaviness order on REL^N (:func:`hasse_figure`, ``view="auto"``:
    every run where legible, runs per level beyond). Returns the PNG and SVG written."""
    stem = f"hasse_N{N}" + (
        "_" + str(_name(measure)).replace("(", "").replace(")", "").replace("=", "").replace(".", "")
        if measure is not None
        else ""
    )
    return list(hasse_figure(N, levels, measure, view="auto", out=out, stem=stem).files)


# -- balancing index -----------------------------------------------------------------------------------


def balancing_plot(measures: Sequence, ns: Sequence[int], out: str | Path) -> list[Path]:
    """Balancing index B(n) against the run length n (2015 paper, Figure 1a)."""
    plt = _plt()
    ns = list(ns)
    with _style():
        fig, ax = plt.subplots(figsize=(6, 4.5), layout="constrained")
        for m in measures:
            ax.plot(ns, [balancing_index(m, n) for n in ns], marker=".", label=str(_name(m)))
        ax.plot(ns, ns, "k:", linewidth=0.8, label="b = n")
        ax.set_xlabel("run length n")
        ax.set_ylabel("balancing index B(n)")
        ax.legend(fontsize=8)
        ax.set_title("Balancing index (top-heaviness) against the run length")
    stem = "balancing_" + "_".join(
        str(_name(m)).replace("(", "").replace(")", "").replace("=", "").replace(".", "") for m in measures
    )
    return list(_finish(fig, "balancing index", Path(out), stem).files)


__all__ = [
    "COLUMN_WIDTH_IN",
    "EXACT_LIMIT",
    "HASSE_MAX_COVERS",
    "HASSE_MAX_RUNS",
    "MIN_FONT_PT",
    "TEXT_WIDTH_IN",
    "Picture",
    "Spacing",
    "balancing_plot",
    "contrast",
    "hasse_diagram",
    "hasse_figure",
    "hasse_limit",
    "means_panels",
    "means_scatter",
    "measure_slugs",
    "rank_spacing_plot",
    "sample_runs",
    "significance_changes_plot",
    "spacing_data",
    "spacing_plot",
    "study_figures",
    "svg",
    "swapped_pairs",
    "tau_heatmap",
    "tau_range",
    "text_overlaps",
    "weak_level_counts",
]


def study_figures(
    study, spacing: bool = False, samples: int = 1000, others: bool = True, pdf: bool = True
) -> list[Picture]:
    r"""The figures of a study's report, as :class:`Picture` objects for
    :func:`irscale.report.files.write_report` (which embeds them in the HTML and writes each
    as ``<stem>_N<N>.svg`` and, with ``pdf``, ``.pdf``): Kendall's tau between the measures
    and between their ranked versions (two heatmaps on one colour range, each with its
    colour bar), the significance changes per measure and test, every measure's system
    means original vs ranked in one figure (when the study has means) and, with
    ``spacing=True``, the spacing of every measure's values at N over all runs from its
    rank map (the paper's Figures 3-5; quantile view, ``samples`` seeded runs: about 5 s
    for AP at N = 30, so not drawn by default); ``others=False``: the spacing plots only.
    Each figure is laid out for its print width (:attr:`Picture.print_width_in`,
    :attr:`Picture.latex_width`): compare's eleven measures and tests need ``\textwidth``, a
    few measures fit ``\columnwidth``. What a figure shows is also in :attr:`Picture.parts`,
    each for ``\columnwidth`` (written as ``figure<k>_<part stem>_N<N>``): the means figure's
    and (beyond two measures) the ASL curves' panels one measure each (``means_<slug>``,
    ``asl_curves_<slug>``, :func:`measure_slugs`); a heatmap too wide for a column in blocks
    of its columns (``tau_original_part<k>``, :func:`tau_column_parts`) and the significance
    changes in groups of tests (``significance_changes_part<k>``, :func:`changes_test_parts`)."""
    from irscale.measures import parse_measure

    names = {parse_measure(m).label: m for m in study.measures}  # the study's frames use short labels
    canonical = lambda df, cols: df.assign(**{c: df[c].map(lambda v: names.get(v, v)) for c in cols})  # noqa: E731
    jobs: list[Callable[[], Picture]] = []
    light: set[int] = set()  # each job draws one figure (light: a heatmap), side by side in forked processes
    if not others:
        study = dataclasses.replace(study, table4=None, changes=None, means=None)
    parts: dict[int, list[int]] = {}  # a figure's job: the jobs of its parts, each for \columnwidth (light)

    def add_parts(pieces: list) -> None:  # the parts of the figure just added
        parts[len(jobs) - 1] = list(range(len(jobs), len(jobs) + len(pieces)))
        for piece in pieces:
            light.add(len(jobs))
            jobs.append(piece)

    if study.table4 is not None and len(study.table4):
        table4 = canonical(study.table4, ["measure_1", "measure_2"])
        low = tau_range(*(_matrix(table4, None, v)[0] for v in ("tau", "tau_ranked")))  # one range for both
        for value, what, stem in (
            ("tau", "the measures", "tau_original"),
            ("tau_ranked", "their ranked versions", "tau_ranked"),
        ):
            light.add(len(jobs))
            draw = functools.partial(
                tau_heatmap,
                table4,
                value=value,
                title=f"Kendall's tau between {what}, N = {study.N}",
                vmin=low,
                pdf=pdf,
            )
            jobs.append(functools.partial(draw, stem=stem))
            blocks = tau_column_parts(table4, value=value)
            add_parts(
                [
                    functools.partial(
                        draw,
                        columns=cols,
                        stem=f"{stem}_part{k}",
                        title=f"Kendall's tau between {what}, N = {study.N} (part {k} of {len(blocks)})",
                    )
                    for k, cols in enumerate(blocks, 1)
                ]
            )
    if study.changes is not None and len(study.changes):
        changes = canonical(study.changes, ["measure"])
        jobs.append(lambda: significance_changes_plot(changes, pdf=pdf))
        groups = changes_test_parts(changes)
        top = changes_vmax(changes)  # the whole figure's colour scale, for every part
        add_parts(
            [
                functools.partial(
                    significance_changes_plot,
                    changes[changes["test"].isin(tests)],
                    vmax=top,
                    title="Significance decisions changed by ranking, per measure and test"
                    f" (part {k} of {len(groups)})",
                    stem=f"significance_changes_part{k}",
                    pdf=pdf,
                )
                for k, tests in enumerate(groups, 1)
            ]
        )
    means = getattr(study, "means", None)
    if means is not None and len(means):
        jobs.append(lambda: means_panels(means, title=f"System means, original against ranked, N = {study.N}", pdf=pdf))
        measures = list(dict.fromkeys(means["measure"]))
        slugs = measure_slugs(measures)
        add_parts(
            [
                functools.partial(
                    _means_part, m, *_panel_means(means, m), MEANS_MAX_LINES, f"means_{slugs[m]}", None, pdf
                )
                for m in measures
            ]
        )
    asl = getattr(study, "asl", None)
    if others and asl is not None and len(asl):
        curves = canonical(asl, ["measure"])
        alpha = float(study.provenance.get("alpha", 0.05))
        heading = f"Discriminative power: ASL curves, N = {study.N}"
        jobs.append(lambda: asl_curves_plot(curves, alpha=alpha, title=heading, pdf=pdf))
        measures = list(dict.fromkeys(curves["measure"]))
        if len(measures) > 2:  # more than a column holds: each measure's panel alone, for \columnwidth
            slugs = measure_slugs(measures)
            add_parts(
                [
                    functools.partial(
                        asl_curves_plot,
                        curves[curves["measure"] == m],
                        alpha=alpha,
                        title=f"{heading}, {m}",
                        stem=f"asl_curves_{slugs[m]}",
                        pdf=pdf,
                    )
                    for m in measures
                ]
            )
    if spacing:
        levels = max((v.get("levels", 2) for v in study.provenance.get("rank_maps", {}).values()), default=2)
        from fractions import Fraction

        from irscale.report.study import _without_cutoff

        grades = study.provenance.get("grade_values")  # real-valued grades: each measure as computed on them
        scale = None if grades is None else tuple(map(Fraction, grades))
        written = [_without_cutoff(m, study.N) for m in study.measures]

        def spacing_figure() -> Picture:  # the figure, and (laid out for the page) each measure's panel alone
            ms = [parse_measure(m).for_grades(scale) for m in written]
            draw = functools.partial(rank_spacing_plot, view="quantile", samples=samples, pdf=pdf)
            whole = draw(ms, [study.N], levels, names=written, stem="spacing")
            if whole.print_width_in != TEXT_WIDTH_IN:
                return whole
            slugs = measure_slugs(written)
            pieces = tuple(
                draw([m], [study.N], levels, names=[w], stem=f"spacing_{slugs[w]}", data=whole.data)
                for m, w in zip(ms, written)
            )  # (the spacing of each measure computed once, for the figure)
            return dataclasses.replace(whole, parts=pieces)

        jobs.append(spacing_figure)
    from irscale.parallel import can_fork, parallel_imap

    _plt()  # imported once, before any fork
    # two workers take the jobs two at a time in order: pair a heavy figure (the changes, the means, the spacing)
    # with a light one (a heatmap, a panel of the means) so that both finish together
    heavy = [k for k in range(len(jobs)) if k not in light]
    lights = sorted(light)
    order = [k for pair in zip(heavy, lights) for k in pair] + heavy[len(lights) :] + lights[len(heavy) :]
    # never in threads: pyplot's rc_context is process-wide state, which two threads would interleave
    drawn = list(
        parallel_imap(lambda k: jobs[k](), order, workers=min(2, len(jobs)) if can_fork() else 1, processes=True)
    )
    by_job = dict(zip(order, drawn))  # (taken whole: the pool is shut down here, not when the iterator is collected)
    of_part = {k for ks in parts.values() for k in ks}
    return [
        dataclasses.replace(by_job[k], parts=tuple(by_job[j] for j in parts[k])) if k in parts else by_job[k]
        for k in range(len(jobs))
        if k not in of_part
    ]
