// forge: shared framing for every kernel family (see kernels/ABI.md, the binding contract).
//
// Compiled by NVRTC as the second part of one translation unit:
//   [generated #define prelude] + common.cuh + <family>.cu
// NVRTC has no include path, so this file includes nothing and uses only builtin types.
// Everything here is family-neutral: the mma_sync and the wgmma families both use it.

#ifndef FORGE_COMMON_CUH
#define FORGE_COMMON_CUH

#if !defined(FORGE_BM) || !defined(FORGE_BN) || !defined(FORGE_BK)
#error "forge: the prelude must define FORGE_BM, FORGE_BN and FORGE_BK"
#endif
// Defines a family may not need; defaults keep each family's prelude minimal.
#ifndef FORGE_CLUSTER
#define FORGE_CLUSTER 1
#endif
#ifndef FORGE_PERSISTENT
#define FORGE_PERSISTENT 0
#endif
#ifndef FORGE_SPLITK
#define FORGE_SPLITK 0
#endif
#ifndef FORGE_CHAINED_TAIL
#define FORGE_CHAINED_TAIL 0
#endif
#ifndef FORGE_RETILED_TAIL
#define FORGE_RETILED_TAIL 0
#endif
#ifndef FORGE_TAIL_BN
#define FORGE_TAIL_BN FORGE_BN
#endif
#ifndef FORGE_ROUND
#define FORGE_ROUND 0  // 0: truncate (raw f32 bits to the tensor cores), 1: round to nearest even
#endif
#if FORGE_ROUND != 0 && FORGE_ROUND != 1
#error "forge: FORGE_ROUND is 0 (truncate) or 1 (round to nearest even)"
#endif

// ---------------------------------------------------------------------------------------------
// ABI structs (layout shared with the Rust host: keep in sync with src/device/).
// ---------------------------------------------------------------------------------------------
struct ForgeParams {
    int M, N, K;   // C[M×N] = A[M×K] · B[N×K]ᵀ, all row-major f32
    int group;     // swizzle band height in tiles (>= 1)
    int raster_n;  // 1: bands of tile-rows walked along n; 0: m and n swapped
    int splits;    // split-K count (>= 1); only read when FORGE_SPLITK == 1
    int tail;      // FORGE_CHAINED_TAIL: K pieces per tail tile (>= 1); FORGE_RETILED_TAIL:
                   // tile-rows cut into narrow tiles (>= 0); else unused
    int a_rows;    // wgmma: rows of the A map's TMA box when it is shorter than BM (M < BM),
    int b_rows;    // of B's when shorter than BN; 0: the whole tile (ABI.md "Short boxes")
};                 // 36 bytes, passed by value

struct alignas(64) ForgeTensorMap {
    unsigned long long opaque[16];  // a CUtensorMap encoded by the host
};

// One work unit, decoded (ABI.md "Work decomposition").
struct ForgeWork {
    int tm, tn;               // cluster tile row / CTA tile column
    int split;                // split-K index s
    int kt_begin, kt_end;     // k-tile range [kt_begin, kt_end), kt_end >= kt_begin (may be empty)
    int chain;                // chained tail: tail tile r whose accumulators are handed on; else -1
    int piece, pieces;        // piece j of q along K (0 and 1 for a whole tile)
};

// ---------------------------------------------------------------------------------------------
// Small integer helpers (no <algorithm>, no CUDA math headers).
// ---------------------------------------------------------------------------------------------
__device__ __forceinline__ int forge_cdiv(int a, int b) { return (a + b - 1) / b; }
__device__ __forceinline__ int forge_imin(int a, int b) { return a < b ? a : b; }
__device__ __forceinline__ int forge_imax(int a, int b) { return a > b ? a : b; }

