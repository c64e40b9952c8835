/* forge: TF32 GEMM dispatch from C (and from any framework that hands out device pointers and
 * CUDA streams).
 *
 * Link: cc prog.c -I<forge>/src/capi -L<target>/release -lforge -Wl,-rpath,<target>/release
 * (libforge.so is built by `cargo build --release`). It loads libcuda.so and libnvrtc.so.13
 * at run time (CUDA 13); neither is needed to link.
 *
 * Errors: every call that can fail returns a forge_status (FORGE_OK == 0). On failure,
 * forge_last_error() returns a one-line message naming the offending argument; it is kept per
 * thread, cleared by the next successful call on that thread, and the pointer stays valid until
 * the next forge call on that thread. No call ever unwinds (a Rust panic) across this boundary:
 * an internal bug is reported as FORGE_ERROR_INTERNAL.
 *
 * Ownership: forge_*_open allocates a handle that the caller owns and frees with the matching
 * forge_*_close (NULL is a no-op; a handle must be closed once). Strings passed in are only
 * read during the call. Device pointers and streams are borrowed: forge never frees them.
 *
 * Threading: a forge_profile is immutable and may be used from any number of threads at once.
 * A forge_dispatcher may be shared: forge_gemm and forge_dispatcher_select may be called
 * concurrently from several threads on the same handle. forge_*_close must not race with any
 * other call on the same handle.
 *
 * Numerics: every schedule a profile selects produces the same bits as the canonical schedule
 * (the profile's "bitexact" contract): results never depend on which kernel runs.
 */
#ifndef FORGE_H
#define FORGE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Status codes. */
typedef int forge_status;
enum {
    FORGE_OK = 0,
    /* A NULL handle or pointer, a dimension below 1 or above 2^31 - 1, a negative device, an
     * unknown enum value, a string that is not UTF-8. */
    FORGE_ERROR_INVALID_ARGUMENT = 1,
    /* A well-formed request the kernels do not support yet: a layout other than TN, leading
     * dimensions other than the packed ones, device pointers not 16-byte aligned. */
    FORGE_ERROR_UNSUPPORTED = 2,
    /* The profile cannot be read, is not valid, or was tuned for another architecture. */
    FORGE_ERROR_PROFILE = 3,
    /* No CUDA driver, or no device with that ordinal. */
    FORGE_ERROR_NO_DEVICE = 4,
    /* A CUDA driver call, NVRTC (compiling a kernel at first use) or a launch failed. */
    FORGE_ERROR_DEVICE = 5,
    /* A bug in forge (a caught panic); the message says where. */
    FORGE_ERROR_INTERNAL = 6
};

/* Operand layouts, all row-major (the last index is contiguous), named as forge's profiles name
 * them. C is always M x N row-major, f32.
 *   TN: A is M x K, B is N x K (both K-contiguous): C = A * B^T. The kernels' native layout.
 *   NN: A is M x K, B is K x N: C = A * B.
 *   TT: A is K x M, B is N x K: C = A^T * B^T.
 *   NT: A is K x M, B is K x N: C = A^T * B.
 * For NN, TT and NT forge_gemm first transposes the K x rows operands into a workspace of the
 * launch plan (one extra pass over each); the product is bit-identical to the TN product of the
 * transposed operands. */
typedef int forge_layout;
enum {
    FORGE_LAYOUT_TN = 0,
    FORGE_LAYOUT_NN = 1,
    FORGE_LAYOUT_TT = 2,
    FORGE_LAYOUT_NT = 3
};

/* Which rule of the profile picked a schedule (README, "Dispatch profile"). */
enum {
    FORGE_RULE_EXACT = 0,     /* the profile has an entry for this exact problem */
    FORGE_RULE_NEAREST = 1,   /* (not returned since 2026-12-03) the nearest tuned shape (log space) */
    FORGE_RULE_CANONICAL = 2, /* no tuned schedule can run it: the canonical schedule */
    FORGE_RULE_MODEL = 3      /* the calibrated cost model's best of the profile's gated schedules */
};

typedef struct forge_selection {
    char schedule[128]; /* the schedule's name, NUL-terminated */
    int32_t rule;       /* FORGE_RULE_* */
    int32_t entry;      /* the profile entry (0-based) for EXACT and NEAREST; -1 otherwise */
    double distance;    /* NEAREST: log-space distance to that entry; 0 otherwise */
} forge_selection;

typedef struct forge_profile forge_profile;
typedef struct forge_dispatcher forge_dispatcher;

