"""Registers and spills of every variant as ptxas reports them, for sm_80 and sm_90: fidelity evidence.

The artifact family must compile to the artifact's resource footprint (that is what OptMT trades:
registers for occupancy, paid in spills), so the figures are recorded in `kernels/ptxas.json`,
copied into every ladder run's manifest, and re-derived by a CPU test that fails when a kernel
edit drifts from them. Regenerate after changing a kernel (needs nvcc, no GPU):

    python -m l2attr.dlrm.ptxas --write
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Any

from l2attr.dlrm.compile import KernelSpec, consumer_spec, pin_spec
from l2attr.dlrm.declare import FAMILY_ORDER, RUNGS, plan_variants
from l2attr.source import KERNELS_DIR, data_dir
from l2attr.vocab import ConsumerCode, Role

ARCHS = ("sm_80", "sm_90")
FILENAME = "ptxas.json"
# The artifact's own kernel functions built standalone with nvcc 13.0 (fp32), for comparison:
# registers uncapped / spill bytes (stores, loads) under -maxrregcount 42. Measured here with
# `nvcc -cubin -Xptxas -v` on a scratch copy of the artifact's kernels (never committed).
ARTIFACT_REFERENCE = {
    "sm_80": {ConsumerCode.PLAIN: {"registers": 54, "capped_spill_stores": 68, "capped_spill_loads": 208},
              ConsumerCode.RPF: {"registers": 60, "capped_spill_stores": 84, "capped_spill_loads": 120}},
    "sm_90": {ConsumerCode.PLAIN: {"registers": 52, "capped_spill_stores": 60, "capped_spill_loads": 208},
              ConsumerCode.RPF: {"registers": 56, "capped_spill_stores": 76, "capped_spill_loads": 120}},
}


def parse_ptxas(stderr: str) -> dict[str, dict[str, int]]:
    """function -> {registers, spill_stores, spill_loads, stack_frame} from `-Xptxas -v` output."""
    out: dict[str, dict[str, int]] = {}
    current: dict[str, int] | None = None
    for line in stderr.splitlines():
        m = re.search(r"Compiling entry function '(\w+)'", line)
        if m:
            current = out.setdefault(m.group(1), {"spill_stores": 0, "spill_loads": 0, "stack_frame": 0})
            continue
        if current is None:
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m:
            current.update(stack_frame=int(m[1]), spill_stores=int(m[2]), spill_loads=int(m[3]))
        m = re.search(r"Used (\d+) registers", line)
        if m:
            current["registers"] = int(m[1])
    return out


@lru_cache(maxsize=None)
def ptxas_report(spec: KernelSpec, arch: str, nvcc: str) -> dict[str, int]:
    """Compile one kernel spec to a cubin and return ptxas's figures for its function."""
    kdir = data_dir(KERNELS_DIR)
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [nvcc, f"-arch={arch}", "-cubin", "-Xptxas", "-v", f"-I{kdir}",
               *(o.replace("--maxrregcount=", "-maxrregcount=") for o in spec.options),
               "-o", str(Path(tmp) / "k.cubin"), str(kdir / spec.source)]
        res = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if res.returncode != 0:
        raise RuntimeError(f"nvcc failed on {spec.source} {spec.options}: {res.stderr.strip()[:400]}")
    return dict(parse_ptxas(res.stderr)[spec.function])


def all_specs(dtype: str = "fp32") -> dict[str, dict[str, KernelSpec]]:
    """variant id (family/rung/pin) -> {consumer, pin} specs, for every family's every rung and pin."""
    out: dict[str, dict[str, KernelSpec]] = {}
    from l2attr.dlrm.declare import FAMILIES

    for fam in FAMILY_ORDER:
        for pin in FAMILIES[fam].pins:
            for v in plan_variants([fam], list(RUNGS), pin):
                specs = {Role.CONSUMER.value: consumer_spec(v, dtype)}
                if v.rung.pins:
                    specs[Role.PIN.value] = pin_spec(dtype, v.pin)
                out["/".join(v.key)] = specs
    return out


def build_table(nvcc: str) -> dict[str, Any]:
    table: dict[str, Any] = {"nvcc": nvcc_version(nvcc), "dtype": "fp32", "maxrregcount": 42,
                             "artifact_reference": ARTIFACT_REFERENCE, "variants": {}}
    for vid, specs in all_specs().items():
        table["variants"][vid] = {
            role: {"source": spec.source, "function": spec.function, "options": list(spec.options),
                   **{arch: ptxas_report(spec, arch, nvcc) for arch in ARCHS}}
            for role, spec in specs.items()}
    return table


def nvcc_version(nvcc: str) -> str:
    res = subprocess.run([nvcc, "--version"], capture_output=True, text=True, check=False)
    m = re.search(r"release ([\d.]+), (V[\d.]+)", res.stdout)
    return f"{m[1]} ({m[2]})" if m else "unknown"


def committed() -> dict[str, Any]:
    """kernels/ptxas.json as shipped (empty dict when absent)."""
    path = data_dir(KERNELS_DIR) / FILENAME
    return json.loads(path.read_text()) if path.is_file() else {}


def for_variants(variant_ids: list[str]) -> dict[str, Any]:
    """The committed figures of some variants, for a run's manifest."""
    table = committed()
    if not table:
        return {"note": f"kernels/{FILENAME} not found"}
    return {"nvcc": table.get("nvcc"), "archs": list(ARCHS),
            "variants": {v: table["variants"][v] for v in variant_ids if v in table.get("variants", {})}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"write kernels/{FILENAME}")
    parser.add_argument("--nvcc", default=shutil.which("nvcc"), help="nvcc to use (default: on PATH)")
    args = parser.parse_args(argv)
    if not args.nvcc:
        parser.error("nvcc not found")
    table = build_table(args.nvcc)
    text = json.dumps(table, indent=1) + "\n"
    if args.write:
        from l2attr import atomic

        atomic.write_text(data_dir(KERNELS_DIR) / FILENAME, text)
    else:
        print(text, end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
