// Session 13, issue #13: where the block scheduler puts each CTA of a one-wave grid on the H200.
// Each CTA takes 200 KB of dynamic shared memory (one CTA per SM, as forge's wgmma kernels do),
// records %smid, and spins long enough that the whole grid is resident at once. Cluster launches
// (2, 4, 8 CTAs along x) show which SMs share a GPC. Compiled on the device with nvcc:
//   nvcc -arch=sm_90a -o placement_probe placement_probe.cu && ./placement_probe
// Output: one line per launch, "grid G cluster C run R: smid of CTA 0, 1, …".
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(x)                                                                        \
    do {                                                                                \
        cudaError_t e_ = (x);                                                           \
        if (e_ != cudaSuccess) {                                                        \
            fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

__global__ void probe(unsigned* out, long long spin) {
    extern __shared__ unsigned char smem[];
    unsigned smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    const long long t0 = clock64();
    if (threadIdx.x == 0) {
        smem[0] = 1;
        out[blockIdx.x] = smid;
    }
    while (clock64() - t0 < spin) {
    }
}

static void launch(unsigned* d, int grid, int cluster, int run) {
    const size_t smem = 200 * 1024;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(grid);
    cfg.blockDim = dim3(128);
    cfg.dynamicSmemBytes = smem;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = cluster;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    CHECK(cudaMemset(d, 0xff, 4096 * sizeof(unsigned)));
    CHECK(cudaLaunchKernelEx(&cfg, probe, d, 200000LL));
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    unsigned h[4096];
    CHECK(cudaMemcpy(h, d, grid * sizeof(unsigned), cudaMemcpyDeviceToHost));
    printf("grid %d cluster %d run %d:", grid, cluster, run);
    for (int i = 0; i < grid; i++) printf(" %u", h[i]);
    printf("\n");
}

int main() {
    unsigned* d;
    CHECK(cudaMalloc(&d, 4096 * sizeof(unsigned)));
    CHECK(cudaFuncSetAttribute(probe, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
    const int grids[] = {80, 90, 100, 104, 108, 110, 120, 126, 128, 130, 132, 264};
    for (int g : grids)
        for (int r = 0; r < 3; r++) launch(d, g, 1, r);
    for (int c : {2, 4, 8})
        for (int r = 0; r < 3; r++) launch(d, 128 / c * c, c, r);
    CHECK(cudaFree(d));
    return 0;
}
