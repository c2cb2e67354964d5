"""Every figure in the prose of the README and the docs pages (docs/*.md) comes from the run it names.

Two checks. (1) Each `<!-- prose:NAME:begin -->` block is its template (tools/docgen/prose/NAME.md.j2)
filled from l2attr.study.findings of the committed runs: re-rendered here, compared byte for
byte. (2) Outside every generated block, a number followed by a unit (µs, %, GB/s, MiB, ×, s, ...)
is refused unless an entry of ALLOWED covers it, with its reason; an entry that names a log or
file must find its figures there, and every entry must still be in a page (a stale entry fails). The
pages are read as one text (tools/docgen/doc_pages.all_text), so a block or phrase may live on any page.
The scanner and the filters are tested on hand-made text whose answer is known.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools" / "docgen"))
from doc_pages import all_text  # noqa: E402


def _tool(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / "docgen" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


render = _tool("prose_render")

# -- the scanner --------------------------------------------------------------------------------

NUM = r"\d[\d,]*(?:\.\d+)?"
UNITS = r"µs|ms|s\b|%|GB/s|MB|MiB|GB|GiB|kB|KB|TB|PB|B\b|calls\b|points\b|registers\b"
FIGURE = re.compile(rf"(?:[≤≥~]\s?)?{NUM}(?:\s?[–-]\s?{NUM})?(?:\s?(?:{UNITS})|×)")
BLOCK = re.compile(r"<!-- ([\w:-]+?):begin[^>]*-->.*?<!-- \1:end -->", re.S)
FENCE = re.compile(r"```.*?```", re.S)


def blank(text: str, a: int, b: int) -> str:
    """The text with [a, b) replaced by spaces (newlines kept), so positions still line up."""
    return text[:a] + re.sub(r"[^\n]", " ", text[a:b]) + text[b:]


def prose_only(text: str, skipped: list[tuple[str, str, str]]) -> str:
    """The README with generated blocks, code and the `skipped` regions (start, end marker) blanked."""
    for start, end, _why in skipped:
        a = text.index(start)
        text = blank(text, a, text.index(end, a + len(start)))
    for rx in (BLOCK, FENCE):
        for m in list(rx.finditer(text)):
            text = blank(text, m.start(), m.end())
    return text


def figures(text: str) -> list[tuple[int, int, str]]:
    return [(m.start(), m.end(), m.group(0)) for m in FIGURE.finditer(text)]


# Pages another owner holds, left out of the scan: (page, why).
SKIPPED_PAGES = [
    ("docs/sweeps.md", "the design-space sweeps' page and findings (another owner, its generated blocks)"),
]
# Regions another check holds: (start, end marker, why).
SKIPPED = [
    ("| input | command | exit | message (first line) |", "What the rows rely on:",
     "the reliability table: tests/test_readme_reliability.py re-runs every row"),
]


@dataclass(frozen=True)
class Allowed:
    """A phrase of the README whose figures are not a run's: why, and where they can be checked."""

    phrase: str
    reason: str
    source: str = ""                 # a committed file that holds the figures (a command's log)
    tokens: tuple[str, ...] = ()     # strings the source must contain
    check: Callable[[], bool] | None = None   # or: a computation the figure must match


LOG = "examples/logs/"
def _timeline_trial(what: str) -> str:
    """The one-replay timeline trial's figures from its manifests (examples/logs/speed/timeline_nodur/):
    `walls` the ncu job's seconds, `durations` the range durations ncu gave, each arm's two in order."""
    import json
    import tarfile

    arms: dict[str, list[dict]] = {}
    with tarfile.open(ROOT / LOG / "speed" / "timeline_nodur" / "runs.tar.gz") as tar:
        for m in sorted(tar.getmembers(), key=lambda m: m.name):
            if m.name.endswith("/manifest.json"):
                arms.setdefault(m.name.split("/")[-2].split("-", 1)[1].rstrip("12"), []).append(
                    json.load(tar.extractfile(m)))
    if what == "walls":
        return " against ".join(" and ".join(f"{m['wall_s']['timeline']:.1f}" for m in arms[a])
                                for a in ("nodur", "dur"))
    return " and ".join(f"{m['ranges'][0]['duration_us']:,.0f}" for m in arms["dur"])

