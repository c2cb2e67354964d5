"""Any producer -> consumer pair: time it, profile it, read what it is worth.

TARGET names an experiment: `path/to/script.py:NAME` or `package.module:NAME`, where NAME is an
l2attr.Experiment or a function of no arguments that returns one.

  l2attr experiment time examples/experiments/kv_pin_sdpa.py:make --out runs
  l2attr experiment profile examples/experiments/kv_pin_sdpa.py:make --run runs/<...>-kv-pin-sdpa
  l2attr experiment profile --out runs -- python my_script.py     (a script marked with l2attr.annotate)
  l2attr experiment show runs/<...>-kv-pin-sdpa                   (the verdict, DRAM table, control)
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import importlib.util
import sys
from pathlib import Path
from typing import Any

from l2attr.errors import UserError
from l2attr.vocab import Command

ACTIONS = ("time", Command.PROFILE.value, "show", "child")   # `l2attr experiment ACTION`


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("action", choices=ACTIONS, help="time | profile | show | child (the ncu child, internal)")
    p.add_argument("rest", nargs=argparse.REMAINDER, metavar="TARGET [options] [-- CMD ...]",
                   help="SCRIPT.py:NAME or MODULE:NAME (time, profile, child); RUN_DIR (show); profile only: "
                        "`-- CMD ...` profiles a command that marks its kernels with l2attr.annotate")
    _options(p)


def _options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", type=Path, help="run dirs go here (default: the experiment's own, runs/)")
    p.add_argument("--run", type=Path, metavar="RUN_DIR", help="profile into this experiment run dir")
    p.add_argument("--repeats", type=int, help="time: device + host repeats (default: the declaration's)")
    p.add_argument("--metrics", default="l2", help="profile: metric sets or ncu names (default l2)")
    p.add_argument("--calls", type=int, default=4, help="profile: profiled calls per condition (default 4)")
    p.add_argument("--chip", help="profile: the chip ncu names (ga100, gh100; default: detected from the GPU)")
    p.add_argument("--name", default="annotated", help="profile -- CMD: run name (default annotated)")


def load_target(target: str) -> Any:
    """The Experiment a TARGET names (see the module docstring); one line for every mistake."""
    from l2attr.experiment.api import Experiment

    where, sep, name = target.rpartition(":")
    if not sep or not where or not name:
        raise UserError(f"target {target!r}: use SCRIPT.py:NAME or MODULE:NAME")
    if where.endswith(".py"):
        path = Path(where)
        if not path.is_file():
            raise UserError(f"target {target!r}: {path} not found")
        spec = importlib.util.spec_from_file_location(f"l2attr_target_{path.stem}", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.path.insert(0, str(path.resolve().parent))
        try:
            spec.loader.exec_module(module)
        except SystemExit as exc:    # the script ended itself while being loaded: say so, never exit silently
            raise UserError(f"target {target!r}: {path} called sys.exit({exc.code!r}) while being loaded; "
                            "keep the exit under `if __name__ == '__main__':`") from None
        except Exception as exc:     # the user's script: say what broke in one line
            raise UserError(f"target {target!r}: running {path} failed: {type(exc).__name__}: {exc}") from None
    else:
        try:
            module = importlib.import_module(where)
        except ImportError as exc:
            raise UserError(f"target {target!r}: cannot import {where} ({exc})") from None
    obj = getattr(module, name, None)
    if obj is None:
        raise UserError(f"target {target!r}: {where} has no {name}")
    if callable(obj) and not isinstance(obj, Experiment):
        obj = _call_factory(target, name, obj)
    if not isinstance(obj, Experiment):
        raise UserError(f"target {target!r}: {name} is not an l2attr.Experiment")
    return obj


def _call_factory(target: str, name: str, factory: Any) -> Any:
    """NAME() for a NAME that makes the Experiment: it must take no arguments, and what it raises
    or exits with is one line."""
    import inspect

    try:
        needed = [p.name for p in inspect.signature(factory).parameters.values()
                  if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    except (TypeError, ValueError):
        needed = []
    if needed:
        raise UserError(f"target {target!r}: {name} takes arguments ({', '.join(needed)}); name an Experiment "
                        "or a function of no arguments that returns one")
    try:
        return factory()
    except SystemExit as exc:
        raise UserError(f"target {target!r}: {name}() called sys.exit({exc.code!r})") from None
    except UserError:
        raise
    except Exception as exc:
        raise UserError(f"target {target!r}: {name}() failed: {type(exc).__name__}: {exc}") from None


def _need_target(args: argparse.Namespace) -> str:
    if not args.target:
        raise UserError(f"experiment {args.action}: name a TARGET (SCRIPT.py:NAME or MODULE:NAME)")
    return args.target


def _split(args: argparse.Namespace) -> None:
    """TARGET and the options after the action, then `-- CMD` (argparse cannot mix a positional,
    options and a command of its own, so the part before `--` is parsed here, into `args`)."""
    from l2attr.flags import Parser

    rest = list(args.rest)
    if (args.action == Command.PROFILE and "--" not in rest and rest and not rest[0].startswith("-")
            and ":" not in rest[0]):
        rest = ["--", *rest]     # argparse dropped the `--` right after the action; a TARGET has a ':'
    cut = rest.index("--") if "--" in rest else len(rest)
    inner = Parser(prog="l2attr experiment")
    inner.add_argument("target", nargs="?")
    _options(inner)
    inner.parse_args(rest[:cut], namespace=args)
    args.cmd = rest[cut + 1:]


def run(args: argparse.Namespace) -> int:
    _split(args)
    if args.repeats is not None and args.repeats < 1:
        raise UserError("--repeats must be at least 1")
    if args.calls < 1:
        raise UserError("--calls must be at least 1")
    if args.action == "show":
        return _show(Path(_need_target(args)))
    if args.out is not None:
        from l2attr.outputs import check_out_folder

        check_out_folder(args.out)
    if args.action in (Command.PROFILE, "child"):
        from l2attr.catalog.sets import check_chip
        from l2attr.profile.metricsets import check_metrics_text

        check_metrics_text(args.metrics)       # before the target runs or the GPU is asked
        if args.chip is not None:
            args.chip = check_chip(args.chip)
    if args.action == Command.PROFILE and args.cmd:
        if args.target:
            raise UserError("experiment profile: give a TARGET or `-- CMD`, not both")
        return _profile_command(args, args.cmd)
    exp = load_target(_need_target(args))
    if args.out is not None:
        exp = dataclasses.replace(exp, out=args.out)     # the declaration is frozen: a copy
    if args.action == "time":
        exp.time(repeats=args.repeats)
        return 0
    if args.action == "child":
        exp.profile(metrics=args.metrics, calls=args.calls)   # exits inside the child
        return 0
    me = [sys.executable, "-m", "l2attr", Command.EXPERIMENT.value, "child", args.target, "--calls", str(args.calls)]
    if args.chip is not None:
        me += ["--chip", args.chip]
    exp.profile(metrics=args.metrics, command=me, calls=args.calls, chip=args.chip, run=args.run)
    return 0


def _profile_command(args: argparse.Namespace, command: list[str]) -> int:
    from l2attr.experiment.profile import profile_command
    from l2attr.rundir import RunDir, command_line

    if not command:
        raise UserError("experiment profile --: name the command to profile after --")
    run = RunDir.create(args.out or Path("runs"), args.name, {"kind": Command.EXPERIMENT.value, "experiment": None,
                                                             "annotated": True, "command": command_line()})
    profile_command(command, run, args.metrics, chip=args.chip)
    return 0


# exp DRAM table column -> (header, formatter): bytes per call in decimal units, the hit rate in %
DRAM_COLUMNS = {"condition": ("condition", str), "role": ("role", str), "calls": ("calls profiled", str),
                "dram_read": ("DRAM read / call (median)", "nbytes"),
                "dram_write": ("DRAM write / call (median)", "nbytes"),
                "read_hit_rate": ("L2 read hit rate", "pct")}


def dram_text(dram: Any) -> str:
    """The DRAM table as a person reads it: MB per call and hit rates in %, not raw byte counts."""
    from l2attr.report import fmt

    cols = [c for c in DRAM_COLUMNS if c in dram]
    shown = dram[cols].copy()
    for c in cols:
        header, how = DRAM_COLUMNS[c]
        f = getattr(fmt, how) if isinstance(how, str) else how
        shown[c] = [f(v) for v in dram[c]]
    return shown.rename(columns={c: DRAM_COLUMNS[c][0] for c in cols}).to_string(index=False)


def _show(path: Path) -> int:
    from l2attr.experiment.analyse.dram import describe
    from l2attr.experiment.table import analyse_experiment, load_experiment

    an = analyse_experiment(load_experiment(path))
    for line in an.verdict.get("headline", []):
        print(line)
    if not an.dram.empty:
        print(dram_text(an.dram))
    if an.control is not None:
        print(describe(an.control))
    return 0
