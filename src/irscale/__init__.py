"""irscale: measurement-theoretic evaluation of information retrieval systems.

Scores TREC runs exactly like trec_eval, maps measures onto interval scales, and says
which conclusions are meaningful.
"""

__version__ = "0.1.0"

from irscale.experiment import ScoreTable, evaluate, transform  # noqa: E402
from irscale.io import Qrels, Run, read_qrels, read_run  # noqa: E402
from irscale.measures import parse_measure  # noqa: E402
from irscale.study import Study, compare  # noqa: E402
from irscale.meaning import meaningful  # noqa: E402

__all__ = ["__version__", "evaluate", "transform", "compare", "Study", "meaningful", "ScoreTable", "read_qrels", "read_run", "Qrels", "Run", "parse_measure"]
