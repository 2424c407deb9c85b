"""irscale's version, in a module that imports nothing (so no layer imports the package root)."""

__version__ = "0.1.0"
