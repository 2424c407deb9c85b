"""TREC file formats and in-memory inputs (pandas, pytrec_eval dicts, ir_measures tuples,
ranx, Parquet): the only package of irscale that knows them."""

from irscale.io.memory import (
    qrels_from_dict,
    qrels_from_frame,
    qrels_from_records,
    read_parquet_qrels,
    read_parquet_runs,
    run_from_records,
    runs_from_dict,
    runs_from_frame,
)
from irscale.io.trec import (
    Qrels,
    Run,
    parse_qrels,
    parse_run,
    parse_runs,
    read_qrels,
    read_run,
    read_runs,
    write_run,
)

__all__ = [
    "Qrels",
    "Run",
    "parse_qrels",
    "parse_run",
    "parse_runs",
    "read_qrels",
    "read_run",
    "read_runs",
    "write_run",
    "qrels_from_dict",
    "qrels_from_frame",
    "qrels_from_records",
    "read_parquet_qrels",
    "read_parquet_runs",
    "run_from_records",
    "runs_from_dict",
    "runs_from_frame",
]
