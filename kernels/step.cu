// Kernels of the deterministic training step (src/step/): x -> Linear -> GroupNorm ->
// tanh-GELU -> Linear -> MSE, backward, AdamW; and a plain FP32 GEMM for `--dtype fp32`.
//
// Every reduction has an order fixed by this code, never by the launch or by timing: no
// atomics. Row sums inside a warp: each lane adds its elements (lane, lane+32, ...) in
// increasing index, then a fixed xor butterfly (16, 8, 4, 2, 1). Column sums over rows: each
// chunk of STEP_CHUNK consecutive rows is summed in increasing row order (partial), then the
// partials are folded into the accumulator in increasing chunk order. A micro-batch whose row
// count is a multiple of STEP_CHUNK therefore continues the same fold: its column sums equal
// the whole batch's bit for bit.
//
// Compiled without fast-math: sqrtf, division, tanhf are the IEEE / libdevice forms.

#define STEP_CHUNK 64
#define GELU_K0 0.7978845608028654f  // sqrt(2/pi)
#define GELU_K1 0.044715f

__device__ __forceinline__ float step_warp_sum(float v) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
    return v;
}

__device__ __forceinline__ float step_gelu(float a) {
    const float u = GELU_K0 * (a + GELU_K1 * a * a * a);
    return 0.5f * a * (1.0f + tanhf(u));
}

__device__ __forceinline__ float step_gelu_grad(float a) {
    const float u = GELU_K0 * (a + GELU_K1 * a * a * a);
    const float t = tanhf(u);
    const float du = GELU_K0 * (1.0f + 3.0f * GELU_K1 * a * a);
    return 0.5f * (1.0f + t) + 0.5f * a * (1.0f - t * t) * du;
}

// One warp per (row, group). z: rows x h GEMM output (bias not yet added). Writes
// xhat = (z + b1 - mean) * rstd, g = gelu(xhat * gamma + beta), rstd[row * groups + group].
// Variance: two passes (mean first), biased, eps inside the square root.
extern "C" __global__ void step_gn_forward(const float* __restrict__ z,
                                           const float* __restrict__ b1,
                                           const float* __restrict__ gamma,
                                           const float* __restrict__ beta,
                                           float* __restrict__ xhat, float* __restrict__ g,
                                           float* __restrict__ rstd_out, int rows, int h,
                                           int groups, float eps) {
    const int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    if (warp >= rows * groups) return;
    const int row = warp / groups, grp = warp % groups;
    const int width = h / groups;
    const long long base = (long long)row * h + (long long)grp * width;
    const int c0 = grp * width;
    float s = 0.0f;
    for (int i = lane; i < width; i += 32) s += z[base + i] + b1[c0 + i];
    const float mean = step_warp_sum(s) / (float)width;
    float q = 0.0f;
    for (int i = lane; i < width; i += 32) {
        const float d = z[base + i] + b1[c0 + i] - mean;
        q += d * d;
    }
    const float var = step_warp_sum(q) / (float)width;
    const float rstd = 1.0f / sqrtf(var + eps);
    for (int i = lane; i < width; i += 32) {
        const float xh = (z[base + i] + b1[c0 + i] - mean) * rstd;
        xhat[base + i] = xh;
        g[base + i] = step_gelu(xh * gamma[c0 + i] + beta[c0 + i]);
    }
    if (lane == 0) rstd_out[warp] = rstd;
}

// One warp per row. y: rows x d GEMM output (bias not yet added). Writes
// dy = scale * (y + b2 - target) (scale = 2 / (all rows * d)) and row_sq[row] = sum of squares.
extern "C" __global__ void step_mse_forward(const float* __restrict__ y,
                                            const float* __restrict__ b2,
                                            const float* __restrict__ target,
                                            float* __restrict__ dy, float* __restrict__ row_sq,
                                            int rows, int d, float scale) {
    const int row = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    if (row >= rows) return;
    const long long base = (long long)row * d;
    float s = 0.0f;
    for (int i = lane; i < d; i += 32) {
        const float diff = y[base + i] + b2[i] - target[base + i];
        s += diff * diff;
        dy[base + i] = scale * diff;
    }
    s = step_warp_sum(s);
    if (lane == 0) row_sq[row] = s;
}