// ---------------------------------------------------------------------------------------------
// TF32 input rounding (ABI.md "Numerics"). Bits in, bits out; the tensor cores read the upper
// 19 bits (sign, exponent, 10 mantissa bits) and ignore the low 13.
// ---------------------------------------------------------------------------------------------
// Round-to-nearest-even of one f32 to TF32. sm_90+: cvt.rn.tf32.f32 (PTX ISA 7.8, one F2FP).
// Older targets (the mma_sync family also runs on sm_80/86/89, where only the ties-away
// cvt.rna exists): add 0xFFF plus the lowest kept bit, then clear the low 13 bits; the carry
// rounds ties to even and overflows finite values past the TF32 range into ±Inf, like cvt.rn.
// ±Inf is unchanged by it (0x7F800000 + 0xFFF masks back to 0x7F800000), but a NaN could carry
// into Inf or into the sign bit, so NaN becomes the canonical NaN 0x7FFFFFFF instead. Zeros
// (the zero-filled out-of-range K) stay zeros, subnormals round like normals.
__device__ __forceinline__ unsigned forge_tf32_rne(unsigned x) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    unsigned r;
    asm("cvt.rn.tf32.f32 %0, %1;" : "=r"(r) : "r"(x));
    return r;
#else
    const unsigned r = (x + 0xFFFu + ((x >> 13) & 1u)) & 0xFFFFE000u;
    return (x & 0x7FFFFFFFu) > 0x7F800000u ? 0x7FFFFFFFu : r;
#endif
}
// What the tensor core receives for one element of A or B under FORGE_ROUND.
__device__ __forceinline__ unsigned forge_tf32_in(unsigned x) {
#if FORGE_ROUND
    return forge_tf32_rne(x);
#else
    return x;  // truncation: the tensor core drops the low 13 bits itself
#endif
}

// ---------------------------------------------------------------------------------------------
// Work decomposition: host and kernel compute the same numbers.
// ---------------------------------------------------------------------------------------------
// Split count actually used: 1 unless the cubin was built for split-K.
__device__ __forceinline__ int forge_splits(const ForgeParams& p) {
    return FORGE_SPLITK ? forge_imax(p.splits, 1) : 1;
}
// A cluster covers FORGE_CLUSTER consecutive BM-row tiles.
__device__ __forceinline__ int forge_tiles_m(const ForgeParams& p) {
    return forge_cdiv(p.M, FORGE_BM * FORGE_CLUSTER);
}
__device__ __forceinline__ int forge_tiles_n(const ForgeParams& p) { return forge_cdiv(p.N, FORGE_BN); }
__device__ __forceinline__ int forge_tiles(const ForgeParams& p) {
    return forge_tiles_m(p) * forge_tiles_n(p);
}
__device__ __forceinline__ int forge_units(const ForgeParams& p) {
    return forge_tiles(p) * forge_splits(p);
}
__device__ __forceinline__ int forge_k_tiles(const ForgeParams& p) { return forge_cdiv(p.K, FORGE_BK); }

// k-tile range of split s: [s·per_split, min((s+1)·per_split, k_tiles)), clamped to be non-negative.
__device__ __forceinline__ void forge_k_range(const ForgeParams& p, int splits, int s,
                                              int& kt_begin, int& kt_end) {
    const int k_tiles = forge_k_tiles(p);
    const int per_split = forge_cdiv(k_tiles, splits);
    kt_end = forge_imin((s + 1) * per_split, k_tiles);
    kt_begin = forge_imin(s * per_split, kt_end);
}

// Tile index t → (tm, tn).
// raster_n == 1: bands of `group` tile-rows; inside a band m runs fastest, bands walked along n.
// raster_n == 0: the same with the roles of m and n swapped.
// group == 1 with raster_n == 1 is plain row-major order (tn fastest).
__device__ __forceinline__ void forge_swizzle(int t, int tiles_m, int tiles_n, int group,
                                              int raster_n, int& tm, int& tn) {
    group = forge_imax(group, 1);
    const int major = raster_n ? tiles_m : tiles_n;  // the dimension cut into bands
    const int minor = raster_n ? tiles_n : tiles_m;  // the dimension walked inside a band
    const int band = group * minor;
    const int first = (t / band) * group;
    const int size = forge_imin(major - first, group);
    const int r = t % band;
    const int a = first + r % size;
    const int b = r / size;
    tm = raster_n ? a : b;
    tn = raster_n ? b : a;
}

