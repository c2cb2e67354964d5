"""What a report section may read of the analysis: the names it declares, and nothing else.

A section (report/registry.py) names the analyses it shows (`reads=`), from the one registry of
analysis names (l2attr/study/study.py). A name that is not registered is refused when the
section is declared, so a renamed analyzer stops the import, not a render. Its build is handed a
SectionView: a read-only window on the Analysis that answers the declared names and refuses any
other one, so what a section shows is what its declaration says. `recording()` collects, per
section, the names its builds read (the test that declaration and use agree).
"""

from __future__ import annotations

import contextlib
import difflib
from contextvars import ContextVar
from typing import Any, Iterator, Union

import pandas as pd

from l2attr.study.study import Analysis, analysis_names


class UnknownAnalysis(ValueError):
    """A section declares a name no analysis is registered under."""


class UndeclaredRead(LookupError):
    """A section's build read a name its declaration does not list. Not an AttributeError on
    purpose: getattr(view, name, default) must not turn it into a silent default."""


_RECORDING: ContextVar[dict[str, set[str]] | None] = ContextVar("l2attr_section_reads", default=None)


def check_reads(key: str, reads: tuple[str, ...]) -> tuple[str, ...]:
    """The declared names, or UnknownAnalysis naming the first unregistered one (and the
    registered name it is closest to)."""
    if isinstance(reads, str):
        raise UnknownAnalysis(f"section {key!r}: reads must be a tuple of analysis names, not the string {reads!r}")
    known = analysis_names()
    for name in reads:
        if name not in known:
            near = difflib.get_close_matches(str(name), known, n=1)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            raise UnknownAnalysis(f"section {key!r} reads {name!r}, which no analysis is registered as{hint}; "
                                  f"registered (l2attr/study/study.py): {', '.join(known)}")
    return tuple(reads)


class SectionView:
    """The analysis as one section sees it: its declared names as attributes, read-only."""

    __slots__ = ("_an", "_key", "_reads")

    def __init__(self, an: Analysis, key: str, reads: tuple[str, ...]) -> None:
        object.__setattr__(self, "_an", an)
        object.__setattr__(self, "_key", key)
        object.__setattr__(self, "_reads", frozenset(reads))

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):                  # Python's own probes (copy, pickle): not a read
            raise AttributeError(name)
        if name not in self._reads:
            raise UndeclaredRead(f"section {self._key!r} read {name!r} without declaring it: add it to the "
                                 f"section's reads=(...) in l2attr/report/registry.py (declared: "
                                 f"{', '.join(sorted(self._reads)) or 'nothing'})")
        seen = _RECORDING.get()
        if seen is not None:
            seen.setdefault(self._key, set()).add(name)
        return self._an.read(name)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"section {self._key!r}: the analysis is read-only here ({name!r} not set)")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"section {self._key!r}: the analysis is read-only here ({name!r} not deleted)")

    def state_rows(self, df: pd.DataFrame) -> pd.DataFrame:
        """Analysis.state_rows, on the view: the rows of the primary l2_state (a read of 'state')."""
        return Analysis.state_rows(self, df)  # type: ignore[arg-type]  (it reads .state alone)


# What the helpers shared by a section's build and the Markdown page take: either one.
AnalysisLike = Union[Analysis, SectionView]


@contextlib.contextmanager
def recording() -> Iterator[dict[str, set[str]]]:
    """Within the block, every section view adds the names it is asked for: section key -> names."""
    seen: dict[str, set[str]] = {}
    token = _RECORDING.set(seen)
    try:
        yield seen
    finally:
        _RECORDING.reset(token)
