"""Renderers: pure functions from result objects to text (tables, CSV/TSV/JSON, trec_eval layout)."""
