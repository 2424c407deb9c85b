"""Exception and warning hierarchy of irscale.

This module imports nothing of irscale's, so every layer can raise these.
The CLI turns any :class:`IrscaleError` into one red line on stderr and exit code 2;
any other exception is a bug and keeps its traceback.
"""

from __future__ import annotations

from pathlib import Path


class IrscaleError(Exception):
    """Base class of every error that irscale reports to a user (bad input, bad option)."""


class InputFormatError(IrscaleError):
    """A qrels or run file does not follow the TREC format.

    Carries the path, the 1-based line number (``None`` for whole-file problems), the
    offending line's text, and the reason. ``str(err)`` reads like
    ``run.txt:790: expected 6 fields 'qid Q0 docno rank score tag', found 5``.
    """

    def __init__(self, path: str | Path, line: int | None, reason: str, text: str | None = None):
        self.path = str(path)
        self.line = line
        self.reason = reason
        self.text = text
        where = self.path if line is None else f"{self.path}:{line}"
        msg = f"{where}: {reason}"
        if text is not None:
            shown = text if len(text) <= 120 else text[:117] + "..."
            msg += f" (line: {shown!r})"
        super().__init__(msg)

    def __reduce__(self):  # picklable, so worker processes can report it
        return type(self), (self.path, self.line, self.reason, self.text)


class MeasureError(IrscaleError):
    """A measure name or parameter is invalid."""


class UnknownMeasureError(MeasureError):
    """A measure name is not registered; the message suggests close matches."""


class PolicyError(IrscaleError):
    """The data violates a policy the user chose (for example ``missing_topics='error'``)."""


class IrscaleWarning(UserWarning):
    """Something in the data deserves attention but does not stop the work
    (a run lacks qrels topics, a topic has no relevant document, ...)."""
