#!/usr/bin/env bash
# Build and run the wgmma_tf32 development harness (kernels/harness/wgmma_check.cu) on the GPU machine.
#   kernels/harness/run_wgmma_check.sh [CONFIG ...]      (default: the configs listed below)
# A config is NAME:BM:BN:STAGES:WG:PERSISTENT:CLUSTER:SPLITK[:extra harness args, comma-separated].
# Outputs (logs, SASS summaries) go to $OUT when set, else ./wgmma_out. Prints a short table last.
# ROUND=1 builds every part with FORGE_ROUND=1 (round to nearest even) and checks against a rounding
# reference; ROUND_IN=producer|consumer|tma picks the wgmma rounding pass (tma adds --tma-tf32).
# PROBE=1 runs only the TMA TFLOAT32 rounding probe (needs any one config to build).
set -u
cd "$(dirname "$0")/../.."
NVCC=${NVCC:-nvcc}
OUTDIR=${OUT:-$PWD/wgmma_out}
BUILD=${BUILD:-/tmp/wgmma_build}
mkdir -p "$OUTDIR" "$BUILD"
H=kernels/harness/wgmma_check.cu
ARCH="-gencode arch=compute_90a,code=sm_90a"
FLAGS="-O3 -std=c++17 $ARCH -lineinfo"
ROUND=${ROUND:-0}
ROUND_IN=${ROUND_IN:-producer}
RFLAGS="-DFORGE_ROUND=$ROUND -DFORGE_ROUND_IN=$ROUND_IN"
RARGS="--round $ROUND"
[ "$ROUND" = 1 ] && [ "$ROUND_IN" = tma ] && RARGS="$RARGS --tma-tf32"
[ "${PROBE:-0}" = 1 ] && RARGS="--tma-probe"
CONFIGS=("$@")
if [ ${#CONFIGS[@]} -eq 0 ]; then
  CONFIGS=(
    "p128x256:128:256:4:2:1:1:0"
    "p128x256s3:128:256:3:2:1:1:0"
    "p128x256c2:128:256:4:2:1:2:0"
    "p128x168s6:128:168:6:2:1:1:0"
    "p128x192s5:128:192:5:2:1:1:0"
    "p128x224s4:128:224:4:2:1:1:0"
    "sk128x256:128:256:4:2:1:1:1:--splits,3"
  )
fi
HAVE_MMA=0
if [ -f kernels/mma_sync_tf32.cu ]; then HAVE_MMA=1; fi
pids=()
# main part
( $NVCC $FLAGS -c $H -o $BUILD/main.o $( [ $HAVE_MMA = 1 ] && echo -DHAVE_MMA ) > $BUILD/main.log 2>&1 ) & pids+=($!)
if [ $HAVE_MMA = 1 ]; then
  for v in 0 1; do
    ( $NVCC $FLAGS -c $H -o $BUILD/mma$v.o -DPART_MMA -DMMA_LAUNCH=mma_launch_v$v \
        -Dforge_gemm=forge_gemm_mma$v -Dforge_splitk_reduce=forge_splitk_reduce_mma$v \
        -DFORGE_BM=128 -DFORGE_BN=128 -DFORGE_BK=32 -DFORGE_STAGES=${MMA_STAGES:-3} -DFORGE_WARPS=${MMA_WARPS:-8} \
        -DFORGE_PERSISTENT=0 -DFORGE_SPLITK=0 -DFORGE_CLUSTER=1 -DFORGE_VEC4=$v -DFORGE_ROUND=$ROUND -Xptxas -v > $BUILD/mma$v.log 2>&1 ) & pids+=($!)
  done
fi
for c in "${CONFIGS[@]}"; do
  IFS=: read -r name bm bn st wg pe cl sk extra <<< "$c"
  ( $NVCC $FLAGS -c $H -o $BUILD/$name.o -DPART_WGMMA -DFORGE_BM=$bm -DFORGE_BN=$bn -DFORGE_BK=32 \
      -DFORGE_STAGES=$st -DFORGE_CONSUMER_WG=$wg -DFORGE_PERSISTENT=$pe -DFORGE_CLUSTER=$cl -DFORGE_SPLITK=$sk \
      -DFORGE_VEC4=1 $RFLAGS -Xptxas -v > $BUILD/$name.log 2>&1 ) & pids+=($!)
done
for p in "${pids[@]}"; do wait $p; done
cat $BUILD/main.log
MMAOBJ=""
if [ $HAVE_MMA = 1 ]; then MMAOBJ="$BUILD/mma0.o $BUILD/mma1.o"; grep -E "Used|spill|arning|error" $BUILD/mma1.log; fi
SUMMARY=$OUTDIR/summary.txt; : > $SUMMARY
for c in "${CONFIGS[@]}"; do
  IFS=: read -r name bm bn st wg pe cl sk extra <<< "$c"
  echo "=== $name: ptxas" | tee -a $SUMMARY
  grep -E "forge_gemm|Used|spill|arning|error" $BUILD/$name.log | grep -v splitk | tee -a $SUMMARY
  $NVCC $FLAGS -o $BUILD/$name $BUILD/main.o $BUILD/$name.o $MMAOBJ -lcublas > $BUILD/$name.link.log 2>&1 || { cat $BUILD/$name.link.log; continue; }
  if command -v cuobjdump >/dev/null; then
    cuobjdump --dump-sass $BUILD/$name.o > $OUTDIR/$name.sass 2>/dev/null
    echo "SASS: HGMMA=$(grep -c HGMMA $OUTDIR/$name.sass) LDL/STL=$(grep -cE 'LDL|STL' $OUTDIR/$name.sass) WARPSYNC=$(grep -c 'WARPSYNC' $OUTDIR/$name.sass)" | tee -a $SUMMARY
  fi
  [ "${NO_RUN:-0}" = 1 ] && continue
  args=$(echo "${extra:-}" | tr ',' ' ')
  timeout ${EXE_TIMEOUT:-120} $BUILD/$name --tag $name $args $RARGS ${HARNESS_ARGS:-} 2>&1 | tee $OUTDIR/$name.log; echo "[$name] exit ${PIPESTATUS[0]}" >> $SUMMARY
  grep -E "time|FAIL|ALL" $OUTDIR/$name.log >> $SUMMARY
done
echo; echo "================ SUMMARY ================"
grep -E "===|Used|SASS|time|FAIL|ALL|exit" $SUMMARY
