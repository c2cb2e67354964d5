"""Launch wrappers for the compiled variants: one object per variant that knows its pin and consumer."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictInt, field_validator, model_validator

from l2attr.dlrm import compile as kc
from l2attr.dlrm.declare import DEFAULT_MAXRREGCOUNT, FAMILIES, FAST_DEFAULT, Variant
from l2attr.typed import RuleError
from l2attr.vocab import Pin, Role, Family


FAST_UNROLLS = tuple(range(1, 17))   # row loads in flight per lane the fast consumer is built for


class LaunchShape(BaseModel):
    """How the consumer and the pin are launched (the ladder's `measure.shape`; its fields are
    `l2attr ladder` flags, the pin's fixed)."""

    model_config = ConfigDict(frozen=True, extra="allow", allow_inf_nan=False)

    grid: StrictInt = Field(1024, ge=1, le=1 << 31, description="consumer grid")
    # consumer: 32 features x 8 bags, as ATen / the artifact
    block: tuple[StrictInt, StrictInt] = Field(
        (32, 8), description="consumer block x,y",
        json_schema_extra=dict(text=True, rule="two integers x,y > 0 with x*y <= 1024"))
    pin_grid: StrictInt = Field(1024, ge=1, le=1 << 31, json_schema_extra=dict(cli=False))
    pin_block_line: StrictInt = Field(256, ge=1, le=1024, json_schema_extra=dict(cli=False))  # 1-D blocks
    # per-element pin: the artifact's (2, 128)
    pin_block_element: tuple[StrictInt, StrictInt] = Field((2, 128), json_schema_extra=dict(cli=False))
    fast_warps_per_bag: StrictInt = Field(FAST_DEFAULT.warps_per_bag, ge=1, le=32,
                                          description="fast family: warps sharing one bag (from the committed "
                                                      "tuning table)")
    fast_bags_per_block: StrictInt = Field(FAST_DEFAULT.bags_per_block, ge=1, le=1024,
                                           description="fast family: bags per block")
    fast_unroll: StrictInt = Field(FAST_DEFAULT.unroll, ge=FAST_UNROLLS[0], le=FAST_UNROLLS[-1],
                                   description="fast family: row loads in flight per lane",
                                   json_schema_extra=dict(choices=FAST_UNROLLS))
    fast_load: StrictInt = Field(FAST_DEFAULT.load, ge=0, le=2, json_schema_extra=dict(choices=(0, 1, 2)),
                                 description="fast family: row load form, 0 plain, 1 L1::no_allocate, "
                                             "2 that + L2::256B")
    fast_maxrregcount: StrictInt = Field(FAST_DEFAULT.maxrregcount, ge=0, le=255,
                                         description="fast family: register cap, 0 for none",
                                         json_schema_extra=dict(rule="0 (no cap) or a whole number from 16 to 255"))

    @field_validator("block", mode="before")
    @classmethod
    def _block_text(cls, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        try:
            return tuple(int(v) for v in value.split(","))
        except ValueError:
            raise RuleError("two integers x,y", value) from None

    @model_validator(mode="after")
    def _fits(self) -> "LaunchShape":
        bx, by = self.block
        if bx <= 0 or by <= 0 or bx * by > 1024:
            raise RuleError("positive x, y with x*y <= 1024", list(self.block), "block")
        if 0 < self.fast_maxrregcount < 16:
            raise RuleError("0 (no cap) or >= 16", self.fast_maxrregcount, "fast_maxrregcount")
        if 32 * self.fast_warps_per_bag * self.fast_bags_per_block > 1024:
            raise RuleError(f"at most 1024 threads per block with --fast-warps-per-bag {self.fast_warps_per_bag} "
                            "x 32 lanes", self.fast_bags_per_block, "fast_bags_per_block")
        return self


@dataclass(frozen=True)
class FastGeometry:
    """How the fast consumer covers one call: vector width, lane groups, column slices, launch."""

    vec: int            # elements per lane load
    lanes_per_row: int  # lanes sharing one row (a power of two <= 32)
    col_slices: int     # work items per bag (dims wider than 32 vectors)
    block: tuple[int, int, int]
    grid: int
    shared_bytes: int


def fast_geometry(dim: int, row_stride: int, element_bytes: int, weight_addr: int, out_addr: int,
                  num_bags: int, warps_per_bag: int, bags_per_block: int) -> FastGeometry:
    """The widest vector (<= 16 bytes) that divides the dim and the row stride and keeps every row
    and output vector aligned; then as few lanes per row as cover it, in powers of two."""
    vec = kc.VECTOR_BYTES // element_bytes
    while vec > 1 and (dim % vec or row_stride % vec or weight_addr % (vec * element_bytes)
                       or out_addr % (vec * element_bytes)):
        vec //= 2
    vectors = dim // vec
    lanes = 1
    while lanes < min(vectors, 32):
        lanes *= 2
    slices = -(-vectors // lanes)
    items = num_bags * slices
    grid = max(1, min(-(-items // bags_per_block), 1 << 20))
    shared = bags_per_block * (warps_per_bag - 1) * (lanes * vec * 4 + 4)
    return FastGeometry(vec, lanes, slices, (32, warps_per_bag, bags_per_block), grid, shared)


def _ptr(tensor: Any) -> Any:
    """A torch tensor's device address as the 64-bit value a RawKernel takes for a pointer."""
    import numpy as np

    return np.uint64(0 if tensor is None else tensor.data_ptr())


def has_index_slack(indices: Any) -> bool:
    """True when one readable element follows the last index in the tensor's own storage.

    The artifact family's RPF consumer may read one index past its last bag (ladder.py,
    `reads_one_past_end`); the buffers l2attr builds carry that element, holding a valid row id.
    """
    if not indices.is_contiguous():
        return False
    capacity = indices.untyped_storage().nbytes() // indices.element_size()
    return capacity >= indices.storage_offset() + indices.numel() + 1


def with_index_slack(indices: Any) -> Any:
    """A copy of a 1-D index tensor followed by one spare element (a repeat of its last id)."""
    import torch

    flat = indices.reshape(-1)
    spare = flat[-1:] if flat.numel() else torch.zeros(1, dtype=flat.dtype, device=flat.device)
    return torch.cat([flat, spare])[: flat.numel()]


class VariantKernels:
    """The compiled kernels of one variant plus how to launch them on tensors (torch, on the GPU)."""

    def __init__(self, v: Variant, dtype: str, shape: LaunchShape,
                 maxrregcount: int = DEFAULT_MAXRREGCOUNT, rpf_depth: int = 2) -> None:
        self.variant, self.shape = v, shape
        self.abi = FAMILIES[v.family].abi
        self.dtype, self.maxrregcount, self.rpf_depth = dtype, maxrregcount, rpf_depth
        self.consumer_spec = kc.consumer_spec(v, dtype, maxrregcount, rpf_depth,
                                              fast=self._fast_options())
        self.consumer = kc.get_kernel(self.consumer_spec)
        self._fast_kernels: dict[tuple[int, bool], Any] = {}
        self._zero_rows: dict[tuple[Any, int, Any], Any] = {}
        self.pin_spec = kc.pin_spec(dtype, v.pin) if v.rung.pins else None
        self.pin = kc.get_kernel(self.pin_spec) if self.pin_spec else None
        self._aten_buffers: dict[tuple[int, int], tuple[Any, Any]] = {}

    @property
    def rung(self):  # the rung declaration (label, pins, register cap)
        return self.variant.rung

    def _consumer_block(self) -> tuple[int, ...]:
        if self.abi == Family.FAST:
            return (32, self.shape.fast_warps_per_bag, self.shape.fast_bags_per_block)
        return tuple(self.shape.block)

    def resources(self) -> dict[str, Any]:
        cblock = self._consumer_block()
        block = 1
        for b in cblock:
            block *= b
        info: dict[str, Any] = {
            "family": self.variant.family.value, "rung": self.variant.rung.name,
            "pin_granularity": self.variant.pin.value,
            Role.CONSUMER.value: {"kernel": self.consumer_spec.function, "source": self.consumer_spec.source,
                         "options": list(self.consumer_spec.options),
                         "grid": "one block per bags_per_block bags" if self.abi == Family.FAST else self.shape.grid,
                         "block": list(cblock),
                         **kc.kernel_resources(self.consumer, block)}}
        if self.pin is not None and self.pin_spec is not None:
            pblock = self._pin_block()
            threads = pblock[0] * (pblock[1] if len(pblock) > 1 else 1)
            info[Role.PIN.value] = {"kernel": self.pin_spec.function, "source": self.pin_spec.source,
                           "options": list(self.pin_spec.options), "grid": self.shape.pin_grid,
                           "block": list(pblock), **kc.kernel_resources(self.pin, threads)}
        return info

    def _pin_block(self) -> tuple[int, ...]:
        if self.variant.pin == Pin.ELEMENT:
            return self.shape.pin_block_element
        return (self.shape.pin_block_line,)

    def _aten_outputs(self, num_indices: int, num_bags: int, device: Any) -> tuple[Any, Any]:
        """offset2bag and bag_size, the extra outputs the ATen-structured kernel writes.

        Allocated once per size (the artifact's at::empty came from the caching allocator, so it
        cost no kernel time either)."""
        import torch

        key = (num_indices, num_bags)
        if key not in self._aten_buffers:
            self._aten_buffers[key] = (torch.empty(num_indices, dtype=torch.int64, device=device),
                                       torch.empty(num_bags, dtype=torch.int64, device=device))
        return self._aten_buffers[key]

    def launch_consumer(self, weight: Any, indices: Any, offsets: Any, out: Any,
                        mean: bool = False, per_sample_weights: Any = None,
                        padding_idx: int = -1) -> None:
        import numpy as np

        if self.variant.reads_one_past_end and not has_index_slack(indices):
            raise ValueError(f"{self.variant.label}: the index buffer needs one spare element after "
                             "its last index (see has_index_slack)")
        grid, block = (self.shape.grid,), self.shape.block
        if self.abi == Family.FAST:
            self._launch_fast(weight, indices, offsets, out, mean, per_sample_weights, padding_idx)
            return
        if self.abi == Family.ARTIFACT:
            offset2bag, bag_size = self._aten_outputs(indices.numel(), offsets.numel(), weight.device)
            psw_stride = per_sample_weights.stride(0) if per_sample_weights is not None else 0
            self.consumer(grid, block, (
                _ptr(indices), _ptr(offsets), _ptr(weight), _ptr(out), _ptr(offset2bag),
                np.int64(indices.numel()), np.int64(offsets.numel()), np.int64(weight.shape[1]),
                np.int64(weight.stride(0)), np.int64(weight.stride(1)), np.int32(1 if mean else 0),
                _ptr(bag_size), _ptr(per_sample_weights), np.int64(psw_stride),
                np.int64(padding_idx), np.int64(weight.shape[0])))
            return
        self.consumer(grid, block, (
            _ptr(weight), _ptr(indices), _ptr(offsets), _ptr(out), _ptr(per_sample_weights),
            np.int64(indices.numel()), np.int64(offsets.numel()), np.int32(weight.shape[1]),
            np.int64(weight.stride(0)), np.int64(padding_idx), np.int32(1 if mean else 0)))

    def _fast_options(self) -> kc.FastOptions:
        return kc.FastOptions(self.shape.fast_unroll, self.shape.fast_load, self.shape.fast_maxrregcount)

    def _fast_kernel(self, vec: int, weighted: bool = False) -> Any:
        if (vec, weighted) not in self._fast_kernels:
            spec = kc.consumer_spec(self.variant, self.dtype, self.maxrregcount, self.rpf_depth,
                                    vec=vec, fast=self._fast_options(), weighted=weighted)
            self._fast_kernels[vec, weighted] = kc.get_kernel(spec)
        return self._fast_kernels[vec, weighted]

    def _launch_fast(self, weight: Any, indices: Any, offsets: Any, out: Any, mean: bool,
                     per_sample_weights: Any, padding_idx: int) -> None:
        import numpy as np

        rows, dim = weight.shape
        if max(rows, indices.numel(), offsets.numel() * dim) >= 2**31:
            raise ValueError(f"{self.variant.label}: rows, lookups and bags travel as 32 bits; "
                             f"{rows} rows, {indices.numel()} lookups, {offsets.numel()} bags is too many")
        if padding_idx < -1 or padding_idx >= rows:
            raise ValueError(f"{self.variant.label}: padding_idx {padding_idx} outside [-1, {rows})")
        if weight.stride(0) * weight.element_size() >= 2**32:
            raise ValueError(f"{self.variant.label}: a row stride of {weight.stride(0)} elements is 4 GiB "
                             "or more; the fast consumer addresses rows with a 32-bit byte stride")
        geo = fast_geometry(dim, weight.stride(0), weight.element_size(), weight.data_ptr(),
                            out.data_ptr(), offsets.numel(), self.shape.fast_warps_per_bag,
                            self.shape.fast_bags_per_block)
        kernel = self._fast_kernel(geo.vec, per_sample_weights is not None)
        threads = geo.block[0] * geo.block[1] * geo.block[2]
        if threads > kernel.max_threads_per_block:
            raise ValueError(f"{self.variant.label}: a block of {threads} threads does not launch at "
                             f"{kernel.num_regs} registers per thread (at most "
                             f"{kernel.max_threads_per_block}); use fewer warps per bag or bags per block")
        kernel(
            (geo.grid,), geo.block,
            (_ptr(weight), _ptr(indices), _ptr(offsets), _ptr(out), _ptr(per_sample_weights),
             np.int64(indices.numel()), np.int64(offsets.numel()), np.int32(dim),
             np.int64(weight.stride(0)), np.int64(padding_idx), np.int32(1 if mean else 0),
             np.int32(geo.lanes_per_row), np.int32(geo.col_slices), _ptr(self._zero_row(weight))),
            shared_mem=geo.shared_bytes)

    def _zero_row(self, weight: Any) -> Any:
        """A row of zeros as wide as the weight's rows, of its type and on its device, made once:
        the fast consumer's skipped slots load it instead of branching around their load."""
        key = (weight.dtype, weight.shape[1], weight.device)
        if key not in self._zero_rows:
            import torch

            self._zero_rows[key] = torch.zeros(weight.shape[1], dtype=weight.dtype, device=weight.device)
        return self._zero_rows[key]

    def per_sample_weights_dtype(self, weight_dtype: Any) -> Any:
        """The tuned ABI takes fp32 per-sample weights; the ATen one takes the weight's type."""
        import torch

        return weight_dtype if self.abi == Family.ARTIFACT else torch.float32

    def launch_pin(self, weight: Any, hot: Any) -> None:
        import numpy as np

        assert self.pin is not None
        self.pin((self.shape.pin_grid,), self._pin_block(),
                 (_ptr(weight), _ptr(hot), np.int64(hot.numel()),
                  np.int32(weight.shape[1]), np.int64(weight.stride(0))))
