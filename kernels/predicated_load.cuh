// Loads that yield zeros when `use` is false, each one PTX statement: the zeros and the loaded
// value are the same registers. Written in C++ (`use ? *p : 0`), the two definitions meet in a
// phi that nvcc 13 resolves with register moves placed right after the load, and a move of a load's
// destination waits for the load: in the fast consumer that stall came before the next loads of a
// trip were issued, so a trip of 8 row loads cost about two DRAM latencies instead of one (seen
// in the SASS; kernels/README.md). Here the load is predicated and nothing moves its result.
//
// HINT (16-byte loads only): 0 ld.global.nc, 1 + L1::no_allocate, 2 + L2::256B prefetch hint.
#pragma once

#define L2ATTR_LDZ16(INSTR)                                                                       \
    asm("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %5, 0;\n\tmov.b32 %0, 0;\n\tmov.b32 %1, 0;\n\t"          \
        "mov.b32 %2, 0;\n\tmov.b32 %3, 0;\n\t@p " INSTR ".v4.u32 {%0, %1, %2, %3}, [%4];\n\t}"          \
        : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p), "r"((int)use))

template <int HINT = 0>
__device__ __forceinline__ uint4 ldz16(const void* p, bool use) {
    uint4 v;
    if constexpr (HINT == 1) {
        L2ATTR_LDZ16("ld.global.nc.L1::no_allocate");
    } else if constexpr (HINT == 2) {
        L2ATTR_LDZ16("ld.global.nc.L1::no_allocate.L2::256B");
    } else {
        L2ATTR_LDZ16("ld.global.nc");
    }
    return v;
}

__device__ __forceinline__ uint2 ldz8(const void* p, bool use) {
    uint2 v;
    asm("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %3, 0;\n\tmov.b32 %0, 0;\n\tmov.b32 %1, 0;\n\t"
        "@p ld.global.nc.v2.u32 {%0, %1}, [%2];\n\t}"
        : "=r"(v.x), "=r"(v.y) : "l"(p), "r"((int)use));
    return v;
}

__device__ __forceinline__ unsigned ldz4(const void* p, bool use) {
    unsigned v;
    asm("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %2, 0;\n\tmov.b32 %0, 0;\n\t@p ld.global.nc.u32 %0, [%1];\n\t}"
        : "=r"(v) : "l"(p), "r"((int)use));
    return v;
}
