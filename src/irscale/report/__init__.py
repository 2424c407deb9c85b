"""Renderers: pure functions from result objects to text (tables, CSV/TSV/JSON, trec_eval layout)."""

__all__: list[str] = []  # its modules are imported by name
