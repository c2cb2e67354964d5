"""Compile every kernel variant with the local nvcc for sm_80 and sm_90 (skip without nvcc).

The tests that compile a whole family or every variant (tens of nvcc runs each) carry the `slow`
mark: `.ci/run` runs them after the README's test command. What can be checked without a GPU: the recorded ptxas figures (kernels/ptxas.json, which every
ladder run copies into its manifest) are what this nvcc produces today; the artifact family keeps
the artifact's resource footprint (exactly its registers uncapped and its spills capped, plain and
RPF); the pins hold the evict_last prefetch; every dtype compiles.
"""

from __future__ import annotations

import shutil
import subprocess
from functools import lru_cache

import pytest

from l2attr.dlrm import ptxas
from l2attr.dlrm.compile import consumer_spec, pin_spec
from l2attr.dlrm.declare import RUNG_BY_NAME, variant
from l2attr.source import data_dir

NVCC = shutil.which("nvcc")
needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc not on PATH")
ARCHS = ptxas.ARCHS
COMMITTED = ptxas.committed()
# many variants share one kernel build (the pin of every pinned rung, OptMT's consumer in L2P+OptMT):
# compile each (spec, arch) once per test process
ptxas_report = lru_cache(maxsize=None)(ptxas.ptxas_report)
# compiles a family or every variant: tens of nvcc runs
compiles_many = pytest.mark.slow


def test_parse_ptxas_output():
    text = ("ptxas info    : Compiling entry function 'k' for 'sm_90'\n"
            "    32 bytes stack frame, 60 bytes spill stores, 208 bytes spill loads\n"
            "ptxas info    : Used 42 registers, used 0 barriers\n"
            "ptxas info    : Compiling entry function 'j' for 'sm_90'\n"
            "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
            "ptxas info    : Used 12 registers, used 0 barriers\n")
    assert ptxas.parse_ptxas(text) == {
        "k": {"registers": 42, "spill_stores": 60, "spill_loads": 208, "stack_frame": 32},
        "j": {"registers": 12, "spill_stores": 0, "spill_loads": 0, "stack_frame": 0}}


def test_committed_table_covers_every_variant():
    assert set(COMMITTED["variants"]) == set(ptxas.all_specs())
    for roles in COMMITTED["variants"].values():
        for figures in roles.values():
            assert all(a in figures for a in ARCHS)


@pytest.mark.parametrize("arch", ARCHS)
def test_artifact_family_keeps_the_artifacts_footprint(arch):
    """The structure that makes the artifact's ladder what it is, per arch."""
    v = COMMITTED["variants"]
    ref = ptxas.ARTIFACT_REFERENCE[arch]
    base = v["artifact/baseline/none"]["consumer"][arch]
    optmt = v["artifact/optmt/none"]["consumer"][arch]
    rpf = v["artifact/rpf_optmt/none"]["consumer"][arch]
    # uncapped: no spills, exactly the artifact's own build's registers (the README says "exactly")
    assert base["spill_stores"] == 0 and base["registers"] == ref["plain"]["registers"]
    # OptMT: the cap binds (42) and the consumer spills exactly as the artifact's does
    assert optmt["registers"] == 42
    assert (optmt["spill_stores"], optmt["spill_loads"]) == (ref["plain"]["capped_spill_stores"],
                                                             ref["plain"]["capped_spill_loads"])
    # the artifact's RPF under the cap spills exactly as the artifact's own
    assert rpf["registers"] == 42
    assert (rpf["spill_stores"], rpf["spill_loads"]) == (ref["rpf"]["capped_spill_stores"],
                                                         ref["rpf"]["capped_spill_loads"])
    # L2P+OptMT and the combined rung reuse exactly those consumers
    assert v["artifact/l2p_optmt/element"]["consumer"][arch] == optmt
    assert v["artifact/combined/element"]["consumer"][arch] == rpf


@pytest.mark.parametrize("arch", ARCHS)
def test_tuned_family_uncapped_does_not_spill(arch):
    for rung in ("baseline",):
        assert COMMITTED["variants"][f"tuned/{rung}/none"]["consumer"][arch]["spill_stores"] == 0


@compiles_many
@needs_nvcc
@pytest.mark.parametrize("arch", ARCHS)
def test_committed_figures_are_what_nvcc_gives_today(arch):
    """Fails when a kernel edit changes registers or spills without `python -m l2attr.dlrm.ptxas --write`."""
    drift = []
    for vid, specs in ptxas.all_specs().items():
        for role, spec in specs.items():
            now = ptxas_report(spec, arch, NVCC)
            then = COMMITTED["variants"][vid][role][arch]
            if now != then:
                drift.append(f"{vid} {role} {arch}: committed {then}, nvcc now {now}")
    assert not drift, "\n".join(drift)


@compiles_many
@needs_nvcc
@pytest.mark.parametrize("arch", ARCHS)
def test_register_cap_reaches_ptxas(arch):
    """The artifact's uncapped consumer needs more than 42 registers, so only a working cap gives 42."""
    v = variant("artifact", RUNG_BY_NAME["baseline"])
    uncapped = ptxas_report(consumer_spec(v, "fp32"), arch, NVCC)
    capped = ptxas_report(consumer_spec(variant("artifact", "optmt"), "fp32", maxrregcount=32), arch, NVCC)
    assert uncapped["registers"] > 42
    assert capped["registers"] <= 32