def _ncu_cost(field: str, tags: tuple[str, ...]) -> list[float]:
    """Per-launch milliseconds of tools/probes/ncu_cost.py's runs, from its committed record."""
    import json

    rows = [json.loads(line.split("PROBE ", 1)[1])
            for line in (ROOT / LOG / "speed/ncu_cost/probes.jsonl").read_text().splitlines() if "PROBE " in line]
    return [r[field] for r in rows if r["tag"] in tags]


ALLOWED = [
    Allowed("about 10 to 25 ms", "ms per profiled launch, each pass of tools/probes/ncu_cost.py under application replay",
            check=lambda: (round(min(_ncu_cost("per_profiled_ms", ("app_l2", "app_fast")))),
                           round(max(_ncu_cost("per_profiled_ms", ("app_l2", "app_fast"))))) == (10, 25)),
    Allowed("done 0.2 to 0.7 s later", "the process's age at `import torch`'s end under ncu less the second plain run's",
            check=lambda: (lambda under, plain: (round(min(under) - plain, 1), round(max(under) - plain, 1)))(
                [m["torch_import"] for m in _ncu_cost("marks", ("app_l2", "app_none", "app_fast"))],
                _ncu_cost("marks", ("plain2",))[0]["torch_import"]) == (0.2, 0.7)),
    Allowed("4.5 and 4.6 s against 9.9 and 7.8 s", "the one-replay timeline trial's ncu job walls, from its manifests",
            check=lambda: _timeline_trial("walls") == "4.5 and 4.6 against 9.9 and 7.8"),
    Allowed("2,423 and 1,951 µs", "the range durations ncu gave in that trial, from its manifests",
            check=lambda: _timeline_trial("durations") == "2,423 and 1,951"),
    Allowed("about 0.06 ms against 0.04 ms", "ms per unprofiled launch under ncu and without (tools/probes/ncu_cost.py)",
            check=lambda: (round(sum(v := _ncu_cost("per_unprofiled_ms", ("app_l2", "app_none", "app_fast"))) / len(v), 2),
                           round(sum(w := _ncu_cost("per_unprofiled_ms", ("plain1", "plain2"))) / len(w), 2)) == (0.06, 0.04)),
    Allowed("from 78 %", "the fast consumer's history, told by its log", LOG + "ceiling/README.md", ("78",)),
    Allowed("within 0.1 % on the recorded pins", "tools/probes/passes.py's comparison, in its log",
            LOG + "probe_passes.log", ()),
    Allowed("the profile's 73 MB", "the size of an uncommitted file (why it is not committed)"),
    Allowed("up to 27 MB each", "the size of uncommitted files (why they are not committed)"),
    Allowed("**18.85 s** wall", "printed by l2attr ladder (tools/device_adaptive.sh at d1021aa)", LOG + "adaptive/ladder_adaptive.log",
            ("ladder wall 18.85 s",)),
    Allowed("**24.82 s** and **22.79 s**", "printed by l2attr ladder --repeats 3 (tools/device_adaptive.sh at d1021aa)",
            LOG + "adaptive/ladder_fixed.log", ("ladder wall 24.82 s",)),
    Allowed("**22.79 s** for two", "the second fixed process (tools/device_adaptive.sh at d1021aa)",
            LOG + "adaptive/ladder_fixed2.log", ("ladder wall 22.79 s",)),
    Allowed("(default 8 GB)", "the workload cache's default cap (dlrm/workload/cache.py DEFAULT_MAX_GB)",
            check=lambda: __import__("l2attr.dlrm.workload.cache", fromlist=["x"]).DEFAULT_MAX_GB == 8.0),
    Allowed("+1.28 % over the call, after the settle and three +2.06 %", "tools/probes/arm.py's second call",
            LOG + "surgery/probe_arm.log", ("clean+3        kernel sum median     12.57 µs [12.38, 12.99] ( +1.28 %",
                                            "arm (settle+3) kernel sum median     12.67 µs [12.45, 13.12] ( +2.06 %")),
    Allowed("target ≤ 15 s", "the benchmark's target (issue 27)"),
    Allowed("**0.65 % of step time**", "the study's claim, the bound the step's answer is held to "
            "(steps/analyse/reading.py STUDY_CLAIM)",
            check=lambda: __import__("l2attr.steps.analyse.reading", fromlist=["x"]).STUDY_CLAIM == 0.0065),
    Allowed("above or below 0.65 %, or known to ± 0.15 pp", "the study's bound and the stopping rule's width "
            "(steps/analyse/split.py STUDY_CLAIM, DECIDE_HALF_WIDTH)",
            check=lambda: (lambda m: (m.STUDY_CLAIM, m.DECIDE_HALF_WIDTH) == (0.0065, 0.0015))(
                __import__("l2attr.steps.analyse.split", fromlist=["x"]))),
    Allowed("falls below, above or at 0.65 %", "the study's bound the first screen counts against "
            "(steps/analyse/split.py STUDY_CLAIM)",
            check=lambda: __import__("l2attr.steps.analyse.split", fromlist=["x"]).STUDY_CLAIM == 0.0065),
    Allowed("reads the 8 MiB its predecessor wrote", "the size the GPU test builds", "tests/test_gpu_step_rewarm.py",
            ("(8 << 20) // 4",)),
    Allowed("48 kernels that each read a tensor of", "the count the GPU test builds", "tests/test_gpu_step_rewarm.py",
            ("k, n = 48",)),
    Allowed("of OLMoE (64 experts, 8 active)", "the published config's shape (examples/steps/hf_models.py MODELS)",
            "examples/steps/hf_models.py", ("experts=64, active=8",)),
    Allowed("a 1 MiB sum over data", "the control kernel's slice (steps/measure/timing.py CONTROL_BYTES)",
            check=lambda: __import__("l2attr.steps.measure.timing", fromlist=["x"]).CONTROL_BYTES == 1 << 20),
    Allowed("5.6 s is the process start", "the adaptive ladder's phase line", LOG + "adaptive/ladder_adaptive.log",
            ("process start (python, imports, CUDA, GPU facts) 5.6",)),
    Allowed("4.36 s of it", "the device's startup breakdown", LOG + "adaptive/startup.log", ("import torch 4.36 s",)),
    Allowed("6.9 s the timed repeats", "the adaptive ladder's phase line", LOG + "adaptive/ladder_adaptive.log",
            ("timed repeats 6.9",)),
    Allowed("30.7 s with 3 fixed", "printed by benchmarks/bench_ladder.py", LOG + "bench_ladder.log",
            ("cold process wall time 30.7 s",)),
    Allowed("consumer **median 0.24 %, worst 1.10 %**", "printed by benchmarks/bench_ladder.py",
            LOG + "bench_ladder.log", ("median 0.24 %, worst 1.10 %",)),
    Allowed("pin **median 0.57 %, worst 2.06 %**", "printed by benchmarks/bench_ladder.py",
            LOG + "bench_ladder.log", ("median 0.57 %, worst 2.06 %",)),
    Allowed("(targets ≤ 1 % median, ≤ 3 %", "the benchmark's targets"),
    Allowed("3\n  passes and 6 calls", "the default profile's record", "examples/profile_speed/profile_speed.json",
            ('"min": 3', '"calls_per_cell": 6')),
    Allowed("**61.3 s**, plus", "printed by benchmarks/bench_profile.py", "examples/profile_speed/profile_speed.json",
            ('"profile_s": 61.3',)),
    Allowed("**21.5 s**: **82.8 s**", "printed by benchmarks/bench_profile.py", "examples/profile_speed/profile_speed.json",
            ('"timeline_s": 21.5', '"total_s": 82.8')),
    Allowed("target ≤ 100 s", "the benchmark's target (issue 27)"),
    Allowed("191.0 s at 4 passes", "printed by benchmarks/bench_profile.py", LOG + "profile.log", ("191.0",)),
    Allowed("consumer **0.608×** the tuned OptMT on random (target ≤ 0.65)", "printed by benchmarks/bench_fast.py",
            LOG + "bench_fast.log", ("0.608x", "target <= 0.65")),
    Allowed("**0.463×** on reuse_medium (target ≤ 0.6)", "printed by benchmarks/bench_fast.py",
            LOG + "bench_fast.log", ("0.463x", "target <= 0.6")),
    Allowed("**3,700 GB/s = 82.0 %**", "printed by benchmarks/bench_fast.py", LOG + "bench_fast.log",
            ("3700 GB/s = 82.0 %",)),
    Allowed("(target ≥ 80 %)", "the benchmark's target"),
    Allowed("amortisation **69.7 s**", "printed by benchmarks/bench_sweeps.py",
            LOG + "sweeps/sweep_amortisation.log", ("amortisation: exit 0, 69.7 s",)),
    Allowed("hotset 20.2 s", "printed by benchmarks/bench_sweeps.py", LOG + "sweeps/sweep_hotset.log",
            ("hotset: exit 0, 20.2 s",)),
    Allowed("pollution 26.5 s", "printed by benchmarks/bench_sweeps.py", LOG + "sweeps/sweep_pollution.log",
            ("pollution: exit 0, 26.5 s",)),
    Allowed("capacity 26.6 s", "printed by benchmarks/bench_sweeps.py", LOG + "sweeps/sweep_capacity.log",
            ("capacity: exit 0, 26.6 s",)),
    Allowed("window 16.7 s", "printed by benchmarks/bench_sweeps.py", LOG + "sweeps/sweep_window.log",
            ("window: exit 0, 16.7 s",)),
    Allowed("(target ≤ 180 s each", "the benchmark's target"),
    Allowed("pollution 31.7 s", "printed by l2attr sweep --resume --profile", LOG + "sweeps/pollution_dram.log",
            ("finished in 31.7 s",)),
    Allowed("hotset 17.3 s", "printed by l2attr sweep --resume --profile", LOG + "sweeps/hotset_dram.log",
            ("finished in 17.3 s",)),
    Allowed("in 1.23–3.31 s", "printed by benchmarks/bench_profiles.py", LOG + "bench_profiles.log",
            ("3.31", "1.23")),
    Allowed("in 0.87–19.06 s", "printed by benchmarks/bench_profiles.py", LOG + "bench_profiles.log",
            ("0.87", "19.06")),
    Allowed("their 95 % intervals", "the significance rule's level (analysis/significance.py)",
            "l2attr/analysis/significance.py", ("95 %",)),
    Allowed("at 8 MiB (well below the\n  60 MB L2) and 256 MiB", "the experiment's declared sizes and the H200's L2",
            "examples/experiments/activation_handoff.py", ("8 MiB", "256 MiB")),
    Allowed("over 32 MiB of a GQA KV cache", "the experiment's declared size", "examples/experiments/kv_pin_sdpa.py",
            ("32 MiB",)),
    Allowed("500 ms timeout", "the blocking timer's default timeout", "l2attr/measure/timer.py",
            ("timeout_ms: float = 500.0",)),
    Allowed("under a 300 µs spin", "the setting of the timer comparison's second run (its manifest)",
            "examples/timer/20261201T205159Z-fast-spin300/manifest.json", ('"spin_us": 300',)),
    Allowed("(119 passed, `examples/logs/session4/gpu_tests.log`)", "the last whole GPU test run on the H200",
            "examples/logs/session4/gpu_tests.log", ("119 passed",)),
    Allowed("bootstrap 95 % interval", "the method's interval level"),
    Allowed("(3 GB, generated on the GPU", "the preset's tables: tables x rows x dim x 4 bytes",
            check=lambda: round(_preset_bytes() / 1e9) == 3),
    Allowed("top-60K coverage 87.7 % (and 87.7 % for", "traces stats on the artifact's trace, recorded with its digest",
            "tests/fixtures/traces/README.md", ("87.69 %",)),
    Allowed("62 % of lookups repeat", "the fitted profile's constant (repeat_prob 0.6248)",
            "l2attr/dlrm/workload/profiles.py", ("repeat_prob=0.6248",)),
    Allowed("72 % from a flat hot set of 27 % of rows, else from a warm set of 39 %",
            "the fitted profile's constants", "l2attr/dlrm/workload/profiles.py",
            ("hot_share=0.7173", "hot_frac=0.2685", "warm_frac=0.3907")),
    Allowed("10 % near repeats; new ids 15 % from a", "the fitted profile's constants",
            "l2attr/dlrm/workload/profiles.py", ("hot_share=0.1473",)),
    Allowed("hot set of 13 % of rows", "the fitted profile's constant", "l2attr/dlrm/workload/profiles.py",
            ("hot_frac=0.1326",)),
    Allowed("97 % of new draws from a Zipf(0.7) hot set of 20 % of rows", "the hand-set profile's constants",
            "l2attr/dlrm/workload/profiles.py", ("hot_share=0.97", "hot_frac=0.2")),
    Allowed("| 87.8–87.9 % (87.7 %) |", "calibration, printed by benchmarks/bench_profiles.py",
            LOG + "bench_profiles.log", ("87.87", "87.78", "87.69")),
    Allowed("| 48.8–48.9 % (48.7 %) |", "calibration, printed by benchmarks/bench_profiles.py",
            LOG + "bench_profiles.log", ("48.91", "48.82", "48.74")),
    Allowed("| 98.9–99.0 % (target ≥ 97 %) |", "calibration, printed by benchmarks/bench_profiles.py",
            LOG + "bench_profiles.log", ("98.98", "98.93")),
    Allowed("| 36.0 % |", "calibration, printed by benchmarks/bench_profiles.py", LOG + "bench_profiles.log",
            ("36.04",)),
    Allowed("p90 ~3× too long", "calibration: ~84K against the trace's 26,641", LOG + "bench_profiles.log",
            ("84,974", "26,641")),
    Allowed("a row stride of 4 GiB", "the launcher's 32-bit limit (a definition)"),
    Allowed("(240 points:", "the committed tuning table's launch points (knob combinations)",
            check=lambda: _tuning_points() == 240),
    Allowed("used a 50 µs spin", "the committed runs' setting (their manifests: measure.spin_us)",
            "examples/20261130T231356Z-bench/manifest.json", ('"spin_us": 50.0',)),
    Allowed("0.5 s of copies", "the warm-up's default (dlrm/measure/gpu.py)", "l2attr/dlrm/measure/gpu.py",
            ("seconds: float = 0.5",)),
    Allowed("reading 2× L2", "the flush's definition"),
    Allowed("a bootstrap 95 % CI", "the method's interval level"),
    Allowed("up to 361 MB", "the size traces gen announces (tests/test_readme_reliability.py re-runs it)"),
    Allowed("no time above 10 s per call", "the integrity contract's bound (a definition)"),
    Allowed("call took\n0.5 s or more", "the slow list's criterion (a definition), as tests/conftest.py states it",
            "tests/conftest.py", ("call took 0.5 s or more",)),
]


