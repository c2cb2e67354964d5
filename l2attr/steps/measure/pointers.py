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
same residency question). The measured arms (steps/measure/graph_edges.py) then say what the edge is
worth. Pointers outside torch's allocator (another library's buffers) are not followed.

Launches compared (the second part, below `read`). A graph replays the launches of the call it
captured. A step whose launches change between calls (a `DynamicCache` that grows, a Python counter
baked into a scalar argument) would replay stale work; a grown cache's replay reads memory that is
gone and ends the process's CUDA context. So the step is captured three times and every kernel
node's launch is compared before any replay: launch dimensions and argument sizes must agree
exactly, and a value (4 aligned bytes, read as an int32 or a float32) is a *changed value* when it
is a whole number of at most VALUE_LIMIT that moves by one step per call: the same nonzero
difference from the first capture to the second as from the second to the third. A cache grows by
the tokens of a call, a counter by one, a position by its stride.

Why not "any differing byte": torch passes structs by value, and bytes it never set (padding, an
offset calculator's unused dimensions, an empty functor's one byte) carry whatever the host left
there. Seen on an H100 (examples/logs/answer/): torch's reduce kernel argument held heap addresses,
6 against 0, unrelated 32-bit values, a double that grew by 1.165e7 a call, and values that moved by
a fixed step but were no small whole numbers; a one-byte argument held 0xe0 against 0xf0 in a
StaticCache decode step. Such values are counted and reported, not refused. Pointers are skipped
(each capture has its own pool), and so is a value whose word's other half moves too (no 4-byte
field). What is left unseen is written in docs/step-method.md.
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


def read_each(torch: Any, kernel_nodes: list[Any]) -> tuple[list[set[int] | None], list[tuple[int, int]], str]:
    """As `read`, node by node: a node whose launch the driver does not give is None (the others
    are still read); the first such reason, or ''. The rewarmed arms need every node they can get."""
    spans = blocks(torch.cuda.memory_snapshot())
    out: list[set[int] | None] = []
    why = ""
    for n in kernel_nodes:
        try:
            out.append(touched(node_words(n), spans))
        except PointersUnavailable as exc:
            out.append(None)
            why = why or (str(exc).splitlines() or [type(exc).__name__])[0]
    return out, spans, why


def own_spans(node: int, touch: Sequence[set[int] | None], spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Every block kernel `node` touches, as (start, size), in the order that leaves the most recent
    most resident: blocks no earlier kernel of the step touched (weights, inputs: the previous step's)
    first, then the step's own by their latest earlier toucher. What a perfect L2 would hold for it."""
    last: dict[int, int] = {}
    for j in range(node):
        for b in touch[j] or ():
            last[b] = j
    mine = touch[node] or set()
    return [spans[b] for _, b in sorted((last.get(b, -1), b) for b in mine)]


# -- launches compared across three captures: pure, tested on a CPU ------------------------------

Launch = tuple[tuple[int, ...], list[bytes]]

HALF = 4
# A changed value is a size, a count or a position: a whole number, read from 4 aligned bytes as an
# int32 or a float32, of at most this magnitude in all three captures, moving by one step per call.
# What the host leaves in padding is an address or a bit pattern: on an H100 such values moved by a
# fixed step too (a heap address 1063302904 by 5688 a call, 1543504345 by 24, a float32 -1.2e-34 by
# -2.4e-35), but none was a small whole number (examples/logs/answer/README.md).
VALUE_LIMIT = 1 << 20
# A word in this range in all three captures reads as an address (48-bit, above 4 GiB): a device
# buffer outside the allocator, a host pointer, may move by a fixed step between captures.
ADDRESSES = (1 << 32, 1 << 48)


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


def _one_step(x: float, y: float, z: float) -> bool:
    """x -> y -> z, whole numbers of at most VALUE_LIMIT, by one nonzero step."""
    if not all(math.isfinite(v) and v == int(v) and abs(v) <= VALUE_LIMIT for v in (x, y, z)):
        return False
    return y != x and y - x == z - y


def moves_by_one_step(vals: Sequence[bytes]) -> str:
    """How three captures' 4 bytes of one value move by one step per call ('' when they do not):
    'integer' (int32) or 'float32' (a whole number held as a float, as torch holds a Python scalar)."""
    if _one_step(*(int.from_bytes(v, "little", signed=True) for v in vals)):
        return "integer"
    return "float32" if _one_step(*(struct.unpack("<f", v)[0] for v in vals)) else ""


def _is_address(ws: Sequence[int], spans: list[tuple[int, int]], host: list[tuple[int, int]],
                by_range: bool = True) -> bool:
    """The word is a pointer in all three captures: into torch's allocator (each capture has its own
    pool), into the host process (a host pointer left in padding), or (`by_range`, aligned words
    only) in the 48-bit address range."""
    return ((by_range and all(ADDRESSES[0] <= w < ADDRESSES[1] for w in ws))
            or any(all(touched([w], where) for w in ws) for where in (spans, host) if where))


def launch_difference(caps: Sequence[Launch], spans: list[tuple[int, int]],
                      host: list[tuple[int, int]] = ()) -> tuple[str, int]:
    """(why the launches differ, '' when they agree; how many values move at random) for one kernel
    node's launch in three consecutive captures. A value is 4 aligned bytes whose 8-byte word is no
    pointer and whose other 4 bytes stay put; an argument shorter than 4 bytes (a flag, an empty
    functor's byte) is never a count."""
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
        n = len(args[0])
        for off in range(0, n, HALF):
            vals = [x[off:off + HALF] for x in args]
            if vals[0] == vals[1] == vals[2]:
                continue
            if len(vals[0]) < HALF:
                irregular += 1
                continue
            w0 = off - off % WORD
            if any(w + WORD <= n and _is_address([int.from_bytes(x[w:w + WORD], "little") for x in args],
                                                 spans, host, by_range=w == w0)
                   for w in dict.fromkeys((w0, off))):   # a pointer, aligned or at 4 bytes (packed): skipped
                continue
            if w0 + WORD <= n:              # the value's word: its other half must stay put
                mate = w0 + HALF if off == w0 else w0
                if len({x[mate:mate + HALF] for x in args}) > 1:
                    irregular += 1
                    continue
            how = moves_by_one_step(vals)
            if how:
                shown = ", ".join(f"{struct.unpack('<f', v)[0]:g}" if how == "float32"
                                  else str(int.from_bytes(v, "little", signed=True)) for v in vals)
                at = f" (bytes {off}-{off + HALF - 1})" if n > HALF else ""
                return f"argument {i}{at} moves by one step per call (read as {how}): {shown}", 0
            irregular += 1
    return "", irregular