@needs_nvcc
@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("granularity", ["line", "element"])
def test_pin_ptx_holds_evict_last_prefetch(arch, granularity, tmp_path):
    spec = pin_spec("fp32", granularity)
    kdir = data_dir("kernels")
    out = tmp_path / "pin.ptx"
    res = subprocess.run([NVCC, f"-arch={arch}", "-ptx", f"-I{kdir}", *spec.options, "-o", str(out),
                          str(kdir / spec.source)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    body = out.read_text().split(f".entry {spec.function}")[1].split(".entry")[0]
    assert "prefetch.global.L2::evict_last" in body


@needs_nvcc
def test_artifact_consumer_keeps_its_device_assert(tmp_path):
    """The index < rows check compiles to a call of the assert handler, as in the artifact."""
    spec = consumer_spec(variant("artifact", "baseline"), "fp32")
    kdir = data_dir("kernels")
    out = tmp_path / "a.ptx"
    res = subprocess.run([NVCC, "-arch=sm_90", "-ptx", f"-I{kdir}", *spec.options, "-o", str(out),
                          str(kdir / spec.source)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert "__assertfail" in out.read_text()


@needs_nvcc
def test_pin_kernel_refuses_pre_ampere(tmp_path):
    kdir = data_dir("kernels")
    res = subprocess.run([NVCC, "-arch=sm_75", "-ptx", f"-I{kdir}", "-o", str(tmp_path / "x.ptx"),
                          str(kdir / "pin_l2.cu")], capture_output=True, text=True)
    assert res.returncode != 0
    assert "sm_80" in res.stderr


@compiles_many
@needs_nvcc
@pytest.mark.parametrize("family", ["artifact", "tuned"])
@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
def test_half_precision_consumers_compile(family, dtype):
    for rung in ("optmt", "combined"):
        spec = consumer_spec(variant(family, rung), dtype)
        assert ptxas_report(spec, "sm_90", NVCC)["registers"] > 0


@compiles_many
@needs_nvcc
@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("dtype", ["fp32", "fp16", "bf16"])
def test_fast_family_fits_its_register_cap_without_spilling(arch, dtype):
    """The fast consumer's default build (every vector width of the type, unweighted and weighted)
    stays within its cap and never spills: spilled row values would turn its loads in flight into
    local-memory traffic. The cap (tuned on unweighted fp32) reaches those builds only."""
    from l2attr.dlrm.compile import FastOptions
    from l2attr.dlrm.declare import FAST_DEFAULT

    widths = (1, 2, 4) if dtype == "fp32" else (1, 2, 4, 8)
    for vec in widths:
        for weighted in (False, True):
            spec = consumer_spec(variant("fast", "optmt"), dtype, vec=vec, fast=FastOptions(), weighted=weighted)
            assert spec.function == f"fast_v{vec}" + ("_w" if weighted else "")
            rep = ptxas_report(spec, arch, NVCC)
            cap = FAST_DEFAULT.maxrregcount if dtype == "fp32" and not weighted else 0
            assert 0 < rep["registers"] <= (cap or 255), (vec, weighted, rep)
            assert rep["spill_stores"] == rep["spill_loads"] == 0, (vec, weighted, rep)


@needs_nvcc
def test_fast_committed_figures_name_the_default_build():
    """kernels/ptxas.json records the fast consumer as the shipped defaults build it."""
    from l2attr.dlrm.declare import FAST_DEFAULT

    entry = COMMITTED["variants"]["fast/optmt/none"]["consumer"]
    assert entry["function"] == "fast_v4"
    assert f"-DFAST_UNROLL={FAST_DEFAULT.unroll}" in entry["options"]
    assert f"-DFAST_LOAD={FAST_DEFAULT.load}" in entry["options"]
    caps = [o for o in entry["options"] if o.startswith("--maxrregcount")]
    assert caps == ([f"--maxrregcount={FAST_DEFAULT.maxrregcount}"] if FAST_DEFAULT.maxrregcount else [])
    for arch in ARCHS:
        assert entry[arch]["spill_stores"] == 0
        assert entry[arch]["registers"] <= (FAST_DEFAULT.maxrregcount or 255)


@compiles_many
@needs_nvcc
@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("knobs", [(4, 0, 0, 0), (8, 0, 1, 1), (2, 1, 0, 0), (4, 1, 1, 1)])
def test_gather_ceiling_builds_without_spills(arch, knobs):
    """benchmarks/gather_ceiling.py's read kernels build for both archs in every form it times
    (unroll, pipelined, with the consumer's epilogue, with the dependent offsets load)."""
    from l2attr.dlrm.compile import KernelSpec

    unroll, pipe, epi, dep = knobs
    opts = (f"-DGATHER_UNROLL={unroll}", f"-DGATHER_PIPE={pipe}", f"-DGATHER_EPI={epi}", f"-DGATHER_DEP={dep}")
    for function in ("gather_rows", "read_wide"):
        rep = ptxas_report(KernelSpec("gather_ceiling.cu", function, opts), arch, NVCC)
        assert rep["registers"] > 0 and rep["spill_stores"] == 0, (function, rep)


@needs_nvcc
@pytest.mark.parametrize("arch", ARCHS)
def test_block_timer_kernel_spills_nothing(tmp_path, arch):
    """The blocking timer's one thread must not touch local memory: it polls a flag the host sets
    (examples/logs/engine/block_timer_ptxas.log holds the sm_90 figures)."""
    src = data_dir("kernels") / "block_timer.cu"
    done = subprocess.run([NVCC, f"-arch={arch}", "-cubin", "-o", str(tmp_path / "k.cubin"), "-Xptxas", "-v",
                           str(src)], capture_output=True, text=True, check=True)
    figures = ptxas.parse_ptxas(done.stdout + done.stderr)["block_on_flag"]
    assert figures["spill_stores"] == figures["spill_loads"] == figures["stack_frame"] == 0