def _tuning_points() -> int:
    import pandas as pd

    t = pd.read_csv(ROOT / "examples" / "tuning" / "fast_tuning.csv")
    return len(t[["warps_per_bag", "bags_per_block", "unroll", "load", "maxrregcount"]].drop_duplicates())


def _preset_bytes() -> int:
    from l2attr.dlrm.config import WorkloadConfig

    c = WorkloadConfig()
    return c.tables * c.rows * c.dim * c.element_bytes


@pytest.fixture(scope="module")
def readme() -> str:
    return all_text(skip=tuple(page for page, _why in SKIPPED_PAGES))


# -- (1) the generated prose is what the runs give ------------------------------------------------

@pytest.fixture(scope="module")
def filled(readme: str) -> dict[str, str]:
    return _tool("results").prose_blocks(readme)


def test_every_template_has_its_block_and_back(readme: str) -> None:
    blocks = sorted(set(re.findall(r"<!-- prose:([\w-]+):begin -->", readme)))
    assert blocks == render.names()


def test_prose_blocks_are_the_filled_templates(readme: str, filled: dict[str, str]) -> None:
    for name, text in filled.items():
        begin, end = f"<!-- prose:{name}:begin -->\n", f"<!-- prose:{name}:end -->"
        current = readme[readme.index(begin) + len(begin):readme.index(end)]
        assert current == text, f"README prose block {name!r} differs from its runs: python tools/docgen results --write"


