"""What a captured step's kernel node arguments say: its producer -> consumer edges, and whether
consecutive captures launch the same work.

A compiled step has no eager ops to follow tensors through, but every kernel node of its graph
keeps the argument values it was launched with. The driver gives them out: a kernel node's
parameters (`cuGraphKernelNodeGetParams`: the function and its argument buffer) and each
argument's offset and size (`cuFuncGetParamInfo`, or `cuKernelGetParamInfo` for a library kernel).
Every 8-byte aligned word of an argument (pointer arguments and pointers inside struct arguments
alike) is looked up among the blocks of torch's caching allocator (`torch.cuda.memory_snapshot`):
a word inside a block makes the kernel a *toucher* of that block.

An edge i -> j joins kernel j to the latest earlier kernel i that touched the same block; its bytes
are the sizes of those blocks. The level is the allocator block, not the tensor: the argument does
not say how much of the block the kernel reads, nor whether it reads or writes; a block the step
frees and reuses joins the kernels that touched it at either time (the same lines of L2, so the
same residency question). The measured arms (steps/graph_edges.py) then say what the edge is
worth. Pointers outside torch's allocator (another library's buffers) are not followed.

Launches compared (the second part, below `read`). A graph replays the launches of the call it captured. A step whose launches change between calls
(a `DynamicCache` that grows, a Python counter baked into a scalar argument) would replay stale work;
a grown cache's replay reads memory that is gone and ends the process's CUDA context. So the step is
captured three times and every kernel node's launch is compared before any replay:

- launch dimensions (grid, block, dynamic shared memory) and argument sizes must agree exactly;
- a differing argument value is a *changed value* only when it moves by one step per call: the same
  nonzero difference from the first capture to the second as from the second to the third, read as
  an integer, a float32 or a float64. A cache grows by the tokens of a call, a counter by one, a
  position by its stride.

Why not "any differing byte": torch passes structs by value, and their unused bytes carry whatever
the host left there. Seen on an H100 (examples/logs/answer/): the padding of torch's reduce kernel
argument held a heap address in one capture and another in the next, then 6 against 0, then two
unrelated 32-bit values; a one-byte argument (an empty functor) held 0xe0 against 0xf0 in a
StaticCache decode step. Such bytes move at random between calls, never by a fixed step on three;
they are counted and reported, not refused.

Pointers are not values: each capture has its own memory pool. A word inside torch's allocator in
all three captures (`spans`), or an address mapped into the host process in all three (`host`,
/proc/self/maps), is skipped, and so is, as an integer, any 8-byte word of 2^32 or more (a device
address outside the allocator may move by a fixed step). What is left unseen is written in
docs/step-method.md.
"""

from __future__ import annotations

import bisect
import ctypes
import math
import struct
from pathlib import Path
from typing import Any, Iterable, Sequence

import pandas as pd

WORD = 8
EDGE_COLUMNS = ["producer", "consumer", "bytes", "blocks"]


class PointersUnavailable(RuntimeError):
    """The driver did not give a kernel node's arguments (the caller falls back to op-level edges)."""


# -- pure: tested on a CPU --------------------------------------------------------------------

def words(blob: bytes) -> list[int]:
    """The 8-byte aligned little-endian words of one argument's bytes (a shorter tail is no pointer)."""
    return [int.from_bytes(blob[i:i + WORD], "little") for i in range(0, len(blob) - WORD + 1, WORD)]


def blocks(snapshot: Iterable[dict[str, Any]]) -> list[tuple[int, int]]:
    """(start, size) of every block of every allocator segment, in address order. A block without
    its own address lies right after the one before it in its segment."""
    out = []
    for seg in snapshot:
        at = int(seg["address"])
        for b in seg.get("blocks", ()):
            start = int(b.get("address", at))
            out.append((start, int(b["size"])))
            at = start + int(b["size"])
    return sorted(out)


def touched(ws: Iterable[int], spans: list[tuple[int, int]]) -> set[int]:
    """Indices of the blocks holding any of the words."""
    starts = [s for s, _ in spans]
    hit = set()
    for w in ws:
        i = bisect.bisect_right(starts, w) - 1
        if i >= 0 and w < spans[i][0] + spans[i][1]:
            hit.add(i)
    return hit


def _latest(touch: list[set[int]]) -> list[dict[int, int]]:
    """Per kernel j: block -> the latest earlier kernel that touched it (blocks no earlier kernel touched: absent)."""
    last: dict[int, int] = {}
    out = []
    for j, t in enumerate(touch):
        out.append({b: last[b] for b in t if b in last})
        for b in t:
            last[b] = j
    return out


def kernel_edges(touch: list[set[int]], spans: list[tuple[int, int]]) -> pd.DataFrame:
    """One row per (producer, consumer) kernel pair: the blocks the consumer shares with its latest
    earlier toucher, and their bytes."""
    rows: dict[tuple[int, int], list[int]] = {}
    for j, got in enumerate(_latest(touch)):
        for b, i in sorted(got.items()):
            rows.setdefault((i, j), []).append(b)
    return pd.DataFrame([{"producer": i, "consumer": j, "bytes": sum(spans[b][1] for b in bs), "blocks": tuple(bs)}
                         for (i, j), bs in sorted(rows.items())], columns=EDGE_COLUMNS)


