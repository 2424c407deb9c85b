"""Exception and warning hierarchy of irscale.

This module imports nothing of irscale's, so every layer can raise these.
The CLI turns any :class:`IrscaleError` into one red line on stderr and exit code 2;
any other exception is a bug and keeps its traceback.
"""

from __future__ import annotations

import contextlib
import difflib
import threading
import unicodedata
from collections.abc import Sequence
from pathlib import Path

__all__ = [
    "IrscaleError",
    "InputFormatError",
    "MeasureError",
    "UnknownMeasureError",
    "PolicyError",
    "IrscaleWarning",
    "GUIDE",
    "warn",
    "show",
    "check_choice",
]


class IrscaleError(Exception):
    """Base class of every error that irscale reports to a user (bad input, bad option).
    Its message shows invisible and control characters escaped (see :func:`show`)."""

    def __str__(self) -> str:
        return show(super().__str__())


class InputFormatError(IrscaleError):
    """A qrels or run file does not follow the TREC format.

    Carries the path, the 1-based line number (``None`` for whole-file problems), the
    offending line's text, and the reason. ``str(err)`` reads like
    ``run.txt:790: expected 6 fields 'qid Q0 docno rank score tag', found 5``. The
    attributes keep the raw text; the message shows invisible and control characters
    escaped (see :func:`show`).
    """

    def __init__(self, path: str | Path, line: int | None, reason: str, text: str | None = None):
        self.path = str(path)
        self.line = line
        self.reason = reason
        self.text = text
        where = self.path if line is None else f"{self.path}:{line}"
        msg = f"{show(where)}: {show(reason)}"
        if text is not None:
            shown = text if len(text) <= 120 else text[:117] + "..."
            msg += f" (line: '{show(shown)}')"
        super().__init__(msg)

    def __reduce__(self):  # picklable, so worker processes can report it
        return type(self), (self.path, self.line, self.reason, self.text)


class MeasureError(IrscaleError):
    """A measure name or parameter is invalid."""


class UnknownMeasureError(MeasureError):
    """A measure name is not registered; the message suggests close matches."""


class PolicyError(IrscaleError):
    """The data violates a policy the user chose (for example ``missing_topics='error'``)."""


GUIDE = "guide: Warnings"  # where every warning is explained at length (docs/guide.md, section Warnings)


class IrscaleWarning(UserWarning):
    """Something in the data deserves attention but does not stop the work
    (a run lacks qrels topics, a topic has no relevant document, ...). Its message
    shows invisible and control characters escaped (see :func:`show`). ``key``: warnings
    with one key say one thing (the CLI says it once per command); default: the text.

    Every warning is one line of about 160 characters at most, naming the guide section
    that explains it (:data:`GUIDE`); silence them with ``warnings.filterwarnings("ignore",
    category=IrscaleWarning)`` or, on the command line, ``irscale --no-warnings VERB``."""

    def __init__(self, *args, key=None):
        super().__init__(*args)
        self.key = key

    def __str__(self) -> str:
        return show(super().__str__())

    def __reduce__(self):  # picklable with its key (worker processes)
        return (_warning, (type(self), self.args, self.key))


def _warning(cls, args, key):
    return cls(*args, key=key)


def warn(message: str, *, key=None, stacklevel: int = 2, category: type | None = None) -> None:
    """Issue an :class:`IrscaleWarning` (or ``category``) whose line ends by naming the guide
    section that explains it; inside :func:`collecting` (this thread only), keep it there."""
    import warnings

    w = (category or IrscaleWarning)(f"{message} ({GUIDE})", key=key)
    into = getattr(_COLLECT, "into", None)
    if into is not None:
        into.append(w)
        return
    warnings.warn(w, stacklevel=stacklevel + 1)


_COLLECT = threading.local()


@contextlib.contextmanager
def collecting():
    """``with collecting() as said:`` the warnings :func:`warn` issues in this thread are
    appended to ``said`` instead of said: a reader in a worker thread or process hands
    them to the caller, which says them in the input's order (warnings.catch_warnings is
    process-wide, so threads cannot use it)."""
    before = getattr(_COLLECT, "into", None)
    _COLLECT.into = []
    try:
        yield _COLLECT.into
    finally:
        _COLLECT.into = before


class ArgumentError(IrscaleError, TypeError, ValueError):
    """A public function was called with an argument of the wrong type or value
    (``depth=0``, ``measures=[42]``, ``alpha=2``). Also a ``TypeError``/``ValueError``,
    so code catching those keeps working."""


