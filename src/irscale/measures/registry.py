"""One registry of measures, keyed by class.

Everything irscale knows about a measure class is declared next to the code it concerns
and lands in one :class:`Entry` of :data:`ENTRIES`:

* its name and aliases: ``@register("Name")`` on the measure class
  (:mod:`irscale.measures.base`);
* the run spaces that compute its interval scale: ``@serves(TheClass)`` on a
  :class:`~irscale.scales.spaces.Space` (:mod:`irscale.scales.spaces`);
* what the papers say about its scale: ``@about(TheClass)`` on a rule in
  :mod:`irscale.scales.theory`.

A measure, built in or a user's, is thus one class and, for an exact interval scale,
one space; nothing else keeps a list of measures. :data:`REGISTRY` is the name -> class
view of the same entries (what the parser looks names up in).

>>> import irscale.scales  # the spaces and theory rules declare themselves when the scale layer loads
>>> from irscale.measures import parse_measure
>>> e = entry(type(parse_measure("RBP")))
>>> e.name, [s.__name__ for s, _ in spaces_of(e.cls)][-1], e.theory is not None
('RBP', 'RBPSpace', True)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

from irscale.errors import MeasureError

__all__ = [
    "add_space",
    "ENTRIES",
    "Entry",
    "entry",
    "register",
    "REGISTRY",
    "set_theory",
    "spaces_of",
    "theory_of",
    "unregister",
    "When",
]


When = Callable[..., bool]  # when(measure, N, c): whether a space serves this instance


@dataclass
class Entry:
    """What is declared about one measure class."""

    cls: type
    name: str
    aliases: tuple[str, ...] = ()
    spaces: list[tuple[type, When | None]] = field(default_factory=list)  # (Space class, when), declaration order
    theory: Callable | None = None  # rule(measure, N, c) -> (order, scale, reason, source) or None


ENTRIES: dict[type, Entry] = {}


class _Names(Mapping):
    """The measure names (canonical spellings) and their classes: a live view of
    :data:`ENTRIES`, in registration order."""

    def __getitem__(self, name: str) -> type:
        for e in ENTRIES.values():
            if e.name == name:
                return e.cls
        raise KeyError(name)

    def __iter__(self) -> Iterator[str]:
        return iter([e.name for e in ENTRIES.values()])

    def __len__(self) -> int:
        return len(ENTRIES)

    def pop(self, name: str, *default):
        """Unregister the measure called ``name`` (case-insensitive; its spaces and rule go
        with it)."""
        try:
            cls = next(e.cls for e in ENTRIES.values() if e.name.lower() == name.lower())
        except StopIteration:
            if default:
                return default[0]
            raise KeyError(name) from None
        unregister(cls)
        return cls

    def __repr__(self) -> str:
        return f"REGISTRY({', '.join(self)})"


REGISTRY = _Names()


def register(name: str, *aliases: str):
    """Class decorator adding a measure class to the registry under ``name`` (and
    ``aliases``; names are case-insensitive). The same class defined again (a notebook
    cell run twice: same module and qualified name) replaces the earlier one; another
    class under a name already taken is refused (``unregister`` the other first)."""

    def deco(cls):
        taken = {n.lower() for n in (name, *aliases)}
        for old, e in list(ENTRIES.items()):
            if old is cls or not taken & {n.lower() for n in (e.name, *e.aliases)}:
                continue
            if _same_definition(old, cls):
                del ENTRIES[old]  # redefined: the new class takes its place (and declares its own spaces)
                continue
            raise MeasureError(
                f"the measure name {name!r} is taken by {_where(old)}; unregister it first "
                f"(irscale.measures.unregister({old.__qualname__})) or choose another name for {_where(cls)}"
            )
        cls.NAME = name
        kept = ENTRIES.get(cls)  # the same class registered again: its spaces and rule stay
        ENTRIES[cls] = Entry(cls, name, tuple(aliases), kept.spaces if kept else [], kept.theory if kept else None)
        return cls

    return deco


def _where(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _same_definition(a: type, b: type) -> bool:
    """Two class objects from one definition run twice (never two classes a function made)."""
    return _where(a) == _where(b) and "<locals>" not in a.__qualname__


def unregister(cls: type) -> None:
    """Remove a measure class with everything declared about it (its spaces and rule)."""
    ENTRIES.pop(cls, None)


def entry(cls: type) -> Entry:
    """The entry of a registered measure class (MeasureError if it is not registered)."""
    try:
        return ENTRIES[cls]
    except KeyError:
        raise MeasureError(
            f"{cls.__module__}.{cls.__qualname__} is not a registered measure: decorate the class with "
            "@irscale.measures.register('Name') before declaring a space or a rule for it"
        ) from None


def add_space(measure_cls: type, space_cls: type, when: When | None = None) -> None:
    """Declare that ``space_cls`` computes phi for ``measure_cls`` (only where
    ``when(measure, N, c)`` holds, if given). The same space defined again replaces its
    earlier declaration; a class has at most one unconditional space."""
    e = entry(measure_cls)
    e.spaces[:] = [(s, w) for s, w in e.spaces if not _same_definition(s, space_cls)]
    if when is None:
        for other, w in e.spaces:
            if w is None and other is not space_cls:
                raise MeasureError(
                    f"{e.name} is served by {_where(other)} already; give {space_cls.__qualname__} a "
                    "when= condition, or remove the other declaration"
                )
    e.spaces.append((space_cls, when))


def spaces_of(measure_cls: type) -> list[tuple[type, When | None]]:
    """The spaces declared for a measure class, in the order they are tried: those with
    a ``when`` condition first (in declaration order), then the unconditional one."""
    e = ENTRIES.get(measure_cls)
    if e is None:
        return []
    return [s for s in e.spaces if s[1] is not None] + [s for s in e.spaces if s[1] is None]


def set_theory(measure_cls: type, rule: Callable) -> None:
    """Declare the rule that states what the papers say about ``measure_cls``'s scale."""
    entry(measure_cls).theory = rule


def theory_of(measure_cls: type) -> Callable | None:
    e = ENTRIES.get(measure_cls)
    return None if e is None else e.theory
