"""The interval-scale transformation: run spaces, exact value sets and rank maps
(Ferrante, Ferro & Fuhr 2021, Section 5)."""

from irscale.scales.rankmap import ENGINES, TIES, RankMap, build, cache_clear, cache_dir, cache_info, choose_engine
from irscale.scales.spaces import Space, space_for
from irscale.scales.spaces import all_runs as all_runs  # (c-encoded, for writers of spaces: see below)
from irscale.scales.theory import statement  # (importing it also declares each measure's theory rule, @about)
from irscale.validate import integer

# one encoding of the grade scale in what this package exports: ``levels``, the number of
# relevance degrees (2: binary), as build, statement and run_space take it. The run spaces
# themselves (space_for, all_runs, Space.c: irscale.scales.spaces) count the top grade c =
# levels - 1; they are for writers of spaces and engines, and stay importable here.
__all__ = [
    "RankMap",
    "build",
    "choose_engine",
    "cache_dir",
    "cache_info",
    "cache_clear",
    "Space",
    "run_space",
    "statement",
    "ENGINES",
    "TIES",
]


def run_space(measure, N: int, levels: int = 2) -> Space:
    """The run space of ``measure`` at run length ``N`` on ``levels`` relevance degrees (2:
    binary), as :func:`build` and :func:`statement` count them: the space declared for it
    (:func:`irscale.scales.spaces.space_for`, which takes the top grade ``levels - 1``).

    >>> run_space("nDCG", 10, levels=3).c
    2
    """
    return space_for(measure, N, integer("levels", levels, minimum=2) - 1)
