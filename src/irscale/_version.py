"""irscale's version, written only here: pyproject.toml reads it (``[tool.setuptools.dynamic]``),
``irscale --version`` and ``irscale.__version__`` print it. A module that imports nothing, so no
layer imports the package root for it."""

__version__ = "0.1.0"
