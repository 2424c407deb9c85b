"""The conformance suite (irscale.testing) over every registered measure: each class's
defaults and the instances its ``examples`` name, one test per (measure, check). A new
measure is checked here by registering it; there is no list to extend."""

from __future__ import annotations

from irscale import testing


@testing.parametrize_with_checks(testing.registered())
def test_measure(measure, check):
    check(measure)


def test_every_measure_class_of_the_package_is_registered_so_checked():
    """A measure class written in irscale.measures but not registered (a forgotten
    @register) would escape the suite: every concrete Measure subclass of the package's
    modules is registered, and the suite covers every registered class."""
    import importlib
    import inspect
    import pkgutil

    import irscale.measures as pkg
    from irscale.measures import FunctionMeasure, Measure

    found = set()
    for info in pkgutil.iter_modules(pkg.__path__):
        if info.name in ("ranked", "orders"):  # deprecated aliases of irscale.scales modules
            continue
        module = importlib.import_module(f"irscale.measures.{info.name}")
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, Measure) and cls.__module__ == module.__name__ and not cls.__name__.startswith("_"):
                found.add(cls)
    found -= {Measure, FunctionMeasure}  # the base class; FunctionMeasure wraps a user's function
    assert found and found <= set(testing.registered()), found - set(testing.registered())
    checked = {type(m) for m, _ in testing.checks_of(testing.registered())}
    assert checked == set(testing.registered())
