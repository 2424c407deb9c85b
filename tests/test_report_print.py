"""The HTML report printed and on a 1280 px screen (issue 24 item 3, "HTML that prints"), and
the index page of a study over several run lengths.

Printed: headless Chromium prints a real study's report to PDF and every row of every table,
every cell in order, is read back from the PDF's text (pypdf); a control prints the same page
with the old fixed-height scroll boxes and shows that the check sees the rows they cut. On
screen: the report has no script (its CSP forbids one), so whether a table is wider than its
box is seen from pixels: the page is shown at 1280 px with the boxes made to overflow visibly,
and nothing may be drawn right of the content column. The style sheet is also checked
statically. Tests needing Chromium or the shared data skip, with the reason, without them."""

from __future__ import annotations

import re
import unicodedata
from html.parser import HTMLParser

import numpy as np
import pytest
from conftest import DATA, need
from test_report import _browse, needs_browser
from typer.testing import CliRunner

from irscale.cli import app
from irscale.report.html import CSS, INDEX, link_index

WINDOW = 1280  # px: the window the report must fit without hiding a column
MAIN = 1240  # px: main's max-width (padding included) in CSS
PAD = 24  # px: main's side padding


def _rule(css: str, selector: str) -> str:
    """The declarations of the (first) rule whose selector list is exactly ``selector``."""
    m = re.search(r"(?:^|[}\s])" + re.escape(selector) + r"\s*\{([^}]*)\}", css)
    assert m, f"no CSS rule for {selector!r}"
    return m.group(1)


def _print_css() -> str:
    m = re.search(r"@media print\s*\{(.*)\}\s*$", CSS.strip(), re.S)
    assert m, "no @media print block"
    return m.group(1)


# -- static checks of the style sheet ----------------------------------------------------------------


def test_print_css_shows_every_row():
    """Printed, no scroll box: every row shows, the header row repeats on each page, a row is
    never cut by a page break, and the YAML is not clipped either."""
    pr = _print_css()
    box = _rule(pr, ".box, .box.tall")
    assert "max-height: none" in box and "overflow: visible" in box
    assert "display: table-header-group" in _rule(pr, "thead")
    assert "position: static" in _rule(pr, "thead th")  # sticky headers are for the screen
    assert "break-inside: avoid" in _rule(pr, "tr, figure, dl.columns dt, dl.columns dd, .meaning")
    assert "break-after: avoid" in _rule(pr, "h2, section.table > p.caption, section.table > p.files, tr.group")
    yaml = _rule(pr, "pre.yaml")
    assert "max-height: none" in yaml and "overflow: visible" in yaml and "pre-wrap" in yaml
    assert re.search(r"@page\s*\{[^}]*size:\s*landscape", CSS)  # room for Table 5's 13 columns


def test_css_hides_no_column_statically():
    """What the style sheet alone says about a table wider than its box: nothing is clipped
    (no overflow: hidden or clip anywhere), the box scrolls sideways on screen, no cell has a
    fixed minimum width (td { min-width: 4em } made the 13-column tables overflow at 1280 px),
    and a value with its confidence interval may put the interval under it (the widest
    cells: ranked means and differences with 6-digit bounds) while the interval itself stays
    whole."""
    assert not re.search(r"overflow(-[xy])?\s*:\s*(hidden|clip)", CSS)
    assert re.search(r"overflow(-x)?:\s*auto", _rule(CSS, ".box"))
    rules = re.findall(r"([^{}]+)\{([^{}]*)\}", re.sub(r"/\*.*?\*/", "", CSS, flags=re.S))
    cells = [(sel.strip(), body) for sel, body in rules if re.search(r"\b(td|th)\b", sel)]
    assert cells and not [sel for sel, body in cells if re.search(r"(^|[;\s])(min-)?width\s*:", body)]
    assert "white-space: normal" in _rule(CSS, "td.wrap") and "white-space: nowrap" in _rule(CSS, ".ci")
    # the geometry the 1280 px tests below assume: a content column of 1240 - 2 * 24 px
    assert re.search(rf"header, main \{{[^}}]*max-width: {MAIN}px", CSS) and f"padding: 0 {PAD}px" in CSS


# -- a real study, printed and at 1280 px ----------------------------------------------------------------


class _Tables(HTMLParser):
    """Each table of a report: (section id, header cells, body rows as lists of cell text)."""

    def __init__(self):
        super().__init__()
        self.tables: list[tuple[str, list[str], list[list[str]]]] = []
        self.section = None
        self.part = None
        self.row = None
        self.cell = None

    def handle_starttag(self, tag, attrs):
        if tag == "section":
            self.section = dict(attrs).get("id")
        elif tag == "table":
            self.tables.append((self.section, [], []))
        elif tag in ("thead", "tbody"):
            self.part = tag
        elif tag == "tr":
            self.row = []
        elif tag in ("td", "th") and self.row is not None:
            self.cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self.cell is not None:
            self.row.append("".join(self.cell))
            self.cell = None
        elif tag == "tr" and self.row is not None:
            _, head, body = self.tables[-1]
            (head.extend if self.part == "thead" else body.append)(self.row)
            self.row = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell.append(data)


