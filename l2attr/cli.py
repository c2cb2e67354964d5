"""`l2attr` command line: one parser, one module per subcommand (a run kind's found in the registry,
kinds.py), user errors as one line + exit 2."""

from __future__ import annotations

import argparse
import errno
import importlib
import os
import signal
import sys
import warnings
from typing import Any

from l2attr import __version__
from l2attr.errors import UserError
from l2attr.flags import Parser, closed_stdout_error as _closed_stdout_error, say as _say
from l2attr.kinds import KINDS
from l2attr.outputs import ClosedStdout, guard_closed_streams
from l2attr.vocab import Command

# subcommand -> (its module's dotted path, one-line help): each run kind's from the registry (kinds.py),
# then the verbs of no kind
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    **{name: (kind.command, kind.help) for name, kind in KINDS.items()},
    Command.REPORT: ("l2attr.commands.report", "turn run dirs into one offline HTML (or Markdown) attribution report"),
    Command.TRACES: ("l2attr.commands.traces", "inspect, generate and calibrate index traces (CPU)"),
    Command.TUNING: ("l2attr.ladders.tuning.command", "the fast family's launch point a tuning table chooses (CPU)"),
    Command.DOCTOR: ("l2attr.commands.doctor",
                     "check GPU, CUDA, ncu counters, nvtx, ncu_report: which verb can run here?"),
    Command.CACHE: ("l2attr.commands.cache", "the generated-workload cache shared by every --out: info, clear (CPU)"),
}

# What Ctrl-C leaves behind differs per command: only the ladder can resume; the others write
# their outputs atomically, so an interrupted one leaves the old file or none.
INTERRUPTED: dict[str, str] = {
    Command.LADDER: "interrupted; finished cells are on disk (use --resume RUN_DIR)",
    Command.SWEEP: "interrupted; finished units are on disk (use l2attr sweep --resume RUN_DIR)",
    Command.PROFILE: "interrupted; a run dir it started is incomplete (manifest status 'running'): "
                     "run the profile again",
    f"{Command.PROFILE} --import": "interrupted; nothing was written",
    Command.REPORT: "interrupted; no report was written",
    Command.STEP: "interrupted; a step run is written only when complete",
    Command.EXPERIMENT: "interrupted; finished (condition, repeat) units are on disk (Experiment.time(resume=RUN_DIR))",
    Command.TRACES: "interrupted; files it had not yet reported as written were not written",
    Command.TUNING: "interrupted; nothing was written",
    Command.DOCTOR: "interrupted",
    Command.CACHE: "interrupted; a workload being deleted reads as absent and is rebuilt on next use",
}
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 128 + 13  # what a shell reports for a Unix tool ended by SIGPIPE


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="l2attr",
        description="How much is cross-kernel L2 residency really worth? Latency ladder (layer A), "
                    "Nsight Compute attribution (layer B) and an HTML report for the DLRM "
                    "EmbeddingBag L2-pinning study.",
    )
    parser.add_argument("--version", action="version", version=f"l2attr {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module, help_text) in SUBCOMMANDS.items():
        mod = importlib.import_module(module)
        p = sub.add_parser(str(name), help=help_text, description=mod.__doc__,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        mod.add_arguments(p)
        p.set_defaults(_run=mod.run)
    return parser


def interrupted_message(args: argparse.Namespace) -> str:
    key = args.command
    if key == Command.PROFILE and getattr(args, "import_path", None) is not None:
        key = f"{Command.PROFILE} --import"
    return INTERRUPTED.get(key, "interrupted")


def _drop_stdout() -> None:
    """Point fd 1 at /dev/null so the interpreter's final flush cannot fail a second time.

    Without this, a closed pipe or a full disk prints "Exception ignored ... BrokenPipeError"
    at shutdown and changes the exit status to 120.
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass  # stdout is not a real file (a test's capture): nothing will flush it at exit


def os_error_text(exc: OSError) -> str:
    """An OSError in one line: the file it concerns, or the output it failed to write."""
    why = exc.strerror or str(exc) or type(exc).__name__
    if exc.filename:
        return f"{exc.filename}: {why}"
    if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO, errno.EBADF):
        return f"cannot write the output ({why})"
    return why


def main(argv: list[str] | None = None) -> int:
    """Run one command. Without `argv` this is the process's own command line (the console script,
    `python -m l2attr`): once the command has ended, Ctrl-C is ignored for the rest of the exit."""
    if argv is None:
        terminate_as_interrupt()
        interrupts_never_unraisable()
    try:
        code = _main(argv)
        code = EXIT_TERMINATED if code == EXIT_INTERRUPTED and _TERMINATED else code
    except KeyboardInterrupt:   # in the few instructions between the command's handlers and here
        code = EXIT_TERMINATED if _TERMINATED else EXIT_INTERRUPTED
    finally:
        if argv is None:
            hold_interrupts_for_exit()
    if argv is None:
        end_without_teardown(code)
    return code


EXIT_TERMINATED = 128 + 15
_TERMINATED: list[int] = []


def terminate_as_interrupt() -> None:
    """SIGTERM (a `kill`, a job scheduler, a CI timeout) handled as Ctrl-C is: the Python exception
    unwinds, so a temp file being written is removed (atomic.write_stream) and a temp folder is
    deleted, the command says how to go on, and the exit status is 143. Python's default for
    SIGTERM ends the process at once and left a hidden `.tmp` of megabytes beside the run's tables."""
    def handler(signum: int, frame: Any) -> None:
        _TERMINATED.append(signum)
        raise KeyboardInterrupt

    try:
        signal.signal(signal.SIGTERM, handler)
    except ValueError:      # not the main thread
        pass


_UNRAISED: list[bool] = []      # a Ctrl-C the interpreter could not raise where it landed


def interrupts_never_unraisable() -> None:
    """A Ctrl-C that lands where the interpreter cannot raise it (an import lock's weakref callback
    while the parser imports pandas, a __del__) was printed as "Exception ignored ... Traceback ...
    KeyboardInterrupt" and then lost, the command going on. It is kept instead: one that came while
    the parser imported stops the command before it starts (`_main` says so in its one line); a
    later one (rare) is dropped as the interpreter dropped it, without the traceback."""
    previous = sys.unraisablehook

    def hook(unraisable: Any) -> None:
        if unraisable.exc_type is not None and issubclass(unraisable.exc_type, KeyboardInterrupt):
            _UNRAISED.append(True)
            return
        previous(unraisable)

    sys.unraisablehook = hook


def end_without_teardown(code: int) -> None:
    """End a process that used the GPU through torch at once, with `code`, its output flushed.

    Why: the interpreter's teardown after a GPU command (torch's modules, the CUDA context, its
    pools) took a large part of a second on the H100 (docs/facts.md#process-exit), some 5 % of a
    ladder's wall. By now the command's files are written and renamed (every write is atomic) and
    l2attr registers no exit handler; the driver and the OS free the GPU's memory and context when
    the process ends, as after any exit. Not taken while a child process lives (a Dask worker is
    ended by its cluster's own exit). Taken under Nsight Compute too: ncu has each profiled kernel's
    counters when the kernel ends, and a profile's sweep whose children ended this way kept every
    kernel and pass, its cells within the spread of two sweeps ended by the teardown
    (docs/facts.md#process-exit)."""
    torch = sys.modules.get("torch")
    try:
        used = torch is not None and bool(torch.cuda.is_initialized())
    except Exception:       # a torch without CUDA, or half imported
        used = False
    if not used:
        return
    import multiprocessing

    if multiprocessing.active_children():
        return
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):   # a closed pipe: nothing more can reach it
            pass
    os._exit(code)


