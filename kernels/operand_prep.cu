// forge: operand preparation (kernels/ABI.md "Operand preparation"). Not a GEMM schedule: one
// pass that reads an operand in its stored layout and writes it K-major (rows × K, row stride
// `ld_out` ≥ K floats, zeros in the pad columns K..ld_out) into a workspace the GEMM kernels
// read. Used for
//   - transposed layouts (NN, TT, NT): the stored operand is K × rows (`transpose` = 1),
//   - rows a TMA tensor map cannot address (K % 4 ≠ 0, or a base not 16-byte aligned): a copy
//     with the row stride padded to a multiple of 4 floats (`transpose` = 0).
// Values are copied bit for bit (no rounding: the GEMM kernels round A and B themselves, and
// RNE is idempotent, so a pre-rounded copy would give the same product), so a product on the
// prepared operands is the product on the explicitly transposed ones, bit for bit.
//
// Standalone translation unit (no prelude, no common.cuh). One CTA writes a 32 × 128 tile of
// the output (rows × columns) with 256 threads: reads and writes are coalesced along the
// contiguous dimension of each side; a transpose goes through a padded shared-memory tile
// (33-float stride kills bank conflicts on the column-wise reads).

namespace forge_prep {
constexpr int TILE_R = 32;   // output rows per CTA (input columns when transposing)
constexpr int TILE_C = 128;  // output columns (K) per CTA
constexpr int THREADS_X = 32;
constexpr int THREADS_Y = 8;
}  // namespace forge_prep

// One pass: out[r · ld_out + c] = c < cols ? (transpose ? in[c · ld_in + r] : in[r · ld_in + c])
// : 0 for r < rows, c < ld_out. 48 bytes, by value (`PrepPass` in src/device/prep.rs).
struct ForgePrepPass {
    const float* in;
    float* out;
    int rows, cols;
    long long ld_in, ld_out;
    int transpose;
};

// Up to two passes (A's and B's) in one launch: blockIdx.z picks the pass. Grid: (max over the
// passes of ceil(ld_out / 128), max of ceil(rows / 32), passes); block 32 × 8. A pass's blocks
// past its own extent return at once.
extern "C" __global__ void __launch_bounds__(256)
forge_operand_prep(const __grid_constant__ ForgePrepPass p0,
                   const __grid_constant__ ForgePrepPass p1) {
    using namespace forge_prep;
    // Programmatic dependent launch (ABI.md "Launch order"; standalone unit, so spelled here).
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
    const ForgePrepPass& p = blockIdx.z == 0 ? p0 : p1;
    const float* __restrict__ in = p.in;
    float* __restrict__ out = p.out;
    const int rows = p.rows, cols = p.cols;
    const long long ld_in = p.ld_in, ld_out = p.ld_out;
    __shared__ float tile[TILE_C][TILE_R + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const long long r0 = (long long)blockIdx.y * TILE_R;
    const long long c0 = (long long)blockIdx.x * TILE_C;
    if (r0 >= rows || c0 >= ld_out) return;
    // Every load of a thread is issued before its first store (one memory latency per CTA,
    // not one per row: small operands are latency-bound).
    constexpr int LOADS_T = TILE_C / THREADS_Y;                            // 16
    constexpr int ROWS_PER_THREAD = TILE_R / THREADS_Y;                    // 4
    constexpr int COLS_PER_THREAD = TILE_C / THREADS_X;                    // 4
    if (p.transpose) {
        // Stored K × rows: input row c (a K index) holds output column c. Read 128 input rows
        // × 32 input columns, coalesced along r.
        float v[LOADS_T];
        const long long r = r0 + tx;
#pragma unroll
        for (int i = 0; i < LOADS_T; ++i) {
            const long long c = c0 + ty + i * THREADS_Y;
            v[i] = (c < cols && r < rows) ? in[c * ld_in + r] : 0.0f;
        }
#pragma unroll
        for (int i = 0; i < LOADS_T; ++i) tile[ty + i * THREADS_Y][tx] = v[i];
        __syncthreads();
        // Write 32 output rows × 128 columns, coalesced along c.
#pragma unroll
        for (int i = 0; i < ROWS_PER_THREAD; ++i) {
            const long long r = r0 + ty + i * THREADS_Y;
#pragma unroll
            for (int j = 0; j < COLS_PER_THREAD; ++j) {
                const long long c = c0 + j * THREADS_X + tx;
                if (r < rows && c < ld_out) out[r * ld_out + c] = tile[j * THREADS_X + tx][ty + i * THREADS_Y];
            }
        }
    } else {
        float v[ROWS_PER_THREAD][COLS_PER_THREAD];
#pragma unroll
        for (int i = 0; i < ROWS_PER_THREAD; ++i) {
            const long long r = r0 + ty + i * THREADS_Y;
#pragma unroll
            for (int j = 0; j < COLS_PER_THREAD; ++j) {
                const long long c = c0 + j * THREADS_X + tx;
                v[i][j] = (r < rows && c < cols) ? in[r * ld_in + c] : 0.0f;
            }
        }
#pragma unroll
        for (int i = 0; i < ROWS_PER_THREAD; ++i) {
            const long long r = r0 + ty + i * THREADS_Y;
#pragma unroll
            for (int j = 0; j < COLS_PER_THREAD; ++j) {
                const long long c = c0 + j * THREADS_X + tx;
                if (r < rows && c < ld_out) out[r * ld_out + c] = v[i][j];
            }
        }
    }
}
