"""`--extra-cell FAMILY:RUNG:PROFILE:L2_STATE`: a cell beyond variants x profiles x states (how
`l2attr profile` runs its validity control's arms in the sweep's child), parsed in one place."""

from __future__ import annotations

from l2attr.errors import UserError
from l2attr.ladder.declare import Variant, plan_variants
from l2attr.vocab import Family, Pin, ladder_state


def parse_extra_cell(text: str, pin_granularity: str | None = None) -> tuple[Variant, str, str]:
    """"family:rung:profile:l2_state" -> (variant, profile, state); a UserError names what is wrong."""
    parts = str(text).split(":")
    if len(parts) < 4 or not all(parts):
        raise UserError(f"--extra-cell {text!r}: write FAMILY:RUNG:PROFILE:L2_STATE")
    family, rung_name, state = parts[0], parts[1], parts[-1]
    try:
        fam, st = Family(family), ladder_state(state)
    except ValueError as exc:
        raise UserError(f"--extra-cell {text!r}: {exc}") from None
    from l2attr.ladder.declare import rung as rung_named

    chosen = plan_variants([fam], [rung_named(rung_name)], Pin(pin_granularity) if pin_granularity else None)
    if not chosen:
        raise UserError(f"--extra-cell {text!r}: the {family} family has no {rung_name} rung")
    return chosen[0], ":".join(parts[2:-1]), st.value
