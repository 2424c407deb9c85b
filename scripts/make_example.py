"""Generate the small synthetic collection shipped in src/irscale/examples/toy.

Deterministic (seeded): 8 topics, graded qrels (grades 0, 1, 2), and 5 runs of 50
documents per topic whose quality differs by design; one run lacks a topic and has
tied scores, to show irscale's warnings and trec_eval tie-breaking. Run from the
repository root: ``python scripts/make_example.py``.
"""

from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parents[1] / "src" / "irscale" / "examples" / "toy"
TOPICS = [str(t) for t in range(101, 109)]
DOCS = [f"DOC-{i:04d}" for i in range(400)]


def main() -> None:
    rng = np.random.default_rng(20211)
    (OUT / "runs").mkdir(parents=True, exist_ok=True)
    qrels_lines, truth = [], {}
    for t in TOPICS:
        pool = rng.choice(len(DOCS), size=120, replace=False)
        grades = rng.choice([0, 0, 0, 0, 1, 1, 2], size=len(pool))
        truth[t] = dict(zip(pool.tolist(), grades.tolist()))
        qrels_lines += [f"{t} 0 {DOCS[d]} {g}" for d, g in sorted(truth[t].items())]
    (OUT / "qrels.txt").write_text("\n".join(qrels_lines) + "\n")
    for name, skill in [
        ("bm25", 1.2),
        ("lm-dirichlet", 1.0),
        ("neural-rerank", 1.8),
        ("random", 0.0),
        ("tied-scores", 0.9),
    ]:
        lines = []
        for t in TOPICS:
            if name == "tied-scores" and t == TOPICS[-1]:
                continue  # a missing topic: scored 0, with a warning
            signal = np.array([truth[t].get(d, 0) for d in range(len(DOCS))], dtype=float)
            score = skill * signal + rng.normal(0, 1, len(DOCS))
            if name == "tied-scores":
                score = np.round(score, 0)  # many ties, broken by docno descending
            top = np.argsort(-score, kind="stable")[:50]
            lines += [f"{t} Q0 {DOCS[d]} {r + 1} {score[d]:.4f} {name}" for r, d in enumerate(top)]
        (OUT / "runs" / f"{name}.txt").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
