// forge: the portable TF32 family (sm_80+, also runs on sm_90): mma.sync.m16n8k8 tensor-core
// math fed by a FORGE_STAGES-deep cp.async pipeline. See kernels/ABI.md for the contract.
//
// Assembled after the prelude and common.cuh; no includes.
//
// Numerics (ABI.md "Numerics"): FORGE_ROUND 0 (contract tf32-trunc-k8-inorder) hands the raw
// f32 bits to the .tf32 operand registers (the tensor cores ignore the low 13 mantissa bits);
// FORGE_ROUND 1 (tf32-rne-k8-inorder) rounds every fragment register to the nearest TF32, ties
// to even, as it is loaded from shared memory (forge_tf32_rne in common.cuh: cvt.rn.tf32.f32 on
// sm_90+, an integer sequence with the same results before). Never cvt.rna (ties away): it
// would differ from the wgmma family. Every accumulator starts at +0 and takes its k8 steps in
// strictly increasing K order. Out-of-range K is zero-filled in shared memory (and rounds to
// 0), so every k8 step covers the same K indices whatever BK is. The result is therefore the
// same bits for every tile, stage count, warp layout, persistence and swizzle choice, and the
// same as the wgmma family's for the same FORGE_ROUND.
//
// Valid configurations (see kernels/harness/ for the checks): BM×BN ∈ {64×64, 64×128, 128×64,
// 128×128, 128×256, 256×128}, BK ∈ {16, 32}, WARPS ∈ {4, 8}, STAGES ≥ 2, except 128×256 and
// 256×128 with 4 warps (256 accumulators per thread: cannot fit in 255 registers).

#ifndef FORGE_WARPS
#error "forge mma_sync: the prelude must define FORGE_WARPS"
#endif
#ifndef FORGE_STAGES
#error "forge mma_sync: the prelude must define FORGE_STAGES"
#endif
#ifndef FORGE_VEC4
#define FORGE_VEC4 0
#endif

namespace forge_mma {

constexpr int BM = FORGE_BM, BN = FORGE_BN, BK = FORGE_BK;
constexpr int STAGES = FORGE_STAGES;
constexpr int WARPS = FORGE_WARPS;
constexpr int THREADS = 32 * WARPS;

// Shared memory: per stage an A tile [BM][BK+4] then a B tile [BN][BK+4] (K-major rows).
// The +4 float padding makes the fragment loads below conflict-free and keeps rows 16-byte
// aligned for cp.async.cg. All stages' A tiles come first, then all B tiles:
//   bytes = STAGES·(BM+BN)·(BK+4)·4   (ABI.md "Host-side sizes").
constexpr int LDS = BK + 4;
constexpr int A_STAGE = BM * LDS;  // floats
constexpr int B_STAGE = BN * LDS;

// Warp layout: WARPS_M × WARPS_N warps, each owning a WM×WN sub-tile of the CTA tile.
//   4 warps: 2×2.  8 warps: 4×2 when BM >= 2·BN (128×64, 256×128), else 2×4.
// Per-thread accumulators = WM·WN/32 (64×64 warp tile → 128).
#ifdef FORGE_WARPS_M  // optional override for experiments
constexpr int WARPS_M = FORGE_WARPS_M;
#else
constexpr int WARPS_M = (WARPS == 4) ? 2 : (BM >= 2 * BN ? 4 : 2);
#endif
constexpr int WARPS_N = WARPS / WARPS_M;
constexpr int WM = BM / WARPS_M;
constexpr int WN = BN / WARPS_N;
constexpr int MT = WM / 16;  // m16 fragments per warp
constexpr int NT = WN / 8;   // n8 fragments per warp
constexpr int ACC = MT * NT * 4;

// Global→shared loader: VEC floats per cp.async (16 B when FORGE_VEC4, else 4 B).
// Thread tid copies column (tid % CHUNKS)·VEC of rows tid / CHUNKS + i·ROWS_PER_PASS.
constexpr int VEC = FORGE_VEC4 ? 4 : 1;
constexpr int CHUNKS = BK / VEC;               // copies per tile row
constexpr int ROWS_PER_PASS = THREADS / CHUNKS;
constexpr int A_ITERS = BM / ROWS_PER_PASS;
constexpr int B_ITERS = BN / ROWS_PER_PASS;

static_assert(BK % 8 == 0, "BK must be a multiple of 8 (k8 steps)");
static_assert(STAGES >= 2, "need at least 2 pipeline stages");
static_assert(WARPS == 4 || WARPS == 8, "FORGE_WARPS must be 4 or 8");
static_assert(WARPS_M * WARPS_N == WARPS, "bad warp layout");
static_assert(WM % 16 == 0 && WN % 8 == 0, "warp tile must be a multiple of 16×8");
static_assert(ACC <= 128, "more than 128 accumulators per thread cannot be held without spills");
static_assert(THREADS % CHUNKS == 0 && BM % ROWS_PER_PASS == 0 && BN % ROWS_PER_PASS == 0,
              "loader does not tile the CTA tile");

}  // namespace forge_mma