# -- (2) no figure outside a block unless allowed -----------------------------------------------

def test_no_figure_outside_the_blocks_without_a_reason(readme: str) -> None:
    text = prose_only(readme, SKIPPED)
    spans = []
    for entry in ALLOWED:
        spans += [(m.start(), m.end()) for m in re.finditer(re.escape(entry.phrase), text)]
    loose = [(a, fig) for a, b, fig in figures(text) if not any(s <= a and b <= e for s, e in spans)]
    where = [f"line {text.count(chr(10), 0, a) + 1}: {fig!r}" for a, fig in loose]
    assert not where, ("figures in the README prose that no run, block or reason covers (make them a prose "
                       "block, or add an ALLOWED entry with its reason): " + "; ".join(where))


@pytest.mark.parametrize("entry", ALLOWED, ids=lambda e: e.phrase[:40])
def test_every_allowed_phrase_is_still_there_and_holds(readme: str, entry: Allowed) -> None:
    assert entry.phrase in prose_only(readme, SKIPPED), f"stale ALLOWED entry: {entry.phrase!r} is no longer in the prose"
    assert entry.reason
    if entry.source:
        source = (ROOT / entry.source).read_text()
        for token in entry.tokens:
            assert token in source, f"{entry.phrase!r}: {token!r} not in {entry.source}"
    if entry.check is not None:
        assert entry.check(), f"{entry.phrase!r}: its figure no longer matches its source"


