// The `fast` family's EmbeddingBag consumer (sum / mean): l2attr's own kernel designed for the
// memory system, to ask whether pinning still pays when the consumer runs near the HBM limit.
//
// Mapping. A block is (32 lanes, W warps, B bags): W warps share one bag, B bags per block. A bag
// (or, for dims wider than 32 vectors, one column slice of it) is one work item. Each lane owns
// VEC consecutive features of a row and loads them as one vector (16 bytes when the dim allows:
// a 512-byte fp32 row is one float4 per lane of a warp). When a row has fewer than 32 vectors the
// warp splits into G = 32 / L lane groups of L lanes that load G different rows at once.
//
// Memory-level parallelism. Warp w of a bag walks its own contiguous share of the bag's indices
// in chunks of 32: one coalesced load fetches 32 indices (and weights) into the lanes, the next
// chunk's load is issued before the current chunk's rows, and the rows are loaded FAST_UNROLL
// per lane group before any is added, so every lane keeps FAST_UNROLL independent row loads in
// flight.
//
// Summation order (deterministic, not torch's): each lane group sums its rows in index order;
// the G groups of a warp are combined by a butterfly (xor shuffle), then the W warps' partial
// sums are added in warp order through shared memory. torch sums a bag's rows one by one in
// index order, so fp32 results agree to rounding (the check's 1e-5 relative), not bit for bit.
//
// Like torch.nn.functional.embedding_bag: optional per-sample weights (fp32, NULL for none; sum
// mode), padding_idx (-1 for none: its rows are skipped and not counted for the mean), an empty
// bag gives zeros, mean divides by the bag's non-padding count. `zeros` is a row of at least dim
// zeros, aligned as the weight rows: a slot with nothing to add loads it (see load_row).
#include "common.cuh"

#ifndef FAST_UNROLL
#define FAST_UNROLL 8
#endif

// How a 16-byte row vector is loaded: 0 = ld.global.nc (allocating in L1), 1 = with
// L1::no_allocate (a gathered row is not reused by this SM: keep L1 for the indices), 2 = the same
// with an L2::256B prefetch hint (a 512-byte row is two 256-byte halves). Narrower vectors always
// use the plain load.
#ifndef FAST_LOAD
#define FAST_LOAD 0
#endif

#define FAST_FULL_MASK 0xffffffffu

template <int VEC>
struct alignas(VEC * sizeof(scalar_t)) Pack {
    scalar_t v[VEC];
};

// One lane's vector of a row. Every slot of a trip loads, unconditionally: a slot with nothing
// to add (padding, past the chunk's end) reads the caller's zero row instead, which stays in L1.
// A conditional load (`use ? *p : 0`) makes two definitions of the value that nvcc 13 merges with
// register moves placed right after the load, and a move of a load's result waits for the load:
// in SASS those waits came before the trip's later loads were issued, so a trip of 8 rows cost
// nearly two DRAM latencies (examples/logs/ceiling/README.md).
template <int VEC>
__device__ __forceinline__ Pack<VEC> load_row(const scalar_t* p) {
#if FAST_LOAD > 0
    if constexpr (VEC * sizeof(scalar_t) == 16) {
        unsigned a, b, c, d;
#if FAST_LOAD == 1
        asm("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
            : "=r"(a), "=r"(b), "=r"(c), "=r"(d) : "l"(p));
#else
        asm("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
            : "=r"(a), "=r"(b), "=r"(c), "=r"(d) : "l"(p));
#endif
        Pack<VEC> out;
        unsigned* w = reinterpret_cast<unsigned*>(&out);
        w[0] = a; w[1] = b; w[2] = c; w[3] = d;
        return out;
    }
#endif
    return *reinterpret_cast<const Pack<VEC>*>(p);
}

// One lane's index (and, WEIGHTED, per-sample weight) of the chunk of 32 lookups that starts at
// `at`; lanes past `hi` get padding (and weight 1), which loads nothing.
template <bool WEIGHTED>
__device__ __forceinline__ void read_chunk(const index_t* __restrict__ indices,
                                           const float* __restrict__ per_sample_weights, int at, int hi,
                                           int lane, int padding, int& row, float& scale) {
    const bool in = at + lane < hi;
    row = in ? (int)indices[at + lane] : padding;
    scale = (WEIGHTED && in) ? per_sample_weights[at + lane] : 1.0f;
}

// What a lane needs to issue its share of a group of rows: lane group `group` of G loads slot
// u * G + group of each group, FAST_UNROLL slots in all.
template <int VEC, bool WEIGHTED>
struct RowSlots {
    const scalar_t* wcol;
    const scalar_t* zcol;   // the zero row, at this lane's column
    unsigned row_bytes;     // row stride in bytes (< 2^32: the launcher refuses more)
    int padding, G, group;
    bool has_col;

