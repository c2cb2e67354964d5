"""What a GPU process pays at its two ends, outside any run's own clock (docs/facts.md#process-exit).

    python tools/probes/process_ends.py [--json FILE]

1. The exit: a process imports torch and cupy, holds 3 GiB on the GPU and prints the time; the
   parent times from that line to the process's end, three times with the interpreter's teardown
   and three with cli.end_without_teardown (what `l2attr` does after a GPU command).
2. `import torch`, three fresh processes without a bytecode folder of their own and three with one
   (PYTHONPYCACHEPREFIX in an empty folder: the first fills it), and whether torch's own bytecode
   lies beside it: does such a folder shorten a process's start on this machine?
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HOLD = """
import sys, time, torch, cupy
x = torch.empty(3 << 28, dtype=torch.float32, device="cuda"); cupy.cuda.runtime.getDeviceCount()
torch.cuda.synchronize()
print(time.time(), flush=True)
if sys.argv[1] == "now":
    from l2attr.cli import end_without_teardown
    end_without_teardown(0)
"""
IMPORT = "import time; t = time.perf_counter(); import torch; print(time.perf_counter() - t)"


def exit_s(how: str) -> float:
    p = subprocess.Popen([sys.executable, "-c", HOLD, how], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = p.stdout.readline() if p.stdout else ""
    _, err = p.communicate()
    if p.returncode != 0 or not line.strip():
        raise SystemExit(f"exit_probe: the GPU process ended with {p.returncode} before its last line: "
                         f"{(err.strip().splitlines() or ['?'])[-1]}")
    said = float(line)
    return round(time.time() - said, 3)


def import_s(env: dict[str, str]) -> float:
    out = subprocess.run([sys.executable, "-c", IMPORT], capture_output=True, text=True, env=env, check=False)
    if out.returncode != 0:
        raise SystemExit(f"exit_probe: `import torch` failed: {(out.stderr.strip().splitlines() or ['?'])[-1]}")
    return round(float(out.stdout.strip().splitlines()[-1]), 3)


def main(argv: list[str]) -> int:
    record: dict = {"exit_with_teardown_s": [exit_s("teardown") for _ in range(3)],
                    "exit_without_teardown_s": [exit_s("now") for _ in range(3)]}
    bare = {k: v for k, v in os.environ.items() if k not in ("PYTHONPYCACHEPREFIX", "PYTHONDONTWRITEBYTECODE")}
    record["import_torch_no_cache_s"] = [import_s(bare) for _ in range(3)]
    with tempfile.TemporaryDirectory() as prefix:
        record["import_torch_own_cache_s"] = [import_s({**bare, "PYTHONPYCACHEPREFIX": prefix}) for _ in range(3)]
    import torch

    record["torch_has_bytecode_beside_it"] = any(Path(torch.__file__).parent.glob("__pycache__/*.pyc"))
    record["torch_folder_writable"] = os.access(Path(torch.__file__).parent, os.W_OK)
    print(json.dumps(record))
    if "--json" in argv:
        Path(argv[argv.index("--json") + 1]).write_text(json.dumps(record, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
