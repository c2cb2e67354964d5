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

// In-graph flush, step 1 of 3 (l2attr/steps/surgery.py): nothing on the host can run inside a CUDA
// graph replay, so cudaCtxResetPersistingL2Cache cannot un-pin evict_last lines there. Instead the
// flush buffer itself is prefetched with evict_last priority, line by line: its lines compete with
// (and displace) any evict_last lines a pin left. Step 2 demotes them, step 3 is flush_l2 above.
extern "C" __global__ void flush_l2_unpin(const char* __restrict__ buf, long long lines) {
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < lines;
         i += (long long)gridDim.x * blockDim.x)
        asm volatile("prefetch.global.L2::evict_last [%0];" :: "l"(buf + i * 128));
}

// In-graph flush, step 2 of 3: give the flush buffer's resident lines normal priority again, so that
// the plain read of step 3 replaces them with clean, normal lines (applypriority needs 128-byte
// aligned addresses and a size of 128).
extern "C" __global__ void flush_l2_demote(const char* __restrict__ buf, long long lines) {
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < lines;
         i += (long long)gridDim.x * blockDim.x)
        asm volatile("applypriority.global.L2::evict_normal [%0], 128;" :: "l"(buf + i * 128));
}

// Dirty flush (the write-back-paying cold arm): after the clean flush, write a buffer of the L2's size,
// so the next kernel meets an L2 full of dirty lines of no use to it and pays their write-back for
// every line it brings in — at least as much write-back as the program's own state leaves it.
extern "C" __global__ void flush_l2_dirty(unsigned int* __restrict__ buf, long long words, unsigned int v) {
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < words;
         i += (long long)gridDim.x * blockDim.x)
        buf[i] = v ^ (unsigned int)i;
}
