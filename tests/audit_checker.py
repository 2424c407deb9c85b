"""An independent checker of the tables ``irscale compare --out DIR`` writes (issue 23, item 11).

It reads the per-topic scores the study rests on (``scores_N<N>.csv``) and the provenance
(``provenance_N<N>.yaml``), re-derives every number of every CSV and JSON table from them
with scipy, statsmodels, numpy and pandas, and reports each disagreement with the file, the
column, the row, irscale's value and its own. The measure-free view (the weak top-heaviness
order of the runs themselves) and a sanity check of the scores file are re-derived from the
raw qrels and runs, read here with a reader of its own.

Independence: nothing here imports irscale.stats, irscale.effects, irscale.study,
irscale.report or irscale.measurefree (nor any other irscale module). Where irscale documents
a convention that a plain library call does not follow, it is implemented here from the
documentation (docs/guide.md and the docstrings of those modules), in this file's own code,
and a comment says so at each place.

The randomised tests (permutation, randomised Tukey HSD, bootstrap) are re-derived from
their documented draws (seed, resamples, the stream of each draw), pair by pair in plain
numpy, with a tie tolerance of its own (1e-9 of the pair's scale).

Tolerances: counts, flags, labels, ranks and display strings exactly; means 1e-12 relative
(the same sums in another order); statistics from another library 1e-9 relative; bootstrap
intervals to the documented 1e-12 relative (plus 1e-14 of the pair's largest |score|, float
rounding at the scores' size, for an end near 0; ``Audit.inexact_summary`` counts the ends that
are not bit-identical and says why: scipy's vectorised BCa sums the jackknife in another
order for a batch of rows than for one).

Not re-derived (``Audit.notes`` says so where it applies): the could-flip flags of the
rank-based tests on bounded ranked columns (their bound needs the exact-value ids, which the
scores file does not carry; checked for range and consistency, and the sign test's with
ties guessed from equal bounds); phi itself beyond P's closed form (it needs the rank maps:
the scores file's ranked columns are checked to order the runs as their values do); the
provenance's engine details (sizes other than P's, methods, times).
"""

from __future__ import annotations

import gzip
import itertools
import json
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats as sps

TESTS = ("sign", "ranksum", "signrank", "ttest", "anova1", "kruskal", "anova2", "friedman")
TEST_NAMES = {
    "sign": "Sign Test",
    "ranksum": "Wilcoxon Rank Sum Test",
    "signrank": "Wilcoxon Signed Rank Test",
    "ttest": "Student's t Test",
    "anova1": "One-way ANOVA",
    "kruskal": "Kruskal-Wallis Test",
    "anova2": "Two-way ANOVA",
    "friedman": "Friedman Test",
}
RANDOMISED = ("permutation", "rtukey", "bootstrap")
TEST_NAMES |= {
    "permutation": "Paired Randomisation Test",
    "rtukey": "Randomised Tukey HSD",
    "bootstrap": "Paired Bootstrap Test",
}
RESAMPLES = {"permutation": 100_000, "rtukey": 10_000, "bootstrap": 10_000}  # the documented defaults
PAIRWISE = ("sign", "ranksum", "signrank", "ttest")
MULTI = ("anova1", "kruskal", "anova2", "friedman")
FAMILYWISE = MULTI + ("rtukey",)  # p-values adjusted over all pairs already: no correction
# the comparisons with baselines' columns of each test (``p_value_ttest``, ...), in file order
PAIR_FIELDS = ("p_value", "p_adjusted", "significant", "meaningful", "rests_on_incomparable", "could_flip")
ORDINAL_TESTS = ("sign", "ranksum", "kruskal", "friedman")  # use only the order of the scores
WITHIN_TOPIC = ("sign", "friedman")  # compare two systems topic by topic only
RB_DEPENDENT = {"R", "AP", "nDCG", "Rprec", "F", "bpref"}  # depending on the recall base (guide)
GRADED_MEASURES = {"nDCG", "DCG", "RBP", "ERR", "gP", "gR"}  # grade as gain (guide, "Relevance and topics")

STAT_RTOL = 1e-9  # statistics computed by another library / in another order
MEAN_RTOL = 1e-12  # means: the same sums in another order


# -- the study to audit -----------------------------------------------------------------------------


@dataclass
class StudySpec:
    """One ``irscale compare`` run: its inputs and what its tables must name."""

    name: str
    qrels: Path
    runs: list  # run files, in the order given to the CLI
    N: int
    measures: list  # as given to -m
    full_names: list  # the name each measure must carry in every table (cutoff, relevance protocol)
    relevance: str | None = None
    baselines: list = field(default_factory=list)
    correction: str = "none"
    approx: float | None = None
    mid: bool = True
    tests: list = field(default_factory=lambda: list(TESTS))  # as given to -t, in order
    seed: int = 0
    judged_only: bool = False  # -J: the runs condensed to their judged documents

    def argv(self, out) -> list[str]:
        a = ["compare", str(self.qrels), *map(str, self.runs), "-N", str(self.N)]
        if list(self.tests) != list(TESTS):
            for t in self.tests:
                a += ["-t", t]
        if self.seed:
            a += ["--seed", str(self.seed)]
        for m in self.measures:
            a += ["-m", m]
        for b in self.baselines:
            a += ["-b", b]
        if self.relevance:
            a += ["--relevance", self.relevance]
        if self.correction != "none":
            a += ["--correction", self.correction]
        if self.approx is not None:
            a += ["--approx", repr(self.approx)]
        if not self.mid:
            a.append("--no-mid")
        if self.judged_only:
            a.append("--judged-only")
        return a + [
            "--no-figures",
            "--out",
            str(out),
        ]  # the audit reads tables; tests/test_report_figures.py the figures


def base_name(measure: str) -> str:
    return re.split(r"[(@]", measure, maxsplit=1)[0]


# -- reading what irscale wrote ---------------------------------------------------------------------


def read_csv_text(path: Path) -> pd.DataFrame:
    """A CSV file as text cells (numbers parsed later with Python's float(), which reads
    the shortest repr pandas writes back to the same double; pandas' own fast float parser
    may be one ulp off)."""
    return pd.read_csv(path, dtype=str, keep_default_na=False, na_filter=False)


def fnum(text: str) -> float:
    return float("nan") if text == "" else float(text)


def fbool(text: str) -> bool | None:
    return {"True": True, "False": False, "": None}[text]


def read_yaml(path: Path) -> dict:
    import yaml

    return yaml.safe_load(path.read_text(encoding="utf-8"))


# -- number formatting as the tables document it ----------------------------------------------------


def display(x: float, kind: str) -> str:
    """The text a table shows (irscale.report.study's documented convention, written here
    anew): 4 decimals, or three significant digits for a nonzero value that would read
    0.0000; percentages with 2 and '%'; signed percentages with their sign;
    shares as percentages; p-values below 0.0001 as '<0.0001'; 'sci' two significant
    digits; a rounded negative zero without its sign; infinities as ∞; missing empty."""
    if x != x:
        return ""
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    if kind == "sci":
        return f"{x:.2g}"
    if kind == "p" and 0 <= x < 0.00005:
        return "<0.0001"
    if kind == "share":
        x, kind = 100 * x, "pct"
    if kind == "float" and x != 0 and abs(x) < 5e-5:  # would read 0.0000: three significant digits
        return f"{x:.3g}"
    text = {"pct": f"{x:.2f}%", "signed_pct": f"{x:+.2f}%"}.get(kind, f"{x:.4f}")
    if re.fullmatch(r"-0\.0+%?", text):
        text = text[1:]
    return text


def tiny(x: float) -> bool:
    """A nonzero finite value that would read 0.0000."""
    return x == x and not math.isinf(x) and x != 0 and abs(x) < 5e-5


def significant(x: float) -> str:
    """Three significant digits, a negative zero without its sign (a value of a row whose
    value or interval end is tiny: the three read in one format)."""
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    text = f"{x:.3g}"
    return "0" if text == "-0" else text


# (value, interval low, interval high) columns of a table, shown in one format
TRIPLES = {
    "means": [(f"mean_{s}", f"ci_low_{s}", f"ci_high_{s}") for s in ("original", "ranked")],
    "pairs": [("diff", "ci_low", "ci_high")],
}

KINDS = {  # column -> display kind (the tables' column descriptions); default 'float'
    "s2ns_pct": "pct",
    "ns2s_pct": "pct",
    "p_value": "p",
    "p_adjusted": "p",
    "sign_p": "p",
    "incomparable_share": "share",
    "incomparable_mass": "share",
    "halfwidth": "sci",
    "halfwidth_max": "sci",
    "halfwidth_original": "sci",
    "halfwidth_ranked": "sci",
    "share": "share",  # discriminative power
    "share_ranked": "share",
    "asl_median": "p",
    "asl_median_ranked": "p",
}
NO_DISPLAY = {"rank_original", "rank_ranked"}  # float columns shown as integers (no *_display)


def kind_of(table: str, column: str) -> str:
    if column == "delta_pct":
        return "signed_pct" if table == "table4" else "pct"
    if table == "pairs":  # a test's column: p_value_ttest reads as p_value
        column = next((f for f in PAIR_FIELDS if column.startswith(f + "_")), column)
    return KINDS.get(column, "float")


# -- the raw data: an independent reader ------------------------------------------------------------


def _open_text(path: Path):
    raw = Path(path).read_bytes()
    if raw[:2] == b"\x1f\x8b":  # gzip, detected from the content as irscale does
        raw = gzip.decompress(raw)
    return raw.decode("utf-8")


def read_qrels(path: Path) -> pd.DataFrame:
    """qid, docno, grade (the level: the integer grade itself; for real-valued grades
    0 for grade 0, 1..k for the distinct positive grades in increasing order, -1 for a
    negative one, as the guide's "Real-valued and LLM grades" says) and value (the grade)."""
    import io
    from fractions import Fraction

    df = pd.read_csv(
        io.StringIO(_open_text(path)),
        sep=r"\s+",
        header=None,
        names=["qid", "iter", "docno", "grade"],
        dtype=str,
    )
    exact = {t: Fraction(t) for t in set(df["grade"])}
    positive = sorted({v for v in exact.values() if v > 0})
    if all(v.denominator == 1 for v in positive):  # integer grades (a negative non-integer one is -1)
        level = {t: int(v) if v.denominator == 1 else -1 for t, v in exact.items()}
    else:
        rank = {v: k for k, v in enumerate(positive, 1)}
        level = {t: rank.get(v, 0 if v == 0 else -1) for t, v in exact.items()}
    return pd.DataFrame(
        {
            "qid": df["qid"],
            "docno": df["docno"],
            "grade": df["grade"].map(level).astype(np.int64),
            "value": df["grade"].map(lambda t: float(exact[t])),
        }
    )


def level_values(qrels: pd.DataFrame, c: int) -> np.ndarray:
    """The grade of each level 0..c (for integer grades, the level itself)."""
    out = np.arange(c + 1, dtype=np.float64)
    pos = qrels[qrels["grade"] > 0]
    out[pos["grade"].to_numpy()] = pos["value"].to_numpy()
    return out


def threshold(measure: str) -> float:
    """A measure's relevance threshold: its ``rel=`` (a decimal or a fraction), else 1."""
    from fractions import Fraction

    m = re.search(r"rel=([0-9./]+)", measure)
    return float(Fraction(m.group(1))) if m else 1.0


_RUN_CACHE: dict = {}


def read_run(path: Path) -> tuple[str, pd.DataFrame]:
    """(tag, frame qid/docno/score) of a TREC run file; cached per path."""
    import io

    key = str(path)
    if key not in _RUN_CACHE:
        df = pd.read_csv(
            io.StringIO(_open_text(path)),
            sep=r"\s+",
            header=None,
            names=["qid", "q0", "docno", "rank", "score", "tag"],
            dtype=str,
        )
        tags = df["tag"].unique()
        assert len(tags) == 1, f"{path}: several tags {tags[:3]}"
        _RUN_CACHE[key] = (
            str(tags[0]),
            pd.DataFrame({"qid": df["qid"], "docno": df["docno"], "score": df["score"].astype(np.float64)}),
        )
    return _RUN_CACHE[key]


def run_files(runs) -> list[Path]:
    out = []
    for r in runs:
        r = Path(r)
        out += sorted(p for p in r.iterdir() if p.is_file()) if r.is_dir() else [r]
    return out