    // Issue the rows of chunk positions j_first + u * G + group (those below m, not padding);
    // a skipped slot loads zeros (and, weighted, gets scale 0), so adding it changes nothing and
    // the adds need no branch that would tie the loads to each other. Unweighted, no scale is kept
    // at all: a register per slot less is what lets 8 rows per lane stay in flight in 64 registers.
    __device__ __forceinline__ void issue(Pack<VEC> (&val)[FAST_UNROLL], float (&scale)[FAST_UNROLL],
                                          int ids, float sc, int j_first, int m) const {
#pragma unroll
        for (int u = 0; u < FAST_UNROLL; ++u) {
            const int j = j_first + u * G + group;
            const int r = __shfl_sync(FAST_FULL_MASK, ids, j & 31);
            const bool use = has_col && j < m && r != padding;
            if constexpr (WEIGHTED) {
                const float s = __shfl_sync(FAST_FULL_MASK, sc, j & 31);
                scale[u] = use ? s : 0.0f;
            }
            // A skipped slot's address (padding, a lookup past the chunk) is formed, never read.
            // One 32 x 32 -> 64-bit multiply per address: the fewest registers per row in flight.
            const char* row = reinterpret_cast<const char*>(wcol) + (unsigned long long)(unsigned)r * row_bytes;
            val[u] = load_row<VEC>(use ? reinterpret_cast<const scalar_t*>(row) : zcol);
        }
    }
};

template <int VEC, bool WEIGHTED>
__device__ __forceinline__ void add_rows(float (&acc)[VEC], const Pack<VEC> (&val)[FAST_UNROLL],
                                         const float (&scale)[FAST_UNROLL]) {
#pragma unroll
    for (int u = 0; u < FAST_UNROLL; ++u) {
#pragma unroll
        for (int k = 0; k < VEC; ++k) {
            if constexpr (WEIGHTED) acc[k] += to_acc(val[u].v[k]) * scale[u];
            else acc[k] += to_acc(val[u].v[k]);
        }
    }
}

