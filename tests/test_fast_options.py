"""The fast consumer's compile options: which builds the register cap reaches, and the entry point
a spec names (no nvcc needed)."""

from __future__ import annotations

from l2attr.dlrm.compile import FastOptions, consumer_spec
from l2attr.dlrm.declare import variant


def test_the_cap_reaches_unweighted_fp32_builds_only():
    opts = FastOptions(unroll=6, load=0, maxrregcount=64)
    assert "--maxrregcount=64" in opts.options("fp32")
    assert not any(o.startswith("--maxrregcount") for o in opts.options("fp32", weighted=True))
    assert not any(o.startswith("--maxrregcount") for o in opts.options("bf16"))
    assert not any(o.startswith("--maxrregcount") for o in FastOptions(6, 0, 0).options("fp32"))
    assert "-DFAST_UNROLL=6" in opts.options("fp16", weighted=True)


def test_a_spec_names_the_weighted_or_plain_entry_of_its_vector_width():
    v = variant("fast", "optmt")
    assert consumer_spec(v, "fp32").function == "fast_v4"
    assert consumer_spec(v, "fp32", vec=2, weighted=True).function == "fast_v2_w"
    assert consumer_spec(v, "bf16").function == "fast_v8"
    plain, weighted = consumer_spec(v, "fp32", fast=FastOptions(6, 0, 64)), \
        consumer_spec(v, "fp32", fast=FastOptions(6, 0, 64), weighted=True)
    assert plain.options != weighted.options   # two modules: the cap differs, so does the build
