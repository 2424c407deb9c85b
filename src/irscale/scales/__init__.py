"""The interval-scale transformation: run spaces, exact value sets and rank maps
(Ferrante, Ferro & Fuhr 2021, Section 5)."""

from irscale.scales.rankmap import ENGINES, TIES, RankMap, build, cache_clear, cache_dir, cache_info, choose_engine
from irscale.scales.spaces import Space, all_runs, space_for
from irscale.scales.theory import statement  # (importing it also declares each measure's theory rule, @about)

__all__ = [
    "RankMap",
    "build",
    "choose_engine",
    "cache_dir",
    "cache_info",
    "cache_clear",
    "Space",
    "space_for",
    "statement",
    "all_runs",
    "ENGINES",
    "TIES",
]
