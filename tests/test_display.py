"""The notebook displays (issue 26, item 6): ``_repr_html_`` of ScoreTable, Study, RankMap
and PhiBounds. Each is a well-formed HTML fragment with no script, escapes every name, and
stays compact: a big table shows at most ``MAX_ROWS`` rows and ``MAX_COLS`` columns and
counts the rest."""

from __future__ import annotations

from html.parser import HTMLParser

import numpy as np
import pandas as pd

from irscale._display import MAX_COLS, MAX_ROWS, fmt, table
from irscale.measures import parse_measure
from irscale.scales import build
from irscale.scales.bounds import PhiBounds
from irscale.study import Study
from irscale.table import HalfWidth, Ranked, ScoreTable

EVIL = '<script>alert("x")</script>&'
VOID = {"br", "hr", "img", "meta", "link", "input", "col", "wbr"}


class _Tags(HTMLParser):
    """Checks that every tag is closed in order; counts the rows and collects the text."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.rows = 0
        self.text: list[str] = []
        self.tags: set[str] = set()

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        assert not any(a.startswith("on") for a, _ in attrs), f"event handler attribute in <{tag}>"
        if tag == "tr":
            self.rows += 1
        if tag in {"td", "th", "tr", "p", "li", "div", "table"}:  # blocks and cells: words apart
            self.text.append(" ")
        if tag not in VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1] == tag, f"</{tag}> closes <{self.stack[-1] if self.stack else None}>"
        self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)


def parsed(html: str) -> _Tags:
    p = _Tags()
    p.feed(html)
    p.close()
    assert not p.stack, f"unclosed tags: {p.stack}"
    assert "script" not in p.tags and "<script" not in html.lower()
    return p


def text(html: str) -> str:
    return " ".join("".join(parsed(html).text).split())


def _table(systems, measures, T=4, values=None) -> ScoreTable:
    ms = tuple(parse_measure(m) for m in measures)
    rng = np.random.default_rng(0)
    v = rng.random((len(ms), len(systems), T)) if values is None else values
    return ScoreTable(ms, tuple(systems), tuple(f"q{i}" for i in range(T)), v)


def test_score_table_shows_the_shape_and_the_means():
    values = np.array([[[0.25, 0.75], [0.5, np.nan]]])  # P@5 of two systems on two topics; one left out
    html = _table(["a", "b"], ["P@5"], T=2, values=values)._repr_html_()
    t = text(html)
    assert "ScoreTable: 1 measure × 2 systems × 2 topics" in t
    assert "a 0.5" in t and "b 0.5" in t  # b's mean leaves its missing topic out
    assert "not counted" in t
    assert parsed(html).rows == 3  # the header and two systems


def test_score_table_escapes_names():
    html = _table([EVIL, "b"], ["P@5"])._repr_html_()
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;" in html
    assert EVIL in text(html)  # what the reader sees is the name as it is


def test_score_table_is_compact():
    systems = [f"run{i:03d}" for i in range(200)]
    measures = [f"P@{k}" for k in range(1, 31)]
    html = _table(systems, measures, T=3)._repr_html_()
    p = parsed(html)
    assert p.rows == 1 + MAX_ROWS + 1  # the header, MAX_ROWS systems, the "... more rows" line
    t = text(html)
    assert f"… {200 - MAX_ROWS} more rows" in t and f"… {30 - MAX_COLS} more columns" in t
    assert "run019" in t and "run020" not in t
    assert len(html) < 12_000  # bounded, whatever the table's size


def test_score_table_notes_ranked_columns_and_means_not_meaningful():
    ap = parse_measure("AP@10")
    ms = (ap, Ranked(ap, 10))
    t = ScoreTable(ms, ("a",), ("q1",), np.array([[[0.5]], [[400.0]]]))
    out = text(t._repr_html_())
    assert "1 ranked column" in out and "ranked(AP@10)" in out
    assert "means of AP@10 are not meaningful" in out


def test_score_table_notes_half_widths():
    r = Ranked(parse_measure("RBP(p=0.8)@40"), 40, normalized=True, midpoint=True)
    t = ScoreTable((r, HalfWidth(r)), ("a",), ("q1",), np.array([[[0.5]], [[1e-4]]]))
    out = text(t._repr_html_())
    assert "halfwidth columns" in out and "1 ranked column" in out


def _study(measures, systems=("a", "b")) -> Study:
    table2 = pd.DataFrame(
        {
            "measure": list(measures),
            "ranked": [f"ranked({m})" for m in measures],
            "tau_unq": 0.9,
            "tau_ap_unq": 0.8,
            "tau_mid": 0.85,
            "topic_tau_min": 0.5,
            "topic_tau_max": 1.0,
            "rb_dependent": False,
        }
    )
    return Study(
        10, tuple(measures), tuple(systems), ("q1", "q2", "q3"), table2, pd.DataFrame(), pd.DataFrame(),
        provenance={"relevance": "lenient", "tests": ["ttest"]},
    )  # fmt: skip


def test_study_shows_n_sizes_table2_and_the_report():
    html = _study(["AP@10", "P@10"])._repr_html_()
    t = text(html)
    assert "Study at N = 10" in t
    assert "measures (2): AP@10, P@10" in t and "systems (2): a, b" in t and "topics: 3" in t
    assert "AP@10 0.9 0.8 0.85 0.5 1" in t  # the head of Table 2
    assert ".write(out)" in t and "report_N10.html" in t
    assert parsed(html).rows == 3


def test_study_escapes_and_is_compact():
    measures = [f"M{i}<b>" for i in range(100)]
    html = _study(measures, systems=[EVIL] + [f"s{i}" for i in range(50)])._repr_html_()
    assert "M0<b>" not in html
    assert "M0&lt;b&gt;" in html and "&lt;script&gt;" in html
    p = parsed(html)
    assert p.rows == 1 + MAX_ROWS + 1
    assert f"… {100 - MAX_ROWS} more rows" in text(html)
    assert "and 92 more" in text(html)  # measures listed: the first 8
    assert len(html) < 8_000


def test_rank_map_shows_what_it_is():
    rm = build("AP", 6, cache=False)
    t = text(rm._repr_html_())
    assert "RankMap: AP at N = 6" in t
    assert f"distinct values (size): {rm.size:,}" in t and "runs: 64" in t
    assert "relevance levels: 2" in t and f"engine: {rm.engine}" in t and "from cache: no (built)" in t


def test_rank_map_escapes_its_engine_name():
    rm = build("P@3", 3, cache=False)
    rm.engine = EVIL
    html = rm._repr_html_()
    assert EVIL in text(html) and "&lt;script&gt;" in html


def test_phi_bounds_is_compact_and_escaped():
    n = 500
    lo = np.linspace(0, 0.5, n)
    b = PhiBounds(lo, lo + 1e-4, EVIL, 2**40, 10_000, 0.0, "a < b", 1e-4, 0.5, {"p<": "4/5"})
    html = b._repr_html_()
    t = text(html)
    assert EVIL in t and "&lt;script&gt;" in html and "p&lt;" in html
    assert "runs: 500" in t and "certified" in t and f"size): {2**40:,}" in t
    assert parsed(html).rows == 1 + MAX_ROWS + 1 and f"… {n - MAX_ROWS} more rows" in t
    assert len(html) < 6_000


def test_exact_phi_bounds_say_so():
    b = PhiBounds(np.array([0.5]), np.array([0.5]), "exact (closed)", 11, 0, 0.0, "none", 0.0, 0.0)
    t = text(b._repr_html_())
    assert "guarantee: exact" in t and "resolution" not in t


def test_table_counts_rows_and_columns_it_leaves_out():
    html = table([f"c{i}" for i in range(5)], [[f"r{i}", *range(5)] for i in range(3)], "row", max_rows=2, max_cols=3)
    t = text(html)
    assert "… 1 more row" in t and "… 2 more columns" in t and "c3" not in t
    assert parsed(html).rows == 1 + 2 + 1
    assert fmt(float("nan")) == "&ndash;" and fmt(12345) == "12,345" and fmt(0.123456) == "0.1235"
