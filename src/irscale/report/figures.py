"""Pictures (matplotlib, PNG and SVG): the spacing of a measure's values over all runs
(2021 paper, Figures 2-5), the Hasse diagram of the weak order (Figure 1), and the
balancing index against the run length (2015 paper, Figure 1a)."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from irscale.scales.balancing import balancing_index
from irscale.scales.checks import as_measure
from irscale.scales.orders import positional_weights, weak_covers, weak_level
from irscale.scales.spaces import all_runs


def _plt():
    import matplotlib

    matplotlib.use("Agg")  # files only, no display needed
    import matplotlib.pyplot as plt

    return plt


def _save(fig, out: Path, stem: str) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    files = [out / f"{stem}.png", out / f"{stem}.svg"]
    fig.savefig(files[0], dpi=150, bbox_inches="tight")
    fig.savefig(files[1], bbox_inches="tight")
    _plt().close(fig)
    return files


def spacing_plot(measures: Sequence, Ns: Sequence[int], out: str | Path, levels: int = 2) -> list[Path]:
    """All runs of each length N on the x axis, ordered by the measure, against its value
    (one panel per measure and N): flat segments are ties, uneven steps break intervalness."""
    plt = _plt()
    measures = list(measures)
    fig, axes = plt.subplots(len(measures), len(Ns), figsize=(3.2 * len(Ns), 2.6 * len(measures)), squeeze=False)
    for i, m in enumerate(measures):
        for j, N in enumerate(Ns):
            fn = as_measure(m, N, levels - 1)
            runs = all_runs(N, levels - 1)
            vals = fn.values(runs)
            order = np.argsort(vals, kind="stable")
            v = vals[order]
            x = np.arange(1, len(v) + 1) / len(v)
            ax = axes[i][j]
            ax.plot(x, v, ".", markersize=max(0.5, 6 - N / 2), color="C0")
            if len(v) <= 32:  # small N: name every run, as the paper's Figure 2 does
                ax.set_xticks(x)
                ax.set_xticklabels(["".join(map(str, runs[k])) for k in order], rotation=90, fontsize=6)
            ax.set_title(f"{fn.name.split('@')[0]}, N = {N} ({len(np.unique(np.round(v, 12)))} values)", fontsize=9)
            ax.set_xlabel("runs (ordered by value)" if len(v) <= 32 else "fraction of runs (ordered by value)",
                          fontsize=8)
            if j == 0:
                ax.set_ylabel("value", fontsize=8)
            ax.tick_params(labelsize=7)
    fig.tight_layout()
    stem = "spacing_" + "_".join(str(m).replace("(", "").replace(")", "").replace("=", "").replace(".", "")
                                 for m in measures)
    return _save(fig, Path(out), stem)


def hasse_diagram(N: int, out: str | Path, measure=None, levels: int = 2) -> list[Path]:
    """The weak top-heaviness order on REL^N (N <= 6): runs as nodes, covers as edges,
    height = sum of g_k (N - k + 1); colour = number of relevant documents. With a
    measure, each node is labelled with its value."""
    import networkx as nx

    if N > 6:
        raise ValueError("the Hasse diagram is drawn for N <= 6")
    plt = _plt()
    c = levels - 1
    runs = all_runs(N, c)
    lo, hi = weak_covers(N, c)
    g = nx.DiGraph()
    g.add_nodes_from(range(len(runs)))
    g.add_edges_from(zip(lo.tolist(), hi.tolist()))
    height = weak_level(runs)
    nrel = (runs > 0).sum(axis=1)
    pos = {}
    for h in np.unique(height):
        members = np.flatnonzero(height == h)
        members = members[np.argsort(-(runs[members].astype(np.int64) @ positional_weights(N, c)))]
        for k, node in enumerate(members):
            pos[int(node)] = (k - (len(members) - 1) / 2, float(h))
    fig, ax = plt.subplots(figsize=(max(6, 1.1 * max(np.bincount(height))), 0.7 * (height.max() + 2)))
    nx.draw_networkx_edges(g, pos, ax=ax, arrows=False, edge_color="0.7", width=0.6)
    nodes = nx.draw_networkx_nodes(g, pos, ax=ax, node_color=nrel, cmap="viridis", node_size=260 if N <= 4 else 120)
    labels = {i: "".join(map(str, runs[i])) for i in range(len(runs))}
    if measure is not None:
        fn = as_measure(measure, N, c)
        vals = fn.values(runs)
        labels = {i: f"{labels[i]}\n{vals[i]:.3g}" for i in labels}
    nx.draw_networkx_labels(g, pos, labels, ax=ax, font_size=6 if N <= 4 else 4)
    fig.colorbar(nodes, ax=ax, label="relevant documents")
    ax.set_title(f"weak top-heaviness order, N = {N}, {levels} levels ({len(runs)} runs, {len(lo)} covers)")
    ax.axis("off")
    return _save(fig, Path(out), f"hasse_N{N}" + ("_" + str(measure).replace("(", "").replace(")", "").replace("=", "")
                                                   .replace(".", "") if measure is not None else ""))


def balancing_plot(measures: Sequence, ns: Sequence[int], out: str | Path) -> list[Path]:
    """Balancing index B(n) against the run length n (2015 paper, Figure 1a)."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6, 4.5))
    ns = list(ns)
    for m in measures:
        ax.plot(ns, [balancing_index(m, n) for n in ns], marker=".", label=str(m))
    ax.plot(ns, ns, "k:", linewidth=0.8, label="b = n")
    ax.set_xlabel("run length n")
    ax.set_ylabel("balancing index B(n)")
    ax.legend(fontsize=8)
    ax.set_title("balancing index (top-heaviness)")
    stem = "balancing_" + "_".join(str(m).replace("(", "").replace(")", "").replace("=", "").replace(".", "")
                                   for m in measures)
    return _save(fig, Path(out), stem)