// One warp per (row, group): the GroupNorm + GELU backward. dg: rows x h gradient of the
// GELU output. Writes da (gradient of the affine output, for dbeta and dgamma) and dz.
extern "C" __global__ void step_gn_backward(const float* __restrict__ dg,
                                            const float* __restrict__ xhat,
                                            const float* __restrict__ gamma,
                                            const float* __restrict__ beta,
                                            const float* __restrict__ rstd_in,
                                            float* __restrict__ da, float* __restrict__ dz,
                                            int rows, int h, int groups) {
    const int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    if (warp >= rows * groups) return;
    const int row = warp / groups, grp = warp % groups;
    const int width = h / groups;
    const long long base = (long long)row * h + (long long)grp * width;
    const int c0 = grp * width;
    float s1 = 0.0f, s2 = 0.0f;
    for (int i = lane; i < width; i += 32) {
        const float xh = xhat[base + i];
        const float ga = gamma[c0 + i];
        const float a = dg[base + i] * step_gelu_grad(xh * ga + beta[c0 + i]);
        da[base + i] = a;
        const float dn = a * ga;
        s1 += dn;
        s2 += dn * xh;
    }
    const float m1 = step_warp_sum(s1) / (float)width;
    const float m2 = step_warp_sum(s2) / (float)width;
    const float rstd = rstd_in[warp];
    for (int i = lane; i < width; i += 32) {
        const float xh = xhat[base + i];
        const float dn = da[base + i] * gamma[c0 + i];
        dz[base + i] = rstd * (dn - m1 - xh * m2);
    }
}

// Column sums, stage 1: partial[chunk][col] = sum over the chunk's rows, in increasing row
// order, of x[row][col] (times y[row][col] when y is not null). Grid: (ceil(cols/256),
// chunks). Thread (chunk, col).
extern "C" __global__ void step_colsum_partial(const float* __restrict__ x,
                                               const float* __restrict__ y,
                                               float* __restrict__ partial, int rows, int cols) {
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int chunk = blockIdx.y;
    if (col >= cols) return;
    const int r0 = chunk * STEP_CHUNK;
    const int r1 = min(rows, r0 + STEP_CHUNK);
    float s = 0.0f;
    if (y == nullptr) {
        for (int r = r0; r < r1; ++r) s += x[(long long)r * cols + col];
    } else {
        for (int r = r0; r < r1; ++r) {
            const long long i = (long long)r * cols + col;
            s += x[i] * y[i];
        }
    }
    partial[(long long)chunk * cols + col] = s;
}

// Column sums, stage 2: acc[col] = (accumulate ? acc[col] : 0) + partial[0][col] + ... in
// increasing chunk order. One thread per column.
extern "C" __global__ void step_colsum_fold(const float* __restrict__ partial,
                                            float* __restrict__ acc, int chunks, int cols,
                                            int accumulate) {
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (col >= cols) return;
    float s = accumulate ? acc[col] : 0.0f;
    for (int c = 0; c < chunks; ++c) s += partial[(long long)c * cols + col];
    acc[col] = s;
}

// acc[i] += x[i] (micro-batch gradient sums, in micro-batch order).
extern "C" __global__ void step_add(float* __restrict__ acc, const float* __restrict__ x,
                                    long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        acc[i] += x[i];
}

// dst[i] = src[i] * scale + shift (parameter initialisation from the seeded uniform fill).
extern "C" __global__ void step_affine(float* __restrict__ dst, const float* __restrict__ src,
                                       long long n, float scale, float shift) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        dst[i] = src[i] * scale + shift;
}

// The optimizer's scalar state, in device memory so that a captured graph advances it.
struct StepState {
    unsigned int t;    // steps taken
    unsigned int pad;
    double beta1_t;    // beta1^t
    double beta2_t;    // beta2^t
};

// One thread: t += 1, the bias-correction powers, and loss_history[t - 1] = loss_sum * inv_count.
extern "C" __global__ void step_advance(StepState* state, const float* __restrict__ loss_sum,
                                        float* __restrict__ loss_history, int history_len,
                                        double beta1, double beta2, float inv_count) {
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    const unsigned int t = state->t;
    state->beta1_t = (t == 0 ? 1.0 : state->beta1_t) * beta1;
    state->beta2_t = (t == 0 ? 1.0 : state->beta2_t) * beta2;
    if ((int)t < history_len) loss_history[t] = loss_sum[0] * inv_count;
    state->t = t + 1;
}

