"""The design-space sweeps' words: axes, judgements, reference points, chart lines, orders, arms
(their roles, modes and quantities are the engine's: Role, RepeatMode, Quantity)."""

from __future__ import annotations

from l2attr.vocab.core import Vocab


class SweepAxis(Vocab):
    """What one sweep varies (issue #10): one run dir per sweep."""

    AMORTISATION = "amortisation"  # consumer calls per pin, k
    HOTSET = "hotset"              # hot rows pinned
    WINDOW = "window"              # access-policy window hitRatio (and the remap alone)
    OCCUPY = "occupy"              # MiB of L2 held by evict_last lines of a dummy buffer before each call
    POLLUTION = "pollution"        # MB of unrelated streaming reads between pin and consumer
    # the occupy axis' name before it was renamed for what it measures (x: L2 minus the MiB held,
    # called an "effective L2" that the ncu check showed the H200 does not keep): read, not run
    CAPACITY = "capacity"


class SweepJudgement(Vocab):
    """Which judgement a sweep axis' table gets (l2attr/sweep/analyse/judge.py: JUDGES, one module each),
    every word in it from analysis/significance.py's one rule."""

    BREAK_EVEN = "breaks_even_k"       # per series along x: where the pinned arm stops being slower, pays
    PEAK = "peak_point"                # per series: the best x, a peak only if beyond noise of every other x
    SHARE_LEFT = "share_left"          # per series: the share of the x = lowest gain left, where it falls below half
    BEST_VS_REFERENCE = "vs_reference" # per series: the best point of an arm against the reference arm
    PER_POINT = "per_point"            # per point: the pinned arm against the reference at that point


class RefPoint(Vocab):
    """Where a sweep table's reference median sits."""

    SAME = "same_point"                # at the row's own point (the comparand measured beside it)
    LOWEST_X = "lowest_x"              # at the axis' smallest x (0 hot rows, no window, no pollution)


class LineStyle(Vocab):
    """What a line of a sweep chart is (the report picks the dash)."""

    PRIMARY = "primary"                # the measured main series
    SECONDARY = "secondary"            # a measured second series (another order, consumer only)
    MODEL = "model"                    # a prediction (the formula), thin


class DeviceLimit(Vocab):
    """A recorded device limit a sweep chart can mark on its x axis (in MiB)."""

    PERSISTING_MAX = "persisting_max"  # persistingL2CacheMaxSize
    L2_SIZE = "l2_size"                # l2CacheSize


class Order(Vocab):
    """Where a pin's k consumer calls sit in the call stream."""

    BACK_TO_BACK = "back_to_back"  # pin(t), then k calls of table t in a row
    INTERLEAVED = "interleaved"    # the artifact's loop: the other tables' pins and calls in between


class Arm(Vocab):
    """What runs before the consumer at one sweep point."""

    OPTMT = "optmt"          # the OptMT consumer alone (the honest comparand)
    PIN = "l2p_optmt"        # pin kernel -> sync -> OptMT consumer
    REMAP = "remap"          # hot rows copied to the front of the table, indices remapped; no window
    WINDOW = "window"        # remap + persisting set-aside + stream access-policy window
