"""examples/steps/shipped.py on a CPU: the shipped steps' names and facts, read without torch, and
built lazily (asking for one step builds its model file only); the GPU checks are
tools/check_shipped_steps.py's."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from l2attr.errors import UserError

REPO = Path(__file__).resolve().parents[1]
STEPS_DIR = REPO / "examples" / "steps"
TOOL = REPO / "tools" / "check_shipped_steps.py"

# The issue's list of shipped steps, written out by hand.
EXPECTED = {
    "bert-layer-fastpath": "bert_layer", "bert-layer-no-fastpath": "bert_layer",
    "llama-compiled-decode-b8-kv4k": "compiled_decoder", "llama-compiled-prefill-512": "compiled_decoder",
    "llama-decode-32l-b8-kv4k": "decode_32",
    "dlrm-rung-baseline": "dlrm_rungs", "dlrm-rung-optmt": "dlrm_rungs", "dlrm-rung-rpf-optmt": "dlrm_rungs",
    "dlrm-rung-l2p-optmt": "dlrm_rungs", "dlrm-rung-combined": "dlrm_rungs", "dlrm-rung-torch": "dlrm_rungs",
}


@pytest.fixture()
def shipped(monkeypatch):
    monkeypatch.syspath_prepend(str(STEPS_DIR))
    return importlib.import_module("shipped")


def test_reading_the_steps_imports_neither_torch_nor_cupy():
    code = ("import sys; sys.path.insert(0, %r); import shipped; shipped.declared(); "
            "bad = [m for m in ('torch', 'cupy') if m in sys.modules]; print(bad); sys.exit(1 if bad else 0)"
            % str(STEPS_DIR))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert r.returncode == 0, r.stdout + r.stderr


def test_the_declared_steps_are_the_issues_list(shipped):
    table = shipped.declared()
    assert {n: m for n, (m, _) in table.items()} == EXPECTED
    for name, (_, facts) in table.items():
        assert isinstance(facts.get("series"), str) and facts["series"], name


def test_facts_say_the_shapes(shipped):
    t = shipped.declared()
    for n in ("bert-layer-fastpath", "bert-layer-no-fastpath"):
        assert {k: t[n][1][k] for k in ("batch", "tokens", "dtype")} == {"batch": 8, "tokens": 512, "dtype": "fp16"}
    assert t["bert-layer-fastpath"][1]["fastpath"] == "on" and t["bert-layer-no-fastpath"][1]["fastpath"] == "off"
    assert t["llama-decode-32l-b8-kv4k"][1]["layers"] == 32
    assert (t["llama-compiled-decode-b8-kv4k"][1]["batch"], t["llama-compiled-decode-b8-kv4k"][1]["tokens"]) == (8, 4096)
    assert t["llama-compiled-prefill-512"][1]["tokens"] == 512


def test_dlrm_rungs_follow_the_ladders_declaration(shipped):
    from l2attr.dlrm.declare import RUNGS, TORCH

    t = shipped.declared()
    rungs = [(f["rung"], f["label"]) for n, (m, f) in t.items() if m == "dlrm_rungs"]
    assert rungs == [(r.name, r.label) for r in (*RUNGS, TORCH)]
    assert [lab for _, lab in rungs][:5] == ["baseline", "OptMT", "RPF+OptMT", "L2P+OptMT", "RPF+L2P+OptMT"]
    assert all(f["series"] == "dlrm-rungs" for _, (m, f) in t.items() if m == "dlrm_rungs")


def test_asking_for_one_step_builds_its_model_file_only(shipped, monkeypatch):
    called: list[tuple[str, list[str]]] = []
    for m in shipped.MODULES:
        mod = shipped._module(m)
        monkeypatch.setattr(mod, "build", lambda names, m=m: called.append((m, list(names))) or
                            {n: (print, (n,)) for n in names})
    got = shipped.steps(["bert-layer-no-fastpath"])
    assert called == [("bert_layer", ["bert-layer-no-fastpath"])]
    fn, args, facts = got["bert-layer-no-fastpath"]
    assert (fn, args, facts["fastpath"]) == (print, ("bert-layer-no-fastpath",), "off")
    called.clear()
    assert list(shipped.steps()) == list(EXPECTED)
    assert [m for m, _ in called] == list(shipped.MODULES)


def test_a_build_that_leaves_a_step_out_is_an_error(shipped, monkeypatch):
    monkeypatch.setattr(shipped._module("decode_32"), "build", lambda names: {})
    with pytest.raises(RuntimeError, match="llama-decode-32l-b8-kv4k"):
        shipped.steps(["llama-decode-32l-b8-kv4k"])


def test_an_unknown_name_is_one_clear_line_and_builds_nothing(shipped, monkeypatch):
    monkeypatch.setattr(shipped._module("bert_layer"), "build", lambda names: pytest.fail("built"))
    with pytest.raises(UserError, match="unknown shipped step 'bert-layer'; valid: bert-layer-fastpath"):
        shipped.steps(["bert-layer-fastpath", "bert-layer"])


def test_a_name_declared_twice_is_refused(shipped, monkeypatch):
    monkeypatch.setattr(shipped, "MODULES", ("bert_layer", "bert_layer"))
    with pytest.raises(ValueError, match="declared by both bert_layer and bert_layer"):
        shipped.declared()


def test_checks_are_those_of_the_files_asked_for(shipped):
    assert list(shipped.checks(["dlrm-rung-optmt", "bert-layer-fastpath"])) == ["bert_layer", "dlrm_rungs"]
    assert list(shipped.checks()) == list(shipped.MODULES)


def test_the_tool_lists_without_torch_and_refuses_an_unknown_name():
    r = subprocess.run([sys.executable, str(TOOL), "--list"], capture_output=True, text=True, cwd=REPO)
    assert r.returncode == 0, r.stderr
    assert [line.split()[0] for line in r.stdout.splitlines()] == list(EXPECTED)
    r = subprocess.run([sys.executable, str(TOOL), "--only", "no-such-step"], capture_output=True, text=True, cwd=REPO)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip().splitlines() == [r.stderr.strip()] and "unknown shipped step 'no-such-step'" in r.stderr


def test_the_tool_without_a_gpu_is_one_line():
    """No torch or no device: one line and exit 2 (on a GPU machine the tool itself runs instead)."""
    try:
        import torch
        if torch.cuda.is_available():
            pytest.skip("a GPU is here")
    except ImportError:
        pass
    r = subprocess.run([sys.executable, str(TOOL), "--only", "bert-layer-fastpath"], capture_output=True, text=True,
                       cwd=REPO)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and r.stderr.startswith("error: ")
