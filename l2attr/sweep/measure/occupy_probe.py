"""Child program for the capacity check under Nsight Compute: does the occupied share of L2 stay?

    python -m l2attr.sweep.measure.occupy_probe --occupy-mib 20,40 --traffic-mib 120

For each size X, two arms in turn, each from an L2 reset (cudaCtxResetPersistingL2Cache) and
flushed (2x L2 of other data read):
  evict_last  the first X MiB of a dummy buffer prefetched as evict_last (the capacity sweep's
              occupation, the same pin_l2_lines kernel), then `traffic` MiB of unrelated data
              streamed (a cell's worth of normal reads), then the X MiB read again by `flush_l2`;
  normal      the same, but the X MiB first read with normal priority (the control).
The probe (`flush_l2`, the only launches of that kernel) is what ncu profiles: its DRAM read
bytes are the part of X that the traffic evicted, so the retained share is 1 - DRAM / X.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

MiB = 1 << 20
ARMS = ("evict_last", "normal")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="occupy_probe")
    ap.add_argument("--occupy-mib", default="20,40")
    ap.add_argument("--traffic-mib", type=float, default=120.0)
    args = ap.parse_args(argv)
    import cupy
    import torch

    from l2attr.dlrm import compile as kc
    from l2attr.dlrm.measure.gpu import reset_persisting_l2
    from l2attr.vocab import Pin

    sizes = [float(x) for x in args.occupy_mib.split(",") if x.strip()]
    props = cupy.cuda.runtime.getDeviceProperties(0)
    l2, sms = int(props["l2CacheSize"]), int(props["multiProcessorCount"])
    read = kc.get_kernel(kc.READ_SPEC)
    probe = kc.get_kernel(kc.FLUSH_SPEC)
    pin = kc.get_kernel(kc.pin_spec("fp32", Pin.LINE))
    dummy = torch.empty(l2 // 4, dtype=torch.float32, device="cuda").uniform_(-1, 1)
    rows = dummy.numel() // 128
    ids = torch.arange(rows, dtype=torch.int64, device="cuda")
    flush_buf = torch.randint(0, 2**31 - 1, (2 * l2 // 4,), dtype=torch.int32, device="cuda")
    traffic = torch.randint(0, 2**31 - 1, (int(args.traffic_mib * MiB) // 4 + 4,), dtype=torch.int32, device="cuda")
    sink = torch.zeros(4, dtype=torch.int32, device="cuda")

    def stream_read(buf: torch.Tensor, nbytes: int) -> None:
        read((8 * sms,), (256,), (np.uint64(buf.data_ptr()), np.int64(nbytes // 16), np.int32(1),
                                  np.uint64(sink.data_ptr())))

    for mib in sizes:
        nbytes = int(mib * MiB)
        for arm in ARMS:
            reset_persisting_l2()
            stream_read(flush_buf, flush_buf.numel() * 4)
            if arm == "evict_last":
                pin((1024,), (256,), (np.uint64(dummy.data_ptr()), np.uint64(ids.data_ptr()),
                                      np.int64(nbytes // 512), np.int32(128), np.int64(128)))
            else:
                stream_read(dummy, nbytes)
            stream_read(traffic, int(args.traffic_mib * MiB))
            probe((1024,), (256,), (np.uint64(dummy.data_ptr()), np.int64(nbytes // 4), np.uint64(sink.data_ptr())))
            torch.cuda.synchronize()
            print(f"probe {arm} {mib:g} MiB", flush=True)
    reset_persisting_l2()
    return 0


if __name__ == "__main__":
    sys.exit(main())
