"""How an l2attr NVTX range name is put together: fixed words, then fields, joined by ':'.

A shape (l2attr.vocab declares them: the ladder's, the sweep's) is one `Grammar`; its builder and
its parser are that one declaration, so a name always parses back to what built it.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from enum import Enum
from typing import Any, Iterable


def alternatives(enum: type[Enum] | Iterable[str]) -> str:
    """A regex matching exactly one of an enum's values (or of some of its words: a part of a set)."""
    return "|".join(re.escape(m.value if isinstance(m, Enum) else str(m)) for m in enum)


@dataclass(frozen=True)
class Field:
    """One ':'-separated field of a range name: its column, the text it may hold, how it is written."""

    name: str
    pattern: str = "[^:]+"     # a regex for the value (an enum's values, any word, or the rest)
    prefix: str = ""           # written before the value: `t` in `t11`
    number: bool = False       # parsed back as an int


def word(name: str, enum: type[Enum] | Iterable[str] | None = None) -> Field:
    """A field holding one word: any word, or one of an enum's values (or of the words given)."""
    return Field(name, alternatives(enum) if enum else "[^:]+")


def count(name: str, prefix: str) -> Field:
    """A field holding a count after a letter (`t11`, `b3`)."""
    return Field(name, r"\d+", prefix, number=True)


def rest(name: str) -> Field:
    """The last field, which may itself hold ':' (a sweep point id such as `interleaved:k8`)."""
    return Field(name, ".+")


@dataclass(frozen=True)
class Grammar:
    """One shape of range name: fixed leading words, then fields, all joined by ':'.

    The builder and the parser of a shape are this one declaration, so a name always parses back
    to what built it."""

    head: tuple[str, ...]
    fields: tuple[Field, ...]

    def build(self, **values: Any) -> str:
        return ":".join([*self.head, *(f"{f.prefix}{values[f.name]}" for f in self.fields)])

    def parse(self, name: str) -> dict[str, Any] | None:
        """The fields of `name` (without the domain), or None when it has another shape."""
        m = self._regex().match(name)
        if not m:
            return None
        return {f.name: int(m[f.name]) if f.number else m[f.name] for f in self.fields}

    def _regex(self) -> re.Pattern[str]:
        return _compiled(self)


@functools.lru_cache(maxsize=None)
def _compiled(g: Grammar) -> re.Pattern[str]:
    parts = [re.escape(h) for h in g.head] + [f"{re.escape(f.prefix)}(?P<{f.name}>{f.pattern})" for f in g.fields]
    return re.compile("^" + ":".join(parts) + "$")
