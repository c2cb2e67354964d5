"""A fake GPU for sweep tests: kernels with known times, a host clock that advances by them.

Model: the consumer takes 50 µs, 40 µs on a table pinned earlier in the same repeat (until a
flush); the pin 30 µs; a polluting read 1 µs per MiB and it un-pins every table once it reaches
60 MiB; a stream sync costs 10 µs of host time. So against OptMT, per consumer call, a pin pays
for itself when 30 + 40k <= 50k (k >= 3 kernel-charged) and 40 + 50k <= 60k (k >= 4 with the
syncs on the wall clock).
"""

from __future__ import annotations

from contextlib import contextmanager
from types import SimpleNamespace

from l2attr.sweep.measure.protocol import ArmOps
from l2attr.vocab import Arm, Family, Pin

MiB = 1 << 20


class FakeSweepGpu:
    def __init__(self) -> None:
        self.clock = 0.0
        self.last_lag_us = 1.0
        self.pinned: set[int] = set()
        self.flushes = 0
        self.launches: list[str] = []

    def run(self, name: str, us: float) -> float:
        self.launches.append(name)
        self.clock += us
        return us

    def timed(self, launch) -> float:
        return launch()

    def host_clock_us(self) -> float:
        return self.clock

    def stream_sync(self) -> None:
        self.clock += 10.0

    def flush_l2(self) -> None:
        self.flushes += 1
        self.pinned.clear()


class FakeSweepDevice:
    """Stands in for sweep.device.SweepDevice (same verbs), counting units it measured."""

    made: list["FakeSweepDevice"] = []

    def __init__(self, cfg, opts, limits, log=print) -> None:
        self.cfg, self.opts = cfg, opts
        self.gpu = FakeSweepGpu()
        self.batches = cfg.warmup_batches + cfg.batches
        self.pins = {Family.ARTIFACT: Pin.ELEMENT, Family.TUNED: Pin.LINE}
        self.units = 0
        self.profiles: list[str] = []
        FakeSweepDevice.made.append(self)

    def load_profile(self, profile: str) -> dict:
        self.profiles.append(profile)
        return {"source": {"name": profile}}

    def unload_profile(self) -> None:
        pass

    def start_repeat(self) -> None:
        self.gpu.flush_l2()

    @contextmanager
    def arm(self, family, p, arm):
        self.units += 1
        g = self.gpu

        def consumer(t, b):
            return lambda: g.run(f"consumer t{t} b{b}", 40.0 if t in g.pinned else 50.0)

        ops = ArmOps(consumer=consumer)
        if arm == Arm.PIN:
            def pin(t):
                def launch():
                    g.pinned.add(t)
                    return g.run(f"pin t{t}", 30.0)
                return launch
            ops.pin = pin
        if arm == Arm.WINDOW:      # the window's set-up before each call (host-timed; free here)
            ops.prepare = lambda t: None
        if p.pollute_bytes:
            mib = p.pollute_bytes / MiB

            def pollute():
                if mib >= 60:
                    g.pinned.clear()
                return g.run(f"pollute {mib:g}", mib)
            ops.pollute = pollute
        yield ops

    def describe(self) -> dict:
        return {"limits": {"l2CacheSize": 60 * MiB, "persistingL2CacheMaxSize": 37 * MiB,
                           "accessPolicyMaxWindowSize": 128 * MiB}}


LIMITS = SimpleNamespace(l2_bytes=60 * MiB, persisting_max_bytes=int(37.5 * MiB), window_max_bytes=128 * MiB)


def sweep_manifest(cfg, opts) -> dict:
    """What `l2attr sweep` writes when it starts (sweep/command.py), with the fake GPU's facts."""
    from l2attr import __version__

    return {"kind": "sweep", "command": f"l2attr sweep {opts.axis}", "config": cfg.to_dict(),
            "sweep": opts.manifest(), "versions": {"l2attr": __version__}, "gpu": {"name": "Fake GPU"}}


def write_sweep_run(root, axis, families=("artifact",), profiles=("reuse_high", "random"), **kw):
    """A sweep run dir measured on the fake GPU (repeats 1), as `l2attr sweep` writes it."""
    from l2attr.dlrm.config import WorkloadConfig
    from l2attr.rundir import RunDir
    from l2attr.sweep.measure.run import run_sweep
    from l2attr.sweep.declare import SweepOptions
    from l2attr.vocab import SweepAxis

    cfg = WorkloadConfig(tables=2, rows=1000, batch_size=4, pooling=2, batches=3, warmup_batches=1, hot_rows=10)
    opts = SweepOptions(axis=SweepAxis(axis), families=[Family(f) for f in families], profiles=list(profiles),
                        repeats=1, **kw)
    run = RunDir.create(root, axis, sweep_manifest(cfg, opts))
    run_sweep(cfg, opts, run, LIMITS, device_factory=FakeSweepDevice, log=lambda s: None)
    return run.path
