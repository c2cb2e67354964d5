// Pin kernels: make a table's hot rows resident in L2 with eviction priority "last".
//
// `prefetch.global.L2::evict_last` (PTX ISA 7.4+, sm_80+) fetches the line holding an address
// into L2 and marks it evict-last; it returns nothing and computes nothing, the only effect is
// L2 replacement state for later kernels. The hint is advisory: later demand traffic can still
// evict the lines.
//
//   pin_l2_lines    : one prefetch per 128-byte L2 line of every hot row (the default).
//   pin_l2_elements : one prefetch per element, as the MICRO'24 artifact did (block (2, 128):
//                     x over hot rows, y over features), i.e. 32 prefetches per fp32 line. The
//                     `artifact` family's pin; the `tuned` family can use either.
#include "common.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#error "prefetch.global.L2::evict_last needs sm_80 or newer"
#endif

__device__ __forceinline__ void prefetch_l2_evict_last(const void* p) {
    asm volatile("prefetch.global.L2::evict_last [%0];" ::"l"(p) : "memory");
}

extern "C" __global__ void pin_l2_lines(const scalar_t* __restrict__ weight,
                                        const index_t* __restrict__ hot, index_t num_hot,
                                        int dim, index_t row_stride) {
    const unsigned long long row_bytes = (unsigned long long)dim * sizeof(scalar_t);
    // A row that does not start on a line boundary can touch one line more than row_bytes/128.
    const index_t lines_per_row = (index_t)((row_bytes + 127) / 128) + 1;
    const index_t total = num_hot * lines_per_row;
    for (index_t t = (index_t)blockIdx.x * blockDim.x + threadIdx.x; t < total;
         t += (index_t)gridDim.x * blockDim.x) {
        const index_t h = t / lines_per_row;
        const index_t k = t % lines_per_row;
        const unsigned long long start = (unsigned long long)(weight + hot[h] * row_stride);
        const unsigned long long first_line = start & ~127ull;
        const unsigned long long line = first_line + 128ull * (unsigned long long)k;
        if (line < start + row_bytes) prefetch_l2_evict_last((const void*)line);
    }
}

// The artifact's pin shape: block (2, 128), grid 1024; thread (x, y) walks the hot rows x,
// x + 2048, ... with 32-bit counters and prefetches feature y of each (no __restrict__, as the
// artifact). Where the artifact stops at feature blockDim.y - 1 (its own TODO: the kernel is
// hard-wired to 128 features), this one carries on with the next feature chunk, so a row wider
// than 128 elements is pinned whole; at 128 features it is the artifact's single pass.
extern "C" __global__ void pin_l2_elements(const scalar_t* weight, const index_t* hot,
                                           index_t num_hot, int dim, index_t row_stride) {
    const int first = blockIdx.x * blockDim.x + threadIdx.x;
    const int step = gridDim.x * blockDim.x;
    for (int f = threadIdx.y; f < dim; f += blockDim.y) {
        for (int h = first; h < num_hot; h += step)
            prefetch_l2_evict_last(weight + f + hot[h] * row_stride);
    }
}
