"""What the CLI prints on stderr, read as messages: a message longer than a line (160
characters) goes on, indented two spaces, on the next lines (``irscale.cli._say``);
:func:`unwrap` joins each message back into one line for tests that read its words."""

from __future__ import annotations

LINE = 160


def unwrap(text: str) -> str:
    """``text`` (what a verb printed on stderr) with every continuation line (two leading
    spaces) joined to the line before it by one space; every line at most LINE long first."""
    out: list[str] = []
    for line in text.splitlines():
        assert len(line) <= LINE, (len(line), line)
        if line.startswith("  ") and out:
            out[-1] += " " + line[2:]
        else:
            out.append(line)
    return "\n".join(out) + ("\n" if text.endswith("\n") else "")
