// The `artifact` family's EmbeddingBag consumers: l2attr's own re-implementation of the sum/mean
// kernel that the MICRO'24 artifact swapped into PyTorch (ATen's structure), written so that it
// issues the same memory operations in the same order with the same launch shape (grid 1024,
// block (32, 8)). What makes it slow is kept on purpose, because that is what was measured:
//   * 64-bit index arithmetic throughout and no __restrict__ (the compiler must assume that the
//     offset2bag store may alias the index array, so every index is re-read after it);
//   * per lookup, in order: read the index, compare it with padding_idx, a device assert that it
//     is < num_rows (compiled in: a branch to the assert handler), load the weight element, add it
//     (0 for padding), count it, and thread feature 0 stores offset2bag[j] = bag;
//   * after the loop: the mean division, the bag_size[bag] store, the output store.
// Two kernels from one template:
//   artifact_plain : one row load per lookup (the baseline and OptMT rungs, OptMT = this source
//                    under -maxrregcount 42; the L2P rungs use it after the pin).
//   artifact_rpf   : the artifact's register prefetch. Every second lookup (j - begin even) it
//                    loads the rows of lookups j and j + 1 into two registers and consumes them
//                    over this and the next iteration through a switch on (j - begin) % 2.
//
// The read past the bag's end. For a bag of odd length the last even step reads index j + 1,
// the first index of the next bag (that row is loaded and never used), exactly as the artifact
// does; for the last bag of a call it would read one element past the index array. The kernel is
// left unchanged; instead the host guarantees one readable, valid row id after the last index of
// every index buffer it passes (`reads_one_past_end` in l2attr/dlrm/declare.py; the launch wrapper
// refuses a buffer without it). So inside the array the access pattern is the artifact's, and the
// one element past it is allocated memory holding a valid row id. On the study's workload
// (pooling 150, even) the extra read never happens.
#include "common.cuh"

#ifdef NDEBUG
#error "the artifact consumer keeps its device asserts: do not compile it with NDEBUG"
#endif
#ifndef assert  // nvcc and NVRTC both predefine it (a branch to __assertfail); just in case:
extern "C" __device__ void __assertfail(const char*, const char*, unsigned, const char*, unsigned long);
#define assert(e) ((e) ? (void)0 : __assertfail(#e, __FILE__, __LINE__, __func__, 1))
#endif

template <bool RPF>
__device__ __forceinline__ void artifact_sum_mean(
    const index_t* indices, const index_t* offsets, const scalar_t* weight, scalar_t* out,
    index_t* offset2bag, long long num_indices, long long num_bags, long long dim,
    long long row_stride, long long feature_stride, int mean, index_t* bag_size,
    const scalar_t* per_sample_weights, long long psw_stride, index_t padding_idx,
    long long num_rows) {
    const long long chunks_per_bag = (dim + (long long)blockDim.x - 1) / (long long)blockDim.x;
    const long long num_chunks = num_bags * chunks_per_bag;
    // 32-bit products widened afterwards, as ATen computes the chunk start and stride.
    const long long first = blockIdx.x * blockDim.y + threadIdx.y;
    const long long step = gridDim.x * blockDim.y;
    for (long long chunk = first; chunk < num_chunks; chunk += step) {
        const long long feature = (chunk % chunks_per_bag) * blockDim.x + threadIdx.x;
        if (feature >= dim) continue;
        const long long bag = chunk / chunks_per_bag;
        const scalar_t* column = weight + feature * feature_stride;
        const long long begin = (bag == 0) ? 0 : offsets[bag];  // bag 0 starts at 0, as in ATen
        const long long end = (bag < num_bags - 1) ? offsets[bag + 1] : num_indices;
        assert(end >= begin);
        float acc = 0.0f;
        long long counted = 0;
        scalar_t staged0, staged1;  // RPF only: the two prefetched row values
        int parity = 0;
        for (long long j = begin; j < end; ++j) {
            int slot = 0;
            if (RPF) {
                slot = parity % 2;
                if (slot == 0) {
                    staged0 = column[indices[j] * row_stride];
                    staged1 = column[indices[j + 1] * row_stride];  // see the header comment
                }
            }
            const bool pad = (indices[j] == padding_idx);
            assert(indices[j] < num_rows);
            scalar_t value;
            if (RPF) {  // the artifact's RPF counts and stores before it picks the staged value
                ++parity;
                counted += pad ? 0 : 1;
                if (feature == 0) offset2bag[j] = bag;
                switch (slot) {
                    case 0: value = pad ? from_acc(0.0f) : staged0; break;
                    default: value = pad ? from_acc(0.0f) : staged1; break;
                }
            } else {
                value = column[indices[j] * row_stride];
                value = pad ? from_acc(0.0f) : value;
            }
            if (per_sample_weights) {
                acc += to_acc(per_sample_weights[j * psw_stride]) * to_acc(value);
            } else {
                acc += to_acc(value);
            }
            if (!RPF) {  // ... the plain kernel after the add
                counted += pad ? 0 : 1;
                if (feature == 0) offset2bag[j] = bag;
            }
        }
        if (mean && counted != 0) acc = acc / (float)counted;
        bag_size[bag] = counted;
        out[bag * dim + feature] = from_acc(acc);
    }
}

#define L2ATTR_ARTIFACT_PARAMS                                                                  \
    const index_t *indices, const index_t *offsets, const scalar_t *weight, scalar_t *out,      \
        index_t *offset2bag, long long num_indices, long long num_bags, long long dim,          \
        long long row_stride, long long feature_stride, int mean, index_t *bag_size,            \
        const scalar_t *per_sample_weights, long long psw_stride, index_t padding_idx,          \
        long long num_rows
#define L2ATTR_ARTIFACT_ARGS                                                                    \
    indices, offsets, weight, out, offset2bag, num_indices, num_bags, dim, row_stride,          \
        feature_stride, mean, bag_size, per_sample_weights, psw_stride, padding_idx, num_rows

extern "C" __global__ void artifact_plain(L2ATTR_ARTIFACT_PARAMS) {
    artifact_sum_mean<false>(L2ATTR_ARTIFACT_ARGS);
}

extern "C" __global__ void artifact_rpf(L2ATTR_ARTIFACT_PARAMS) {
    artifact_sum_mean<true>(L2ATTR_ARTIFACT_ARGS);
}
