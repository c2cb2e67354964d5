// The `tuned` family's EmbeddingBag consumers (sum / mean): l2attr's own kernels, not the
// artifact's. They keep the artifact's mapping and launch shape (one thread per (bag, feature);
// a block of (32, 8) threads covers 8 chunks of one bag x 32 features; blocks stride over all
// chunks) but drop what makes the ATen-structured kernel slow: __restrict__ pointers (no aliasing
// between the index reads and a store), no offset2bag / bag_size stores, no device assert. So
// they show what a modern consumer does to the value of pinning.
//
// One loop template, two accumulation strategies:
//   tuned_plain : one row load per lookup (the compiler unrolls and batches the loads).
//   tuned_rpf   : register prefetch. RPF_DEPTH row values of the *next* lookups are in flight
//                 in registers while the current ones are summed. Unlike the artifact's RPF it
//                 never reads past the end of its bag or of the index array: only whole groups
//                 inside the bag are prefetched, the partial last group is read plainly.
// Both sum in index order, so their fp32 results match each other bit for bit.
// Like torch.nn.functional.embedding_bag they take optional per-sample weights (sum mode, NULL
// for none) and a padding_idx (-1 for none) whose rows are skipped and not counted for the mean.
#include "common.cuh"

#ifndef RPF_DEPTH
#define RPF_DEPTH 2
#endif

// The shared prologue and tail: the grid-stride walk over (bag, feature chunk), the bag's bounds,
// the mean and the output store. `Accumulate` sums one bag's column into acc / counted.
template <class Accumulate>
__device__ __forceinline__ void tuned_bags(
    const scalar_t* __restrict__ weight, const index_t* __restrict__ indices,
    const index_t* __restrict__ offsets, scalar_t* __restrict__ out,
    const float* __restrict__ per_sample_weights, index_t num_indices, index_t num_bags,
    int dim, index_t row_stride, index_t padding_idx, int mean, Accumulate accumulate) {
    const index_t chunks_per_bag = (dim + blockDim.x - 1) / blockDim.x;
    const index_t num_chunks = num_bags * chunks_per_bag;
    for (index_t chunk = (index_t)blockIdx.x * blockDim.y + threadIdx.y; chunk < num_chunks;
         chunk += (index_t)gridDim.x * blockDim.y) {
        const int feature = (int)(chunk % chunks_per_bag) * blockDim.x + threadIdx.x;
        if (feature >= dim) continue;
        const index_t bag = chunk / chunks_per_bag;
        const index_t begin = offsets[bag];
        const index_t end = (bag + 1 < num_bags) ? offsets[bag + 1] : num_indices;
        float acc = 0.0f;
        index_t counted = 0;
        accumulate(weight + feature, indices, per_sample_weights, begin, end, row_stride,
                   padding_idx, acc, counted);
        if (mean && counted > 0) acc /= (float)counted;
        out[bag * dim + feature] = from_acc(acc);
    }
}

struct PlainSum {
    __device__ __forceinline__ void operator()(
        const scalar_t* __restrict__ w, const index_t* __restrict__ indices,
        const float* __restrict__ per_sample_weights, index_t begin, index_t end,
        index_t row_stride, index_t padding_idx, float& acc, index_t& counted) const {
        for (index_t i = begin; i < end; ++i) {
            const index_t row = indices[i];
            if (row == padding_idx) continue;
            float v = to_acc(w[row * row_stride]);
            if (per_sample_weights) v *= per_sample_weights[i];
            acc += v;
            ++counted;
        }
    }
};

struct RegisterPrefetch {
    // While group g is summed, the loads of group g + 1 are already in flight. Each staged value
    // carries its scale: 0 for a padding row (skipped, not counted), else its per-sample weight or
    // 1. Deciding this at load time keeps the live state small.
    __device__ __forceinline__ void operator()(
        const scalar_t* __restrict__ w, const index_t* __restrict__ indices,
        const float* __restrict__ per_sample_weights, index_t begin, index_t end,
        index_t row_stride, index_t padding_idx, float& acc, index_t& counted) const {
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
        PlainSum{}(w, indices, per_sample_weights, i, end, row_stride, padding_idx, acc, counted);
    }
};

#define L2ATTR_TUNED_PARAMS                                                                     \
    const scalar_t *__restrict__ weight, const index_t *__restrict__ indices,                   \
        const index_t *__restrict__ offsets, scalar_t *__restrict__ out,                        \
        const float *__restrict__ per_sample_weights, index_t num_indices, index_t num_bags,    \
        int dim, index_t row_stride, index_t padding_idx, int mean
#define L2ATTR_TUNED_ARGS                                                                       \
    weight, indices, offsets, out, per_sample_weights, num_indices, num_bags, dim, row_stride,  \
        padding_idx, mean

extern "C" __global__ void tuned_plain(L2ATTR_TUNED_PARAMS) {
    tuned_bags(L2ATTR_TUNED_ARGS, PlainSum{});
}

extern "C" __global__ void tuned_rpf(L2ATTR_TUNED_PARAMS) {
    tuned_bags(L2ATTR_TUNED_ARGS, RegisterPrefetch{});
}
