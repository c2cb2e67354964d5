"""The five-rung ladder, declared once as data: consumer source, compile options, pin or not."""

from __future__ import annotations

from dataclasses import dataclass

from l2attr.errors import UserError

DEFAULT_MAXRREGCOUNT = 42
PROFILES = ("reuse_high", "reuse_medium", "reuse_low", "random")


@dataclass(frozen=True)
class Rung:
    name: str
    label: str            # as the paper names it
    consumer: str         # "plain" | "rpf" | "torch"
    register_cap: bool    # compile with --maxrregcount
    pins: bool            # a pin kernel runs before the consumer
    below: str | None     # the rung this one's marginal delta is taken against

    def compile_options(self, maxrregcount: int = DEFAULT_MAXRREGCOUNT) -> tuple[str, ...]:
        return (f"--maxrregcount={maxrregcount}",) if self.register_cap else ()


RUNGS: tuple[Rung, ...] = (
    Rung("baseline", "baseline", "plain", False, False, None),
    Rung("optmt", "OptMT", "plain", True, False, "baseline"),
    Rung("rpf_optmt", "RPF+OptMT", "rpf", True, False, "optmt"),
    Rung("l2p_optmt", "L2P+OptMT", "plain", True, True, "optmt"),
    Rung("combined", "RPF+L2P+OptMT", "rpf", True, True, "rpf_optmt"),
)
# Reference row: PyTorch's own kernel on the same data (not a rung of the ladder).
TORCH = Rung("torch", "torch.nn.functional.embedding_bag", "torch", False, False, None)

RUNG_BY_NAME = {r.name: r for r in (*RUNGS, TORCH)}
LADDER_ORDER = [r.name for r in RUNGS] + [TORCH.name]


def rung(name: str) -> Rung:
    try:
        return RUNG_BY_NAME[name]
    except KeyError:
        raise UserError(f"unknown rung {name!r}; valid: {', '.join(LADDER_ORDER)}") from None


def parse_rungs(text: str | None) -> list[Rung]:
    if not text:
        return [*RUNGS, TORCH]
    return [rung(n.strip()) for n in text.split(",") if n.strip()]


def parse_profiles(text: str | None) -> list[str]:
    if not text:
        return list(PROFILES)
    names = [n.strip() for n in text.split(",") if n.strip()]
    for n in names:
        if n not in PROFILES:
            raise UserError(f"unknown profile {n!r}; valid: {', '.join(PROFILES)}")
    return names
