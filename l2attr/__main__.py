import sys

try:   # Ctrl-C while the interpreter imports l2attr: one line, as anywhere else
    from l2attr.cli import main
except KeyboardInterrupt:
    print("l2attr: interrupted before the command started; nothing was done", file=sys.stderr)
    raise SystemExit(130) from None

raise SystemExit(main())