// Unit u → split s = u / tiles, tile t = u % tiles → (tm, tn), k-tile range.
__device__ __forceinline__ ForgeWork forge_work_unit(const ForgeParams& p, int u) {
    const int tiles_m = forge_tiles_m(p);
    const int tiles_n = forge_tiles_n(p);
    const int tiles = tiles_m * tiles_n;
    const int splits = forge_splits(p);
    ForgeWork w;
    w.split = u / tiles;
    forge_swizzle(u % tiles, tiles_m, tiles_n, p.group, p.raster_n, w.tm, w.tn);
    forge_k_range(p, splits, w.split, w.kt_begin, w.kt_end);
    w.chain = -1;
    w.piece = 0;
    w.pieces = 1;
    return w;
}

// ---------------------------------------------------------------------------------------------
// Retiled tail (FORGE_RETILED_TAIL, ABI.md "Retiled tail"; persistent, cluster 1, no split-K):
// the first tiles_m − R tile-rows are whole BM×BN tiles in swizzle order (units 0 … main − 1);
// the last R = p.tail tile-rows are cut into BM×FORGE_TAIL_BN tiles, row-major, as units
// main … main + R·cdiv(N, FORGE_TAIL_BN) − 1. The host picks R so that the narrow tiles fill
// the last wave (Schedule::retiled_tail_rows); R = 0 is the plain persistent kernel. Every
// element is still one K-ordered sum computed by one CTA.
// ---------------------------------------------------------------------------------------------
__device__ __forceinline__ int forge_rt_rows(const ForgeParams& p) {
    return forge_imin(forge_imax(p.tail, 0), forge_tiles_m(p));
}
__device__ __forceinline__ int forge_rt_tail_n(const ForgeParams& p) {
    return forge_cdiv(p.N, FORGE_TAIL_BN);
}
__device__ __forceinline__ int forge_rt_main(const ForgeParams& p) {
    return (forge_tiles_m(p) - forge_rt_rows(p)) * forge_tiles_n(p);
}
__device__ __forceinline__ int forge_rt_units(const ForgeParams& p) {
    return forge_rt_main(p) + forge_rt_rows(p) * forge_rt_tail_n(p);
}
__device__ __forceinline__ ForgeWork forge_rt_unit(const ForgeParams& p, int u) {
    ForgeWork w;
    const int main_rows = forge_tiles_m(p) - forge_rt_rows(p);
    const int main = forge_rt_main(p);
    if (u < main) {
        forge_swizzle(u, main_rows, forge_tiles_n(p), p.group, p.raster_n, w.tm, w.tn);
    } else {
        const int j = u - main, tail_n = forge_rt_tail_n(p);
        w.tm = main_rows + j / tail_n;  // tn counts FORGE_TAIL_BN-wide columns
        w.tn = j % tail_n;
    }
    w.split = 0;
    w.kt_begin = 0;
    w.kt_end = forge_k_tiles(p);
    w.chain = -1;
    w.piece = 0;
    w.pieces = 1;
    return w;
}

// First row / column of the CTA with cluster rank `rank` (0 when FORGE_CLUSTER == 1).
__device__ __forceinline__ int forge_row0(const ForgeWork& w, int rank) {
    return (w.tm * FORGE_CLUSTER + rank) * FORGE_BM;
}
__device__ __forceinline__ int forge_col0(const ForgeWork& w) { return w.tn * FORGE_BN; }

