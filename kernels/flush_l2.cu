// L2 flush: read-modify-write a buffer at least twice the L2 size, so that every line a previous
// kernel left in L2 (evict-last lines included, once their priority is reset by the host with
// cudaCtxResetPersistingL2Cache) is replaced by this buffer's lines.
extern "C" __global__ void flush_l2(unsigned int* __restrict__ buf, long long words) {
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < words;
         i += (long long)gridDim.x * blockDim.x)
        buf[i] = buf[i] * 1664525u + 1013904223u;
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