// Positions (lookups, bags, items) and row ids are 32-bit inside the kernel: registers are what
// limits how many warps keep loads in flight (the tuning table shows occupancy deciding), and the
// launcher refuses a call with 2^31 lookups, bags or rows or more. Only addresses are 64-bit.
template <int VEC, bool WEIGHTED>
__device__ __forceinline__ void fast_bags(
    const scalar_t* __restrict__ weight, const index_t* __restrict__ indices,
    const index_t* __restrict__ offsets, scalar_t* __restrict__ out,
    const float* __restrict__ per_sample_weights, index_t num_indices_, index_t num_bags_,
    int dim, index_t row_stride, index_t padding_idx_, int mean, int lanes_per_row,
    int col_slices, const scalar_t* __restrict__ zeros) {
    extern __shared__ float partial[];  // [B][W-1][L * VEC] sums, then [B][W-1] counts
    const int num_indices = (int)num_indices_, num_bags = (int)num_bags_;
    const int padding = (int)padding_idx_;   // -1: none (row ids are >= 0)
    const int lane = threadIdx.x;
    const int warp = threadIdx.y;
    const int warps = blockDim.y;
    const int L = lanes_per_row;
    const int G = 32 / L;                 // lane groups per warp: rows loaded side by side
    const int group = lane / L;
    const int col = (lane % L) * VEC;     // first feature of my vector inside the slice
    const int slice_width = L * VEC;
    const int items = num_bags * col_slices;
    float* my_partial = partial + (threadIdx.z * (warps - 1)) * slice_width;
    int* counts = reinterpret_cast<int*>(partial + blockDim.z * (warps - 1) * slice_width);

    // Every thread of a block runs the same number of iterations (the shared-memory hand-off
    // needs __syncthreads); items past the end do no loads and store nothing.
    for (int first = blockIdx.x * blockDim.z; first < items; first += gridDim.x * blockDim.z) {
        const int item = first + threadIdx.z;
        const bool live = item < items;
        const int bag = live ? item / col_slices : 0;
        const int feature = (live ? item % col_slices : 0) * slice_width + col;
        const bool has_col = live && feature < dim;
        int begin = 0, end = 0;
        if (live) {
            begin = (int)offsets[bag];
            end = (bag + 1 < num_bags) ? (int)offsets[bag + 1] : num_indices;
        }
        // This warp's contiguous share of the bag's lookups.
        const int n = end - begin;
        const int lo = begin + (int)(((long long)n * warp) / warps);
        const int hi = begin + (int)(((long long)n * (warp + 1)) / warps);
        int first_row;
        float first_scale;
        read_chunk<WEIGHTED>(indices, per_sample_weights, lo, hi, lane, padding, first_row, first_scale);

        float acc[VEC];
#pragma unroll
        for (int k = 0; k < VEC; ++k) acc[k] = 0.0f;
        int counted = 0;
        const scalar_t* wcol = weight + feature;
        const RowSlots<VEC, WEIGHTED> slots{wcol, zeros + (has_col ? feature : 0),
                                            (unsigned)(row_stride * (index_t)sizeof(scalar_t)), padding, G,
                                            group, has_col};

        int next_row = first_row;
        float next_scale = first_scale;
        for (int base = lo; base < hi; base += 32) {
            const int row_id = next_row;
            const float scale_id = next_scale;
            const int m = min(hi - base, 32);
            // Read the next chunk's indices ahead, before this chunk's rows.
            read_chunk<WEIGHTED>(indices, per_sample_weights, base + 32, hi, lane, padding, next_row, next_scale);
            counted += __popc(__ballot_sync(FAST_FULL_MASK, lane < m && row_id != padding));

            for (int j0 = 0; j0 < m; j0 += G * FAST_UNROLL) {
                Pack<VEC> val[FAST_UNROLL];
                float scale[FAST_UNROLL];
                slots.issue(val, scale, row_id, scale_id, j0, m);
                add_rows<VEC, WEIGHTED>(acc, val, scale);
            }
        }
        // Combine the lane groups of this warp (groups hold different rows of the same columns).
        for (int off = L; off < 32; off <<= 1) {
#pragma unroll
            for (int k = 0; k < VEC; ++k) acc[k] += __shfl_xor_sync(FAST_FULL_MASK, acc[k], off);
        }
        // Combine the warps of this bag, in warp order.
        if (warps > 1) {
            if (warp > 0 && group == 0) {
#pragma unroll
                for (int k = 0; k < VEC; ++k) my_partial[(warp - 1) * slice_width + col + k] = acc[k];
                if (lane == 0) counts[threadIdx.z * (warps - 1) + warp - 1] = counted;
            }
            __syncthreads();
            if (warp == 0 && group == 0) {
                for (int w = 1; w < warps; ++w) {
#pragma unroll
                    for (int k = 0; k < VEC; ++k) acc[k] += my_partial[(w - 1) * slice_width + col + k];
                    counted += counts[threadIdx.z * (warps - 1) + w - 1];
                }
            }
            __syncthreads();
        }
        if (warp == 0 && group == 0 && has_col) {
            Pack<VEC> res;
#pragma unroll
            for (int k = 0; k < VEC; ++k)
                res.v[k] = from_acc((mean && counted > 0) ? acc[k] / (float)counted : acc[k]);
            *reinterpret_cast<Pack<VEC>*>(out + (index_t)bag * dim + feature) = res;
        }
    }
}

#define L2ATTR_FAST_PARAMS                                                                      \
    const scalar_t *__restrict__ weight, const index_t *__restrict__ indices,                   \
        const index_t *__restrict__ offsets, scalar_t *__restrict__ out,                        \
        const float *__restrict__ per_sample_weights, index_t num_indices, index_t num_bags,    \
        int dim, index_t row_stride, index_t padding_idx, int mean, int lanes_per_row,          \
        int col_slices, const scalar_t *__restrict__ zeros
#define L2ATTR_FAST_ARGS                                                                        \
    weight, indices, offsets, out, per_sample_weights, num_indices, num_bags, dim, row_stride,  \
        padding_idx, mean, lanes_per_row, col_slices, zeros

// One entry point per vector width and weighting; the launcher picks the widest vector that
// divides the dim, the row stride and the pointers' alignment (at most 16 bytes per lane load),
// and the `_w` entry when per-sample weights are given (the plain one ignores the pointer).
#define L2ATTR_FAST_ENTRY(V)                                                                      \
    extern "C" __global__ void fast_v##V(L2ATTR_FAST_PARAMS) { fast_bags<V, false>(L2ATTR_FAST_ARGS); } \
    extern "C" __global__ void fast_v##V##_w(L2ATTR_FAST_PARAMS) { fast_bags<V, true>(L2ATTR_FAST_ARGS); }
L2ATTR_FAST_ENTRY(1)
L2ATTR_FAST_ENTRY(2)
L2ATTR_FAST_ENTRY(4)
#if SCALAR_T != 0
L2ATTR_FAST_ENTRY(8)
#endif
