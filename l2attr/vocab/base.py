"""The base of every closed value set: a str enum whose str() is its plain value."""

from __future__ import annotations

from enum import Enum


class Vocab(str, Enum):
    """A str enum whose str() is its value (so f-strings and CSV writers see the plain word)."""

    def __str__(self) -> str:
        return str(self.value)

    @classmethod
    def values(cls) -> tuple[str, ...]:
        return tuple(m.value for m in cls)
