// Device utilities of the tuner (not GEMM schedules): seeded input generation and the count
// of differing bit patterns behind the device-side gate.
// forge_fill_random must match src/reference.rs `input_value` bit for bit.

__device__ __forceinline__ unsigned long long forge_mix64(unsigned long long x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

extern "C" __global__ void forge_fill_random(float* out, unsigned long long n,
                                             unsigned long long seed, unsigned int set,
                                             unsigned long long tensor) {
    const unsigned long long stream =
        forge_mix64(seed ^ ((unsigned long long)set << 32) ^ (tensor << 56));
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        const unsigned long long bits = forge_mix64(stream + i) >> 40;
        // bits < 2^24: the product and the difference are exact in f32.
        out[i] = (float)bits * (2.0f / 16777216.0f) - 1.0f;
    }
}

// The bit-exact gate on the device: adds to *count the number of elements whose 32-bit
// pattern differs between a and b (the host's gate::compare counts the same elements).
extern "C" __global__ void forge_count_differing(const unsigned int* a, const unsigned int* b,
                                                 unsigned long long n,
                                                 unsigned long long* count) {
    unsigned long long local = 0;
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        local += a[i] != b[i];
    }
    for (int offset = 16; offset > 0; offset >>= 1) {
        local += __shfl_down_sync(0xffffffffu, local, offset);
    }
    if ((threadIdx.x & 31) == 0 && local != 0) {
        atomicAdd(count, local);
    }
}
