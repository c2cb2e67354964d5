"""`l2attr` command line: one parser, one module per subcommand, user errors as one line + exit 2."""

from __future__ import annotations

import argparse
import importlib
import sys

from l2attr import __version__
from l2attr.errors import UserError

# subcommand -> (module under l2attr.commands, one-line help)
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "ladder": ("ladder", "layer A: time the five-rung kernel ladder x reuse profiles (GPU)"),
    "profile": ("profile", "layer B: Nsight Compute L2 attribution per role, or --import a report"),
    "report": ("report", "turn run dirs into one offline HTML (or Markdown) attribution report"),
    "traces": ("traces", "inspect, generate and calibrate index traces (CPU)"),
    "doctor": ("doctor", "check GPU, CUDA, ncu counters, nvtx, ncu_report: can ladder/profile run?"),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="l2attr",
        description="How much is cross-kernel L2 residency really worth? Latency ladder (layer A), "
                    "Nsight Compute attribution (layer B) and an HTML report for the DLRM "
                    "EmbeddingBag L2-pinning study.",
    )
    parser.add_argument("--version", action="version", version=f"l2attr {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module, help_text) in SUBCOMMANDS.items():
        mod = importlib.import_module(f"l2attr.commands.{module}")
        p = sub.add_parser(name, help=help_text, description=mod.__doc__,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        mod.add_arguments(p)
        p.set_defaults(_run=mod.run)
    return parser



def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "_run", None):
        parser.print_help()
        return 2
    try:
        return int(args._run(args) or 0)
    except UserError as exc:
        print(f"l2attr {args.command}: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print(f"l2attr {args.command}: interrupted; finished cells are on disk (use --resume)",
              file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