def hold_interrupts_for_exit() -> None:
    """Ignore SIGINT from here to the process's end.

    After main returns, the interpreter tears down its modules (pandas, numpy: tens of ms, more on
    a loaded machine) and then puts SIGINT back to the system default, so a Ctrl-C in that window
    killed the process by the signal (exit -2 to its parent) or printed a traceback from the
    teardown, after the command had already finished and said so. Ignoring it loses nothing: the
    command's work and its one line are done. Only for the process's own command line: a caller
    of main(argv) in its own process keeps its handler.
    """
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    except ValueError:      # not the main thread: the interpreter delivers SIGINT elsewhere
        pass


def _raise_kept_interrupt() -> None:
    if _UNRAISED:
        _UNRAISED.clear()          # said once: a later main() in this process starts afresh
        raise KeyboardInterrupt


def _main(argv: list[str] | None) -> int:
    guard_closed_streams()
    try:   # building the parser imports every command (pandas, numpy): Ctrl-C lands here often
        with warnings.catch_warnings(record=True) as said:
            parser = build_parser()
        _raise_kept_interrupt()
        for w in said:                 # shown as they would have been, once the imports are whole
            warnings.showwarning(w.message, w.category, w.filename, w.lineno, w.file, w.line)
        args = parser.parse_args(argv)
        _raise_kept_interrupt()
    except KeyboardInterrupt:
        # an import cut short may warn on its way out (a Cython module: "failed to patch module
        # with custom type", seen in CI); the interrupt's one line is all that is said
        _say("l2attr: interrupted before the command started; nothing was done")
        return EXIT_INTERRUPTED
    if not getattr(args, "_run", None):
        parser.print_help()
        return 2
    prefix = f"l2attr {args.command}"
    try:
        code = int(args._run(args) or 0)
        sys.stdout.flush()  # a full disk shows up here for short outputs, not at exit
        if code == 0 and isinstance(sys.stdout, ClosedStdout) and sys.stdout.lost:
            return _closed_stdout_error(prefix)
        return code
    except UserError as exc:
        _say(f"{prefix}: error: {exc}")
        return exc.exit_code
    except KeyboardInterrupt:
        _say(f"{prefix}: {interrupted_message(args)}")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        _drop_stdout()  # the reader has gone (`| head`): stop quietly, as Unix tools do
        return EXIT_BROKEN_PIPE
    except SystemExit as exc:
        # rich's Console answers a closed pipe itself (stdout to /dev/null, SystemExit(1));
        # give it the same status as a closed pipe met anywhere else
        if isinstance(exc.__context__, BrokenPipeError):
            return EXIT_BROKEN_PIPE
        raise
    except MemoryError as exc:
        detail = str(exc).strip()
        _say(f"{prefix}: error: out of memory{f' ({detail})' if detail else ''}; "
             "try a smaller workload (--rows, --lookups)")
        return 2
    except OSError as exc:
        _drop_stdout()
        _say(f"{prefix}: error: {os_error_text(exc)}")
        return 2


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
