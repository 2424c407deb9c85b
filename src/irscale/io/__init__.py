"""TREC file formats: the only package of irscale that knows them."""

from irscale.io.trec import (
    Qrels,
    Run,
    parse_qrels,
    parse_run,
    parse_runs,
    read_qrels,
    read_run,
    read_runs,
)

__all__ = ["Qrels", "Run", "parse_qrels", "parse_run", "parse_runs", "read_qrels", "read_run", "read_runs"]
