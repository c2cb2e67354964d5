"""One colour per rung and per profile, everywhere: the charts' traces and the tables' rung chips
(kept apart from charts.py so a table, and the Markdown page, needs no plotly)."""

from __future__ import annotations

from l2attr.vocab import Profile, RungId

RUNG_COLORS: dict[str, str] = {
    RungId.BASELINE: "#6B7280",
    RungId.OPTMT: "#3B6FB6",
    RungId.RPF_OPTMT: "#3E9B5F",
    RungId.L2P_OPTMT: "#E07B1F",
    RungId.COMBINED: "#8E5BB5",
    RungId.TORCH: "#C4C9D1",
}
PROFILE_COLORS: dict[str, str] = {
    Profile.REUSE_HIGH: "#B4292F",
    Profile.REUSE_MEDIUM: "#E8853A",
    Profile.REUSE_LOW: "#5E9BD0",
    Profile.RANDOM: "#22508F",
}
FALLBACK_COLOR = "#9CA3AF"