def _tables(html: str):
    p = _Tables()
    p.feed(html)
    return p.tables


def _squeeze(text: str) -> str:
    """Text compared without white space (the PDF breaks lines where the page does) and with
    ligatures undone (the PDF's "ﬀ" is the page's "ff")."""
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text))


def _pdf_text(pdf) -> tuple[str, int]:
    import pypdf

    reader = pypdf.PdfReader(pdf)
    return _squeeze("".join(page.extract_text() for page in reader.pages)), len(reader.pages)


def _missing_cells(html: str, text: str) -> dict[str, list]:
    """For each table of the page: its cells (header, then each row's, in order) that the
    PDF's text lacks, read in order: a cell must come after the one before it."""
    out = {}
    for section, head, body in _tables(html):
        at, lost = 0, []
        for i, row in enumerate([head] + body):
            for cell in row:
                key = _squeeze(cell)
                k = text.find(key, at)
                if k < 0:
                    lost.append((i, cell))  # row 0 is the header
                    continue
                at = k + len(key)
        if lost:
            out[section] = lost
    return out


def _print(page, tmp_path, pdf):
    _, problems = _browse(page, tmp_path, f"--print-to-pdf={pdf}", "--no-pdf-header-footer")
    assert problems == [] and pdf.exists(), problems
    return pdf


@pytest.fixture(scope="module")
def dl19_report(tmp_path_factory):
    """The dl19 study of test_report's browser test (10 runs, 3 measures, graded, Holm, one
    baseline): 480 rows of comparisons with the baseline and 33 rows of means, both more
    than a scroll box showed (SCROLL_ROWS)."""
    root = need(DATA / "dl19")
    runs = sorted((root / "runs").glob("*.gz"))[::4]
    out = tmp_path_factory.mktemp("dl19") / "report"
    res = CliRunner().invoke(
        app,
        [
            "compare",
            str(root / "qrels.dl19-passage.txt"),
            *map(str, runs),
            "-N",
            "10",
            "-m",
            "nDCG",
            "-m",
            "P",
            "-m",
            "RBP(p=0.8)",
            "--relevance",
            "graded",
            "--correction",
            "holm",
            "-b",
            runs[0].name[6:-3],
            "--no-figures",
            "--out",
            str(out),
        ],
    )
    assert res.exit_code == 0, res.output
    return out / "report_N10.html"


@pytest.mark.slow
@needs_browser
@pytest.mark.xdist_group("dl19_report")
def test_printed_report_has_every_row_of_every_table(dl19_report, tmp_path):
    pytest.importorskip("pypdf")
    html = dl19_report.read_text(encoding="utf-8")
    tables = {section: body for section, _, body in _tables(html)}
    assert len(tables["pairs"]) == 60 and len(tables["means"]) == 33  # longer than the screen's scroll box
    assert {
        "means",
        "table2",
        "table4",
        "table5",
        "table6",
        "pairs",
        "measure_free_summary",
        "measure_free_histogram",
        "measure_free_top",
    } <= set(tables)
    text, pages = _pdf_text(_print(dl19_report, tmp_path, tmp_path / "report.pdf"))
    assert _missing_cells(html, text) == {}  # every header and every cell of every row, in order
    assert 15 <= pages <= 60, pages  # landscape, about 35 rows a page

    # the control: the same page printed with the old scroll boxes loses rows, and the check sees it
    old = dl19_report.with_name("old_boxes.html")
    old.write_text(
        html.replace(
            "</head>",
            "<style>@media print { .box.tall { max-height: 34em !important; "
            "overflow: auto !important; } }</style></head>",
            1,
        ),
        encoding="utf-8",
    )
    text, _ = _pdf_text(_print(old, tmp_path, tmp_path / "old.pdf"))
    lost = _missing_cells(html, text)
    assert set(lost) <= {"means", "pairs"} and len({i for i, _ in lost.get("pairs", ())}) > 20, lost.keys()


def _ink_right_of_content(page, tmp_path, name: str) -> tuple[int, int]:
    """Shows ``page`` at 1280 px with every table box made to overflow visibly (nothing else
    changed: a box's overflow does not change its table's width) and returns (the number of
    pixel rows with ink right of the content column, the last pixel row with ink)."""
    from PIL import Image

    probe = page.with_name(f"{name}_probe.html")
    probe.write_text(
        page.read_text(encoding="utf-8").replace(
            "</head>",
            "<style>.box { overflow: visible !important; max-height: none !important; border: 0 !important; } "
            "header { border: 0 !important; }</style></head>",
            1,
        ),
        encoding="utf-8",
    )
    height = 30000
    shot = tmp_path / f"{name}.png"
    _, problems = _browse(probe, tmp_path, f"--screenshot={shot}", f"--window-size={WINDOW},{height}")
    assert problems == [], problems
    img = np.asarray(Image.open(shot).convert("L"))
    assert img.shape == (height, WINDOW)
    right = (WINDOW - MAIN) // 2 + MAIN - PAD  # the content column's right edge
    inked = (img < 250).any(axis=1)
    last = int(np.nonzero(inked)[0].max())
    assert last < height - 50, "the page is taller than the screenshot: raise its height"
    return int((img[:, right + 2 :] < 250).any(axis=1).sum()), last


