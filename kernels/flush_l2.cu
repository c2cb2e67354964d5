// L2 flush: read a buffer at least twice the L2 size, so that every line a previous kernel left in
// L2 (evict-last lines too, once the host has reset their priority with
// cudaCtxResetPersistingL2Cache) is replaced by clean lines of this buffer. Reading, not writing:
// a written buffer would leave dirty lines whose write-back the next kernel would pay for.
extern "C" __global__ void flush_l2(const unsigned int* __restrict__ buf, long long words,
                                    unsigned int* __restrict__ sink) {
    unsigned int x = 0;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < words;
         i += (long long)gridDim.x * blockDim.x)
        x ^= buf[i];
    if (x == 0x9e3779b9u) sink[0] = x;  // practically never true; keeps the loads alive
}

// Read-bandwidth probe: every thread streams 16-byte loads over the buffer (grid-stride), `passes`
// times, and folds them into a value that is stored only if impossible. Timed over a buffer much
// larger than L2 it gives the HBM read bandwidth; over one that fits in L2, read many times after
// a warm pass, the L2's (one pass over a few MB would time the launch, not the L2). The roofline
// divides measured traffic by these (a copy's bandwidth mixes reads and writes).
extern "C" __global__ void read_stream(const uint4* __restrict__ buf, long long vectors, int passes,
                                       unsigned int* __restrict__ sink) {
    unsigned int x = 0;
    for (int p = 0; p < passes; ++p) {
        for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < vectors;
             i += (long long)gridDim.x * blockDim.x) {
            const uint4 v = buf[i];
            x ^= v.x ^ v.y ^ v.z ^ v.w;
        }
    }
    if (x == 0x9e3779b9u) sink[0] = x;
}

// Head start for CUDA-event timing: one thread waits `ns` nanoseconds on the GPU clock, touching no
// memory. Launched before a start event, it keeps the GPU busy while the host enqueues the event
// and the kernel under test, so the event interval holds the kernel and not the host's launch
// latency (the GPU would otherwise sit idle after a stream sync).
extern "C" __global__ void spin_ns(long long ns) {
    unsigned long long start;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    unsigned long long now = start;
    while (now - start < (unsigned long long)ns) {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    }
}
