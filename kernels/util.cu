// Device utilities of the tuner (not GEMM schedules): seeded input generation.
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