def warm_spans(consumer: int, touch: list[set[int]], spans: list[tuple[int, int]],
               producer: int | None = None) -> list[tuple[int, int]]:
    """The consumer's blocks to read back before it, as (start, size): those an earlier kernel
    touched, oldest last touch first (the most recent end up the most resident, as after the step's
    own traffic); without the blocks whose latest toucher is `producer`, when given."""
    got = _latest(touch)[consumer]
    keep = sorted((i, b) for b, i in got.items() if producer is None or i != producer)
    return [spans[b] for _, b in keep]


# -- on the GPU: the driver's view of a kernel node ------------------------------------------

class _NodeParams(ctypes.Structure):
    """CUDA_KERNEL_NODE_PARAMS_v2 (cuda.h): a v1 answer fits in it too."""

    _fields_ = [("func", ctypes.c_void_p), ("gridDimX", ctypes.c_uint), ("gridDimY", ctypes.c_uint),
                ("gridDimZ", ctypes.c_uint), ("blockDimX", ctypes.c_uint), ("blockDimY", ctypes.c_uint),
                ("blockDimZ", ctypes.c_uint), ("sharedMemBytes", ctypes.c_uint),
                ("kernelParams", ctypes.POINTER(ctypes.c_void_p)), ("extra", ctypes.POINTER(ctypes.c_void_p)),
                ("kern", ctypes.c_void_p), ("ctx", ctypes.c_void_p)]


_LIB: list[Any] = []
BUFFER_POINTER, BUFFER_SIZE, END = 1, 2, 0          # CU_LAUNCH_PARAM_* keys of a launch's `extra`


def _lib() -> Any:
    if not _LIB:
        try:
            _LIB.append(ctypes.CDLL("libcuda.so.1"))
        except OSError as exc:
            raise PointersUnavailable(f"libcuda.so.1 could not be loaded ({exc})") from None
    return _LIB[0]


def _fn(name: str, *alts: str) -> Any:
    lib = _lib()
    for n in (name, *alts):
        f = getattr(lib, n, None)
        if f is not None:
            f.restype = ctypes.c_int
            return f
    raise PointersUnavailable(f"the driver has no {name}")


def _param_sizes(p: _NodeParams) -> list[tuple[int, int]]:
    """(offset, size) of each argument, from the function (or the library kernel)."""
    handle, info = ((p.func, _fn("cuFuncGetParamInfo")) if p.func else (p.kern, _fn("cuKernelGetParamInfo")))
    if not handle:
        raise PointersUnavailable("a kernel node names neither a function nor a kernel")
    out, off, size = [], ctypes.c_size_t(), ctypes.c_size_t()
    while True:
        err = info(ctypes.c_void_p(handle), ctypes.c_size_t(len(out)), ctypes.byref(off), ctypes.byref(size))
        if err:
            if not out and err != 1:             # 1: CUDA_ERROR_INVALID_VALUE, past the last argument
                raise PointersUnavailable(f"cuFuncGetParamInfo failed (CUresult {err})")
            return out
        out.append((off.value, size.value))


def _extra_buffer(extra: Any) -> bytes:
    buf, n, i = None, None, 0
    while extra[i] not in (None, END):
        key, val = int(extra[i]), extra[i + 1]
        if key == BUFFER_POINTER:
            buf = val
        elif key == BUFFER_SIZE:
            n = ctypes.cast(val, ctypes.POINTER(ctypes.c_size_t))[0]
        i += 2
    if buf is None or n is None:
        raise PointersUnavailable("a kernel node's extra launch parameters hold no argument buffer")
    return ctypes.string_at(buf, n)


def node_launch(node: Any) -> tuple[tuple[int, ...], list[bytes]]:
    """One kernel node's launch: (grid x y z, block x y z, dynamic shared bytes) and each argument's
    bytes (one buffer when the node was given its arguments packed). Raises PointersUnavailable."""
    get = _fn("cuGraphKernelNodeGetParams_v2", "cuGraphKernelNodeGetParams")
    p = _NodeParams()
    err = get(ctypes.c_void_p(int(node)), ctypes.byref(p))
    if err:
        raise PointersUnavailable(f"cuGraphKernelNodeGetParams failed (CUresult {err})")
    dims = (p.gridDimX, p.gridDimY, p.gridDimZ, p.blockDimX, p.blockDimY, p.blockDimZ, p.sharedMemBytes)
    if not p.kernelParams:
        return dims, ([_extra_buffer(p.extra)] if p.extra else [])
    return dims, [ctypes.string_at(p.kernelParams[i], size) if p.kernelParams[i] else b""
                  for i, (_, size) in enumerate(_param_sizes(p))]