// Inward edge tiles (FORGE_EDGE_INWARD; wgmma kernels, on by default): a tile that overhangs
// the matrix (origin + tile > extent) is loaded and computed from extent − tile instead, so every
// CTA moves the same bytes and runs the same pipeline; its epilogue stores only the elements at
// or past the tile's own origin (the others belong to the neighbouring tile, which stores the
// same bits: every element is still one K-ordered sum). Extents smaller than a tile keep the
// overhang. Why (H200, session 13, reports/notes.md): at one wave of deep-K tiles the lighter
// edge CTAs made the time depend on the raster and the launch by up to 1.6x (the L2 served up
// to 57% more sectors); inward, every raster ran within 6%. FORGE_KERNEL_DEFINES=
// FORGE_EDGE_INWARD=0 restores the overhanging edge tiles (A/B only).
#ifndef FORGE_EDGE_INWARD
#define FORGE_EDGE_INWARD 1
#endif
__device__ __forceinline__ int forge_inward(int origin, int tile, int extent) {
    return (FORGE_EDGE_INWARD && origin + tile > extent && extent >= tile) ? extent - tile : origin;
}

// Whether unit w of a retiled-tail kernel is a narrow tile (it lies in the last p.tail
// tile-rows; its tn then counts FORGE_TAIL_BN-wide columns). Callers test FORGE_RETILED_TAIL
// first (`FORGE_RETILED_TAIL && forge_rt_narrow(p, w)`), so other kernels never evaluate it.
__device__ __forceinline__ bool forge_rt_narrow(const ForgeParams& p, const ForgeWork& w) {
    return w.tm >= forge_tiles_m(p) - forge_rt_rows(p);
}

// Unit loop: unit = blockIdx.x / CLUSTER; persistent kernels step by gridDim.x / CLUSTER.
__device__ __forceinline__ int forge_first_unit() { return (int)(blockIdx.x / FORGE_CLUSTER); }
__device__ __forceinline__ int forge_unit_stride() { return (int)(gridDim.x / FORGE_CLUSTER); }

// ---------------------------------------------------------------------------------------------
// Chained tail (FORGE_CHAINED_TAIL, ABI.md "Chained tail"): grid G CTAs, tiles = W·G + R.
// CTA c runs, wave by wave: whole tile w·G + c (w < W), then, for w < q, piece w of tail tile
// r = (c − w·R) mod G if r < R. Piece w covers k-tiles [w·kt/q, (w+1)·kt/q) of tile W·G + r and
// starts from the accumulators piece w−1 left in the workspace, so each element still adds its
// k8 products in increasing K order into one accumulator.
// ---------------------------------------------------------------------------------------------
#define FORGE_CHAIN_FLAG_WORDS 1024  // workspace: flags[1024] (u32), then R partial tiles

struct ForgeTail {
    int grid, waves, rem, pieces, k_tiles;
};

__device__ __forceinline__ ForgeTail forge_tail(const ForgeParams& p) {
    ForgeTail t;
    const int tiles = forge_tiles(p);
    t.grid = (int)gridDim.x;
    t.waves = tiles / t.grid;
    t.rem = tiles % t.grid;
    t.k_tiles = forge_k_tiles(p);
    int q = forge_imax(p.tail, 1);
    if (t.rem == 0 || t.waves == 0 || t.rem > FORGE_CHAIN_FLAG_WORDS) q = 1;
    t.pieces = forge_imin(q, forge_imin(forge_imax(t.waves, 1), forge_imax(t.k_tiles, 1)));
    return t;
}

// Slot 2w: whole tile of wave w; slot 2w+1: tail piece of wave w. False when the slot is empty.
__device__ __forceinline__ bool forge_tail_unit(const ForgeParams& p, const ForgeTail& t, int c,
                                                int slot, ForgeWork& w) {
    const int wave = slot >> 1;
    int tile;
    w.split = 0;
    if ((slot & 1) == 0) {
        if (wave >= t.waves) return false;
        tile = wave * t.grid + c;
        w.chain = -1;
        w.piece = 0;
        w.pieces = 1;
        w.kt_begin = 0;
        w.kt_end = t.k_tiles;
    } else {
        if (t.rem == 0 || wave >= t.pieces) return false;
        const int r = ((c - (wave * t.rem) % t.grid) % t.grid + t.grid) % t.grid;
        if (r >= t.rem) return false;
        tile = t.waves * t.grid + r;
        w.chain = t.pieces > 1 ? r : -1;
        w.piece = wave;
        w.pieces = t.pieces;
        w.kt_begin = wave * t.k_tiles / t.pieces;
        w.kt_end = (wave + 1) * t.k_tiles / t.pieces;
    }
    forge_swizzle(tile, forge_tiles_m(p), forge_tiles_n(p), p.group, p.raster_n, w.tm, w.tn);
    return true;
}