@pytest.mark.slow
@needs_browser
@pytest.mark.xdist_group("dl19_report")
def test_no_column_hidden_at_1280px_dl19(dl19_report, tmp_path):
    wide, _ = _ink_right_of_content(dl19_report, tmp_path, "dl19")
    assert wide == 0, f"{wide} pixel rows of some table lie right of the content column at {WINDOW} px"


@needs_browser
@pytest.mark.slow
def test_no_column_hidden_at_1280px_trec8(tmp_path):
    """TREC-8, 26 runs (325 pairs: 3-digit counts in Tables 5/6), four measures, two baselines
    (long significance marks in the means)."""
    root = need(DATA / "trec8")
    runs = sorted((root / "runs").glob("*.gz"))[::5]
    out = tmp_path / "t8"
    res = CliRunner().invoke(
        app,
        [
            "compare",
            str(root / "qrels.trec8.txt"),
            *map(str, runs),
            "-N",
            "10",
            "-m",
            "AP",
            "-m",
            "P",
            "-m",
            "RBP(p=0.8)",
            "-m",
            "nDCG",
            "--correction",
            "holm",
            "-b",
            "1",
            "-b",
            "CL99SDopt2",
            "--no-figures",
            "--out",
            str(out),
        ],
    )
    assert res.exit_code == 0, res.output
    wide, _ = _ink_right_of_content(out / "report_N10.html", tmp_path, "t8")
    assert wide == 0, f"{wide} pixel rows of some table lie right of the content column at {WINDOW} px"


# -- the index page of a study over several run lengths ------------------------------------------------


@pytest.mark.slow
def test_study_writes_an_index_of_its_run_lengths(tmp_path):
    from importlib import resources

    toy = resources.files("irscale") / "examples" / "toy"
    out = tmp_path / "s"
    res = CliRunner().invoke(
        app,
        [
            "study",
            "trec8-like",
            str(toy / "qrels.txt"),
            str(toy / "runs"),
            "--depths",
            "5,10",
            "--no-figures",
            "--out",
            str(out),
        ],
    )
    assert res.exit_code == 0, res.output
    assert "index.html" in res.stderr
    page = (out / INDEX).read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "Content-Security-Policy" in page and "<script" not in page
    links = re.findall(r'href="([^"#][^"]*)"', page)
    assert {
        "report_N5.html",
        "report_N10.html",
        "table2_tau_unq.csv",
        "table2_tau_unq.tex",
        "table3_tau_mid.csv",
        "table3_tau_mid.tex",
    } <= set(links)
    assert all((out / x).is_file() for x in links), [x for x in links if not (out / x).is_file()]
    # the tables across run lengths, one row per N, the numbers of their CSV files
    tables = {section: (head, body) for section, head, body in _tables(page)}
    for key, stem in (("table2", "table2_tau_unq"), ("table3", "table3_tau_mid")):
        head, body = tables[key]
        assert [r[0] for r in body] == ["5", "10"] and head[:2] == ["N", "P"]
        import pandas as pd

        csv = pd.read_csv(out / f"{stem}.csv", dtype=str)
        assert [r[1] for r in body] == list(csv["P_display"])
    assert [r[1] for r in tables["reports"][1]] == ["report_N5.html", "report_N10.html"]
    # each report links back, once
    for n in (5, 10):
        report = (out / f"report_N{n}.html").read_text(encoding="utf-8")
        assert report.count(f'href="{INDEX}"') == 1
        assert link_index(report) == report  # already linked: unchanged


@needs_browser
def test_index_in_headless_chromium(tmp_path):
    """The index page renders without a console error (CSP) in the browser."""
    from test_report import fake_study

    import irscale.report.files as rf

    a, b = fake_study(extras=False), fake_study(extras=False)
    b.N = 20
    for st in (a, b):
        rf.write_report(st, tmp_path)
    rf.write_tau_tables([a, b], tmp_path)
    index = rf.write_index([a, b], tmp_path, command="irscale study trec8-like q r --depths 10,20")
    dom, problems = _browse(index, tmp_path, "--dump-dom")
    assert problems == [], problems
    assert 'href="report_N20.html"' in dom and '<section id="table3"' in dom
    assert "irscale study trec8-like q r --depths 10,20" in dom
    assert 'href="index.html"' in (tmp_path / "report_N10.html").read_text(encoding="utf-8")
