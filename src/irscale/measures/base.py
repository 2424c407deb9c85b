"""Measure base class, registry and parser.

A measure is a frozen dataclass whose fields are its parameters. Its canonical string
(``str(m)``) is also its identity and parses back to an equal object::

    >>> from irscale.measures import parse_measure
    >>> str(parse_measure("RBP(p=0.8)@30"))
    'RBP(p=0.8)@30'
    >>> parse_measure("nDCG(cutoff=10)") == parse_measure("nDCG@10")
    True

Every measure has two implementations that tests hold equal:

* :meth:`Measure.reference` — plain Python over one ranked list of grades, written to
  be read (and checked against trec_eval's C code);
* :meth:`Measure.batch` — numpy over an (S, T, D) grade array of many runs and topics.
"""

from __future__ import annotations

import ast
import dataclasses
import difflib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np

from irscale.data import PAD, UNJUDGED, Grade, TopicStats, grade_level
from irscale.errors import ArgumentError, IrscaleError, MeasureError, UnknownMeasureError
from irscale.measures.registry import ENTRIES, REGISTRY, register
from irscale.validate import decimal_text


@dataclass(frozen=True)
class Measure:
    """Base class. Subclasses are frozen dataclasses; fields are parameters.

    The interval scale of a measure (phi) is computed by the run space that declares
    ``@serves(ItsClass)`` (:mod:`irscale.scales.spaces`; ``irscale measures`` names it);
    the class, its spaces and its theory rule are one entry of
    :mod:`irscale.measures.registry`.

    Class attributes
    ----------------
    graded : bool
        Uses grades beyond relevant / non-relevant.
    needs_recall_base : bool
        Depends on the number of relevant documents of the topic (RB).
    """

    NAME: ClassVar[str] = "?"
    graded: ClassVar[bool] = False
    needs_recall_base: ClassVar[bool] = False
    requires_cutoff: ClassVar[bool] = False
    always_shown: ClassVar[tuple[str, ...]] = ()  # parameters shown in the name even at default
    # trec_eval's names, "{cutoff}" standing for the cutoff (``("map", "map_cut_{cutoff}")``):
    # both trec_eval_name and the parser of trec_eval names read them
    trec_eval: ClassVar[tuple[str, ...]] = ()
    trec_eval_defaults: ClassVar[tuple[str, ...]] = ()  # parameters that must be at their default for it
    is_count: ClassVar[bool] = False  # an integer count (trec_eval sums it over topics)
    user_defined: ClassVar[bool] = False  # irscale's own measures: True for FunctionMeasure
    no_scale: ClassVar[str | None] = None  # why the measure has no interval-scale version, if it has none
    levels_only: ClassVar[bool] = False  # uses only the order of the grades (SBTO): any grade codes serve
    uses_grades: ClassVar[bool] = True  # False: never looks at a grade (NumRet)
    # the largest value the measure takes (its values lie in [0, value_bound]); None: no bound
    # (DCG, the counts); irscale.testing.check_value_bound holds a measure to it
    value_bound: ClassVar[float | None] = 1.0
    # names of instances the conformance suite (irscale.testing) checks besides the defaults
    examples: ClassVar[tuple[str, ...]] = ()
    param_aliases: ClassVar[dict[str, str]] = {}  # other spellings of a parameter in measure names
    param_refusals: ClassVar[dict[str, str]] = {}  # parameters refused with a reason (ERR's gains)
    # what each parameter means (``irscale measures`` shows it); subclasses add their own
    param_docs: ClassVar[dict[str, str]] = {
        "cutoff": "rank cutoff k: only the top k documents count (the run length N in a transform)",
        "rel": "binary relevance: a document is relevant if its grade >= rel",
    }

    def __post_init__(self):
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if f.name == "cutoff" and v is not None:
                if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                    raise MeasureError(f"{self.NAME}: cutoff must be a positive integer, not {v!r}")
                object.__setattr__(self, "cutoff", int(v))
            if f.name == "rel" and v is not None:
                object.__setattr__(self, "rel", _rel_value(self.NAME, v))
        if self.requires_cutoff and getattr(self, "cutoff", None) is None:
            raise MeasureError(f"{self.NAME} needs a cutoff (the run length N), for example {self.NAME}@30")
        self.validate()

    def validate(self) -> None:
        """Check parameter values (override; raise MeasureError)."""

    # -- identity -----------------------------------------------------------------
    def params(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    def __str__(self) -> str:
        parts = []
        for f in dataclasses.fields(self):
            if f.name == "cutoff":
                continue
            v = getattr(self, f.name)
            if v != f.default or f.name in self.always_shown:
                parts.append(f"{f.name}={self.show_param(f.name, v)}")
        s = self.NAME + (f"({','.join(parts)})" if parts else "")
        cutoff = getattr(self, "cutoff", None)
        return s + (f"@{cutoff}" if cutoff is not None else "")

    def __repr__(self) -> str:
        return str(self)

    def show_param(self, name: str, value: Any) -> str:
        """How a parameter value is written in the canonical name (``repr``; a Fraction
        as ``1/3``, a rel as the decimal it is, ``0.5``): whatever it writes must parse
        back to the same value."""
        if name == "rel" and isinstance(value, Fraction):
            return decimal_text(value)
        if isinstance(value, Fraction):
            return f"{value.numerator}/{value.denominator}"
        return repr(value)

    @property
    def trec_eval_name(self) -> str | None:
        """trec_eval's name for this measure (``map_cut_10``), or None if it has none
        (from the class's ``trec_eval`` templates)."""
        defaults = {f.name: f.default for f in dataclasses.fields(self)}
        if any(getattr(self, k) != defaults[k] for k in self.trec_eval_defaults):
            return None
        cutoff = getattr(self, "cutoff", None)
        for t in self.trec_eval:
            if ("{cutoff}" in t) == (cutoff is not None):
                return t.format(cutoff=cutoff)
        return None

    @property
    def label(self) -> str:
        """A short label for report columns (the canonical name unless a family has a
        shorter one)."""
        return str(self)

    @classmethod
    def param_info(cls) -> list[tuple[str, Any, str]]:
        """``(name, default, description)`` of each parameter."""
        docs: dict[str, str] = {}
        for k in reversed(cls.__mro__):
            docs.update(k.__dict__.get("param_docs", {}))
        return [(f.name, f.default, docs.get(f.name, "")) for f in dataclasses.fields(cls)]

    # -- real-valued grades ---------------------------------------------------------------
    def for_grades(self, values: Sequence[Fraction] | None) -> Measure:
        """The measure as computed on the grade codes of a relevance scale whose code k
        has the grade ``values[k]`` (:class:`~irscale.data.TopicStats`; None: integer
        grades, each its own code): ``rel`` becomes the first code whose grade reaches it
        (``P(rel=0.5)`` on grades 0, 0.25, 0.5, 1.7 is ``P(rel=2)`` on codes 0..3), and a
        graded measure takes the grades as its gains (see ``_GainMeasure``). Measures that
        use only the order of the grades (``levels_only``) need nothing; any other graded
        measure, and a binary one without ``rel`` (a user's), is refused on real-valued
        grades, with the reason. On integer grades
        with an integer ``rel`` it returns the measure itself, so nothing changes there.

        The result is for computing only: tables, reports and messages name the measure
        as the user wrote it."""
        rel = getattr(self, "rel", None)
        if rel is not None:
            code = grade_level(rel, values)
            return self if isinstance(rel, int) and code == rel else dataclasses.replace(self, **{"rel": code})
        if values is not None and self.uses_grades and not self.levels_only:
            # a graded measure (rel None), or a binary one of a user's without a rel to translate
            raise MeasureError(self.real_grades_refusal())
        return self

    def real_grades_refusal(self) -> str:
        """Why this graded measure cannot take real-valued grades as they are."""
        return (
            f"{self}: its values use the grades as integers, and these qrels have real-valued grades "
            f"(like 0.5); give it a threshold rel= (binary relevance, for example {type(self).NAME}(rel=0.5)) "
            "where it has one, or use nDCG, DCG, RBP, gP or gR, which take real grades as gains"
        )

    # -- the interval-scale layer's view ------------------------------------------------
    def normalizer(self, topics: TopicStats, N: int, c: int) -> np.ndarray:
        """Per-topic divisor from the measure's recall-base-free core to the measure at
        run length N over grades 0..c: the core (``measure * normalizer``) depends on
        the run only, and is what the interval-scale transformation maps (RB * AP for
        AP, the number of relevant documents retrieved for P and R, DCG for nDCG).
        1 for measures that need no normalisation."""
        return np.ones(len(topics.names))

    # -- computation --------------------------------------------------------------
    def batch(self, grades: np.ndarray, topics: TopicStats) -> np.ndarray:
        """Scores of an (S, T, D) int16 grade array: float64 array (S, T)."""
        raise NotImplementedError

    def reference(self, grades: Sequence[int], topic: TopicStats) -> float:
        """Score of one ranked list of grades on a one-topic :class:`TopicStats`."""
        raise NotImplementedError

    def __call__(self, grades: Sequence[int], level_counts: Sequence[int] | None = None) -> float:
        """Convenience: score one ranked list. ``level_counts[g]`` is the number of judged
        documents of grade g for the topic; by default the list's own judged documents."""
        g = [int(x) for x in grades]
        if level_counts is None:
            c = max([x for x in g if x >= 0] + [1])
            level_counts = [sum(1 for x in g if x == k) for k in range(c + 1)]
        topic = TopicStats.single(level_counts)
        arr = np.array([[g if g else [int(PAD)]]], dtype=np.int16)
        return float(self.batch(arr, topic)[0, 0])


def at_depth(measure: str | Measure, N: int) -> Measure:
    """``measure`` evaluated on runs cut at N (its cutoff set to N): the one way a measure
    is put at a run length (transform, compare, the scale checks and the CLI use it).

    >>> str(at_depth("RBP(p=0.8)", 30)), str(at_depth("AP@10", 10))
    ('RBP(p=0.8)@30', 'AP@10')
    """
    m = parse_measure(measure, default_cutoff=N)
    if not any(f.name == "cutoff" for f in dataclasses.fields(m)):
        raise MeasureError(
            f"{m} has no ranked version at a run length N: it takes no cutoff"
            + (f" ({m.no_scale})" if m.no_scale else "")
        )
    cutoff = getattr(m, "cutoff", None)  # a field of the subclass (checked above), not of Measure
    if cutoff in (None, N):
        return dataclasses.replace(m, **{"cutoff": N})
    raise MeasureError(
        f"{m} has cutoff {cutoff}, but the transform is at run length N={N}; give the measure "
        f"without a cutoff ({type(m).NAME} instead of {m}) or use N={cutoff} (API depth={cutoff}, "
        f"CLI -N {cutoff})"
    )


@dataclass(frozen=True, eq=False, repr=False)
class FunctionMeasure(Measure):
    """A user measure given as a plain function ``fn(runs, c)`` of an (n, N) array of
    grades 0..c (one row per run), returning n numbers (``irscale inspect module:function``).
    Like every user measure without a run space of its own, its runs tie exactly when its
    float64 values are equal (return integers, or write a Measure with ``exact_key``,
    where floating-point noise could split a tie)."""

    fn: Any = None
    name: str = "measure"
    cutoff: int | None = None
    graded = True
    user_defined: ClassVar[bool] = True
    value_bound: ClassVar[float | None] = None  # a plain function claims no range

    def __eq__(self, other):  # two functions are two measures, even under one name
        return isinstance(other, FunctionMeasure) and (self.fn, self.name, self.cutoff) == (
            other.fn,
            other.name,
            other.cutoff,
        )

    def __hash__(self):
        return hash((FunctionMeasure, id(self.fn), self.name, self.cutoff))

    def __str__(self) -> str:
        return self.name

    def batch(self, grades, topics):
        g = np.clip(cut(np.asarray(grades), self.cutoff), 0, topics.max_grade)
        flat = g.reshape(-1, g.shape[-1]).astype(np.int64)
        return np.asarray(self.fn(flat, topics.max_grade), dtype=np.float64).reshape(g.shape[:-1])


# -- helpers shared by the measure families ----------------------------------------


def exact_grade(v) -> Fraction | None:
    """A grade given as a parameter (a ``rel`` threshold, a grade of a gain map), exactly:
    an int; a float as the decimal it is written as (0.1 is 1/10); a Fraction; text of a
    decimal (``"0.5"``) or a fraction (``"1/3"``). None where ``v`` is none of these (or
    not finite). The one reader of grades typed by a user; files are read by
    :mod:`irscale.io`."""
    try:
        if isinstance(v, bool) or v is None:
            return None
        if isinstance(v, (int, np.integer)):
            return Fraction(int(v))
        if isinstance(v, (float, np.floating)):
            return Fraction(repr(float(v))) if np.isfinite(v) else None
        if isinstance(v, Fraction):
            return v
        if isinstance(v, str) and re.fullmatch(r"\s*(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?(\s*/\s*\d+)?\s*", v):
            return Fraction(v.replace(" ", ""))
    except (ValueError, ZeroDivisionError):
        return None
    return None


def _rel_value(name: str, v) -> Grade:
    """A measure's ``rel`` as stored: an int, or the exact Fraction of a real-valued
    threshold (:func:`exact_grade`); >= 0."""
    f = exact_grade(v)
    if f is None or f < 0:
        hint = "an integer grade like 2, or a decimal like 0.5 for real-valued grades"
        raise MeasureError(f"{name}: rel must be a non-negative grade ({hint}), not {v!r}")
    return int(f) if f.denominator == 1 else f


def cut(grades: np.ndarray, cutoff: int | None) -> np.ndarray:
    return grades if cutoff is None else grades[..., :cutoff]


def relevant(grades: np.ndarray, rel: Grade) -> np.ndarray:
    """Binary relevance mask: grade >= rel (>= 0), so sentinels and negative grades
    are never relevant (integer grades or level codes: a rel of 1/2 is 1 there)."""
    return grades >= grade_level(rel)


def graded_gain(grades: np.ndarray, c: int, rel: Grade | None) -> np.ndarray:
    """Gains in grade units: the grade clipped to [0, c]; 0/1 when ``rel`` is given."""
    if rel is not None:
        return relevant(grades, rel).astype(np.float64)
    return np.clip(grades, 0, c).astype(np.float64)


def ref_rel(g: int, rel: Grade) -> bool:
    return g >= rel


def ref_gain(g: int, c: int, rel: Grade | None) -> float:
    if rel is not None:
        return 1.0 if ref_rel(g, rel) else 0.0
    return float(min(max(g, 0), c))


def ranks(n: int) -> np.ndarray:
    return np.arange(1, n + 1, dtype=np.float64)


def hits_at(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The True cells of an (..., D) mask, sparse: for each, its row (flat index over
    the leading axes), its 0-based rank and how many True cells its row has up to and
    including it. Measures summing over relevant documents work on these (relevant
    documents are a few percent of a depth-1000 run) instead of the dense matrix."""
    D = mask.shape[-1]
    flat = np.flatnonzero(mask)
    row = flat // D
    k = flat - row * D
    first = np.empty(len(row), dtype=bool)
    first[:1] = True
    np.not_equal(row[1:], row[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    count = np.arange(1, len(row) + 1) - np.repeat(starts, np.diff(np.append(starts, len(row))))
    return row, k, count


def row_sums(row: np.ndarray, weights: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum ``weights`` per row (in rank order, as trec_eval accumulates)."""
    return np.bincount(row, weights=weights, minlength=int(np.prod(shape))).reshape(shape)


def rb_divisor(topics: TopicStats, rel: Grade) -> np.ndarray:
    """Each topic's recall base RB (documents with grade >= rel) as a divisor of the
    RB-free core: infinite where RB = 0, so that the measure is 0 there."""
    rb = topics.num_rel(rel).astype(np.float64)
    return np.where(rb > 0, rb, np.inf)


def safe_div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    den = np.asarray(den, dtype=np.float64)
    out = np.zeros(np.broadcast(num, den).shape, dtype=np.float64)
    np.divide(num, den, out=out, where=den != 0)
    return out


__all__ = [
    "Measure",
    "FunctionMeasure",
    "REGISTRY",
    "register",
    "parse_measure",
    "parse_measures",
    "from_trec_eval",
    "at_depth",
    "PAD",
    "UNJUDGED",
    "trec_eval_names",
    "at_rel_level",
]


# -- parsing ---------------------------------------------------------------------


def _literal(node: ast.AST, text: str):
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):  # a fraction: p=1/3
        num, den = _literal(node.left, text), _literal(node.right, text)
        if (
            isinstance(num, int)
            and isinstance(den, int)
            and not isinstance(num, bool)
            and not isinstance(den, bool)
            and den != 0
        ):
            return Fraction(num, den)
        raise MeasureError(f"{text!r}: a fraction must be two integers like 1/3, found {ast.unparse(node)!r}")
    try:
        return ast.literal_eval(node)
    except ValueError:
        raise MeasureError(
            f"{text!r}: parameter values must be numbers or strings, found {ast.unparse(node)!r}"
        ) from None


def _canonical_names() -> dict[str, str]:
    """Every registered name and alias, lower-cased, to its canonical name."""
    out = {e.name.lower(): e.name for e in ENTRIES.values()}
    for e in ENTRIES.values():
        for a in e.aliases:
            out.setdefault(a.lower(), e.name)
    return out


def _lookup(name: str, text: str) -> type[Measure]:
    """The measure class named ``name``; names are case-insensitive (``ap``, ``NDCG``
    and ``nDCG`` are one measure; its canonical spelling is the class's ``NAME``)."""
    canonical = _canonical_names()
    if name.lower() in canonical:
        return REGISTRY[canonical[name.lower()]]
    close = difflib.get_close_matches(name.lower(), list(canonical), n=3, cutoff=0.5)
    close = list(dict.fromkeys(canonical[c] for c in close))  # canonical names, once
    hint = f"; did you mean {' or '.join(repr(text.replace(name, c, 1)) for c in close)}?" if close else ""
    raise UnknownMeasureError(
        f"unknown measure {text!r}{hint} (known: {', '.join(sorted(REGISTRY))}; "
        "`irscale measures` lists them with their parameters)"
    )


def parse_measure(text: str | Measure, *, default_cutoff: int | None = None) -> Measure:
    """Parse an ir_measures-style name: ``AP``, ``AP@30``, ``RBP(p=0.8)@30``,
    ``nDCG(base=10)@30``, ``P(rel=2)@10``. trec_eval names (``map``, ``P_10``,
    ``ndcg_cut_10``) are accepted too. Names are case-insensitive (``ap@10`` is
    ``AP@10``); ``str()`` of the result is the canonical spelling. Parsing uses
    :mod:`ast`, never ``eval``. ``default_cutoff`` is used for a measure that needs
    a cutoff and was given none (``gP`` at run length N)."""
    if isinstance(text, Measure):
        return text
    if not isinstance(text, str):
        raise ArgumentError(
            f"a measure must be a name like 'AP@30' or a Measure object, not {type(text).__name__} {text!r}"
        )
    s = text.strip()
    if not s:
        raise MeasureError("empty measure name; expected a name like 'AP@30' or 'RBP(p=0.8)@30'")
    names = trec_eval_names(s)
    if len(names) > 1:
        raise MeasureError(
            f"{text!r} names {len(names)} measures ({', '.join(names)}); give them as a list "
            "(parse_measures, or -m once on the command line)"
        )
    s = names[0]
    te = from_trec_eval(s)
    if te is not None:
        return te
    with_params = _TREC_PARAMS.fullmatch(s)  # P_10(rel=2): a trec_eval name with irscale's parameters
    if with_params and (te := from_trec_eval(trec_eval_names(with_params.group(1))[0])) is not None:
        cutoff = getattr(te, "cutoff", None)
        s = f"{type(te).NAME}({with_params.group(2)})" + (f"@{cutoff}" if cutoff is not None else "")
    return _parse_native(s, text, default_cutoff)


# trec_eval's own spelling on its command line: -m P.10, -m ndcg_cut.10,20 (one measure per cutoff)
_TREC_DOT = re.compile(r"([A-Za-z_]\w*)\.(\d+(?:\s*,\s*\d+)*)")
_TREC_PARAMS = re.compile(r"([A-Za-z_][\w.]*)\((.*)\)")


def trec_eval_names(text: str) -> list[str]:
    """trec_eval's command-line spelling ``P.10`` or ``ndcg_cut.10,20`` as its measure
    names (``["ndcg_cut_10", "ndcg_cut_20"]``); any other text as it is.

    >>> trec_eval_names("ndcg_cut.10,20"), trec_eval_names("P.5"), trec_eval_names("AP@10")
    (['ndcg_cut_10', 'ndcg_cut_20'], ['P_5'], ['AP@10'])
    """
    m = _TREC_DOT.fullmatch(text.strip())
    if not m:
        return [text]
    return [f"{m.group(1)}_{int(c)}" for c in m.group(2).split(",")]


def at_rel_level(measures: Sequence[Measure], level: Grade | float | str | None) -> list[Measure]:
    """trec_eval's relevance level (``-l``): the binary measures (P, R, F, AP, RR, Rprec,
    bpref, Success, the counts) whose ``rel`` was left at its default 1 judge a document
    relevant at grade >= ``level``; graded measures (nDCG, ERR, RBP, ...) keep the grades,
    as trec_eval's ndcg ignores -l, and a ``rel=`` given explicitly is kept. ``level`` is
    above 0: an integer, or a decimal such as 0.5 (or text: ``"0.5"``, ``"1/3"``) for
    real-valued grades. ``None``:
    unchanged."""
    if level is None:
        return list(measures)

    try:
        level = _rel_value("rel_level", level)
        if level <= 0:
            raise MeasureError("not above 0")
    except MeasureError:
        raise ArgumentError(
            f"rel_level (trec_eval's -l: the least relevant grade) must be a grade above 0, an integer like 2, "
            f"a decimal like 0.5 or a fraction like 1/3, not {level!r}"
        ) from None
    out = []
    for m in measures:
        fields = {f.name: f for f in dataclasses.fields(m)}
        # rel: a field of the binary subclasses, not of Measure
        if not m.graded and "rel" in fields and getattr(m, "rel", None) == fields["rel"].default:
            m = dataclasses.replace(m, **{"rel": level})
        out.append(m)
    return out


# an unquoted gain map or gain name (gains=0:0,1:1,2:3 or gain=exp) runs up to the next
# ``, name=`` or the closing parenthesis; it is quoted before the name is parsed
_GAINS_VALUE = re.compile(r"(\bgains?\s*=\s*)(?![\"'\[{])([^()\"']*?)(?=\s*,\s*[A-Za-z_]\w*\s*=|\s*\))")


def _parse_native(s: str, text: str, default_cutoff: int | None = None) -> Measure:
    s = _GAINS_VALUE.sub(lambda m: f'{m.group(1)}"{m.group(2).strip()}"', s)
    try:
        node = ast.parse(s, mode="eval").body
    except SyntaxError:
        raise MeasureError(f"cannot parse measure {text!r}; expected a name like 'AP@30' or 'RBP(p=0.8)@30'") from None
    cutoff = None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
        cutoff = _literal(node.right, text)
        node = node.left
    kwargs: dict[str, Any] = {}
    if isinstance(node, ast.Call):
        if node.args:
            raise MeasureError(f"{text!r}: give parameters by name, for example RBP(p=0.8)")
        kwargs = {}
        for k in node.keywords:
            if k.arg is None:
                raise MeasureError(f"{text!r}: give parameters by name, for example RBP(p=0.8)")
            kwargs[k.arg] = _literal(k.value, text)
        node = node.func
    if not isinstance(node, ast.Name):
        raise MeasureError(f"cannot parse measure {text!r}; expected a name like 'AP@30' or 'RBP(p=0.8)@30'")
    cls = _lookup(node.id, text)
    if cutoff is not None:
        if "cutoff" in kwargs:
            raise MeasureError(f"{text!r}: cutoff given twice")
        kwargs["cutoff"] = cutoff
    names = {f.name for f in dataclasses.fields(cls)}
    for alias, name in cls.param_aliases.items():  # gain=exp is gains=exp
        if alias in kwargs and name in names:
            if name in kwargs:
                raise MeasureError(f"{text!r}: {alias}= and {name}= are one parameter; give it once")
            kwargs[name] = kwargs.pop(alias)
    refused = [k for k in kwargs if k not in names and k in cls.param_refusals]
    if refused:
        raise MeasureError(f"{text!r}: {cls.param_refusals[refused[0]]}")
    bad = [k for k in kwargs if k not in names]
    if bad:
        close = difflib.get_close_matches(bad[0].lower(), sorted(names), n=1, cutoff=0.5)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise MeasureError(
            f"{text!r}: {cls.NAME} has no parameter {bad[0]!r}{hint} (parameters: {', '.join(sorted(names)) or 'none'})"
        )
    if cls.requires_cutoff and kwargs.get("cutoff") is None and default_cutoff is not None:
        kwargs["cutoff"] = default_cutoff
    return cls(**kwargs)


def parse_measures(
    items: str | Measure | Iterable[str | Measure], *, default_cutoff: int | None = None
) -> list[Measure]:
    """Parse several measures (duplicates once, order kept). A single name or Measure
    is one measure (``"AP"`` is AP, not the letters A and P)."""
    if isinstance(items, (str, Measure)):
        items = [items]
    if items is None or isinstance(items, (bytes, bytearray)) or not hasattr(items, "__iter__"):
        raise ArgumentError(
            f"measures must be a name like 'AP@30', a Measure, or a list of them, not {type(items).__name__} {items!r}"
        )
    out: list[Measure] = []
    wrong = []  # every name that does not parse, refused together
    for it in items:
        try:
            names = trec_eval_names(it) if isinstance(it, str) else [it]  # ndcg_cut.10,20: two measures
            for name in names:
                m = parse_measure(name, default_cutoff=default_cutoff)
                if m not in out:
                    out.append(m)
        except IrscaleError as e:
            wrong.append(e)
    if len(wrong) == 1 or any(not isinstance(e, MeasureError) for e in wrong):
        raise next((e for e in wrong if not isinstance(e, MeasureError)), wrong[0])  # a wrong type: said alone
    if wrong:
        said = [re.sub(r" ?\(known: [^)]*\)", "", str(e)) for e in wrong]  # the list of measures once, below
        raise MeasureError(
            f"{len(wrong)} measure names are wrong: " + "; ".join(said) + "; `irscale measures` "
            "lists the measures with their parameters"
        )
    if not out:
        raise ArgumentError("no measure given; name at least one, for example 'AP' or 'nDCG@10'")
    return out


def from_trec_eval(name: str) -> Measure | None:
    """The measure for a trec_eval name (``map_cut_10`` -> ``AP@10``), or None (from each
    registered class's ``trec_eval`` templates)."""
    for cls in REGISTRY.values():
        for t in cls.trec_eval:
            pattern = re.escape(t).replace(re.escape("{cutoff}"), r"(\d+)")
            m = re.fullmatch(pattern, name, flags=re.IGNORECASE)
            if m:
                return cls(cutoff=int(m.group(1))) if m.groups() else cls()
    return None