// AdamW as torch.optim.AdamW (decoupled decay first, then the bias-corrected Adam update),
// one thread per element of the flat parameter vector.
extern "C" __global__ void step_adamw(float* __restrict__ p, const float* __restrict__ grad,
                                      float* __restrict__ m, float* __restrict__ v,
                                      long long n, const StepState* __restrict__ state,
                                      float lr, float beta1, float beta2, float eps,
                                      float weight_decay) {
    const float bc1 = (float)(1.0 - state->beta1_t);
    const float bc2_sqrt = sqrtf((float)(1.0 - state->beta2_t));
    const float step_size = lr / bc1;
    const float decay = 1.0f - lr * weight_decay;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        const float g = grad[i];
        const float mi = beta1 * m[i] + (1.0f - beta1) * g;
        const float vi = beta2 * v[i] + (1.0f - beta2) * g * g;
        m[i] = mi;
        v[i] = vi;
        const float denom = sqrtf(vi) / bc2_sqrt + eps;
        p[i] = p[i] * decay - step_size * mi / denom;
    }
}

// Plain FP32 GEMM on the CUDA cores: C (m x n, row-major) = A . B^T [+ C when accumulate],
// where A(i, kk) is a[i * k + kk] when a_k_major, else a[kk * m + i]; B(j, kk) is
// b[j * k + kk] when b_k_major, else b[kk * n + j]. Each element is one fmaf chain over kk in
// increasing order (starting from 0, or from C), so the bits do not depend on the tiling, and
// a GEMM over K1 + K2 equals the GEMM over K2 accumulated onto the GEMM over K1.
// Tile 128 x 128 x 8, 256 threads, 8 x 8 outputs per thread.
#define SG_BM 128
#define SG_BN 128
#define SG_BK 8
extern "C" __global__ void __launch_bounds__(256)
    step_sgemm(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
               int m, int n, int k, int a_k_major, int b_k_major, int accumulate) {
    __shared__ float as[SG_BK][SG_BM];
    __shared__ float bs[SG_BK][SG_BN];
    const int tid = threadIdx.x;
    const int tx = tid % 16, ty = tid / 16;
    const int i0 = blockIdx.y * SG_BM, j0 = blockIdx.x * SG_BN;
    float acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            const int gi = i0 + ty * 4 + (i / 4) * 64 + (i % 4);
            const int gj = j0 + tx * 4 + (j / 4) * 64 + (j % 4);
            acc[i][j] = (accumulate && gi < m && gj < n) ? c[(long long)gi * n + gj] : 0.0f;
        }
    for (int k0 = 0; k0 < k; k0 += SG_BK) {
        // 1024 elements of each tile, 4 per thread.
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            const int idx = tid + e * 256;
            int r, kk;
            if (a_k_major) { r = idx / SG_BK; kk = idx % SG_BK; }
            else { kk = idx / SG_BM; r = idx % SG_BM; }
            const int gi = i0 + r, gk = k0 + kk;
            float v = 0.0f;
            if (gi < m && gk < k)
                v = a_k_major ? a[(long long)gi * k + gk] : a[(long long)gk * m + gi];
            as[kk][r] = v;
            if (b_k_major) { r = idx / SG_BK; kk = idx % SG_BK; }
            else { kk = idx / SG_BN; r = idx % SG_BN; }
            const int gj = j0 + r, gk2 = k0 + kk;
            float w = 0.0f;
            if (gj < n && gk2 < k)
                w = b_k_major ? b[(long long)gj * k + gk2] : b[(long long)gk2 * n + gj];
            bs[kk][r] = w;
        }
        __syncthreads();
        // Past K the tiles hold zeros: fmaf(0, 0, acc) == acc.
#pragma unroll
        for (int kk = 0; kk < SG_BK; ++kk) {
            float ra[8], rb[8];
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                ra[i] = as[kk][ty * 4 + i];
                ra[i + 4] = as[kk][ty * 4 + 64 + i];
                rb[i] = bs[kk][tx * 4 + i];
                rb[i + 4] = bs[kk][tx * 4 + 64 + i];
            }
#pragma unroll
            for (int i = 0; i < 8; ++i)
#pragma unroll
                for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(ra[i], rb[j], acc[i][j]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            const int gi = i0 + ty * 4 + (i / 4) * 64 + (i % 4);
            const int gj = j0 + tx * 4 + (j / 4) * 64 + (j % 4);
            if (gi < m && gj < n) c[(long long)gi * n + gj] = acc[i][j];
        }
}