def grade_matrix(spec: StudySpec, systems, topics) -> tuple[np.ndarray, pd.DataFrame, int]:
    """(S, T, N) judged grades of each system's first N documents per topic (score
    descending, docno descending byte-wise, as trec_eval; missing ranks and unjudged or
    negative grades 0), the qrels (binarised under the lenient protocol) and the top grade c.
    Judged only (-J): the documents absent from the qrels or judged below 0 are dropped from
    each ranking before its first N are taken (trec_eval's -J, as its form_res_rels.c does)."""
    qrels = read_qrels(spec.qrels)
    raw = {(q, d): g for q, d, g in zip(qrels["qid"], qrels["docno"], qrels["grade"])}  # before binarising
    if spec.relevance == "lenient":
        binary = (qrels["grade"] >= 1).astype(np.int64)
        qrels = qrels.assign(grade=binary, value=binary.astype(np.float64))
    c = max(int(qrels["grade"].max()), 1)
    judged = {(q, d): g for q, d, g in zip(qrels["qid"], qrels["docno"], qrels["grade"])}
    tindex = {t: k for k, t in enumerate(topics)}
    by_tag = {}
    for f in run_files(spec.runs):
        tag, df = read_run(f)
        by_tag[tag] = df
    G = np.zeros((len(systems), len(topics), spec.N), dtype=np.int16)
    for s, name in enumerate(systems):
        df = by_tag[name]
        df = df[df["qid"].isin(tindex)]
        df = df.sort_values(["qid", "score", "docno"], ascending=[True, False, False], kind="mergesort")
        if spec.judged_only:
            df = df[np.array([raw.get(k, -1) >= 0 for k in zip(df["qid"], df["docno"])], dtype=bool)]
        pos = df.groupby("qid", sort=False).cumcount().to_numpy()
        keep = pos < spec.N
        df, pos = df[keep], pos[keep]
        g = np.array([judged.get(k, 0) for k in zip(df["qid"], df["docno"])], dtype=np.int64)
        G[s, df["qid"].map(tindex).to_numpy(), pos] = np.clip(g, 0, c)
    return G, qrels, c


def weak_codes(G: np.ndarray) -> np.ndarray:
    """(pairs, T) weak top-heaviness comparison of every pair i < j of runs (+1 above, -1
    below, 0 the same grades at every rank, 2 incomparable): a >= b iff for every grade
    g >= 1 and rank k, a has at least as many grades >= g in its top k as b (measurefree's
    documented order, computed here anew)."""
    S, T, N = G.shape
    top = int(G.max(initial=0))
    C = (
        np.stack([np.cumsum(G >= g, axis=-1) for g in range(1, top + 1)], axis=2)
        if top
        else np.zeros((S, T, 1, N), dtype=np.int64)
    )
    i, j = np.triu_indices(S, k=1)
    out = np.empty((len(i), T), dtype=np.int8)
    for p, (a, b) in enumerate(zip(i, j)):
        d = C[a] - C[b]
        ge, le = (d >= 0).all(axis=(1, 2)), (d <= 0).all(axis=(1, 2))
        same = (G[a] == G[b]).all(axis=1)
        out[p] = np.where(same, 0, np.where(ge, 1, np.where(le, -1, 2)))
    return out


# -- the measures, for the sanity check of the scores file ------------------------------------------


def measure_scores(measure: str, G: np.ndarray, qrels: pd.DataFrame, topics, c: int, binary: bool) -> np.ndarray:
    """(S, T) scores of ``measure`` at N = G's depth (levels) from the definitions in
    docs/guide.md ('Measures'; real-valued grades: 'Real-valued and LLM grades');
    ``binary``: relevance grade >= the measure's rel (1 by default), gain 1 (binary
    measure, or lenient)."""
    base = base_name(measure)
    N = G.shape[-1]
    values = level_values(qrels, c)
    t = threshold(measure)
    rel = values[G] >= t
    g = rel.astype(np.float64) if binary else values[G]
    top = 1 if binary else values[c]
    ranks = np.arange(1, N + 1, dtype=np.float64)
    qg = qrels[qrels["value"] >= t] if binary else qrels[qrels["grade"] > 0]
    if base == "P":
        return rel.sum(axis=-1) / N
    if base == "AP":
        RB = np.array([(qg["qid"] == topic).sum() for topic in topics], dtype=np.float64)
        prec = np.cumsum(rel, axis=-1) / ranks
        s = (prec * rel).sum(axis=-1)
        return np.where(RB > 0, s / np.where(RB > 0, RB, 1), 0.0)
    if base == "RBP":
        p = float(re.search(r"p=([0-9./]+)", measure).group(1))
        return (1 - p) * (g / top * p ** (ranks - 1)).sum(axis=-1)
    if base == "nDCG":
        disc = 1 / np.log2(ranks + 1)
        dcg = (g * disc).sum(axis=-1)
        ideal = []
        for topic in topics:
            gr = np.sort(qg.loc[qg["qid"] == topic, "value"].to_numpy())[::-1][:N].astype(np.float64)
            if binary:
                gr = np.ones_like(gr)
            ideal.append((gr * disc[: len(gr)]).sum())
        ideal = np.array(ideal)
        return np.where(ideal > 0, dcg / np.where(ideal > 0, ideal, 1), 0.0)
    if base == "ERR":
        R = 2.0 ** (g - top) - 2.0 ** (-top)
        stay = np.cumprod(1 - R, axis=-1)
        before = np.concatenate([np.ones(stay.shape[:-1] + (1,)), stay[..., :-1]], axis=-1)
        return (R * before / ranks).sum(axis=-1)
    raise KeyError(base)


# -- statistics, re-derived ---------------------------------------------------------------------------


class SnappedMean:
    """irscale's documented bootstrap statistic (irscale.effects.SnappedMean), written anew:
    np.mean rounded to 12 decimals below the order of magnitude of ``scale``:
    np.round(mean, 12 - floor(log10(scale))) (12 decimals for scale 1)."""

    def __init__(self, scale: float):
        scale = float(scale) if scale > 0 else 1.0
        self.decimals = 12 - math.floor(math.log10(scale))

    def __call__(self, x, axis=-1):
        return np.round(np.mean(x, axis=axis), self.decimals)


def unit(scale: float) -> float:
    """The power of two at or above a row's own scale (its largest |score|), 1 for 0: the
    documented exact rescaling of every row before the bootstrap."""
    return 2.0 ** math.ceil(math.log2(scale)) if scale > 0 else 1.0


CI_RTOL = 1e-12  # irscale documents its intervals as the single-row call's "to 1e-12 relative"
CI_FLOOR = 1e-14  # plus float rounding at the scores' size, for an end near 0 (check_ci)


def bca(x: np.ndarray, own: float, boot: dict) -> tuple[float, float]:
    """The documented BCa interval of the mean of x (topics) on its own scale: u times
    scipy.stats.bootstrap((x / u,), SnappedMean(1.0), BCa, a fresh default_rng(seed)), u the
    power of two at or above ``own`` (the row's own largest |score|: a system's, or a pair's
    for their differences); constant x (sample sd of x / u at most 1e-9, the documented
    float-noise rule) gives [mean, mean]."""
    u = unit(own)
    y = x / u
    if y.std(ddof=1) <= 1e-9:
        m = float(x.mean())
        return m, m
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = sps.bootstrap(
            (y,),
            SnappedMean(1.0),
            n_resamples=int(boot["n_resamples"]),
            vectorized=True,
            axis=-1,
            confidence_level=float(boot["confidence"]),
            method="BCa",
            rng=np.random.default_rng(int(boot["seed"])),
        )
    lo, hi = res.confidence_interval
    return float(lo) * u, float(hi) * u


def bca_batch(x: np.ndarray, own: float, boot: dict) -> tuple[float, float]:
    """Diagnosis only: the same interval computed as row 0 of a two-row batch (scipy's
    vectorised bootstrap sums BCa's jackknife terms along a strided axis when it has several
    rows, pairwise for one vector, so the acceleration differs in its last bits)."""
    import warnings

    u = unit(own)
    y = x / u
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = sps.bootstrap(
            (np.stack([y, y[::-1]]),),
            SnappedMean(1.0),
            n_resamples=int(boot["n_resamples"]),
            vectorized=True,
            axis=-1,
            confidence_level=float(boot["confidence"]),
            method="BCa",
            rng=np.random.default_rng(int(boot["seed"])),
        )
    return float(res.confidence_interval.low[0]) * u, float(res.confidence_interval.high[0]) * u


def round8(x):
    """Means rounded to 8 decimals before ranking systems (the paper's footnote 9, recorded
    as the provenance's means_rounded_to)."""
    return np.round(x, 8)


def tau_b(a, b) -> float:
    return float(sps.kendalltau(a, b).statistic)


def tau_ap(truth, estimate) -> float:
    """Yilmaz, Aslam & Robertson's AP correlation of the ranking by ``estimate`` against
    that by ``truth`` (higher is better), ties broken by system index (irscale's documented
    convention): 2/(n-1) sum_{i=2..n} C(i)/(i-1) - 1, C(i) the systems above the i-th of the
    estimate's ranking in both rankings."""
    n = len(truth)
    if n < 2:
        return 1.0
    est = sorted(range(n), key=lambda k: (-estimate[k], k))
    tru = sorted(range(n), key=lambda k: (-truth[k], k))
    pos = {k: r for r, k in enumerate(tru)}
    total = 0.0
    for i in range(1, n):
        total += sum(1 for k in est[:i] if pos[k] < pos[est[i]]) / i
    return 2 * total / (n - 1) - 1


def grid(d: np.ndarray, scale: float) -> np.ndarray:
    """|d| on irscale's documented tie grid: round(|d| / scale, 9), scale the largest |score|
    of the matrix (float noise must not break ties of, e.g., multiples of 1/N)."""
    return np.round(np.abs(d) / scale, 9)


def matrix_scale(X: np.ndarray) -> float:
    return float(np.nanmax(np.abs(X))) or 1.0


_BINOM: dict = {}


def sign_p(k: int, n: int) -> float:
    if n == 0:
        return 1.0  # no nonzero difference: no evidence (zero differences are dropped)
    if (k, n) not in _BINOM:
        _BINOM[k, n] = float(sps.binomtest(int(k), int(n), 0.5).pvalue)
    return _BINOM[k, n]


def signrank_p(d: np.ndarray, scale: float) -> np.ndarray:
    """Wilcoxon signed-rank p-values of the columns of d (topics x pairs): zero
    differences dropped exactly, |d| ranked on the 1e-9 grid (irscale's convention), normal
    approximation with tie-corrected variance and continuity correction, via scipy's
    wilcoxon on the signed grid values; a nonzero difference whose grid value is 0 (below
    5e-10 of the scale) keeps its rank there, so such a column is computed by hand."""
    g = np.sign(d) * grid(d, scale)
    out = np.ones(d.shape[1])
    nz = (d != 0).sum(axis=0)
    ok = nz > 0
    special = ((d != 0) & (g == 0)).any(axis=0)
    use = ok & ~special
    if use.any():
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = sps.wilcoxon(g[:, use], axis=0, zero_method="wilcox", correction=True, method="approx")
        out[use] = r.pvalue
    for k in np.flatnonzero(ok & special):
        col = d[:, k][d[:, k] != 0]
        gg = grid(col, scale)
        rk = sps.rankdata(gg)
        n = len(col)
        wp = rk[col > 0].sum()
        _, counts = np.unique(gg, return_counts=True)
        var = n * (n + 1) * (2 * n + 1) / 24 - (counts**3 - counts).sum() / 48
        dev = wp - n * (n + 1) / 4
        out[k] = 1.0 if var <= 0 else 2 * sps.norm.sf(abs((dev - 0.5 * np.sign(dev)) / math.sqrt(var)))
    return out