/* The message of this thread's last failed call ("" if none since the last success). Never
 * NULL. */
const char *forge_last_error(void);

/* A static description of a status code ("FORGE_ERROR_UNSUPPORTED"), or "unknown status". */
const char *forge_status_name(forge_status status);

/* A static description of a rule ("exact", "nearest", "canonical"), or "unknown rule". */
const char *forge_rule_name(int32_t rule);

/* forge's version and the git revision it was built from, e.g. "0.1.0 (e186beffb7bd)". */
const char *forge_version(void);

/* --- Profiles: no GPU needed ------------------------------------------------------------- */

/* Reads and validates a dispatch profile (a TOML file written by `forge tune`). */
forge_status forge_profile_open(const char *path, forge_profile **out);

/* The schedule the profile picks for a TF32 problem of any layout: exactly what `forge select`
 * prints. m, n, k in [1, 2^31 - 1]. */
forge_status forge_profile_select(const forge_profile *profile, forge_layout layout, int64_t m,
                                  int64_t n, int64_t k, forge_selection *out);

void forge_profile_close(forge_profile *profile);

/* --- Dispatchers: GEMMs on a device ------------------------------------------------------- */

/* Opens CUDA device `device` (an ordinal as the driver and the CUDA runtime count them, under
 * the same CUDA_VISIBLE_DEVICES) with the profile at `profile_path`, which must have been tuned
 * for the device's architecture; a directory of profiles (such as profiles/) gives its measured
 * profile tuned on this device (by name and architecture; none or several is
 * FORGE_ERROR_PROFILE, naming what the directory holds). Kernels are compiled by NVRTC at first
 * use and cached on disk in `cache_dir` (NULL: $FORGE_CACHE, else $XDG_CACHE_HOME/forge, else
 * ~/.cache/forge). A profile file is read first, so a missing one is FORGE_ERROR_PROFILE on any
 * machine. Uses the device's primary context, which the CUDA runtime (and so PyTorch, cuBLAS,
 * ...) shares. */
forge_status forge_dispatcher_open(const char *profile_path, int device, const char *cache_dir,
                                   forge_dispatcher **out);

/* The schedule forge_gemm would launch for this problem (a layout without profile entries gets
 * the TN choice for the shape). */
forge_status forge_dispatcher_select(const forge_dispatcher *dispatcher, forge_layout layout,
                                     int64_t m, int64_t n, int64_t k, forge_selection *out);

/* C = op(A) * op(B), A and B stored as `layout` says (TF32 tensor-core math on f32 storage; no
 * alpha/beta: C is overwritten), enqueued on `stream` and asynchronous with respect to the host,
 * like a CUDA kernel launch.
 *
 *   layout   any forge_layout
 *   m, n, k  in [1, 2^31 - 1]
 *   a        device pointer, M x K f32 with row stride lda == k, or for TT and NT K x M with
 *            lda == m (packed)
 *   b        device pointer, N x K f32 with row stride ldb == k, or for NN and NT K x N with
 *            ldb == n (packed)
 *   c        device pointer, M x N f32, row stride ldc == n (packed)
 *            a, b and c must be 16-byte aligned (every cudaMalloc / PyTorch allocation is);
 *            C must not overlap A or B.
 *   stream   a CUstream / cudaStream_t of this device's primary context (the CUDA runtime's
 *            streams are), or NULL for the legacy default stream; cast to void*.
 *
 * Makes the device's primary context current on the calling thread (as cudaSetDevice would)
 * when another context is current. The first call for a (shape, a, b) compiles or loads the
 * kernel and builds a launch plan (TMA descriptors encode a's and b's addresses) that later
 * calls reuse; plans live until forge_dispatcher_close. Calls with the same (shape, a, b) must
 * not run concurrently on different streams (a plan may own a workspace its launches share).
 * A, B and C must stay allocated until the GEMM has finished on `stream`. */
forge_status forge_gemm(forge_dispatcher *dispatcher, forge_layout layout, int64_t m, int64_t n,
                        int64_t k, const float *a, int64_t lda, const float *b, int64_t ldb,
                        float *c, int64_t ldc, void *stream);

/* Frees the dispatcher, its loaded kernels and its plans' workspaces. Synchronize the streams
 * it launched on first. */
void forge_dispatcher_close(forge_dispatcher *dispatcher);

#ifdef __cplusplus
}
#endif

#endif /* FORGE_H */