# categories whose characters are invisible or do not print as themselves: control (Cc),
# format (Cf: zero-width space U+200B, byte-order mark U+FEFF, ...), Unicode spaces (Zs,
# except the ASCII space), line/paragraph separators (Zl, Zp), private use (Co), surrogates
# (Cs, from undecodable bytes) and unassigned code points (Cn)
_HIDDEN = frozenset({"Cc", "Cf", "Zs", "Zl", "Zp", "Co", "Cs", "Cn"})
_SHORT = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape(ch: str) -> str:
    if ch in _SHORT:
        return _SHORT[ch]
    cp = ord(ch)
    return f"\\x{cp:02x}" if cp < 0x100 else f"\\u{cp:04x}" if cp < 0x10000 else f"\\U{cp:08x}"


def show(s: str) -> str:
    r"""Return ``s`` with every invisible or control character written as an escape.

    Tabs, newlines and carriage returns become ``\t``, ``\n``, ``\r``; other characters of
    the Unicode categories Cc, Cf, Zs (but the ASCII space), Zl, Zp, Co, Cs and Cn become
    ``\xNN``, ``\uNNNN`` or ``\UNNNNNNNN``, so a message shows a non-breaking space, a
    zero-width space or a byte-order mark instead of hiding it. Everything else, backslashes
    and quotes included, is left as it is (unlike :func:`repr`, which also escapes those and
    adds quotes). Use it for any user data put into a message.

    >>> show("a\u00a0b\tc\ufeff")
    'a\\xa0b\\tc\\ufeff'
    >>> print(show("caf\u00e9 \u200b"))
    café \u200b
    """
    if s.isascii():  # fast path: only C0 controls and DEL can hide in ASCII
        if s.isprintable():
            return s
        return "".join(_escape(c) if not c.isprintable() else c for c in s)
    return "".join(_escape(c) if c != " " and unicodedata.category(c) in _HIDDEN else c for c in s)


FULL_DIGITS = 15  # count_text writes counts of up to this many digits in full


def count_text(n: int, base: int | None = None, *, exact: bool = False, sep: str = ",") -> str:
    """A count that can outgrow a float as text, by integer arithmetic only: a value set's
    size |M| or a number of runs (4^1000 on four levels at N = 1000, which ``f"{n:.3g}"``
    cannot convert: ``OverflowError``). Every message, provenance entry and listing that
    shows such a count uses it.

    Up to :data:`FULL_DIGITS` digits in full, grouped by ``sep`` (``"12,345"``); beyond,
    ``b^k`` where ``n`` is a power of ``base`` (the relevance levels: ``"4^1000"``), else
    every digit with ``exact`` (provenance), else three significant digits, marked ``≈``
    where they round (``"≈1.07e+301"``, ``"1e+20"``).

    >>> count_text(12345), count_text(4**1000, 4), count_text(2**1000), count_text(10**20)
    ('12,345', '4^1000', '≈1.07e+301', '1e+20')
    >>> count_text(10**20, exact=True, sep="")
    '100000000000000000000'
    """
    n = int(n)
    if n < 0:
        return "-" + count_text(-n, base, exact=exact, sep=sep)
    if n < 10**FULL_DIGITS:
        return f"{n:,}".replace(",", sep)
    if base is not None and int(base) >= 2:
        b, k, m = int(base), 0, n
        while m % b == 0:
            m, k = m // b, k + 1
        if m == 1:
            return f"{b}^{k}"
    e = int((n.bit_length() - 1) * 0.30102999566398120)  # floor(log10 n), or one below it
    while 10 ** (e + 1) <= n:
        e += 1
    if exact and e < 4000:  # Python's int -> str limit is 4300 digits
        return f"{n:,}".replace(",", sep)
    scale = 10 ** (e - 2)
    lead, rest = divmod(n, scale)  # the three leading digits, then round half up
    lead += 2 * rest >= scale
    if lead == 1000:
        lead, e = 100, e + 1
    digits = f"{lead // 100}.{lead % 100:02d}".rstrip("0").rstrip(".")
    return ("" if rest == 0 else "≈") + f"{digits}e+{e:02d}"


def check_choice(name: str, value, allowed: Sequence[str]) -> str:
    """Return ``value`` if it is one of ``allowed``, else raise :class:`PolicyError`.

    The message names the keyword, the allowed values and, when one is close, suggests it:
    ``duplicates must be one of 'error', 'first', not 'frist'; did you mean 'first'?``.

    >>> check_choice("duplicates", "first", ("error", "first"))
    'first'
    """
    if isinstance(value, str) and value in allowed:
        return value
    choices = ", ".join(repr(a) for a in allowed)
    msg = f"{name} must be one of {choices}, not {show(repr(value))}"
    if isinstance(value, str):
        lowered = {a.lower(): a for a in allowed}
        close = (
            [lowered[value.lower()]]
            if value.lower() in lowered
            else difflib.get_close_matches(value, list(allowed), n=1, cutoff=0.6)
        )
        if close:
            msg += f"; did you mean {close[0]!r}?"
    raise PolicyError(msg)
