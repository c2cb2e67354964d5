"""The process's own command line ends without the interpreter's teardown once torch has used the
GPU (cli.end_without_teardown): its output flushed, its code kept, no exit handler run; and never
while torch has not touched the GPU or a child process lives; under an injected profiler too. A fake torch stands in
for the GPU."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent("""
    import atexit, multiprocessing, sys, time, types
    from l2attr.cli import end_without_teardown
    used, child = sys.argv[1] == "used", sys.argv[2] == "child"
    sys.modules["torch"] = types.SimpleNamespace(cuda=types.SimpleNamespace(is_initialized=lambda: used))
    atexit.register(lambda: print("teardown ran"))
    if child:
        p = multiprocessing.get_context("spawn").Process(target=time.sleep, args=(0.3,))
        p.start()
    print("the command's last line")          # buffered: stdout is a pipe
    end_without_teardown(3)
    print("went on")
    sys.exit(0)
""")


def _run(used: str, child: str, injected: bool = False) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "CUDA_INJECTION64_PATH"}
    if injected:
        env["CUDA_INJECTION64_PATH"] = "/opt/profiler/libinjection.so"    # as ncu sets it in its target
    return subprocess.run([sys.executable, "-c", SCRIPT, used, child], capture_output=True, text=True,
                          timeout=60, check=False, env=env)


@pytest.mark.parametrize("injected", [False, True])
def test_a_gpu_process_ends_at_once_with_its_output_and_code(injected: bool) -> None:
    r = _run("used", "alone", injected)
    assert r.returncode == 3
    assert r.stdout == "the command's last line\n"        # flushed, and nothing after it ran


@pytest.mark.parametrize("used, child", [("unused", "alone"), ("used", "child")])
def test_otherwise_the_interpreter_ends_it(used: str, child: str) -> None:
    r = _run(used, child)
    assert r.returncode == 0
    assert r.stdout == "the command's last line\nwent on\nteardown ran\n"
