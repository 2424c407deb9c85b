"""Bridges to other evaluation libraries: :mod:`irscale.integrations.ir_measures` makes
irscale's measures, ranked ones included, ir_measures measures (and so PyTerrier's)."""

__all__: list[str] = []  # its modules are imported by name
