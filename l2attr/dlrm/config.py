"""The workload: one typed config, from a preset, a TOML file and CLI flags (in that order)."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Mapping

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from l2attr.errors import UserError

DTYPES = ("fp32", "fp16", "bf16")
DTYPE_BYTES = {"fp32": 4, "fp16": 2, "bf16": 2}


@dataclass(frozen=True)
class WorkloadConfig:
    """Shape of the EmbeddingBag workload: what the kernels read, and how often."""

    tables: int = 12
    rows: int = 500_000
    dim: int = 128
    dtype: str = "fp32"
    batch_size: int = 2048
    pooling: int = 150
    batches: int = 12
    warmup_batches: int = 2
    hot_rows: int = 60_000
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("tables", "rows", "dim", "batch_size", "pooling", "batches"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise UserError(f"config: {name} must be a positive integer, got {value!r}")
        for name in ("warmup_batches", "hot_rows", "seed"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise UserError(f"config: {name} must be a non-negative integer, got {value!r}")
        if self.dtype not in DTYPES:
            raise UserError(f"config: dtype must be one of {', '.join(DTYPES)}, got {self.dtype!r}")
        if self.hot_rows > self.rows:
            raise UserError(f"config: hot_rows ({self.hot_rows}) is larger than rows per table ({self.rows})")

    @property
    def element_bytes(self) -> int:
        return DTYPE_BYTES[self.dtype]

    @property
    def table_bytes(self) -> int:
        return self.rows * self.dim * self.element_bytes

    @property
    def lookups_per_batch(self) -> int:
        return self.batch_size * self.pooling

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def replace(self, **changes: Any) -> "WorkloadConfig":
        return dataclasses.replace(self, **changes)


PRESETS: dict[str, WorkloadConfig] = {
    # The MICRO'24 artifact: 12 tables x 500K rows x 128 fp32 (3 GB), batch 2048, pooling 150.
    "artifact": WorkloadConfig(),
    # A quick shape for smoke tests and CI-sized GPU checks.
    "small": WorkloadConfig(tables=2, rows=100_000, batch_size=512, pooling=50, batches=3,
                            warmup_batches=1, hot_rows=10_000),
}

_FIELD_TYPES = {f.name: f.type for f in fields(WorkloadConfig)}


def load_toml(path: Path) -> dict[str, Any]:
    """Read workload keys from a TOML file (top level or a [workload] table)."""
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        raise UserError(f"config file not found: {path}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UserError(f"config file {path}: not valid TOML ({exc})") from None
    except OSError as exc:
        raise UserError(f"config file {path}: cannot read ({exc.strerror})") from None
    data = data.get("workload", data)
    if not isinstance(data, dict):
        raise UserError(f"config file {path}: 'workload' must be a table ([workload]), "
                        f"found {type(data).__name__}")
    unknown = sorted(set(data) - set(_FIELD_TYPES) - {"preset"})
    if unknown:
        raise UserError(f"config file {path}: unknown key(s) {', '.join(unknown)}; "
                        f"valid: preset, {', '.join(_FIELD_TYPES)}")
    return data


def build_config(preset: str | None = None, toml_path: Path | None = None,
                 overrides: dict[str, Any] | None = None) -> WorkloadConfig:
    """Preset, then TOML file, then flags: later sources win."""
    values: dict[str, Any] = {}
    file_values = load_toml(toml_path) if toml_path else {}
    preset = preset or file_values.pop("preset", None) or "artifact"
    file_values.pop("preset", None)
    if preset not in PRESETS:
        raise UserError(f"unknown preset {preset!r}; valid: {', '.join(PRESETS)}")
    values.update(PRESETS[preset].to_dict())
    values.update(file_values)
    values.update({k: v for k, v in (overrides or {}).items() if v is not None})
    return WorkloadConfig(**values)


def add_workload_args(parser: argparse.ArgumentParser) -> None:
    """The workload flags every GPU subcommand shares."""
    g = parser.add_argument_group("workload (preset, then --config file, then these flags)")
    g.add_argument("--preset", choices=sorted(PRESETS), help="built-in workload (default: artifact)")
    g.add_argument("--config", type=Path, metavar="FILE.toml", help="workload TOML file")
    g.add_argument("--tables", type=int, help="embedding tables (artifact: 12)")
    g.add_argument("--rows", type=int, help="rows per table (artifact: 500000)")
    g.add_argument("--dim", type=int, help="embedding dimension (artifact: 128)")
    g.add_argument("--dtype", choices=DTYPES, help="weight dtype (artifact: fp32)")
    g.add_argument("--batch-size", type=int, help="bags per batch (artifact: 2048)")
    g.add_argument("--pooling", type=int, help="lookups per bag (artifact: 150)")
    g.add_argument("--batches", type=int, help="measured batches (artifact: 12)")
    g.add_argument("--warmup-batches", type=int, help="warm-up batches, not kept (artifact: 2)")
    g.add_argument("--hot-rows", type=int, help="rows the pin kernel pins (artifact: 60000)")
    g.add_argument("--seed", type=int, help="seed for tables and generated traces (default 0)")


def config_from_flags(flags: Mapping[str, Any]) -> WorkloadConfig:
    """The workload from the flags of add_workload_args (argparse dests; None: not given)."""
    overrides = {name: flags.get(name) for name in _FIELD_TYPES}
    return build_config(flags.get("preset"), flags.get("config"), overrides)
