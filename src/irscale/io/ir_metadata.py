"""The ir_metadata header of a TREC run file (Breuer et al., SIGIR 2022).

A run file may open with YAML lines, each prefixed with ``#``, between the lines
``# ir_metadata.start`` and ``# ir_metadata.end``: the PRIMAD description of how the run
was made (platform, research goal, implementation, method, actor, data), as written by
repro_eval's metadata module and the TIREx tracker. To a run reader these lines are
comments. :func:`ir_metadata` finds and parses the header of a file's first piece of
text (PyYAML's ``safe_load``); :func:`header_text` writes one.
"""

from __future__ import annotations

import datetime
import math
import re

from irscale.errors import InputFormatError, warn

__all__ = ["header_text", "ir_metadata", "plain", "PRIMAD"]


START, END = "ir_metadata.start", "ir_metadata.end"
PRIMAD = ("platform", "research goal", "implementation", "method", "actor", "data")

# the top of a file that may hold a header: an optional byte-order mark, blank lines, then '#'
_MAY_HOLD = re.compile(rb"(?:\xef\xbb\xbf)?[ \t\r\n\x0b\x0c]*#")
_MARKER = re.compile(rb"#[ \t]*(ir_metadata\.(?:start|end))[ \t\r]*\Z")


def ir_metadata(text: bytes, path: str, policy: str = "error", more: bool = False) -> dict | None:
    """The ir_metadata header at the top of ``text`` (a run file's first piece, checked as
    UTF-8), as plain values (:func:`plain`), or None where there is none. Only the comment
    and blank lines before the first run line are looked at (none, when the file opens
    with a run line). ``policy``: a malformed header (unclosed, a run line inside, YAML
    that does not parse, not a mapping) is an :class:`~irscale.errors.InputFormatError`
    naming the file and line (``"error"``), or is left out with a warning (``"warn"``).
    ``more``: the file goes on past ``text`` (a header still open at its end is too long
    to read, not unclosed)."""
    if not _MAY_HOLD.match(text):  # anchored at the start: a file without a header costs nothing
        return None
    pos = 3 if text.startswith(b"\xef\xbb\xbf") else 0
    line, start, body = 1, 0, []  # type: tuple[int, int, list[str]]
    while pos < len(text):
        end = text.find(b"\n", pos)
        end = len(text) if end < 0 else end
        raw = text[pos:end]
        stripped = raw.strip()
        marker = _MARKER.match(stripped)
        if not start:
            if stripped and not stripped.startswith(b"#"):
                return None  # the first run line: no header above it
            if marker and marker.group(1) == START.encode():
                start = line
        elif marker and marker.group(1) == END.encode():
            return _load(body, path, start, policy)
        elif stripped and not stripped.startswith(b"#"):
            return _bad(
                path,
                line,
                f"run line inside the ir_metadata header opened at line {start}; close the header with a line "
                f"'# {END}' before the first run line",
                raw,
                policy,
            )
        elif start:
            content = raw.lstrip()[1:] if stripped else b""  # the '#' and one space after it go
            body.append((content[1:] if content.startswith(b" ") else content).rstrip(b"\r").decode("utf-8"))
        pos, line = end + 1, line + 1
    if start and more:
        return _bad(
            path,
            start,
            f"ir_metadata header opened here runs past the first {len(text) >> 20} MB of the file, more than "
            "irscale reads for a header; shorten it (a header describes the run; put large data elsewhere)",
            None,
            policy,
        )
    if start:
        return _bad(
            path,
            start,
            f"ir_metadata header opened here is never closed; add a line '# {END}' after its last line "
            "(before the first run line)",
            None,
            policy,
        )
    return None


def _safe_load(text: str):
    """PyYAML's safe load (libyaml's where installed), refusing aliases first: a header of a
    few hundred bytes with nested aliases (``*name``) would expand to millions of values."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    for event in yaml.parse(text, Loader=loader):
        if isinstance(event, yaml.AliasEvent):
            raise yaml.composer.ComposerError(
                None, None, "aliases (*name) are not accepted in an ir_metadata header", event.start_mark
            )
    _refuse_duplicate_keys(yaml.compose(text, Loader=loader))
    return yaml.load(text, Loader=loader)  # noqa: S506  (a safe loader)


def _refuse_duplicate_keys(node) -> None:
    """A key given twice in one mapping is an error at its second place (YAML loaders keep
    the last value silently, so one of the two would be lost without a word)."""
    import yaml

    todo = [node] if node is not None else []
    while todo:
        n = todo.pop()
        if isinstance(n, yaml.MappingNode):
            seen = set()
            for key, value in n.value:
                if isinstance(key, yaml.ScalarNode):
                    if key.value in seen:
                        raise yaml.constructor.ConstructorError(
                            None, None, f"the key {key.value!r} is given twice in one section", key.start_mark
                        )
                    seen.add(key.value)
                todo.append(value)
        elif isinstance(n, yaml.SequenceNode):
            todo.extend(n.value)


def _load(body: list[str], path: str, start: int, policy: str) -> dict | None:
    import yaml  # (only for files with a header)

    try:
        data = _safe_load("\n".join(body))
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
        at = start + 1 + mark.line if mark is not None else start
        at = min(at, start + len(body))
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        return _bad(
            path,
            at,
            f"malformed YAML in the ir_metadata header ({problem}); each header line is '# ' then a YAML line "
            "such as '# tag: bm25' or '#   name: my-team'",
            "# " + body[at - start - 1] if 0 <= at - start - 1 < len(body) else None,
            policy,
        )
    if data is None:
        return {}
    if not isinstance(data, dict):
        return _bad(
            path,
            start,
            f"the ir_metadata header holds a {type(data).__name__}, expected a mapping of sections "
            "('# tag: ...', '# platform:', '# method:', ...)",
            None,
            policy,
        )
    return plain(data)


def _bad(path: str, line: int, reason: str, text, policy: str) -> dict | None:
    """None (the header left out) with a warning (``policy="warn"``), else the error."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace").rstrip("\r")
    if policy == "warn":
        warn(f"{path}:{line}: {reason}; the run is read without its ir_metadata header", stacklevel=6)
        return None
    raise InputFormatError(
        path, line, reason + " (or pass metadata='warn', CLI --metadata warn, to read the run without it)", text
    )


def plain(obj):
    """``obj`` as loaded from YAML, with dict keys as text, dates as ISO text and sets
    and tuples as lists: values every writer of irscale (YAML, JSON) takes as they are."""
    if isinstance(obj, dict):
        return {str(k): plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set)):
        return [plain(v) for v in obj]
    if isinstance(obj, (datetime.date, datetime.datetime)):
        return obj.isoformat()
    if isinstance(obj, bytes):
        return obj.decode("utf-8", "replace")
    if isinstance(obj, float) and not math.isfinite(obj):
        return str(obj)  # .inf / .nan: JSON has no such numbers
    return obj


def header_text(metadata: dict) -> str:
    """The lines of an ir_metadata header holding ``metadata`` (YAML, each line prefixed
    with ``# ``), from ``# ir_metadata.start`` to ``# ir_metadata.end``, newline-ended."""
    import yaml

    body = yaml.safe_dump(plain(metadata), sort_keys=False, allow_unicode=True, default_flow_style=False, width=1000)
    lines = [f"# {START}"] + [f"# {x}".rstrip() for x in body.splitlines()] + [f"# {END}"]
    return "\n".join(lines) + "\n"