def test_skipped_regions_exist(readme: str) -> None:
    for start, end, why in SKIPPED:
        a = readme.index(start)
        assert readme.index(end, a) > a and why
    for page, why in SKIPPED_PAGES:
        assert (ROOT / page).is_file() and why


# -- the scanner and the filters, on text whose answer is known ----------------------------------

def test_scanner_finds_figures_with_units_and_not_products() -> None:
    text = "took 17.0–18.1 µs, 0.89× and 2.3 %; 12 × 500K × 128 fp32; ≤ 240 s; 4,511 GB/s; sm_90"
    assert [f for _, _, f in figures(text)] == ["17.0–18.1 µs", "0.89×", "2.3 %", "≤ 240 s", "4,511 GB/s"]


def test_prose_only_blanks_blocks_code_and_skipped_regions() -> None:
    text = "a 1 %\n<!-- prose:x:begin -->\nb 2 %\n<!-- prose:x:end -->\n```\nc 3 %\n```\nS d 4 % E e 5 %"
    out = prose_only(text, [("S", "E", "why")])
    assert [f for _, _, f in figures(out)] == ["1 %", "5 %"] and len(out) == len(text)


def test_filters_by_hand() -> None:
    assert render.span([17.04, 18.1, 17.5], 1) == "17.0–18.1" and render.span([0.891, 0.894], 2) == "0.89"
    assert render.span([float("nan")], 1) == "n/a"
    assert render.plist([-1.05, 0.73], 1) == "−1.1, +0.7"
    assert render.span_text(["4", "9", "within noise", "13"]) == "4–13 or within noise"
    assert render.every(["slower"] * 4, "slower") == "on every profile"
    assert render.every(["slower", "within noise"], "slower") == "on 1 of 2 profiles"
    assert render.by_word([{"profile": "a", "w": "faster"}, {"profile": "b", "w": "slower"},
                           {"profile": "c", "w": "faster"}], "w") == "faster on a and c, slower on b"
    assert render.counted(["slower", "slower", "within noise"]) == "by the rule slower in 2, within noise in 1"
    assert render.zip_gt([3, 1, 5], [2, 2, 2]) == "on 2 of 3 profiles"
    assert render.median([3, 1, 2, 10]) == 2.5


def test_test_counts_in_command_comments_are_their_logs() -> None:
    """`# N passed (examples/logs/...)` after a command in a code block: the log says N passed."""
    text = all_text()
    said = re.findall(r"# (\d+) passed \((examples/logs/[^)\s]+)\)", text)
    assert said, "no '# N passed (log)' comment left: drop this test with the last of them"
    for n, log in said:
        assert re.search(rf"\b{n} passed\b", (ROOT / log).read_text()), f"{log} does not say {n} passed"