// Occupancy hint: two CTAs per SM when the accumulators leave room (≤ 64 per thread,
// so ≤ 128 registers with 8 warps); otherwise one.
#ifndef FORGE_MIN_BLOCKS
#define FORGE_MIN_BLOCKS ((FORGE_BM * FORGE_BN) / (32 * FORGE_WARPS) <= 64 ? 2 : 1)
#endif

// ---------------------------------------------------------------------------------------------
// PTX wrappers
// ---------------------------------------------------------------------------------------------
__device__ __forceinline__ unsigned forge_smem_addr(const void* p) {
    return (unsigned)__cvta_generic_to_shared(p);
}

// 16-byte async copy, L2 only (.cg); src_bytes = 0 writes 16 zero bytes and reads nothing.
__device__ __forceinline__ void forge_cp_async16(unsigned dst, const void* src, bool pred) {
    const int n = pred ? 16 : 0;
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(n)
                 : "memory");
}
// 4-byte async copy (.ca; .cg needs 16 B); src_bytes = 0 writes a zero.
__device__ __forceinline__ void forge_cp_async4(unsigned dst, const void* src, bool pred) {
    const int n = pred ? 4 : 0;
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src), "r"(n)
                 : "memory");
}
__device__ __forceinline__ void forge_cp_async_commit() {
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}
template <int N>
__device__ __forceinline__ void forge_cp_async_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// D = A·B + D on one m16n8k8 TF32 tile; a[], b[] hold f32 bits (raw or rounded, FORGE_ROUND).
__device__ __forceinline__ void forge_mma_tf32(float (&d)[4], const unsigned (&a)[4],
                                               const unsigned (&b)[2]) {
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// ---------------------------------------------------------------------------------------------
// The kernel
// ---------------------------------------------------------------------------------------------
extern "C" __global__ void __launch_bounds__(32 * FORGE_WARPS, FORGE_MIN_BLOCKS)
forge_gemm(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
           float* __restrict__ workspace, ForgeParams p) {
    using namespace forge_mma;
    extern __shared__ __align__(16) float forge_smem[];
    // k8 steps per k-tile unrolled in the main loop. With FORGE_ROUND 1 under a 128-register cap
    // (256 threads × 2 CTAs per SM: 128×128 with 8 warps) and BK = 16, ptxas pipelines the
    // converted fragments across the two k8 steps and spills 4 bytes in one variant (persistent,
    // split-K, 4-byte loads); a rolled k8 loop keeps every variant spill-free. (A local constant:
    // nvcc does not macro-expand a #pragma unroll argument.)
    constexpr int KK_UNROLL = (FORGE_ROUND && THREADS * FORGE_MIN_BLOCKS >= 512 && BK == 16) ? 1 : BK / 8;

    forge_pdl_allow_next();
    forge_pdl_wait();  // the previous kernel's writes (A, B, C, workspace) are complete
    const int M = p.M, N = p.N, K = p.K;
    const int tid = threadIdx.x;
    const int lane = tid & 31, warp = tid >> 5;
    // mma fragment coordinates: g = groupID (lane / 4), t = thread in group (lane % 4).
    const int g = lane >> 2, t = lane & 3;
    const int wm0 = (warp / WARPS_N) * WM;  // warp sub-tile origin inside the CTA tile
    const int wn0 = (warp % WARPS_N) * WN;

    const int splits = forge_splits(p);
    const int units = forge_units(p);

    const unsigned smem_a = forge_smem_addr(forge_smem);
    const unsigned smem_b = smem_a + STAGES * A_STAGE * 4;
    const float* sA = forge_smem;
    const float* sB = forge_smem + STAGES * A_STAGE;

    // Loader coordinates (fixed per thread).
    const int ld_row = tid / CHUNKS;
    const int ld_col = (tid % CHUNKS) * VEC;
    const unsigned ld_dst = (unsigned)(ld_row * LDS + ld_col) * 4;  // byte offset in a tile

    // Fragment coordinates (fixed per thread): A rows wm0+g (+8), B rows (n) wn0+g, column t.
    const int fa = (wm0 + g) * LDS + t;
    const int fb = (wn0 + g) * LDS + t;

    for (int u = forge_first_unit(); u < units; u += forge_unit_stride()) {
        const ForgeWork w = forge_work_unit(p, u);
        const int m0 = forge_row0(w, 0);
        const int n0 = forge_col0(w);
        const int nk = w.kt_end - w.kt_begin;

        // Row bases for this unit; rows past M / N are never dereferenced (zero-fill).
        const float* a_src = A + (long long)(m0 + ld_row) * K + ld_col;
        const float* b_src = B + (long long)(n0 + ld_row) * K + ld_col;
        const int a_rows = M - m0 - ld_row;  // row i·RPP is valid iff i·RPP < a_rows
        const int b_rows = N - n0 - ld_row;

        // Issue the copies of k-tile kt into pipeline slot `stage` (zero-fill outside M/N/K).
        auto load_tile = [&](int stage, int kt) {
            const int k0 = kt * BK;
            // VEC4 implies K % 4 == 0, so a 4-float chunk is wholly inside or outside K.
            const bool k_ok = k0 + ld_col < K;
            const unsigned da = smem_a + stage * A_STAGE * 4 + ld_dst;
            const unsigned db = smem_b + stage * B_STAGE * 4 + ld_dst;
#pragma unroll
            for (int i = 0; i < A_ITERS; ++i) {
                const bool ok = k_ok && i * ROWS_PER_PASS < a_rows;
                const float* src = ok ? a_src + (long long)i * ROWS_PER_PASS * K + k0 : A;
                if (VEC == 4) forge_cp_async16(da + i * ROWS_PER_PASS * LDS * 4, src, ok);
                else          forge_cp_async4(da + i * ROWS_PER_PASS * LDS * 4, src, ok);
            }
#pragma unroll
            for (int i = 0; i < B_ITERS; ++i) {
                const bool ok = k_ok && i * ROWS_PER_PASS < b_rows;
                const float* src = ok ? b_src + (long long)i * ROWS_PER_PASS * K + k0 : B;
                if (VEC == 4) forge_cp_async16(db + i * ROWS_PER_PASS * LDS * 4, src, ok);
                else          forge_cp_async4(db + i * ROWS_PER_PASS * LDS * 4, src, ok);
            }
        };

        float acc[MT][NT][4];
#pragma unroll
        for (int i = 0; i < MT; ++i)
#pragma unroll
            for (int j = 0; j < NT; ++j)
#pragma unroll
                for (int r = 0; r < 4; ++r) acc[i][j][r] = 0.0f;  // +0

        // Prologue: fill STAGES-1 slots. Always commit so that group counting stays uniform.
#pragma unroll
        for (int s = 0; s < STAGES - 1; ++s) {
            if (s < nk) load_tile(s, w.kt_begin + s);
            forge_cp_async_commit();
        }

        for (int kt = 0; kt < nk; ++kt) {
            // Tile kt has landed (at most STAGES-2 newer groups still in flight) ...
            forge_cp_async_wait<STAGES - 2>();
            // ... for every thread, and everyone is done reading slot (kt-1) % STAGES.
            __syncthreads();
            {
                const int pf = kt + STAGES - 1;
                if (pf < nk) load_tile(pf % STAGES, w.kt_begin + pf);
                forge_cp_async_commit();
            }

            const int stage = kt % STAGES;
            const float* as = sA + stage * A_STAGE;
            const float* bs = sB + stage * B_STAGE;
#pragma unroll KK_UNROLL
            for (int kk = 0; kk < BK; kk += 8) {
                // m16n8k8 .row A fragment (16×8, rows r = 16·mt + g, cols c = kk + t):
                //   a0 = A[r][c], a1 = A[r+8][c], a2 = A[r][c+4], a3 = A[r+8][c+4].
                // .col B fragment (8×8 as k×n; B is stored n-major [n][k]):
                //   b0 = B[n = 8·nt + g][k = kk + t], b1 = B[n][kk + t + 4].
                // Bank of word (row·(BK+4) + t): rows g = 0..7 with stride BK+4 ∈ {20, 36}
                // land on 8 disjoint 4-bank groups, + t ∈ 0..3 → 32 distinct banks.
                // forge_tf32_in: raw bits (FORGE_ROUND 0) or rounded to nearest even (1).
                unsigned af[MT][4], bf[NT][2];
#pragma unroll
                for (int mt = 0; mt < MT; ++mt) {
                    const float* pa = as + fa + mt * 16 * LDS + kk;
                    af[mt][0] = forge_tf32_in(__float_as_uint(pa[0]));
                    af[mt][1] = forge_tf32_in(__float_as_uint(pa[8 * LDS]));
                    af[mt][2] = forge_tf32_in(__float_as_uint(pa[4]));
                    af[mt][3] = forge_tf32_in(__float_as_uint(pa[8 * LDS + 4]));
                }
#pragma unroll
                for (int nt = 0; nt < NT; ++nt) {
                    const float* pb = bs + fb + nt * 8 * LDS + kk;
                    bf[nt][0] = forge_tf32_in(__float_as_uint(pb[0]));
                    bf[nt][1] = forge_tf32_in(__float_as_uint(pb[4]));
                }
#pragma unroll
                for (int mt = 0; mt < MT; ++mt)
#pragma unroll
                    for (int nt = 0; nt < NT; ++nt) forge_mma_tf32(acc[mt][nt], af[mt], bf[nt]);
            }
        }

        if (FORGE_PERSISTENT) {
            // The next unit's prologue overwrites slots others may still be reading.
            forge_cp_async_wait<0>();
            __syncthreads();
        }

        // Epilogue. Accumulator layout of m16n8 tile (mt, nt):
        //   d0 = (row g, col 2t), d1 = (g, 2t+1), d2 = (g+8, 2t), d3 = (g+8, 2t+1).
        // Stores go straight from registers: float2 when N is even (8-byte aligned rows,
        // even column), guarded scalars at the right edge or for odd N.
        float* out = forge_out_base(C, workspace, p, splits, w.split);
        const bool even_n = (N & 1) == 0;
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int row = m0 + wm0 + mt * 16 + g + 8 * h;
                if (row >= M) continue;
                float* orow = out + (long long)row * N;
#pragma unroll
                for (int nt = 0; nt < NT; ++nt) {
                    const int col = n0 + wn0 + nt * 8 + 2 * t;
                    const float v0 = acc[mt][nt][2 * h], v1 = acc[mt][nt][2 * h + 1];
                    if (even_n && col + 1 < N) {
                        float2 v;
                        v.x = v0;
                        v.y = v1;
                        *reinterpret_cast<float2*>(orow + col) = v;
                    } else {
                        if (col < N) orow[col] = v0;
                        if (col + 1 < N) orow[col + 1] = v1;
                    }
                }
            }
        }

        if (!FORGE_PERSISTENT) break;
    }
}
