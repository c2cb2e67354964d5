// Re-warm: read an address range back into L2 after a clean flush, one 4-byte load per 32-byte
// sector (the L2's fill unit), with ld.global.cg (cached in L2 only, normal eviction priority).
// `first` is the range's start rounded down to a sector; `sectors` covers up to its last byte.
// Loads, never stores: the lines it leaves are clean, so the consumer timed next pays no
// write-back of them. Used by the step's edge measurement (l2attr/steps/edges.py).
__device__ __forceinline__ unsigned int load_cg(const unsigned int* p) {
    unsigned int v;
    asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(v) : "l"(p));
    return v;
}

extern "C" __global__ void warm_l2(const unsigned int* __restrict__ first, long long sectors,
                                   unsigned int* __restrict__ sink) {
    unsigned int x = 0;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < sectors;
         i += (long long)gridDim.x * blockDim.x)
        x ^= load_cg(first + i * 8);
    if (x == 0x9e3779b9u) sink[0] = x;  // practically never true; keeps the loads alive
}
