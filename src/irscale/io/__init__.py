"""TREC file formats: the only package of irscale that knows them."""

from irscale.io.trec import Qrels, Run, parse_qrels, parse_run, read_qrels, read_run

__all__ = ["Qrels", "Run", "parse_qrels", "parse_run", "read_qrels", "read_run"]
