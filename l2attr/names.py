"""Every l2attr range name, builder and parser side by side: the one NVTX grammar.

A shape is one `Grammar` (fixed leading words, then fields, all joined by ':'); its builder and
its parser are that one declaration, so a name always parses back to what built it. The
ladder's kernel launches, the sweep's, an experiment's calls (and a user's own annotate()
ranges), a step's ops and steps: all of them live here, over the value sets of l2attr.vocab.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from enum import Enum
from typing import Any, Iterable

from l2attr.vocab import (Arm, CELL_CONDITIONS, LADDER_STATES, RANGE_ROLES, SWEEP_ROLES,
                          Family, Pin, Role, cell_condition)

# -- how a range name is put together ----------------------------------------------------------

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


# -- NVTX range names -------------------------------------------------------------------------
# Ranges live in l2attr's own NVTX domain; ':' separates fields, never '/' (ncu's --nvtx-include
# splits the range stack on '/': docs/facts.md#nvtx-filter). Seen on the H200 with ncu 2025.3.1
# (examples/logs/probe_nvtx_evict_last.log): `regex:l2attr@(pin|consumer):.*/` selects the pin and
# consumer ranges of the domain, nested in a call range or not, while `l2attr@regex:...` and an
# include without the trailing '/' select nothing.

NVTX_DOMAIN = "l2attr"
NVTX_INCLUDE = f"regex:{NVTX_DOMAIN}@(pin|consumer):.*/"
NVTX_CALL_INCLUDE = f"regex:{NVTX_DOMAIN}@call:.*/"
SWEEP_NVTX_INCLUDE = f"regex:{NVTX_DOMAIN}@sweep:.*/"
LEGACY_PREFIX = f"{NVTX_DOMAIN}:"   # before the domain: names in the default domain with this prefix


# Kernel launches of the ladder: one role of one call. Before kernel families existed (every run
# used today's `tuned` kernels) names had no family and no pin: LADDER_V1, read as family `tuned`.
LADDER = Grammar((), (word("role", RANGE_ROLES), word("family", Family), word("rung"), word("pin", Pin), word("profile"),
                      word("l2_state", LADDER_STATES), count("table", "t"), count("batch", "b")))
LADDER_V1 = Grammar((), (word("role", RANGE_ROLES), word("rung"), word("profile"), word("l2_state", LADDER_STATES),
                         count("table", "t"), count("batch", "b")))
_ROLE_ONLY_RE = re.compile(rf"^(?P<role>{alternatives(RANGE_ROLES)})(?::.*)?$")


@dataclass(frozen=True)
class RangeName:
    """The identity of one profiled kernel launch, as carried by its NVTX push/pop range."""

    role: str
    family: str
    rung: str
    pin: str
    profile: str
    l2_state: str
    table: int
    batch: int

    def __str__(self) -> str:
        return LADDER.build(**{k: getattr(self, k) for k in self.__dataclass_fields__})

    @property
    def cell(self) -> str:
        return f"{self.family}:{self.rung}:{self.pin}:{self.profile}:{self.l2_state}"


def range_name(role: str, family: str, rung: str, pin: str, profile: str, l2_state: str,
               table: int, batch: int) -> str:
    """The NVTX range name (inside the l2attr domain) for one role of one call."""
    return str(RangeName(str(role), str(family), rung, str(pin), profile, str(l2_state),
                         int(table), int(batch)))


def _strip(name: str) -> str | None:
    """The name inside l2attr's namespace: `l2attr@x` (domain, as the importer records it) or
    `l2attr:x` (the old default-domain prefix); None for anybody else's range."""
    for prefix in (f"{NVTX_DOMAIN}@", LEGACY_PREFIX):
        if name.startswith(prefix):
            return name[len(prefix):]
    return None


def parse_range_name(name: str | None) -> dict[str, Any]:
    """Split an l2attr range name into columns; anything else leaves them empty.

    Accepts `l2attr@<name>` (the domain) and `l2attr:<name>` (before the domain). Names written
    before families existed are read as family `tuned` (the only kernels there were) with pin
    granularity unknown (''); `l2attr:pin`-style names give the role only.
    """
    out: dict[str, Any] = {"role": "", "family": "", "rung": "", "pin": "", "profile": "",
                           "l2_state": "", "cell": "", "table": None, "batch": None}
    inner = _strip(name) if name else None
    if inner is None:
        return out
    g = LADDER.parse(inner) or LADDER_V1.parse(inner)
    if g is not None:
        parsed = RangeName(g["role"], g.get("family") or Family.TUNED.value, g["rung"], g.get("pin") or "",
                           g["profile"], g["l2_state"], g["table"], g["batch"])
        out.update(role=parsed.role, family=parsed.family, rung=parsed.rung, pin=parsed.pin,
                   profile=parsed.profile, l2_state=parsed.l2_state, table=parsed.table,
                   batch=parsed.batch, cell=parsed.cell)
        return out
    m = _ROLE_ONLY_RE.match(inner)
    if m:
        out["role"] = m["role"]
    return out