def node_words(node: Any) -> list[int]:
    """Every aligned word of one kernel node's arguments (raises PointersUnavailable)."""
    return [w for blob in node_launch(node)[1] if len(blob) >= WORD for w in words(blob)]


def read(torch: Any, kernel_nodes: list[Any]) -> tuple[list[set[int]], list[tuple[int, int]]]:
    """(blocks each kernel node touches, the allocator's blocks): what kernel_edges reads."""
    spans = blocks(torch.cuda.memory_snapshot())
    return [touched(node_words(n), spans) for n in kernel_nodes], spans


# -- launches compared across three captures: pure, tested on a CPU ------------------------------

Launch = tuple[tuple[int, ...], list[bytes]]

# An 8-byte word at or above this is read as an integer no more: sizes, counts and positions are
# small; a device address outside the allocator (another library's buffer) is not.
SCALAR_LIMIT = 1 << 32
# Two float steps are one step when they agree to this fraction (float32 rounding of a counter's
# sum stays far inside it; two random values agree this closely about once in a million).
STEP_REL = 1e-6
_NORMAL64 = 2.2250738585072014e-308     # the smallest normal double: an address reads as a denormal


def host_spans(maps: str | None = None) -> list[tuple[int, int]]:
    """(start, size) of every region mapped into this process (/proc/self/maps; [] where there is none).
    A word that is a mapped address in every capture is a host pointer left in a struct (padding), no
    size, count or position: Linux maps nothing below vm.mmap_min_addr (64 KiB)."""
    if maps is None:
        try:
            maps = Path("/proc/self/maps").read_text()
        except OSError:
            return []
    out = []
    for line in maps.splitlines():
        lo, _, hi = line.partition(" ")[0].partition("-")
        try:
            a, b = int(lo, 16), int(hi, 16)
        except ValueError:
            continue
        out.append((a, b - a))
    return sorted(out)


def _pieces(blob: bytes) -> list[tuple[int, bytes]]:
    """(offset, bytes) of each aligned 8-byte word of an argument, then its shorter tail, if any."""
    cut = len(blob) - len(blob) % WORD
    out = [(i, blob[i:i + WORD]) for i in range(0, cut, WORD)]
    return out + ([(cut, blob[cut:])] if cut < len(blob) else [])


def _one_step(x: float, y: float, z: float) -> bool:
    """x -> y -> z by one nonzero, finite step (floats: to STEP_REL)."""
    d1, d2 = y - x, z - y
    if not (math.isfinite(d1) and math.isfinite(d2)) or d1 == 0:
        return False
    return d1 == d2 or abs(d1 - d2) <= STEP_REL * max(abs(d1), abs(d2))


def moves_by_one_step(vals: Sequence[bytes]) -> str:
    """How three captures' bytes of one word move by one step per call ('' when they do not):
    'integer', 'float32' or 'float64'."""
    x, y, z = (int.from_bytes(v, "little") for v in vals)
    n = len(vals[0])
    if (n < WORD or max(x, y, z) < SCALAR_LIMIT) and _one_step(x, y, z):
        return "integer"
    if n == 4 or (n == WORD and max(x, y, z) < SCALAR_LIMIT):
        f = [struct.unpack("<f", v[:4])[0] for v in vals]
        if all(math.isfinite(v) for v in f) and _one_step(*f):
            return "float32"
    if n == WORD:
        d = [struct.unpack("<d", v)[0] for v in vals]
        if all(math.isfinite(v) and abs(v) >= _NORMAL64 for v in d) and _one_step(*d):
            return "float64"
    return ""


def launch_difference(caps: Sequence[Launch], spans: list[tuple[int, int]],
                      host: list[tuple[int, int]] = ()) -> tuple[str, int]:
    """(why the launches differ, '' when they agree; how many values move at random) for one kernel
    node's launch in three consecutive captures."""
    a, b, c = caps
    for other in (b, c):
        if other[0] != a[0]:
            return f"launch dimensions (grid, block, shared) {a[0]} against {other[0]}", 0
        if [len(x) for x in other[1]] != [len(x) for x in a[1]]:
            return "argument sizes differ", 0
    irregular = 0
    for i, args in enumerate(zip(a[1], b[1], c[1])):
        if args[0] == args[1] == args[2]:
            continue
        for (off, p), (_, q), (_, r) in zip(*(_pieces(x) for x in args)):
            if p == q == r:
                continue
            ws = [int.from_bytes(v, "little") for v in (p, q, r)]
            if len(p) == WORD and any(all(touched([w], where) for w in ws) for where in (spans, host) if where):
                continue
            how = moves_by_one_step((p, q, r))
            if how:
                at = f" (word {off // WORD})" if len(p) == WORD else (f" (bytes from {off})" if off else "")
                shown = ", ".join(str(w) for w in ws) if how == "integer" else ", ".join(
                    f"{struct.unpack('<f' if how == 'float32' else '<d', v[:4] if how == 'float32' else v)[0]:g}"
                    for v in (p, q, r))
                return f"argument {i}{at} moves by one step per call (read as {how}): {shown}", 0
            irregular += 1
    return "", irregular
