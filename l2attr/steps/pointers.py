"""Producer -> consumer edges of a captured step, read from its kernel nodes' pointer arguments.

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
"""

from __future__ import annotations

import bisect
import ctypes
from pathlib import Path
from typing import Any, Iterable

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


# A differing 8-byte word outside torch's allocator counts as a changed value only below this: sizes,
# counts and positions are small; a device address (another library's buffer, a pool of its own) is
# not, and may differ between captures without the work changing.
SCALAR_LIMIT = 1 << 32


def host_spans(maps: str | None = None) -> list[tuple[int, int]]:
    """(start, size) of every region mapped into this process (/proc/self/maps; [] where there is none).

    A struct passed by value carries its padding bytes as they were on the host: whatever the launch
    path left there, often a heap address. glibc's heap can lie below 4 GiB, so such a word passes
    SCALAR_LIMIT and differs between two captures of the same work (seen on an H100: word 33 of
    torch's reduce kernel argument held the previous kernel node's handle, 0x19e67018). A word that
    is an address mapped into this process in both captures is no size, count or position: no
    mapping starts below the kernel's mmap_min_addr (64 KiB on Linux)."""
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


def launch_difference(a: tuple[tuple[int, ...], list[bytes]], b: tuple[tuple[int, ...], list[bytes]],
                      spans: list[tuple[int, int]], host: list[tuple[int, int]] = ()) -> str:
    """How two captures' launches of one kernel node differ, '' when they do not: launch dimensions,
    argument sizes, an argument shorter than a word, or an 8-byte word that is no pointer into the
    allocator, no address mapped into the host process (`host`, host_spans) and small enough to be a
    size, a count or a position (SCALAR_LIMIT). Pointers may differ (each capture has its own memory
    pool), and so may host addresses (a struct's padding)."""
    (da, xa), (db, xb) = a, b
    if da != db:
        return f"launch dimensions (grid, block, shared) {da} against {db}"
    if [len(x) for x in xa] != [len(x) for x in xb]:
        return "argument sizes differ"
    for i, (p, q) in enumerate(zip(xa, xb)):
        if p == q:
            continue
        if len(p) < WORD:
            return f"argument {i} holds {p.hex()} against {q.hex()}"
        for j, (u, v) in enumerate(zip(words(p), words(q))):
            if (u != v and max(u, v) < SCALAR_LIMIT and not (touched([u], spans) and touched([v], spans))
                    and not (touched([u], host) and touched([v], host))):
                return f"argument {i} (word {j}) holds {u} against {v}"
        tail = len(p) - len(p) % WORD
        if p[tail:] != q[tail:]:
            return f"argument {i} ends in {p[tail:].hex()} against {q[tail:].hex()}"
    return ""


def read(torch: Any, kernel_nodes: list[Any]) -> tuple[list[set[int]], list[tuple[int, int]]]:
    """(blocks each kernel node touches, the allocator's blocks): what kernel_edges reads."""
    spans = blocks(torch.cuda.memory_snapshot())
    return [touched(node_words(n), spans) for n in kernel_nodes], spans