// Calls f(work) for every unit this CTA owns, in order (producer and consumers agree).
template <class F>
__device__ __forceinline__ void forge_for_each_unit(const ForgeParams& p, F&& f) {
#if FORGE_CHAINED_TAIL
    const ForgeTail t = forge_tail(p);
    const int slots = 2 * forge_imax(t.waves, t.pieces);
    for (int slot = 0; slot < slots; ++slot) {
        ForgeWork w;
        if (forge_tail_unit(p, t, (int)blockIdx.x, slot, w)) f(w);
    }
#elif FORGE_RETILED_TAIL
    const int units = forge_rt_units(p);
    for (int u = forge_first_unit(); u < units; u += forge_unit_stride()) f(forge_rt_unit(p, u));
#else
    const int units = forge_units(p);
    const int stride = FORGE_PERSISTENT ? forge_unit_stride() : units;
    for (int u = forge_first_unit(); u < units; u += stride) f(forge_work_unit(p, u));
#endif
}

// Where a unit's M×N result goes: C when not split, else its split's slice of the workspace
// (workspace[s·M·N + m·N + n]).
__device__ __forceinline__ float* forge_out_base(float* C, float* workspace, const ForgeParams& p,
                                                 int splits, int split) {
    return splits > 1 ? workspace + (long long)split * p.M * p.N : C;
}

// ---------------------------------------------------------------------------------------------
// Programmatic dependent launch (ABI.md "Launch order"). The host may launch a GEMM, split-K
// reduction or preparation pass with programmatic stream serialization (where a profile entry
// measured it faster), so the next kernel of the stream may be scheduled while this one runs
// and this one while the previous runs: each kernel signals the next at once
// (forge_pdl_allow_next) and waits for the previous grid to have completed, its memory visible,
// before its first global access (forge_pdl_wait). What overlaps is launch latency and set-up
// (barrier init, tensor-map prefetch), never a memory access. Without the launch attribute both
// are no-ops.
// ---------------------------------------------------------------------------------------------
__device__ __forceinline__ void forge_pdl_allow_next() {
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
__device__ __forceinline__ void forge_pdl_wait() {
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// ---------------------------------------------------------------------------------------------
// Split-K reduction: C[i] = ws[0·MN + i] + ws[1·MN + i] + ... added in split order.
// Any 1-D launch works (grid-stride); 4-wide when MN % 4 == 0 (ws, C from cuMemAlloc).
// ---------------------------------------------------------------------------------------------
extern "C" __global__ void forge_splitk_reduce(const float* __restrict__ ws, float* __restrict__ C,
                                               int MN, int splits) {
    forge_pdl_allow_next();
    forge_pdl_wait();
    const long long stride = (long long)gridDim.x * blockDim.x;
    const long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if ((MN & 3) == 0) {
        const long long n4 = MN >> 2;
        const float4* w4 = reinterpret_cast<const float4*>(ws);
        float4* c4 = reinterpret_cast<float4*>(C);
        for (long long i = first; i < n4; i += stride) {
            float4 acc = w4[i];
            for (int s = 1; s < splits; ++s) {
                const float4 v = w4[(long long)s * n4 + i];
                acc.x += v.x; acc.y += v.y; acc.z += v.z; acc.w += v.w;
            }
            c4[i] = acc;
        }
    } else {
        for (long long i = first; i < MN; i += stride) {
            float acc = ws[i];
            for (int s = 1; s < splits; ++s) acc += ws[(long long)s * MN + i];
            C[i] = acc;
        }
    }
}

#endif  // FORGE_COMMON_CUH