def ranksum_p(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Two-sided rank-sum (Mann-Whitney) p-values of the columns of x against y: mid-ranks,
    tie-corrected variance, continuity correction, normal approximation (scipy's
    mannwhitneyu, method asymptotic). All 2T values tied: p = 1."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p = sps.mannwhitneyu(x, y, use_continuity=True, alternative="two-sided", method="asymptotic", axis=0).pvalue
    both = np.concatenate([x, y])
    const = (both == both[:1]).all(axis=0)
    return np.where(const, 1.0, np.minimum(p, 1.0))


def t_p(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Paired t test p-values (scipy's ttest_rel); constant differences (sd exactly 0):
    p = 1 when they are 0, else 0 (t = 0 or infinite, as documented)."""
    import warnings

    d = x - y
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p = sps.ttest_rel(x, y, axis=0).pvalue
    sd = d.std(axis=0, ddof=1)
    return np.where(sd > 0, p, np.where(d.mean(axis=0) == 0, 1.0, 0.0))


_QCRIT: dict = {}


def q_critical(alpha: float, k: int, df: float) -> float:
    key = (alpha, k, df)
    if key not in _QCRIT:
        _QCRIT[key] = float(sps.studentized_range.ppf(1 - alpha, k, df))
    return _QCRIT[key]


def anova_mse(X: np.ndarray, two_way: bool) -> tuple[float, float]:
    """(residual mean square, its degrees of freedom) of the one-way (systems as groups) or
    two-way (topic + system, no interaction, one score per cell) ANOVA of the topics x
    systems matrix, from the textbook sums of squares; the one-way F is checked against
    scipy's f_oneway. (statsmodels' anova_lm gives the same, at a second per call.)"""
    T, S = X.shape
    sys_m = X.mean(axis=0)
    if not two_way:
        sse = float(((X - sys_m) ** 2).sum())
        dfe = S * (T - 1)
        ssb = float(T * ((sys_m - X.mean()) ** 2).sum())
        if sse > 0:
            import warnings

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                F = float(sps.f_oneway(*X.T).statistic)
            assert _close(F, (ssb / (S - 1)) / (sse / dfe), 1e-7, 1e-12), "one-way ANOVA: F disagrees with scipy"
        return sse / dfe, float(dfe)
    resid = X - sys_m[None, :] - X.mean(axis=1)[:, None] + X.mean()
    dfe = (T - 1) * (S - 1)
    return float((resid**2).sum()) / dfe, float(dfe)


def all_pairs(X: np.ndarray, alpha: float, randomised=(), seed: int = 0) -> dict:
    """Every test on every pair i < j of the topics x systems matrix X: test -> (p-values or
    None, significant, extra). Pairwise tests decide p < alpha (strictly, as documented);
    Tukey-type ones q > the studentized range's 1 - alpha quantile (extra: q, k, df); the
    ``randomised`` ones asked for (their p-values from the documented draws of ``seed``)
    p < alpha."""
    T, S = X.shape
    out = {}
    for test in randomised:
        p = randomised_p(test, X, seed)
        out[test] = (p, p < alpha, None)
    i, j = np.triu_indices(S, k=1)
    xi, xj = X[:, i], X[:, j]
    d = xi - xj
    scale = matrix_scale(X)
    pos, neg = (d > 0).sum(axis=0), (d < 0).sum(axis=0)
    p = np.array([sign_p(min(a, b), a + b) if a + b else 1.0 for a, b in zip(pos, neg)])
    out["sign"] = (p, p < alpha, None)
    p = ranksum_p(xi, xj)
    out["ranksum"] = (p, p < alpha, None)
    p = signrank_p(d, scale)
    out["signrank"] = (p, p < alpha, None)
    p = t_p(xi, xj)
    out["ttest"] = (p, p < alpha, None)
    means = X.mean(axis=0)
    for name, two in (("anova1", False), ("anova2", True)):
        mse, dfe = anova_mse(X, two)
        q = np.abs(means[i] - means[j]) / math.sqrt(mse / T) if mse > 0 else np.full(len(i), np.inf)
        out[name] = (None, q > q_critical(alpha, S, dfe), (q, S, dfe))
    # Kruskal-Wallis: mean ranks over all S*T scores, Matlab multcompare's variance
    N = T * S
    r = sps.rankdata(X.reshape(-1)).reshape(T, S)
    _, cnt = np.unique(X.reshape(-1), return_counts=True)
    ties = float((cnt.astype(float) ** 3 - cnt).sum())
    var = N * (N + 1) / 12 - ties / (12 * (N - 1))
    mr = r.mean(axis=0)
    q = np.abs(mr[i] - mr[j]) / math.sqrt(var * 2 / T) * math.sqrt(2)
    out["kruskal"] = (None, q > q_critical(alpha, S, np.inf), (q, S, np.inf))
    # Friedman: mean within-topic ranks, tie-corrected variance
    r = sps.rankdata(X, axis=1)
    ties = 0.0
    for t in range(T):
        _, cnt = np.unique(X[t], return_counts=True)
        ties += float((cnt.astype(float) ** 3 - cnt).sum())
    var = S * (S + 1) / 12 * (1 - ties / (T * S * (S * S - 1)))
    mr = r.mean(axis=0)
    q = np.abs(mr[i] - mr[j]) / math.sqrt(var * 2 / T) * math.sqrt(2) if var > 0 else np.zeros(len(i))
    out["friedman"] = (None, q > q_critical(alpha, S, np.inf), (q, S, np.inf))
    return out


def randomised_p(test: str, X: np.ndarray, seed: int) -> np.ndarray:
    """The randomised tests' p-values of every pair i < j, re-derived from the documented
    draws (docs/guide.md, "Randomisation tests and discriminative power"), each in plain
    numpy and pair by pair. Statistics equal up to 1e-9 of the pair's scale count as equal
    (irscale documents a far narrower float-noise tolerance; the two agree wherever no two
    distinct statistics lie within 1e-9, as on the audited studies' scores: RR@N's sums,
    1/lcm(1..N) apart, could differ, and no audited study has RR)."""
    T, S = X.shape
    i, j = np.triu_indices(S, k=1)
    rng = np.random.default_rng(seed)
    n = RESAMPLES[test]
    if test == "permutation":  # two-sided; all 2^T sign vectors up to 20 topics, else drawn, +1 correction
        if T <= 20:
            flips = (np.arange(2**T)[:, None] >> np.arange(T)) & 1
        else:
            flips = rng.integers(0, 2, size=(n, T))
        signs = 1 - 2 * flips.astype(np.float64)
        out = np.empty(len(i))
        for c in range(0, len(i), 32):  # 32 pairs at a time, each against its own threshold
            d = X[:, i[c : c + 32]] - X[:, j[c : c + 32]]
            z = np.abs(signs @ d)
            k = (z >= np.abs(d.sum(axis=0)) - 1e-9 * np.abs(d).sum(axis=0)).sum(axis=0)
            out[c : c + 32] = k / 2**T if T <= 20 else (k + 1) / (n + 1)
        return out
    if test == "rtukey":
        ranges = shuffled_ranges(X, rng.random((n, T, S - 1)))
        means = X.mean(axis=0)
        tol = 1e-9 * np.abs(X).max()
        return np.array([(ranges >= abs(means[a] - means[b]) - tol).mean() for a, b in zip(i, j)])
    idx = rng.integers(0, T, size=(n, T))  # the bootstrap: topics drawn with replacement
    out = np.empty(len(i))
    for c in range(0, len(i), 16):  # 16 pairs at a time: z is (resamples, T, pairs)
        d = X[:, i[c : c + 16]] - X[:, j[c : c + 16]]
        z = (d - d.mean(axis=0))[idx]
        zero = 1e-12 * np.abs(d).max(axis=0)  # a mean this close to 0 is float noise (documented: 0)
        mo, mz = d.mean(axis=0), z.mean(axis=1)
        mo, mz = np.where(np.abs(mo) <= zero, 0.0, mo), np.where(np.abs(mz) <= zero, 0.0, mz)
        t_obs, t = studentized(mo, d.std(axis=0, ddof=1), T), studentized(mz, z.std(axis=1, ddof=1), T)
        out[c : c + 16] = (np.abs(t) >= np.abs(t_obs) * (1 - 1e-9)).mean(axis=0)
    return out


def randomised_p_range(test: str, X: np.ndarray, H: np.ndarray, seed: int):
    """Per pair i < j, the least and the largest p-value of ``test`` (two-sided, documented
    draws of ``seed``) over all exact scores within X +- H (stats.could_flip's docstring):

    * permutation: |s . d| - |sum d| = |B - A| - |B + A|, with A the sum of d over the
      flipped topics and B over the kept ones, is 2 min(|A|, |B|) where A B <= 0 and minus
      that elsewhere; s counts where it is at least minus the tie tolerance (here 1e-9 sum
      |d|). A and B lie within their midpoints' sums +- the sums of w = H_i + H_j over
      their topics: s certainly counts where A B <= 0 over that box or min(|A|, |B|) stays
      within half the least tolerance, possibly where A B can be <= 0 or min(|A|, |B|) can
      come within half the largest;
    * rtukey: a permuted system mean moves by at most the mean over topics of the largest
      half-width (so a range by twice that), a difference of means by the mean of w;
    * bootstrap: the resampled mean by at most (c . w) / T + mean(w) (c: how often each
      topic was drawn), its sd by sqrt(c . w^2 / (T - 1)); the observed mean by mean(w),
      its sd by ||w|| / sqrt(T - 1).

    Margins of 1e-9 (relative to the pair's scale) on every comparison: wider than irscale's
    rounding tolerances, so a p-value near a crossing may differ from irscale's only where a
    resample lies within 1e-9 of a bound."""
    T, S = X.shape
    i, j = np.triu_indices(S, k=1)
    rng = np.random.default_rng(seed)
    n = RESAMPLES[test]
    lo, hi = np.empty(len(i)), np.empty(len(i))
    if test == "permutation":
        flips = (np.arange(2**T)[:, None] >> np.arange(T)) & 1 if T <= 20 else rng.integers(0, 2, size=(n, T))
        signs = 1 - 2 * flips.astype(np.float64)
        total, plus = (2**T, 0) if T <= 20 else (n, 1)
        flipped = signs < 0
        for p, (a, b) in enumerate(zip(i, j)):
            d, w = X[:, a] - X[:, b], H[:, a] + H[:, b]
            tol_lo = 1e-9 * max(abs(d.sum()) - w.sum(), 0)  # the tie tolerance at the least sum |d| possible
            tol_hi = 1e-9 * (np.abs(d).sum() + w.sum())  # and at the largest
            A, B = flipped @ d, ~flipped @ d
            wa, wb = flipped @ w, ~flipped @ w
            lo_a, hi_a, lo_b, hi_b = A - wa, A + wa, B - wb, B + wb
            most = np.maximum.reduce([lo_a * lo_b, lo_a * hi_b, hi_a * lo_b, hi_a * hi_b])
            least = np.minimum.reduce([lo_a * lo_b, lo_a * hi_b, hi_a * lo_b, hi_a * hi_b])
            small = 2 * np.minimum(np.abs(A) + wa, np.abs(B) + wb) <= tol_lo
            near = 2 * np.minimum(np.maximum(np.abs(A) - wa, 0), np.maximum(np.abs(B) - wb, 0)) <= tol_hi
            lo[p] = (int(((most <= 0) | small).sum()) + plus) / (total + plus)
            hi[p] = (int(((least <= 0) | near).sum()) + plus) / (total + plus)
        return lo, hi
    if test == "rtukey":
        ranges = shuffled_ranges(X, rng.random((n, T, S - 1)))
        shift = 2 * H.max(axis=1).mean()
        means, hm = X.mean(axis=0), H.mean(axis=0)
        eps = 1e-9 * (np.abs(X) + H).max()
        for p, (a, b) in enumerate(zip(i, j)):
            diff, dd = abs(means[a] - means[b]), hm[a] + hm[b]
            lo[p] = (ranges - shift >= diff + dd + eps).mean()
            hi[p] = (ranges + shift >= diff - dd - eps).mean()
        return lo, hi
    idx = rng.integers(0, T, size=(n, T))
    counts = np.stack([np.bincount(row, minlength=T) for row in idx]).astype(np.float64)
    root = math.sqrt(T)
    for p, (a, b) in enumerate(zip(i, j)):
        d, w = X[:, a] - X[:, b], H[:, a] + H[:, b]
        sd, e = d.std(ddof=1), math.sqrt((w * w).sum() / (T - 1))
        zero = 1e-12 * (np.abs(d) + w).max()  # means this close to 0 count as 0 (documented)
        o_lo = max(abs(d.mean()) - w.mean(), 0) * root / (sd + e) if sd + e > 0 else 0.0
        o_lo = 0.0 if abs(d.mean()) - w.mean() <= zero else o_lo
        o_hi = (abs(d.mean()) + w.mean()) * root / (sd - e) if sd - e > 0 else math.inf
        z = (d - d.mean())[idx]
        zm, zs = z.mean(axis=1), z.std(axis=1, ddof=1)
        am = counts @ w / T + w.mean()
        bs = np.sqrt(counts @ (w * w) / (T - 1))
        with np.errstate(divide="ignore", invalid="ignore"):
            t_lo = np.nan_to_num(np.maximum(np.abs(zm) - am, 0) * root / (zs + bs))
            t_hi = np.where(zs - bs > 0, (np.abs(zm) + am) * root / (zs - bs), np.inf)
        t_lo[np.abs(zm) - am <= zero] = 0.0
        lo[p] = (t_lo * (1 - 1e-9) >= o_hi * (1 + 1e-9)).mean()
        hi[p] = (t_hi * (1 + 1e-9) >= o_lo * (1 - 1e-9)).mean()
    return lo, hi


def shuffled_ranges(X: np.ndarray, U: np.ndarray) -> np.ndarray:
    """rtukey's resamples as documented: resample b shuffles each topic t's row of scores by
    Fisher-Yates (for k = S - 1 down to 1, positions k and floor(U[b, t, k - 1] (k + 1))
    swap); the range of the means of the positions over the topics, per resample. Here the
    shuffle is done on the column indices, all resamples at once."""
    n, T, _ = U.shape
    S = X.shape[1]
    idx = np.broadcast_to(np.arange(S), (n, T, S)).copy()
    b, t = np.meshgrid(np.arange(n), np.arange(T), indexing="ij")
    for k in range(S - 1, 0, -1):
        q = np.floor(U[:, :, k - 1] * (k + 1)).astype(int)
        idx[b, t, k], idx[b, t, q] = idx[b, t, q], idx[b, t, k].copy()
    means = X[np.arange(T)[None, :, None], idx].mean(axis=1)
    return means.max(axis=1) - means.min(axis=1)


def studentized(mean, sd, T: int):
    """mean / (sd / sqrt T); the documented conventions at sd = 0: 0 for a mean of 0, else +-inf.
    (With the float noise of a mean of equal values, |mean| below 1e-12 of the sd's scale is 0.)"""
    mean, sd = np.asarray(mean, dtype=float), np.asarray(sd, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = mean / (sd / math.sqrt(T))
    return np.where(sd > 0, t, np.where(mean == 0, 0.0, np.copysign(np.inf, mean)))


def correct(p: np.ndarray, method: str, alpha: float):
    """Adjusted p-values (statsmodels multipletests) and adjusted < alpha (strict, as irscale
    documents; statsmodels' own reject uses <=). statsmodels runs gc.collect() on every call
    (a tenth of a second in a test process); the objects alive are frozen for it."""
    if method == "none":
        return p.copy(), p < alpha
    import gc

    from statsmodels.stats.multitest import multipletests

    gc.freeze()
    try:
        adj = multipletests(
            p, alpha=alpha, method={"holm": "holm", "bonferroni": "bonferroni", "bh": "fdr_bh"}[method]
        )[1]
    finally:
        gc.unfreeze()
    return adj, adj < alpha


def d_z(d: np.ndarray, scale: float) -> float:
    """Cohen's d_z with irscale's documented constant rule (sd <= 1e-9 scale, ``scale`` the
    pair's own largest |score|: 0 when the mean is within that tolerance of 0, else +-inf)."""
    m, sd = d.mean(), d.std(ddof=1)
    tol = 1e-9 * scale
    if sd <= tol:
        return 0.0 if abs(m) <= tol else math.copysign(math.inf, m)
    return float(m / sd)


def rank_biserial(d: np.ndarray, scale: float) -> float:
    """Kerby's matched-pairs rank-biserial correlation (R+ - R-) / (R+ + R-), zero
    differences dropped, |d| ranked on the documented 1e-9 grid."""
    nz = d != 0
    if not nz.any():
        return 0.0
    r = sps.rankdata(grid(d[nz], scale))
    pos, neg = r[d[nz] > 0].sum(), r[d[nz] < 0].sum()
    return float((pos - neg) / (pos + neg))


def incomparable_mass(codes: np.ndarray, d: np.ndarray) -> float:
    """Share of sum |d_t| from incomparable topics (|d| <= 1e-9 counts as 0: measurefree's
    documented float-noise tolerance, absolute); NaN when every difference is 0."""
    w = np.where(np.abs(d) <= 1e-9, 0.0, np.abs(d))
    total = w.sum()
    return float(w[codes == 2].sum() / total) if total > 0 else float("nan")


def meaningful(test: str, interval: bool, rb: bool) -> bool:
    """The brief's rule: sign and Friedman on any ordinal scale; rank-sum and Kruskal-Wallis
    need one ordinal scale across topics (not recall-base measures); signed-rank, t and the
    ANOVAs an interval scale."""
    if test in WITHIN_TOPIC:
        return True
    if rb:
        return False
    return True if test in ORDINAL_TESTS else interval


# -- the audit ------------------------------------------------------------------------------------------


def _close(a: float, b: float, rtol: float, atol: float) -> bool:
    if a != a or b != b:
        return a != a and b != b
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= atol + rtol * max(abs(a), abs(b))


class Audit:
    """Re-derives one study's tables; ``mismatches`` lists every disagreement, ``notes``
    what could not be re-derived (and why), ``checked`` how many values were compared."""

    def __init__(self, spec: StudySpec, out: Path):
        self.spec, self.out = spec, Path(out)
        self.mismatches: list[str] = []
        self.notes: list[str] = []
        self.checked: Counter = Counter()
        self._ci: dict = {}
        self.inexact: list = []  # CI ends within the documented 1e-12 but not bit-identical
        self.unflipped: set = set()  # could-flip values of rank-based tests: need the exact-value ids
        self._inexact_seen: set = set()

    # -- recording ----------------------------------------------------------------------------------
    def bad(self, file, column, row, theirs, mine, why=""):
        self.mismatches.append(
            f"{file} | column {column} | row {row} | irscale {theirs!r} | checker {mine!r}"
            + (f" | {why}" if why else "")
        )

    def num(self, file, column, row, theirs, mine, rtol=STAT_RTOL, atol=0.0, why=""):
        self.checked[file] += 1
        if not _close(float(theirs), float(mine), rtol, atol):
            self.bad(file, column, row, theirs, mine, why)

    def exact(self, file, column, row, theirs, mine, why=""):
        self.checked[file] += 1
        a, b = theirs, mine
        if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
            return
        if a != b:
            self.bad(file, column, row, theirs, mine, why)

    # -- the whole audit ----------------------------------------------------------------------------
    def run(self) -> Audit:
        self.load()
        self.check_scores()
        self.derive()
        self.check_means()
        self.check_table2()
        self.check_table4()
        self.check_changes()
        self.check_power()
        self.check_pairs()
        self.check_measure_free()
        self.check_json()
        self.check_rendered()
        for f, col, test in sorted(self.unflipped):
            self.notes.append(
                f"{f} {col} ({test}) of a bounded ranked column: range and consistency only; its bound "
                "needs the exact-value ids (which runs share an exact value), which scores_N<N>.csv "
                "does not carry"
            )
        return self

    def report(self, limit: int = 60) -> str:
        """The mismatches grouped by (file, column): how many, and the first of each group."""
        lines = [f"{self.spec.name}: {len(self.mismatches)} mismatches, {sum(self.checked.values())} values checked"]
        groups: dict = {}
        for m in self.mismatches:
            file, column = m.split(" | ")[:2]
            groups.setdefault((file, column), []).append(m)
        for k, (_, ms) in enumerate(groups.items()):
            if k == limit:
                lines.append(f"... and {len(groups) - limit} more groups")
                break
            lines.append(f"[{len(ms)}x] {ms[0]}")
        return "\n".join(lines)

    def inexact_summary(self) -> str | None:
        """How many interval ends match the documented single-row bootstrap only to the
        documented 1e-12 (not to the bit), and why."""
        if not self.inexact:
            return None
        worst = max(self.inexact, key=lambda x: x[3])
        batch = sum(1 for x in self.inexact if x[4])
        return (
            f"{len(self.inexact)} interval ends (of {self.ci_ends} checked) equal the documented single-row "
            f"bootstrap to {worst[3]:.1e} relative, not to the bit (largest: {worst[0]} {worst[1]} {worst[2]}); "
            f"{batch} of them are bit-identical to the same bootstrap run as a row of a multi-row batch "
            "(scipy sums BCa's jackknife terms along a strided axis there, pairwise for a single row)"
        )

    @property
    def ci_ends(self) -> int:
        return 2 * len({k for k in self._ci if k[0] != "batch"})

    # -- loading ------------------------------------------------------------------------------------
    def path(self, stem: str) -> Path:
        return self.out / f"{stem}_N{self.spec.N}.csv"

    def load(self):
        spec, N = self.spec, self.spec.N
        scores = self.out / f"scores_N{N}.csv"
        assert scores.exists(), (
            f"{scores} is missing: irscale compare --out must write the per-topic scores the study rests on "
            f"(scores_N<N>.csv: measure, system, topic, value, ranked[, ranked_mid][, halfwidth]); this audit "
            f"re-derives every table from them. Files written: {sorted(p.name for p in self.out.iterdir())}"
        )
        prov = read_yaml(self.out / f"provenance_N{N}.yaml")
        self.prov = prov
        self.systems = [str(s) for s in prov["runs"]]
        self.topics = [str(t) for t in prov["topics"]]
        self.alpha = float(prov["alpha"])
        self.tests = list(prov["tests"])
        self.with_p = [t for t in self.tests if t in PAIRWISE + RANDOMISED]  # discriminative power's tests
        self.boot = prov.get("bootstrap")
        S, T, M = len(self.systems), len(self.topics), len(spec.measures)
        f = scores.name
        df = read_csv_text(scores)
        cols = (
            ["measure", "system", "topic", "value", "ranked"]
            + (["ranked_mid"] if spec.mid else [])
            + (["halfwidth"] if spec.approx is not None else [])
        )
        self.exact(f, "(columns)", "header", list(df.columns), cols, "the documented columns of scores_N<N>.csv")
        names = list(dict.fromkeys(df["measure"]))
        self.exact(
            f,
            "measure",
            "(names in order)",
            names,
            list(spec.full_names),
            "each measure named in full as computed: cutoff and relevance protocol",
        )
        self.names = list(spec.full_names)
        sidx = {s: k for k, s in enumerate(self.systems)}
        tidx = {t: k for k, t in enumerate(self.topics)}
        self.V = np.full((M, S, T), np.nan)
        self.R, self.RM, self.H = (np.full((M, S, T), np.nan) for _ in range(3))
        seen = np.zeros((M, S, T), dtype=int)
        for m, name in enumerate(self.names):
            part = df[df["measure"] == name]
            if part.empty and m < len(names):  # named otherwise: audit the numbers under the name written
                part = df[df["measure"] == names[m]]
            si = part["system"].map(sidx).to_numpy()
            ti = part["topic"].map(tidx).to_numpy()
            assert not (pd.isna(si).any() or pd.isna(ti).any()), f"{f}: systems or topics not in the provenance"
            si, ti = si.astype(int), ti.astype(int)
            np.add.at(seen[m], (si, ti), 1)
            self.V[m, si, ti] = [fnum(x) for x in part["value"]]
            self.R[m, si, ti] = [fnum(x) for x in part["ranked"]]
            if spec.mid:
                self.RM[m, si, ti] = [fnum(x) for x in part["ranked_mid"]]
            self.H[m] = 0.0
            if spec.approx is not None:
                self.H[m, si, ti] = [fnum(x) for x in part["halfwidth"]]
        self.exact(f, "(rows)", "every (measure, system, topic) once", int((seen != 1).sum()), 0)
        self.S, self.T, self.M = S, T, M
        # provenance: what the CLI was asked
        pv = f"provenance_N{N}.yaml"
        self.exact(pv, "N", "-", prov["N"], N)
        self.exact(pv, "systems", "-", prov["systems"], S)
        self.exact(pv, "relevance", "-", prov["relevance"], spec.relevance or "graded")
        self.exact(pv, "judged_only", "-", prov.get("judged_only"), spec.judged_only, "-J: condensed runs")
        md = (self.out / f"report_N{N}.md").read_text(encoding="utf-8")
        said = md.split("\n")[2]  # the report's summary line says how unjudged documents were treated
        self.exact(
            f"report_N{N}.md",
            "summary line",
            "-",
            "unjudged documents removed" in said,
            spec.judged_only,
            "the protocol: condensed runs (-J) or unjudged documents non-relevant",
        )
        self.exact(pv, "correction", "-", prov["correction"], spec.correction)
        self.exact(pv, "baselines", "-", prov["baselines"], list(spec.baselines) or None)
        self.exact(pv, "tie_strategies", "-", prov["tie_strategies"], ["unq", "mid"] if spec.mid else ["unq"])
        self.exact(pv, "means_rounded_to", "-", prov["means_rounded_to"], 8)
        asked = [x for t in spec.tests for x in ({"paper": TESTS, "randomised": RANDOMISED}.get(t) or [t])]
        self.exact(pv, "tests", "-", list(prov["tests"]), list(dict.fromkeys(asked)), "-t, groups expanded, in order")
        drawn = [t for t in self.tests if t in RANDOMISED]
        T = len(self.topics)
        expect = {  # the permutation test is exact up to 20 topics (all 2^T sign vectors, no draws)
            t: {"exact": True, "sign_vectors": 2**T}
            if t == "permutation" and T <= 20
            else {"resamples": RESAMPLES[t], "seed": spec.seed}
            | ({"plus_one_correction": True} if t == "permutation" else {})
            for t in drawn
        }
        self.exact(pv, "randomised_tests", "-", prov.get("randomised_tests"), expect or None)
        if spec.approx is not None:
            self.exact(pv, "approx", "-", float(prov["approx"]), spec.approx)
        self.exact(pv, "measures", "-", [str(x) for x in prov["measures"]], list(spec.full_names))
        import hashlib

        self.exact(
            pv, "qrels_sha256", "-", prov.get("qrels_sha256"), hashlib.sha256(Path(spec.qrels).read_bytes()).hexdigest()
        )
        tags = [read_run(fp)[0] for fp in run_files(spec.runs)]
        self.exact(pv, "runs", "(order)", self.systems, tags, "the runs' tags in the order given")
        q = read_qrels(spec.qrels)
        self.exact(
            pv,
            "topics",
            "(order)",
            self.topics,
            sorted(set(q["qid"]), key=lambda t: t.encode()),
            "the qrels topics, byte-wise",
        )
        top = 1 if spec.relevance == "lenient" else max(int(q["grade"].max()), 1)
        self.exact(pv, "levels", "-", prov["levels"], top + 1)
        for name in spec.full_names:
            if base_name(name) == "P" and name in (prov.get("rank_maps") or {}):
                self.exact(
                    pv,
                    f"rank_maps[{name}].size",
                    "-",
                    int(prov["rank_maps"][name]["size"]),
                    N + 1,
                    "P@N takes N + 1 values",
                )
        # what the theory says about each original measure: interval or not
        theory = prov.get("theory") or {}
        self.interval = []
        for cli, full in zip(spec.measures, self.names):
            said = theory.get(full) or theory.get(cli)
            if said is None:
                said = next((v for v in theory.values() if isinstance(v, dict) and v.get("measure") == full), None)
            assert said is not None, f"{pv}: no theory statement for {full} (keys {list(theory)})"
            self.exact(
                pv,
                f"theory[{cli}].measure",
                "-",
                said.get("measure"),
                full,
                "the statement names the measure as computed",
            )
            self.interval.append(said.get("original_scale") == "interval" and said.get("established", True))
        self.rb = [base_name(m) in RB_DEPENDENT for m in spec.measures]
        for m, name in enumerate(self.names):
            b = (prov.get("bounds") or {}).get(name)
            if b is not None and "largest_half_width" in b:
                # the written half-widths are rounded up (so that [lo, hi] lies within midpoint +-
                # half-width exactly); the provenance records the bounds' own, a few ulps smaller
                theirs, mine = float(b["largest_half_width"]), float(self.H[m].max())
                self.num(
                    pv,
                    f"bounds[{name}].largest_half_width",
                    "-",
                    theirs,
                    mine,
                    rtol=1e-12,
                    why="the largest half-width of the ranked scores written (rounded up)",
                )
                if theirs > mine:
                    self.bad(
                        pv,
                        f"bounds[{name}].largest_half_width",
                        "-",
                        theirs,
                        f"<= {mine!r}",
                        "the written half-widths are the bounds' rounded up",
                    )
        self.tables = {}
        for key, stem in (
            ("means", "means_original_vs_ranked"),
            ("table2", "table2_tau_measure_vs_ranked"),
            ("table4", "table4_tau_between_measures"),
            ("changes", "tables5_6_significance_changes"),
            ("power", "discriminative_power"),
            ("asl", "asl_curves"),
            ("pairs", "comparisons_with_baselines"),
            ("measure_free", "measure_free_pairs"),
        ):
            p = self.path(stem)
            if key == "pairs" and not spec.baselines:
                self.exact(p.name, "(file)", "-", p.exists(), False, "no baselines, no comparisons")
                continue
            if key in ("power", "asl") and not self.with_p:
                self.exact(p.name, "(file)", "-", p.exists(), False, "no test with a p-value per pair")
                continue
            assert p.exists(), f"{p} is missing"
            self.tables[key] = read_csv_text(p)

    def label_map(self, file: str, column: str, labels, record: bool = True) -> list[int]:
        """The measure index of each row's label; a label that is not the expected full name
        is a mismatch (the numbers are still audited, matched by the measure's short name)."""
        out = []
        short = {base_name(n) + n[len(base_name(n)) :].split("@")[0]: k for k, n in enumerate(self.names)}
        short.update({c: k for k, c in enumerate(self.spec.measures)})
        for r, lab in enumerate(labels):
            if lab in self.names:
                out.append(self.names.index(lab))
                self.checked[file] += record
            else:
                k = short.get(lab)
                if record:
                    self.bad(
                        file,
                        column,
                        r,
                        lab,
                        self.names[k] if k is not None else "(unknown)",
                        "measure names carry the cutoff and the relevance protocol",
                    )
                out.append(k if k is not None else -1)
        return out

    def check_display(self, file: str, table: str, df: pd.DataFrame):
        tiny_rows: dict[str, set] = {}  # a value and its interval ends: all in significant digits where one is tiny
        for triple in TRIPLES.get(table, ()):
            if all(c in df.columns for c in triple):
                rows = {r for r in range(len(df)) if any(tiny(fnum(df[c][r])) for c in triple)}
                for c in triple:
                    tiny_rows[c] = rows
        for col in df.columns:
            if col.endswith("_display"):
                base = col[: -len("_display")]
                kind = kind_of(table, base)
                for r, (v, shown) in enumerate(zip(df[base], df[col])):
                    x = fnum(v)
                    want = significant(x) if r in tiny_rows.get(base, ()) and x == x else display(x, kind)
                    self.exact(file, col, r, shown, want, f"{base} = {v} shown as {kind}")
            elif col not in NO_DISPLAY and f"{col}_display" not in df.columns:
                vals = df[col]
                if (
                    len(vals)
                    and all(re.fullmatch(r"-?\d+\.\d+(e-?\d+)?|nan|inf|-inf|", v) for v in vals)
                    and any("." in v for v in vals)
                ):
                    self.bad(file, col, "-", "no display column", f"{col}_display", "every float column is displayed")

    # -- the scores file against the data --------------------------------------------------------------
    def check_scores(self):
        spec, f = self.spec, f"scores_N{self.spec.N}.csv"
        G, qrels, c = grade_matrix(spec, self.systems, self.topics)
        self.G, self.c = G, c
        graded_qrels = int(read_qrels(spec.qrels)["grade"].max()) > 1 and spec.relevance != "lenient"
        self.codes_graded = weak_codes(G)
        self.codes_binary = weak_codes((G >= 1).astype(np.int16)) if graded_qrels else self.codes_graded
        self.codes = []
        for m, cli in enumerate(spec.measures):
            graded = base_name(cli) in GRADED_MEASURES and "rel=" not in cli and spec.relevance != "lenient"
            if graded or not graded_qrels:
                self.codes.append(self.codes_graded if graded else self.codes_binary)
            else:  # a measure given rel=K sees the runs binarised at the first level whose grade reaches K
                K = int(np.searchsorted(level_values(qrels, c), threshold(cli), side="left"))
                self.codes.append(self.codes_binary if K == 1 else weak_codes((G >= K).astype(np.int16)))
            mine = measure_scores(cli, G, qrels, self.topics, c, binary=not graded)
            for s in range(self.S):
                for t in range(self.T):
                    self.num(
                        f,
                        "value",
                        (self.names[m], self.systems[s], self.topics[t]),
                        self.V[m, s, t],
                        mine[s, t],
                        atol=1e-12,
                        why="the measure's definition on the runs cut at N",
                    )
            # phi's own sanity: P's phi is #relevant + 1 (closed form); the others are
            # non-decreasing in the value (across topics; within a topic for recall-base measures)
            bounded = spec.approx is not None and (self.H[m] > 0).any()
            if base_name(cli) == "P":
                k = np.rint(self.V[m] * spec.N)
                unq = k + 1
                if spec.approx is not None:
                    unq = unq / (spec.N + 1)  # normalised: phi / the number of distinct values
                for s, t in itertools.product(range(self.S), range(self.T)):
                    self.num(
                        f,
                        "ranked",
                        (self.names[m], self.systems[s], self.topics[t]),
                        self.R[m, s, t],
                        unq[s, t],
                        rtol=1e-15,
                        why="P's phi = relevant retrieved + 1",
                    )
                if spec.mid:
                    below = np.array([sum(math.comb(spec.N, j) for j in range(int(x))) for x in k.reshape(-1)])
                    at = np.array([math.comb(spec.N, int(x)) for x in k.reshape(-1)])
                    mid = (below + (at + 1) / 2).reshape(k.shape)
                    for s, t in itertools.product(range(self.S), range(self.T)):
                        self.num(
                            f,
                            "ranked_mid",
                            (self.names[m], self.systems[s], self.topics[t]),
                            self.RM[m, s, t],
                            mid[s, t],
                            rtol=1e-15,
                            why="mid-rank of P over the 2^N runs",
                        )
            elif not bounded:
                groups = [np.s_[:, t] for t in range(self.T)] if self.rb[m] else [np.s_[:, :]]
                for cols in ["ranked"] + (["ranked_mid"] if spec.mid else []):
                    Y = self.R[m] if cols == "ranked" else self.RM[m]
                    for gsel in groups:
                        v, y = self.V[m][gsel].reshape(-1), Y[gsel].reshape(-1)
                        o = np.lexsort((y, v))
                        v, y = v[o], y[o]
                        broken = ((np.diff(v) > 0) & (np.diff(y) <= 0)) | ((np.diff(v) == 0) & (np.diff(y) != 0))
                        self.checked[f] += 1
                        if broken.any():
                            self.bad(
                                f,
                                cols,
                                self.names[m],
                                "not a strictly increasing function of the value",
                                "phi orders runs as their values",
                                "sanity of the scores file",
                            )

    # -- derived matrices ------------------------------------------------------------------------------
    def derive(self):
        """The ranked columns as the tests see them: with approx (normalised phi, as small as
        1e-300) scaled by a power of two to a largest value in (1/2, 1] (the documented
        scaling; exact, and no statistic changes under it but the 8-decimal rounding of
        means, which it keeps meaningful)."""
        self.unit = np.ones(self.M)
        if self.spec.approx is not None:
            for m in range(self.M):
                top = float(np.nanmax(self.R[m]))
                self.unit[m] = 2.0 ** math.ceil(math.log2(top)) if top > 0 else 1.0
        self.Rs = self.R / self.unit[:, None, None]
        self.RMs = self.RM / self.unit[:, None, None]
        self.results = {}
        drawn = [t for t in self.tests if t in RANDOMISED]
        for m in range(self.M):
            self.results[m, 0] = all_pairs(self.V[m].T, self.alpha, drawn, self.spec.seed)
            self.results[m, 1] = all_pairs(self.Rs[m].T, self.alpha, drawn, self.spec.seed)

    def check_ci(self, file, suffix, row, lo_text, hi_text, x, own, what, negated_of=None):
        """The interval must be the documented bootstrap's to the documented 1e-12 relative;
        the ends that are not bit-identical are counted (``self.inexact``) and the largest
        relative difference kept, with the diagnosis (a vectorised multi-row call)."""
        theirs = (fnum(lo_text), fnum(hi_text))
        key = (x.tobytes(), own)
        if key not in self._ci:  # a pair's interval is the same for every test
            self._ci[key] = bca(x, own, self.boot)
        mine = self._ci[key]
        for k, col in enumerate(("ci_low", "ci_high")):
            if theirs[k] == mine[k] or (theirs[k] != theirs[k] and mine[k] != mine[k]):
                self.checked[file] += 1
                continue
            # 1e-12 relative to the end, and for an end near 0 float rounding at the scores' size:
            # such an end is BCa's arithmetic on numbers as large as the scores (DL 2019 condensed,
            # RBP@10: an end of -1.07e-05 off by 1.4e-17, 1.3e-12 of itself, on scores near 0.5)
            floor = CI_FLOOR * float(np.abs(x).max(initial=0.0))
            rel = max(abs(theirs[k] - mine[k]) - floor, 0.0) / max(abs(theirs[k]), abs(mine[k]))
            self.num(file, col + suffix, row, theirs[k], mine[k], rtol=CI_RTOL, atol=floor, why=f"documented: {what}")
            if rel <= CI_RTOL:
                if ("batch",) + key not in self._ci:
                    b = bca_batch(-x if negated_of else x, own, self.boot)
                    self._ci[("batch",) + key] = (-b[1], -b[0]) if negated_of else b
                batch = self._ci[("batch",) + key][k] == theirs[k]
                if (key, k) not in self._inexact_seen:  # a pair's interval repeats for every test
                    self._inexact_seen.add((key, k))
                    self.inexact.append((file, col + suffix, row, rel, batch))

    # -- the means --------------------------------------------------------------------------------------
    def check_means(self):
        df, f = self.tables["means"], self.path("means_original_vs_ranked").name
        S, spec = self.S, self.spec
        self.exact(f, "(rows)", "-", len(df), self.M * S)
        mi = self.label_map(f, "measure", df["measure"])
        self.exact(f, "system", "(order)", list(df["system"]), self.systems * self.M)
        self.exact(f, "measure", "(order)", mi, [m for m in range(self.M) for _ in range(S)])
        for r in range(len(df)):
            self.exact(f, "baseline", r, fbool(df["baseline"][r]), df["system"][r] in spec.baselines)
        for m in range(self.M):
            for scale, X in (("original", self.V[m]), ("ranked", self.R[m])):
                means = X.mean(axis=1)
                # ranks: 1 = highest, ties share the best position; ties are means equal up
                # to float noise (a relative 1e-12), which the definition asks to tie
                rank = np.array(
                    [1 + int((means > mu + 1e-12 * np.maximum(np.abs(means), abs(mu))).sum()) for mu in means]
                )
                rank_strict = np.array([1 + int((means > mu).sum()) for mu in means])
                for s in range(S):
                    r = m * S + s
                    row = (self.names[m], self.systems[s])
                    self.num(f, f"mean_{scale}", row, fnum(df[f"mean_{scale}"][r]), means[s], rtol=MEAN_RTOL)
                    self.check_ci(
                        f,
                        f"_{scale}",
                        row,
                        df[f"ci_low_{scale}"][r],
                        df[f"ci_high_{scale}"][r],
                        X[s],
                        float(np.abs(X[s]).max()),
                        "u * scipy.stats.bootstrap((x / u,), SnappedMean(1.0), BCa, documented seed and "
                        "resamples), x the system's scores, u the power of two at or above max|x|",
                    )
                    theirs = fnum(df[f"rank_{scale}"][r])
                    why = "rank by mean (1 = highest, ties share the best position)"
                    if theirs != rank[s] and theirs == rank_strict[s]:
                        why += "; irscale's rank breaks a tie of means equal up to float noise"
                    self.exact(f, f"rank_{scale}", row, theirs, float(rank[s]), why)
                    if spec.approx is not None:
                        hw = 0.0 if scale == "original" else float(self.H[m, s].mean())
                        self.num(f, f"halfwidth_{scale}", row, fnum(df[f"halfwidth_{scale}"][r]), hw, rtol=MEAN_RTOL)
        self.check_display(f, "means", df)

    # -- Tables 2 and 3 ---------------------------------------------------------------------------------
    def check_table2(self):
        df, f = self.tables["table2"], self.path("table2_tau_measure_vs_ranked").name
        self.exact(f, "(rows)", "-", len(df), self.M)
        mi = self.label_map(f, "measure", df["measure"])
        self.exact(f, "measure", "(order)", mi, list(range(self.M)))
        for r, m in enumerate(mi[: self.M]):
            if m < 0:
                continue
            row = self.names[m]
            mo, mr = round8(self.V[m].mean(axis=1)), round8(self.Rs[m].mean(axis=1))
            self.num(f, "tau_unq", row, fnum(df["tau_unq"][r]), tau_b(mo, mr))
            self.num(f, "tau_ap_unq", row, fnum(df["tau_ap_unq"][r]), tau_ap(mo, mr))
            mid = tau_b(mo, round8(self.RMs[m].mean(axis=1))) if self.spec.mid else float("nan")
            self.num(f, "tau_mid", row, fnum(df["tau_mid"][r]), mid)
            import warnings

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                topic = np.array([tau_b(self.V[m][:, t], self.Rs[m][:, t]) for t in range(self.T)])
            topic = topic[~np.isnan(topic)]
            self.num(f, "topic_tau_min", row, fnum(df["topic_tau_min"][r]), topic.min() if len(topic) else np.nan)
            self.num(f, "topic_tau_max", row, fnum(df["topic_tau_max"][r]), topic.max() if len(topic) else np.nan)
            self.exact(f, "rb_dependent", row, fbool(df["rb_dependent"][r]), self.rb[m])
            if self.spec.approx is not None:
                self.num(f, "halfwidth_max", row, fnum(df["halfwidth_max"][r]), float(self.H[m].max()), rtol=0)
        self.check_display(f, "table2", df)

    # -- Table 4 ----------------------------------------------------------------------------------------
    def check_table4(self):
        df, f = self.tables["table4"], self.path("table4_tau_between_measures").name
        pairs = list(itertools.combinations(range(self.M), 2))
        self.exact(f, "(rows)", "-", len(df), len(pairs))
        m1, m2 = self.label_map(f, "measure_1", df["measure_1"]), self.label_map(f, "measure_2", df["measure_2"])
        self.exact(f, "(measure pairs)", "(order)", list(zip(m1, m2)), pairs)
        for r, (a, b) in enumerate(pairs[: len(df)]):
            row = (self.names[a], self.names[b])
            oa, ob = round8(self.V[a].mean(axis=1)), round8(self.V[b].mean(axis=1))
            ra, rb = round8(self.Rs[a].mean(axis=1)), round8(self.Rs[b].mean(axis=1))
            t_o, t_r = tau_b(oa, ob), tau_b(ra, rb)
            self.num(f, "tau", row, fnum(df["tau"][r]), t_o)
            self.num(f, "tau_ranked", row, fnum(df["tau_ranked"][r]), t_r)
            self.num(
                f, "delta_pct", row, fnum(df["delta_pct"][r]), 100 * (t_r - t_o) / t_o if t_o else np.nan, atol=1e-9
            )
            self.num(f, "tau_ap", row, fnum(df["tau_ap"][r]), tau_ap(oa, ob))
            self.num(f, "tau_ap_ranked", row, fnum(df["tau_ap_ranked"][r]), tau_ap(ra, rb))
            if self.spec.approx is not None:
                self.num(
                    f,
                    "halfwidth_max",
                    row,
                    fnum(df["halfwidth_max"][r]),
                    max(float(self.H[a].max()), float(self.H[b].max())),
                    rtol=0,
                )
        self.check_display(f, "table4", df)

    # -- Tables 5 and 6 -----------------------------------------------------------------------------------
    def check_changes(self):
        df, f = self.tables["changes"], self.path("tables5_6_significance_changes").name
        spec = self.spec
        order = list(itertools.product(range(self.M), self.tests))
        self.exact(f, "(rows)", "-", len(df), len(order))
        mi = self.label_map(f, "measure", df["measure"])
        self.exact(f, "(measure, test)", "(order)", list(zip(mi, df["test"])), [(m, TEST_NAMES[t]) for m, t in order])
        i, j = np.triu_indices(self.S, k=1)
        for r, (m, test) in enumerate(order[: len(df)]):
            row = (self.names[m], TEST_NAMES[test])
            a, b = self.results[m, 0][test][1], self.results[m, 1][test][1]
            sig, s2ns, ns2s, sig_r = int(a.sum()), int((a & ~b).sum()), int((~a & b).sum()), int(b.sum())
            self.exact(f, "ordinal", row, fbool(df["ordinal"][r]), test in ORDINAL_TESTS)
            for col, v in (("sig", sig), ("s2ns", s2ns), ("ns2s", ns2s), ("sig_ranked", sig_r)):
                self.exact(f, col, row, int(df[col][r]), v)
            self.num(f, "s2ns_pct", row, fnum(df["s2ns_pct"][r]), 100 * s2ns / sig if sig else 0.0)
            self.num(f, "ns2s_pct", row, fnum(df["ns2s_pct"][r]), 100 * ns2s / sig if sig else 0.0)
            self.num(f, "delta_pct", row, fnum(df["delta_pct"][r]), 100 * (s2ns + ns2s) / sig if sig else 0.0)
            self.exact(f, "meaningful", row, fbool(df["meaningful"][r]), meaningful(test, self.interval[m], self.rb[m]))
            self.exact(
                f, "meaningful_ranked", row, fbool(df["meaningful_ranked"][r]), meaningful(test, True, self.rb[m])
            )
            if spec.correction != "none":
                self.exact(f, "correction", row, df["correction"][r], spec.correction)
                for k, col in ((0, "sig_adjusted"), (1, "sig_ranked_adjusted")):
                    p, s, _ = self.results[m, k][test]
                    v = int(s.sum()) if test in FAMILYWISE else int(correct(p, spec.correction, self.alpha)[1].sum())
                    self.exact(f, col, row, int(df[col][r]), v, "Tukey-type tests keep their count")
            # the ranked column as the statistics see it: under approx scaled by a power of two to a largest
            # value in (1/2, 1] (compare's documented scaling), which measurefree's 1e-9 float-noise
            # tolerance is then applied to
            for k, col, X in ((0, "flagged_incomparable", self.V[m]), (1, "flagged_incomparable_ranked", self.Rs[m])):
                s = self.results[m, k][test][1]
                n = 0
                for p in np.flatnonzero(s):
                    mass = incomparable_mass(self.codes[m][p], X[i[p]] - X[j[p]])
                    n += int(np.nan_to_num(mass) > 0.5)
                self.exact(f, col, row, int(df[col][r]), n, "significant and > 1/2 of sum|d| on incomparable topics")
            if spec.approx is not None:
                self.num(f, "halfwidth_max", row, fnum(df["halfwidth_max"][r]), float(self.H[m].max()), rtol=0)
                cf = int(df["could_flip_ranked"][r])
                self.checked[f] += 1
                if not (self.H[m] > 0).any():
                    self.exact(f, "could_flip_ranked", row, cf, 0, "exact ranked scores: no decision can flip")
                elif not 0 <= cf <= len(i):
                    self.bad(f, "could_flip_ranked", row, cf, f"0..{len(i)}")
                else:
                    flips = self.could_flip(m, test)
                    if flips is None:
                        self.unflipped.add((f, "could_flip_ranked", TEST_NAMES[test]))
                    elif test == "sign":
                        if int(flips.sum()) != cf:
                            self.notes.append(
                                f"{f} could_flip_ranked {row}: irscale {cf}, checker {int(flips.sum())} "
                                "with exact ties guessed from equal (midpoint, half-width)"
                            )
                    else:
                        self.exact(
                            f,
                            "could_flip_ranked",
                            row,
                            cf,
                            int(flips.sum()),
                            "the documented bound on the ranked scores within midpoint +- half-width",
                        )
        self.check_display(f, "changes", df)

    def could_flip(self, m: int, test: str) -> np.ndarray | None:
        """Per pair i < j: could the ranked-scale decision (uncorrected, as sig_ranked) differ
        for some exact scores within midpoint +- half-width? Re-derived where the
        documentation defines the bound without the exact-value ids (docs/guide.md, "transform
        and compare at any N", and stats.could_flip's docstring):

        * t test: the mean difference moves by at most the mean of w = H_i + H_j, the sample
          standard deviation by at most ||w|| / sqrt(T - 1); flagged where the t range
          crosses the two-sided critical value;
        * one- and two-way ANOVA with Tukey HSD: the system means move by at most their mean
          half-widths, sqrt(SSE) by at most the norm of all half-widths (the residuals are a
          projection); flagged where the studentized range crosses its critical value;
        * sign test (exact: every split of the topics whose sign the bounds leave open), with
          the exact ties guessed from equal (midpoint, half-width), since the exact-value ids
          are not written: a disagreement there is a note, not a mismatch.

        * the randomised tests (stats.could_flip's docstring: the same draws meet every exact
          score, so each resampled statistic and the observed one move within intervals, and
          the p-value lies between the share of resamples certainly and possibly as extreme);
          see :func:`randomised_p_range`.

        None for the rank-based tests (their bounds need the exact-value ids)."""
        X, H = self.Rs[m].T, self.H[m].T / self.unit[m]  # the scaled column the tests saw
        T, S = X.shape
        i, j = np.triu_indices(S, k=1)
        sig = self.results[m, 1][test][1]
        if test in RANDOMISED:
            pad = 4 * np.finfo(np.float64).eps * (np.abs(X) + H)  # the midpoint's and half-width's rounding
            p_lo, p_hi = randomised_p_range(test, X, H + pad, self.spec.seed)
            return np.where(sig, p_hi >= self.alpha, p_lo < self.alpha)
        if test == "ttest":
            d, w = X[:, i] - X[:, j], H[:, i] + H[:, j]
            mu, sd = d.mean(axis=0), d.std(axis=0, ddof=1)
            dm, ds = w.mean(axis=0), np.sqrt((w**2).sum(axis=0) / (T - 1))
            crit = sps.t.isf(self.alpha / 2, T - 1)
            with np.errstate(divide="ignore", invalid="ignore"):
                t_lo = np.nan_to_num(np.maximum(np.abs(mu) - dm, 0) * math.sqrt(T) / (sd + ds))
                t_hi = np.where(sd - ds > 0, (np.abs(mu) + dm) * math.sqrt(T) / (sd - ds), np.inf)
            return np.where(sig, t_lo <= crit, t_hi > crit)
        if test in ("anova1", "anova2"):
            if test == "anova1":
                resid, df = X - X.mean(axis=0), S * (T - 1)
            else:
                resid, df = X - X.mean(axis=0)[None, :] - X.mean(axis=1)[:, None] + X.mean(), (T - 1) * (S - 1)
            root, move = math.sqrt((resid**2).sum()), math.sqrt((H**2).sum())
            means, hm = X.mean(axis=0), H.mean(axis=0)
            diff, dd = np.abs(means[i] - means[j]), hm[i] + hm[j]
            k = math.sqrt(T * df)  # q = |difference| sqrt(T) / sqrt(SSE / df)
            q_lo = np.maximum(diff - dd, 0) * k / (root + move)
            q_hi = (diff + dd) * k / (root - move) if root > move else np.full(len(i), np.inf)
            crit = q_critical(self.alpha, S, float(df))
            return np.where(sig, q_lo <= crit, q_hi > crit)
        if test == "sign":
            pad = 4 * np.finfo(np.float64).eps * (np.abs(X) + H)  # the midpoint's and half-width's rounding
            lo, hi = X - H - pad, X + H + pad
            out = np.zeros(len(i), dtype=bool)
            for p, (a, b) in enumerate(zip(i, j)):
                same = (X[:, a] == X[:, b]) & (H[:, a] == H[:, b])
                unsure = ~same & (lo[:, a] <= hi[:, b]) & (lo[:, b] <= hi[:, a])
                d = X[:, a] - X[:, b]
                pos, neg = int((~same & ~unsure & (d > 0)).sum()), int((~same & ~unsure & (d < 0)).sum())
                u = int(unsure.sum())
                n = pos + neg + u
                decisions = {sign_p(min(pos + k, neg + u - k), n) < self.alpha if n else False for k in range(u + 1)}
                out[p] = (not sig[p]) in decisions
            return out
        return None

    # -- discriminative power ----------------------------------------------------------------------------
    def check_power(self):
        """Sakai's discriminative power per measure and test with a p-value per pair (the
        documented table): the pairs with a p-value, those with p < alpha and their share,
        the median p-value, on both scales; and the ASL curves: the n sorted p-values at
        positions floor(k (n - 1) / 100), k = 0..100."""
        if not self.with_p:
            return
        df, f = self.tables["power"], self.path("discriminative_power").name
        curves, fc = self.tables["asl"], self.path("asl_curves").name
        order = [(m, t) for m in range(self.M) for t in self.with_p]
        self.exact(f, "(rows)", "-", len(df), len(order))
        mi = self.label_map(f, "measure", df["measure"])
        self.exact(f, "(measure, test)", "(order)", list(zip(mi, df["test"])), [(m, TEST_NAMES[t]) for m, t in order])
        expect_curves = []
        for r, (m, test) in enumerate(order[: len(df)]):
            row = (self.names[m], TEST_NAMES[test])
            for k, suffix, scale in ((0, "", "original"), (1, "_ranked", "ranked")):
                p = self.results[m, k][test][0]
                asl = np.sort(p[~np.isnan(p)])
                n = len(asl)
                if n == 0:  # no pair with a p-value: the documented NaN entries
                    asl = np.full(1, np.nan)
                if k == 0:
                    self.exact(f, "pairs", row, int(df["pairs"][r]), n)
                self.exact(
                    f, "significant" + suffix, row, int(df["significant" + suffix][r]), int((asl < self.alpha).sum())
                )
                self.num(f, "share" + suffix, row, fnum(df["share" + suffix][r]), float((asl < self.alpha).mean()))
                self.num(f, "asl_median" + suffix, row, fnum(df["asl_median" + suffix][r]), float(np.median(asl)))
                for q in range(101):
                    expect_curves.append((self.names[m], TEST_NAMES[test], scale, q, float(asl[q * (n - 1) // 100])))
        self.exact(fc, "(columns)", "header", list(curves.columns), ["measure", "test", "scale", "percent", "asl"])
        self.exact(fc, "(rows)", "-", len(curves), len(expect_curves))
        ci = self.label_map(fc, "measure", curves["measure"])
        for r, (name, test, scale, q, v) in enumerate(expect_curves[: len(curves)]):
            key = (name, test, scale, q)
            got = (self.names[ci[r]] if ci[r] >= 0 else curves["measure"][r], curves["test"][r], curves["scale"][r])
            self.exact(fc, "(measure, test, scale, percent)", r, (*got, int(curves["percent"][r])), key)
            self.num(fc, "asl", key, fnum(curves["asl"][r]), v)
        self.check_display(f, "power", df)

    # -- the comparisons with baselines -----------------------------------------------------------------
    def check_pairs(self):
        """The comparisons with baselines, one row per (measure, scale, baseline, system):
        what does not depend on the test once, then each test's columns ``<field>_<test>``."""
        if "pairs" not in self.tables:
            return
        df, f = self.tables["pairs"], self.path("comparisons_with_baselines").name
        spec, S = self.spec, self.S
        pos = {s: k for k, s in enumerate(self.systems)}
        comps, done = [], set()
        for bl in spec.baselines:  # every other system with each baseline; earlier baselines compared already
            comps += [(pos[bl], o) for o in range(S) if o != pos[bl] and o not in done]
            done.add(pos[bl])
        blocks = [(m, sc) for m in range(self.M) for sc in ("original", "ranked")]
        self.exact(f, "(rows)", "-", len(df), len(blocks) * len(comps))
        tested = [c for c in df.columns if any(c == f"{x}_{t}" for t in self.tests for x in PAIR_FIELDS)]
        expect_cols = [f"{x}_{t}" for t in self.tests for x in PAIR_FIELDS if f"{x}_{t}" in df.columns]
        self.exact(f, "(test columns)", "-", tested, expect_cols)
        for t in self.tests:
            self.exact(
                f, "(columns of test)", t, f"p_value_{t}" in df.columns and f"p_adjusted_{t}" in df.columns, True
            )
        mi = self.label_map(f, "measure", df["measure"])
        expect = [(m, sc, self.systems[a], self.systems[b]) for m, sc in blocks for a, b in comps]
        got = list(zip(mi, df["scale"], df["system_1"], df["system_2"]))
        self.exact(f, "(measure, scale, system_1, system_2)", "(order)", got, expect)
        i_all, j_all = np.triu_indices(S, k=1)
        triu = {(a, b): k for k, (a, b) in enumerate(zip(i_all, j_all))}
        r = 0
        for m, sc in blocks:
            k = 0 if sc == "original" else 1
            X = (self.V[m] if k == 0 else self.R[m]).T  # the study's matrix: unscaled ranked values
            scale = matrix_scale(X)
            Xs = X if k == 0 else self.Rs[m].T  # scaled as the statistics see it (see the flags above)
            mass = {}
            for c, (a, b) in enumerate(comps):
                row = (self.names[m], sc, self.systems[a], self.systems[b])
                rr = r + c
                d = X[:, b] - X[:, a]  # system minus baseline
                self.num(f, "mean_1", row, fnum(df["mean_1"][rr]), X[:, a].mean(), rtol=MEAN_RTOL)
                self.num(f, "mean_2", row, fnum(df["mean_2"][rr]), X[:, b].mean(), rtol=MEAN_RTOL)
                self.num(f, "diff", row, fnum(df["diff"][rr]), d.mean(), rtol=MEAN_RTOL, atol=1e-15 * scale)
                own = float(max(np.abs(X[:, a]).max(), np.abs(X[:, b]).max()))  # the pair's own scale
                self.check_ci(
                    f,
                    "",
                    row,
                    df["ci_low"][rr],
                    df["ci_high"][rr],
                    d,
                    own,
                    "u * scipy.stats.bootstrap((d / u,), SnappedMean(1.0), BCa, documented seed and "
                    "resamples), d = system - baseline, u the power of two at or above the pair's "
                    "largest |score|",
                    negated_of=True,
                )
                self.num(f, "d_z", row, fnum(df["d_z"][rr]), d_z(d, own if own > 0 else 1.0), atol=1e-12)
                self.num(f, "rank_biserial", row, fnum(df["rank_biserial"][rr]), rank_biserial(d, scale), atol=1e-12)
                codes = self.codes[m][triu[min(a, b), max(a, b)]]
                self.num(f, "incomparable_share", row, fnum(df["incomparable_share"][rr]), float((codes == 2).mean()))
                mass[c] = incomparable_mass(codes, Xs[:, a] - Xs[:, b])
                self.num(f, "incomparable_mass", row, fnum(df["incomparable_mass"][rr]), mass[c])
                if spec.approx is not None:
                    Hm = self.H[m].T
                    hw = float((Hm[:, a] + Hm[:, b]).mean()) if k else 0.0
                    self.num(f, "halfwidth", row, fnum(df["halfwidth"][rr]), hw, rtol=MEAN_RTOL)
            for test in self.tests:
                self._check_pair_test(df, f, m, sc, k, X, test, comps, triu, r, mass)
            r += len(comps)
        if spec.approx is not None and spec.correction == "none":  # the baseline pairs are some of all pairs
            ch = self.tables["changes"]
            for m, sc in blocks:
                if sc != "ranked":
                    continue
                for test in self.tests:
                    part = df[df["scale"] == "ranked"]
                    part = part[[self.label_map("", "measure", [x], False)[0] == m for x in part["measure"]]]
                    n = int((part[f"could_flip_{test}"] == "True").sum())
                    at = list(itertools.product(range(self.M), self.tests)).index((m, test))
                    total = int(ch["could_flip_ranked"][at])
                    self.checked[f] += 1
                    if n > total:
                        self.bad(
                            f,
                            f"could_flip_{test}",
                            (self.names[m], TEST_NAMES[test]),
                            f"{n} baseline pairs",
                            f"at most {total} (could_flip_ranked of all pairs)",
                        )
        self.check_display(f, "pairs", df)

    def _check_pair_test(self, df, f, m, sc, k, X, test, comps, triu, r, mass):
        """One test's columns of one (measure, scale) block of the comparisons with baselines."""
        spec = self.spec
        corr = "none" if test in FAMILYWISE else spec.correction
        full = (
            all_pairs(X, self.alpha, [test] if test in RANDOMISED else (), spec.seed)[test]
            if k == 1 and spec.approx is not None
            else self.results[m, k][test]
        )
        p = []
        for a, b in comps:
            lo_, hi_ = min(a, b), max(a, b)
            if test in PAIRWISE + RANDOMISED:
                p.append(full[0][triu[lo_, hi_]])
            else:
                q, kk, dfe = full[2]
                p.append(float(sps.studentized_range.sf(q[triu[lo_, hi_]], kk, dfe)))
        p = np.array(p)
        adj, sig = correct(p, corr, self.alpha)
        for c, (a, b) in enumerate(comps):
            row = (self.names[m], sc, TEST_NAMES[test], self.systems[a], self.systems[b])
            rr = r + c
            self.num(f, f"p_value_{test}", row, fnum(df[f"p_value_{test}"][rr]), p[c])
            self.num(f, f"p_adjusted_{test}", row, fnum(df[f"p_adjusted_{test}"][rr]), adj[c])
            self.exact(
                f, f"significant_{test}", row, fbool(df[f"significant_{test}"][rr]), bool(sig[c]), "adjusted p < alpha"
            )
            self.exact(
                f,
                f"meaningful_{test}",
                row,
                fbool(df[f"meaningful_{test}"][rr]),
                meaningful(test, True if k else self.interval[m], self.rb[m]),
            )
            self.exact(
                f,
                f"rests_on_incomparable_{test}",
                row,
                fbool(df[f"rests_on_incomparable_{test}"][rr]),
                bool(sig[c]) and np.nan_to_num(mass[c]) > 0.5,
            )
            if spec.approx is None:
                continue
            cf = fbool(df[f"could_flip_{test}"][rr])
            self.checked[f] += 1
            if k == 0 or not (self.H[m] > 0).any():
                self.exact(f, f"could_flip_{test}", row, cf, False, "exact scores: no decision can flip")
            elif corr != "none":
                self.exact(f, f"could_flip_{test}", row, cf, None, "not bounded under a correction (empty)")
            else:
                flips = self.could_flip(m, test)
                mine = None if flips is None else bool(flips[triu[min(a, b), max(a, b)]])
                if flips is None:
                    self.unflipped.add((f, "could_flip", TEST_NAMES[test]))
                elif test == "sign":
                    if cf != mine:
                        self.notes.append(
                            f"{f} could_flip {row}: irscale {cf}, checker {mine} with exact "
                            "ties guessed from equal (midpoint, half-width)"
                        )
                else:
                    self.exact(
                        f,
                        f"could_flip_{test}",
                        row,
                        cf,
                        mine,
                        "the documented bound on the ranked scores within midpoint +- half-width",
                    )

    # -- the measure-free view ------------------------------------------------------------------------
    def check_measure_free(self):
        df, f = self.tables["measure_free"], self.path("measure_free_pairs").name
        i, j = np.triu_indices(self.S, k=1)
        codes = self.codes_graded
        self.exact(f, "(rows)", "-", len(df), len(i))
        self.exact(
            f,
            "(system_1, system_2)",
            "(order)",
            list(zip(df["system_1"], df["system_2"])),
            [(self.systems[a], self.systems[b]) for a, b in zip(i, j)],
        )
        for r in range(min(len(df), len(i))):
            c = codes[r]
            row = (self.systems[i[r]], self.systems[j[r]])
            better, worse, equal, inc = (int((c == v).sum()) for v in (1, -1, 0, 2))
            for col, v in (
                ("topics", self.T),
                ("better", better),
                ("worse", worse),
                ("equal", equal),
                ("incomparable", inc),
                ("comparable", better + worse + equal),
                ("sign_n", better + worse),
                ("direction", int(np.sign(better - worse))),
            ):
                self.exact(f, col, row, int(df[col][r]), v)
            self.num(f, "incomparable_share", row, fnum(df["incomparable_share"][r]), inc / self.T)
            n = better + worse
            p = float(sps.binomtest(better, n).pvalue) if n else float("nan")
            self.num(f, "sign_p", row, fnum(df["sign_p"][r]), p)
            self.exact(f, "sign_significant", row, fbool(df["sign_significant"][r]), bool(n and p < self.alpha))
        self.check_display(f, "measure_free", df)

    # -- JSON: the same rows as the CSV, and the provenance ---------------------------------------------
    def check_json(self):
        for key, df in self.tables.items():
            if key == "measure_free":
                continue  # CSV only (documented)
            stem = {
                "means": "means_original_vs_ranked",
                "table2": "table2_tau_measure_vs_ranked",
                "table4": "table4_tau_between_measures",
                "changes": "tables5_6_significance_changes",
                "power": "discriminative_power",
                "pairs": "comparisons_with_baselines",
            }.get(key)
            if stem is None:
                continue  # CSV only: the ASL curves
            p = self.out / f"{stem}_N{self.spec.N}.json"
            data = json.loads(p.read_text(encoding="utf-8"))
            rows = data["rows"]
            self.exact(p.name, "(rows)", "-", len(rows), len(df))
            for r, (jr, (_, cr)) in enumerate(zip(rows, df.iterrows())):
                self.exact(p.name, "(columns)", r, list(jr), list(df.columns))
                for col, text in cr.items():
                    v = jr.get(col)
                    self.checked[p.name] += 1
                    if isinstance(v, bool) or text in ("True", "False"):
                        ok = v == fbool(text)
                    elif isinstance(v, (int, float)) and not isinstance(v, bool):
                        try:
                            ok = float(v) == float(text)
                        except ValueError:
                            ok = False
                    elif v is None:
                        ok = text == "" or not math.isfinite(fnum(text))
                    else:
                        ok = v == text
                    if not ok:
                        self.bad(p.name, col, r, v, text, "JSON rows hold the CSV's values")
            self.check_provenance(p.name, data["provenance"])

    def check_provenance(self, name: str, prov: dict):
        for k, v in self.prov.items():
            if k in ("command",):
                continue
            self.checked[name] += 1
            w = prov.get(k)
            if isinstance(v, float) and isinstance(w, float):
                ok = v == w or (v != v and w is None)
            else:
                ok = json.dumps(v, sort_keys=True, default=str) == json.dumps(w, sort_keys=True, default=str)
            if not ok:
                self.bad(name, f"provenance.{k}", "-", str(w)[:80], str(v)[:80], "the JSON's provenance is the YAML's")

    # -- HTML and LaTeX show the CSV's digits ------------------------------------------------------------
    def check_rendered(self):
        shown = {
            "means": [
                "mean_original",
                "ci_low_original",
                "ci_high_original",
                "rank_original",
                "mean_ranked",
                "ci_low_ranked",
                "ci_high_ranked",
                "halfwidth_ranked",
                "rank_ranked",
            ],
            "table2": ["tau_unq", "tau_ap_unq"]
            + (["tau_mid"] if self.spec.mid else [])
            + ["topic_tau_min", "topic_tau_max", "halfwidth_max"],
            "table4": ["tau", "tau_ranked", "delta_pct", "tau_ap", "tau_ap_ranked", "halfwidth_max"],
            "changes": [
                "sig",
                "s2ns",
                "s2ns_pct",
                "ns2s",
                "ns2s_pct",
                "delta_pct",
                "sig_ranked",
                "halfwidth_max",
                "could_flip_ranked",
                "sig_adjusted",
                "sig_ranked_adjusted",
                "flagged_incomparable",
                "flagged_incomparable_ranked",
            ],
            "power": [
                "pairs",
                "significant",
                "share",
                "significant_ranked",
                "share_ranked",
                "asl_median",
                "asl_median_ranked",
            ],
            "pairs": [
                "diff",
                "ci_low",
                "ci_high",
                "d_z",
                "rank_biserial",
                "incomparable_share",
                "halfwidth",
            ],
        }
        html = HtmlTables((self.out / f"report_N{self.spec.N}.html").read_text(encoding="utf-8"))
        tex_stems = {
            "means": "means_original_vs_ranked",
            "table2": "table2_tau_measure_vs_ranked",
            "table4": "table4_tau_between_measures",
            "changes": "tables5_6_significance_changes",
            "power": "discriminative_power",
            "pairs": "comparisons_with_baselines",
        }
        lead = {"means": 1, "table2": 1, "table4": 2, "changes": 2, "power": 1, "pairs": 1}  # text cells first
        for key, cols in shown.items():
            if key not in self.tables:
                continue
            df = self.tables[key]
            if key == "pairs":  # the effects, the bounds' half-width, then each test's p-value shown
                shown_p = "p_adjusted" if self.spec.correction != "none" else "p_value"
                cols = [c for c in cols if c in df.columns] + [f"{shown_p}_{t}" for t in self.tests]
            else:
                cols = [c for c in df.columns if c in cols]
            expect = [
                [(df[f"{c}_display"][r] if f"{c}_display" in df else _int_text(df[c][r])) for c in cols]
                for r in range(len(df))
            ]
            if key == "changes":  # Table 5 (no recall base), then Table 6, in CSV order within each
                rbm = [self.rb[m] if m >= 0 else False for m in self.label_map("", "measure", df["measure"], False)]
                groups = {
                    "table5": [e for e, b in zip(expect, rbm) if not b],
                    "table6": [e for e, b in zip(expect, rbm) if b],
                }
            else:
                groups = {key: expect}
            for section, exp in groups.items():
                if not exp:
                    continue
                got = html.rows(section)
                self._compare_rendered(f"report_N{self.spec.N}.html#{section}", got, exp, HTML_ROWS)
            tex = (self.out / f"{tex_stems[key]}_N{self.spec.N}.tex").read_text(encoding="utf-8")
            if key == "changes":  # Tables 5 and 6 in one file, each its own (possibly shortened) table
                got = latex_rows(tex, lead[key])
                exp = groups.get("table5", [])[:LATEX_ROWS] + groups.get("table6", [])[:LATEX_ROWS]
                self._compare_rendered(f"{tex_stems[key]}_N{self.spec.N}.tex", got, exp, len(exp))
            else:
                self._compare_rendered(
                    f"{tex_stems[key]}_N{self.spec.N}.tex", latex_rows(tex, lead[key]), expect, LATEX_ROWS
                )

    def _compare_rendered(self, name: str, got: list, exp: list, shown: int):
        """The rendered rows are the first ``shown`` rows of the CSV (the tables may show
        only the first rows; the CSV holds all), each with the CSV's display strings."""
        self.exact(name, "(rows shown)", "-", len(got), min(len(exp), shown))
        n = min(len(got), len(exp))
        for r in range(n):
            e = [x for x in exp[r] if x != ""]
            self.exact(name, "(numbers shown)", r, got[r], e, "the tables show the CSV's display strings")


HTML_ROWS = 10**9  # every table is whole: the HTML shows every row of the CSV
LATEX_ROWS = 10**9  # and so does the LaTeX (in continued floats)


def _int_text(text: str) -> str:
    if text == "":
        return ""
    x = float(text)
    return str(int(x)) if x == int(x) else f"{x:.4f}"


_NUMBER = re.compile(r"<0\.0001|−?∞|[-+−]?\d+(?:\.\d+)?(?:e[-+]\d+)?%?")


def _tokens(text: str) -> list[str]:
    """The numbers of a cell's text as the CSV's display strings write them (a real minus
    sign read as '-', but '−∞' kept)."""
    text = text.replace("-∞", "−∞")
    return [t if "∞" in t else t.replace("−", "-") for t in _NUMBER.findall(text)]


class HtmlTables(HTMLParser):
    """The numeric cells (class n) of each table section of the HTML report, superscript
    marks left out."""

    def __init__(self, text: str):
        super().__init__()
        self.sections: dict[str, list[list[str]]] = {}
        self._sec = None
        self._cell = None
        self._row = None
        self._sup = 0
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "section":
            self._sec = a.get("id")
        elif tag == "tr" and self._sec:
            self._row = []
        elif tag == "td" and self._row is not None and "n" in (a.get("class") or "").split():
            self._cell = []
        elif tag == "sup":
            self._sup += 1

    def handle_endtag(self, tag):
        if tag == "sup":
            self._sup -= 1
        elif tag == "td" and self._cell is not None:
            self._row.append("".join(self._cell))
            self._cell = None
        elif tag == "tr" and self._row is not None:
            if self._row:
                self.sections.setdefault(self._sec, []).append(self._row)
            self._row = None
        elif tag == "section":
            self._sec = None

    def handle_data(self, data):
        if self._cell is not None and not self._sup:
            self._cell.append(data)

    def rows(self, section: str) -> list[list[str]]:
        out = []
        for cells in self.sections.get(section, []):
            toks = []
            for c in cells:
                toks += _tokens(c)
            out.append(toks)
        return out


_LATEX_PART = re.compile(r"% irscale column part (\d+) of \d+: .*\(key columns: (\d+)\)")


def latex_rows(tex: str, lead: int) -> list[list[str]]:
    r"""The numbers of each body row of a LaTeX table (every float), after ``lead`` text cells;
    marks ($^{...}$) left out, \% and $-$ read back. A table set in column parts (each
    tabular marked ``% irscale column part k of n: ... (key columns: c)``) is joined back
    row by row, each part after the first without its c repeated key cells; each table of a
    file (from its ``% irscale <version>: <title>`` line) is read on its own."""
    out = []
    for one in re.split(r"(?m)^% irscale \d\S*: ", tex)[1:] or [tex]:
        parts: dict[int, list[list[str]]] = {}
        part, keys, body = 1, 0, False
        for line in one.splitlines():
            s = line.strip()
            m = _LATEX_PART.match(s)
            if m:
                part, keys = int(m.group(1)), int(m.group(2))
                continue
            if s.startswith(r"\midrule"):
                body = True
                continue
            if s.startswith(r"\bottomrule") or s.startswith(r"\end{tabular}"):
                body = False
                continue
            if not body or not s.endswith(r"\\") or s.startswith(r"\multicolumn"):
                continue
            s = re.sub(r"\$\^\{[^$]*\}\$", "", s[:-2])
            # a cell on two lines (a nested tabular) or wrapped (a \parbox): its text
            s = re.sub(r"\\begin\{tabular\}\[[tb]\]\{@\{\}[lrc]@\{\}\}|\\parbox\[t\]\{[\d.]+pt\}", "", s)
            s = s.replace(r"\end{tabular}", "").replace(r"\\{}", " ")
            s = s.replace(r"\%", "%").replace("$-$", "-").replace(r"$\infty$", "∞").replace(r"\textless{}", "<")
            s = s.replace(r"\textbf{", "").replace("}", "")
            parts.setdefault(part, []).append([c.strip() for c in s.split(" & ")])
        rows = parts.get(1, [])
        for k in sorted(parts)[1:]:
            rows = [a + b[keys:] for a, b in zip(rows, parts[k])]
        for cells in rows:
            toks = []
            for c in cells[lead:]:
                toks += _tokens(c)
            out.append(toks)
    return out
