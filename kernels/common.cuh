// l2attr kernels: element type plumbing shared by the consumer and pin kernels.
// Compiled by NVRTC (CuPy RawModule) on the GPU machine and by nvcc in the CPU tests, so no
// standard-library headers here. SCALAR_T picks the weight type: 0 = float, 1 = half, 2 = bfloat16.
#pragma once

#ifndef SCALAR_T
#define SCALAR_T 0
#endif

#if SCALAR_T == 0
typedef float scalar_t;
__device__ __forceinline__ float to_acc(scalar_t v) { return v; }
__device__ __forceinline__ scalar_t from_acc(float v) { return v; }
#elif SCALAR_T == 1
#include <cuda_fp16.h>
typedef __half scalar_t;
__device__ __forceinline__ float to_acc(scalar_t v) { return __half2float(v); }
__device__ __forceinline__ scalar_t from_acc(float v) { return __float2half(v); }
#elif SCALAR_T == 2
#include <cuda_bf16.h>
typedef __nv_bfloat16 scalar_t;
__device__ __forceinline__ float to_acc(scalar_t v) { return __bfloat162float(v); }
__device__ __forceinline__ scalar_t from_acc(float v) { return __float2bfloat16(v); }
#else
#error "SCALAR_T must be 0 (float), 1 (half) or 2 (bfloat16)"
#endif

typedef long long index_t;  // int64 indices and offsets, as torch.nn.functional.embedding_bag
