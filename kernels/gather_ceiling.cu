// The random-row gather ceiling: how fast can any kernel read rows at random from a table?
//
// This is not an EmbeddingBag consumer. It has no bags, no offsets, no reduction across warps and
// no output per bag: each warp reads the rows of `per_warp` consecutive lookups of an index
// stream, one row per warp load (a 16-byte vector per lane, so a 512-byte fp32 row of dim 128 is
// one load per lane), GATHER_UNROLL rows in flight, the next 32 indices read one chunk ahead, and
// folds everything into one value per lane that is stored only if impossible. Whatever a real
// consumer does on top costs time, so the DRAM bandwidth this kernel reaches on the same index
// stream and table bounds what a consumer can reach on it.
//
// Every slot loads: a slot past the chunk's end reads `zeros` (32 zero vectors, L1-resident), so
// no load is conditional (fast_consumer.cu's load_row says why that matters).
//
// GATHER_PIPE = 1 issues the next group of rows before adding the current one (two groups of
// registers, loads in flight across the add); 0 adds each group before issuing the next.

#ifndef GATHER_UNROLL
#define GATHER_UNROLL 4
#endif
#ifndef GATHER_PIPE
#define GATHER_PIPE 0
#endif
// GATHER_EPI = 1 adds an EmbeddingBag consumer's epilogue to the read: warps pair up as the two
// warps of a bag, the odd warp hands its sums over through shared memory, and the even one stores
// a 16-byte vector per lane to `out` (what the fast consumer does after its last row).
#ifndef GATHER_EPI
#define GATHER_EPI 0
#endif
// GATHER_DEP = 1 makes each warp read where its lookups start from an offsets array first (one
// dependent load before its first index load), as an EmbeddingBag consumer must: warps pair up
// as the two halves of bag warp / 2, which starts at offsets[warp / 2].
#ifndef GATHER_DEP
#define GATHER_DEP 0
#endif

#define GATHER_FULL_MASK 0xffffffffu

// Rows of `vectors` 16-byte vectors (vectors <= 32: lanes past the row's width idle).
extern "C" __global__ void gather_rows(const uint4* __restrict__ table, const long long* __restrict__ idx,
                                       long long n, int per_warp, int vectors, long long row_stride_vectors,
                                       unsigned int* __restrict__ sink, const long long* __restrict__ offsets,
                                       const uint4* __restrict__ zeros) {
    const int lane = threadIdx.x & 31;
    const long long warp = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
#if GATHER_DEP
    const long long lo = (warp >> 1) * 2 * per_warp < n ? offsets[warp >> 1] + (warp & 1) * per_warp : n;
#else
    const long long lo = warp * per_warp;
#endif
    const long long hi = lo + per_warp < n ? lo + per_warp : n;
    const bool has_col = lane < vectors;
    uint4 x = make_uint4(0, 0, 0, 0);
    long long next = (lo + lane < hi) ? idx[lo + lane] : -1;
    for (long long base = lo; base < hi; base += 32) {
        const long long ids = next;
        const int m = (int)(hi - base < 32 ? hi - base : 32);
        next = (base + 32 + lane < hi) ? idx[base + 32 + lane] : -1;
#if GATHER_PIPE
        uint4 cur[GATHER_UNROLL];
#pragma unroll
        for (int u = 0; u < GATHER_UNROLL; ++u) {
            const long long r = __shfl_sync(GATHER_FULL_MASK, ids, u & 31);
            cur[u] = *((has_col && u < m) ? table + r * row_stride_vectors + lane : zeros + lane);
        }
        for (int j0 = 0; j0 < m; j0 += GATHER_UNROLL) {
            uint4 nxt[GATHER_UNROLL];
#pragma unroll
            for (int u = 0; u < GATHER_UNROLL; ++u) {
                const int j = j0 + GATHER_UNROLL + u;
                const long long r = __shfl_sync(GATHER_FULL_MASK, ids, j & 31);
                nxt[u] = *((has_col && j < m) ? table + r * row_stride_vectors + lane : zeros + lane);
            }
#pragma unroll
            for (int u = 0; u < GATHER_UNROLL; ++u) {
                x.x ^= cur[u].x; x.y ^= cur[u].y; x.z ^= cur[u].z; x.w ^= cur[u].w;
                cur[u] = nxt[u];
            }
        }
#else
        for (int j0 = 0; j0 < m; j0 += GATHER_UNROLL) {
            uint4 v[GATHER_UNROLL];
#pragma unroll
            for (int u = 0; u < GATHER_UNROLL; ++u) {
                const int j = j0 + u;
                const long long r = __shfl_sync(GATHER_FULL_MASK, ids, j & 31);
                v[u] = *((has_col && j < m) ? table + r * row_stride_vectors + lane : zeros + lane);
            }
#pragma unroll
            for (int u = 0; u < GATHER_UNROLL; ++u) {
                x.x ^= v[u].x; x.y ^= v[u].y; x.z ^= v[u].z; x.w ^= v[u].w;
            }
        }
#endif
    }
#if GATHER_EPI
    __shared__ uint4 handed[8][32];       // a row of sums per warp of a 256-thread block
    const int w = threadIdx.x >> 5;
    if (w & 1) handed[w][lane] = x;
    __syncthreads();
    if (!(w & 1)) {
        const uint4 o = handed[w + 1][lane];
        x.x ^= o.x; x.y ^= o.y; x.z ^= o.z; x.w ^= o.w;
        if (lo < n) reinterpret_cast<uint4*>(sink)[(warp >> 1) * 32 + lane] = x;
    }
#else
    const unsigned int y = x.x ^ x.y ^ x.z ^ x.w;
    if (y == 0x9e3779b9u) sink[0] = y;  // practically never true; keeps the loads alive
#endif
}

// The sequential read with four independent 16-byte loads in flight per thread (the manifest's
// `read_stream` keeps one): if this reads faster, `read_stream` under-measures the HBM read
// bandwidth and every share of it reads high.
extern "C" __global__ void read_wide(const uint4* __restrict__ buf, long long vectors,
                                     unsigned int* __restrict__ sink) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int x = 0;
    for (; i + 3 * stride < vectors; i += 4 * stride) {
        const uint4 a = buf[i], b = buf[i + stride], c = buf[i + 2 * stride], d = buf[i + 3 * stride];
        x ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w ^ c.x ^ c.y ^ c.z ^ c.w ^ d.x ^ d.y ^ d.z ^ d.w;
    }
    for (; i < vectors; i += stride) {
        const uint4 a = buf[i];
        x ^= a.x ^ a.y ^ a.z ^ a.w;
    }
    if (x == 0x9e3779b9u) sink[0] = x;
}
