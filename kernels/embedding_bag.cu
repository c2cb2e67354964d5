// EmbeddingBag consumers (sum / mean), written for l2attr.
//
// Mapping (the ATen-style one the MICRO'24 artifact used): one thread per (bag, feature).
// A block of (32, 8) threads covers 8 "chunks"; a chunk is one bag x 32 consecutive features.
// Blocks stride over all chunks (grid 1024 by default), so every grid size is correct.
//
//   embedding_bag_plain : one row load per lookup, accumulated in float.
//   embedding_bag_rpf   : register prefetch. RPF_DEPTH row values of the *next* lookups are in
//                         flight in registers while the current ones are summed. Unlike the
//                         artifact's version it never reads past the end of its bag or of the
//                         index array: only whole groups inside the bag are prefetched.
// Both sum in index order, so their fp32 results match each other bit for bit.
// Like torch.nn.functional.embedding_bag they take optional per-sample weights (sum mode, NULL
// for none) and a padding_idx (-1 for none) whose rows are skipped and not counted for the mean.
#include "common.cuh"

#ifndef RPF_DEPTH
#define RPF_DEPTH 2
#endif

__device__ __forceinline__ void bag_bounds(const index_t* __restrict__ offsets, index_t bag,
                                           index_t num_bags, index_t num_indices,
                                           index_t& begin, index_t& end) {
    begin = offsets[bag];
    end = (bag + 1 < num_bags) ? offsets[bag + 1] : num_indices;
}

extern "C" __global__ void embedding_bag_plain(
    const scalar_t* __restrict__ weight, const index_t* __restrict__ indices,
    const index_t* __restrict__ offsets, scalar_t* __restrict__ out,
    const float* __restrict__ per_sample_weights, index_t num_indices, index_t num_bags,
    int dim, index_t row_stride, index_t padding_idx, int mean) {
    const index_t chunks_per_bag = (dim + blockDim.x - 1) / blockDim.x;
    const index_t num_chunks = num_bags * chunks_per_bag;
    for (index_t chunk = (index_t)blockIdx.x * blockDim.y + threadIdx.y; chunk < num_chunks;
         chunk += (index_t)gridDim.x * blockDim.y) {
        const int feature = (int)(chunk % chunks_per_bag) * blockDim.x + threadIdx.x;
        if (feature >= dim) continue;
        const index_t bag = chunk / chunks_per_bag;
        index_t begin, end;
        bag_bounds(offsets, bag, num_bags, num_indices, begin, end);
        const scalar_t* w = weight + feature;
        float acc = 0.0f;
        index_t counted = 0;
        for (index_t i = begin; i < end; ++i) {
            const index_t row = indices[i];
            if (row == padding_idx) continue;
            float v = to_acc(w[row * row_stride]);
            if (per_sample_weights) v *= per_sample_weights[i];
            acc += v;
            ++counted;
        }
        if (mean && counted > 0) acc /= (float)counted;
        out[bag * dim + feature] = from_acc(acc);
    }
}

extern "C" __global__ void embedding_bag_rpf(
    const scalar_t* __restrict__ weight, const index_t* __restrict__ indices,
    const index_t* __restrict__ offsets, scalar_t* __restrict__ out,
    const float* __restrict__ per_sample_weights, index_t num_indices, index_t num_bags,
    int dim, index_t row_stride, index_t padding_idx, int mean) {
    const index_t chunks_per_bag = (dim + blockDim.x - 1) / blockDim.x;
    const index_t num_chunks = num_bags * chunks_per_bag;
    for (index_t chunk = (index_t)blockIdx.x * blockDim.y + threadIdx.y; chunk < num_chunks;
         chunk += (index_t)gridDim.x * blockDim.y) {
        const int feature = (int)(chunk % chunks_per_bag) * blockDim.x + threadIdx.x;
        if (feature >= dim) continue;
        const index_t bag = chunk / chunks_per_bag;
        index_t begin, end;
        bag_bounds(offsets, bag, num_bags, num_indices, begin, end);
        const scalar_t* w = weight + feature;

        // Register prefetch in groups of RPF_DEPTH: while group g is summed, the loads of group
        // g + 1 are already in flight. Only whole groups are prefetched, so no load ever crosses
        // the bag's end; the last partial group is read plainly. Summation stays in index order.
        // Each staged value carries its scale: 0 for a padding row (skipped, not counted), else
        // its per-sample weight or 1. Deciding this at load time keeps the live state small.
        float acc = 0.0f;
        index_t counted = 0;
        index_t i = begin;
        if (end - begin >= RPF_DEPTH) {
            scalar_t val[RPF_DEPTH];
            float scale[RPF_DEPTH];
#pragma unroll
            for (int d = 0; d < RPF_DEPTH; ++d) {
                const index_t r = indices[i + d];
                val[d] = w[r * row_stride];
                scale[d] = (r == padding_idx) ? 0.0f : (per_sample_weights ? per_sample_weights[i + d] : 1.0f);
                counted += (r != padding_idx);
            }
#pragma unroll 1
            for (; i + 2 * RPF_DEPTH <= end; i += RPF_DEPTH) {
                scalar_t next_val[RPF_DEPTH];
                float next_scale[RPF_DEPTH];
#pragma unroll
                for (int d = 0; d < RPF_DEPTH; ++d) {
                    const index_t j = i + RPF_DEPTH + d;
                    const index_t r = indices[j];
                    next_val[d] = w[r * row_stride];
                    next_scale[d] = (r == padding_idx) ? 0.0f : (per_sample_weights ? per_sample_weights[j] : 1.0f);
                    counted += (r != padding_idx);
                }
#pragma unroll
                for (int d = 0; d < RPF_DEPTH; ++d) {
                    if (scale[d] != 0.0f) acc += to_acc(val[d]) * scale[d];
                    val[d] = next_val[d];
                    scale[d] = next_scale[d];
                }
            }
#pragma unroll
            for (int d = 0; d < RPF_DEPTH; ++d)
                if (scale[d] != 0.0f) acc += to_acc(val[d]) * scale[d];
            i += RPF_DEPTH;
        }
        for (; i < end; ++i) {  // the partial last group
            const index_t r = indices[i];
            if (r == padding_idx) continue;
            float v = to_acc(w[r * row_stride]);
            if (per_sample_weights) v *= per_sample_weights[i];
            acc += v;
            ++counted;
        }
        if (mean && counted > 0) acc /= (float)counted;
        out[bag * dim + feature] = from_acc(acc);
    }
}