# Kernel launches of a sweep under ncu (`l2attr sweep ... --profile`): the point id last, as it
# may hold ':'.
SWEEP = Grammar(("sweep",), (word("role", SWEEP_ROLES), word("family", Family), word("profile"), word("arm", Arm),
                             count("table", "t"), count("group", "g"), count("position", "p"), rest("point")))


def sweep_range_name(role: str, family: str, profile: str, arm: str, table: int, group: int, position: int,
                     point: str) -> str:
    """The NVTX range (inside the l2attr domain) around one profiled sweep kernel."""
    return SWEEP.build(role=role, family=family, profile=profile, arm=arm, table=table, group=group,
                       position=position, point=point)


def parse_sweep_range_name(name: str | None) -> dict[str, Any] | None:
    """The fields of a sweep kernel's range (`l2attr@sweep:...` or bare), or None for any other."""
    if not name:
        return None
    inner = name[len(NVTX_DOMAIN) + 1:] if name.startswith(f"{NVTX_DOMAIN}@") else name
    return SWEEP.parse(inner)


EXPERIMENT_ROLES = (Role.PRODUCER.value, Role.CONSUMER.value)
_NAME_RE = re.compile(r"^[A-Za-z0-9._-]+$")
# Experiment ranges: `<role>:<experiment>` (a user's annotate()) or
# `<role>:<experiment>:<condition>:c<call>` (the engine's own calls); ':' separated as above.
EXPERIMENT_INCLUDE = f"regex:{NVTX_DOMAIN}@({'|'.join(EXPERIMENT_ROLES)}):.*/"


def check_label(label: str, what: str = "label") -> str:
    """A user's label as it may stand in an NVTX name, a run dir name and a CSV cell."""
    if not isinstance(label, str) or not _NAME_RE.match(label):
        from l2attr.errors import UserError

        raise UserError(f"{what} {label!r}: use letters, digits, '.', '_' and '-' only")
    return label


# An engine's call (`<role>:<experiment>:<condition>:c<call>`) or a user's own annotate() range
# (`<role>:<experiment>`), in the one grammar of range names; a step's op ranges likewise.
_EXP_ROLE = Field("role", "|".join(EXPERIMENT_ROLES))
_LABEL = Field("experiment", "[A-Za-z0-9._-]+")
EXPERIMENT = Grammar((), (_EXP_ROLE, _LABEL, word("condition", CELL_CONDITIONS), count("call", "c")))
EXPERIMENT_BARE = Grammar((), (_EXP_ROLE, _LABEL))
STEP_OP = Grammar(("op",), (Field("op_index", r"\d+", number=True),))
# One traced replay or call of `l2attr.step` (a torch.profiler range, under LEGACY_PREFIX like
# every l2attr range outside its NVTX domain): its number only. What it measured (the arm as an
# L2Condition, the repeat, the edge) stays with the session that numbered it (steps/measure/trace.py
# Slots) and is never written into a name to be parsed back. A marked step function's NVTX range:
STEP_SLOT = Grammar(("slot",), (Field("slot", r"\d+", number=True),))
STEP_MARK = Grammar(("step",), (Field("name", "[A-Za-z0-9._-]+"),))


def experiment_range_name(role: str, experiment: str, condition: str | None = None,
                          call: int | None = None) -> str:
    """The NVTX name (inside l2attr's domain) of one role of one experiment call."""
    role, experiment = Role(role).value, check_label(experiment, "experiment name")
    if condition is None:
        return EXPERIMENT_BARE.build(role=role, experiment=experiment)
    return EXPERIMENT.build(role=role, experiment=experiment, condition=cell_condition(condition).value,
                            call=int(call or 0))


def parse_experiment_range(name: str | None) -> dict[str, Any]:
    """role, experiment, condition ('' for a bare annotate()), call (None) of an experiment range;
    every field empty for any other range (the ladder's included)."""
    out: dict[str, Any] = {"role": "", "experiment": "", "condition": "", "call": None}
    inner = _strip(name) if name else None
    if inner is None:
        return out
    got = EXPERIMENT.parse(inner) or EXPERIMENT_BARE.parse(inner)
    if got:
        out.update(got)
    return out


# -- a step's kernels that no eager op launched ---------------------------------------------------
UNMATCHED = -2  # op_index of a graph kernel no eager op launched (attributed by its name, name_op)

def name_op(kernel: str) -> str:
    """An op name from a kernel's own name, for kernels no eager op launched: Inductor's
    `triton_<kind>_fused_<ops>_<n>` says what it fused; any other, its function's identifier."""
    s = str(kernel)
    if s.startswith("triton_"):
        parts = s.split("_")
        body = parts[2:-1] if parts[-1].isdigit() else parts[2:]
        return "triton:" + "_".join(body)
    s = s.removeprefix("void ")
    head = s.split("(")[0].split("<")[0]
    return head.rsplit("::", 1)[-1] or s[:40]
