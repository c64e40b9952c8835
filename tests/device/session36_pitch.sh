#!/usr/bin/env bash
# Session 36 (issue #13): is the quarter-line row pitch what the model misses at its worst
# held-out calibration shapes? Each such shape (K*4 = 32 or 96 mod 128) is timed beside its
# aligned twin (K moved by 8 or less to a multiple of 32 elements) and, for 192x8064, the
# half-line pitch: the model's top 8 and the tiles of session36_pitch_list.txt, 2 confirmation
# rounds (`forge calibrate`). Then Nsight Compute's traffic counters (ncu_traffic.sh: DRAM bytes
# read, the L2 coalescer) for three tiles at 192x8064 at each pitch.
# From a build_drop.sh folder holding ncu_traffic.sh, session6_ncu.sh, lrc_table.py,
# session36_pitch_list.txt and pcache.tar.xz (the kernels, `--compile-only`):
#   bash session36_pitch.sh      ($OUT: pitch.tgz (pitch/: calibration.json, .csv; pitch-log.txt;
#                                 ncu/: the reports and traffic.md) and pitch.txt; packed, because
#                                 a call brings back only a few files)
set -uo pipefail
O=${OUT:?OUT must name the results folder}
SHAPES=${SHAPES:-192x8064x7944,192x8064x7936,192x8064x7952,288x3264x2936,288x3264x2944,5128x216x8264,5128x216x8256,384x7224x8440,384x7224x8448,768x2368x2744,768x2368x2752}
mkdir -p cache "$O"
[ ! -f pcache.tar.xz ] || tar xJf pcache.tar.xz -C cache
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit --format=csv,noheader > "$O/pitch.txt"
./forge calibrate --arch sm_90a --shapes "$SHAPES" --top 8 --sample 0 --repeat 2 \
  --schedules session36_pitch_list.txt --cache cache --out "$O/pitch" > "$O/pitch-log.txt" 2>&1
echo "calibrate exit $?" >> "$O/pitch.txt"
if [ "${NCU:-1}" = 1 ]; then
  specs=""
  for k in 7944 7936 7952; do
    for s in wgmma_tf32_128x128x32_s6_wg1_swz1c_np_c1_k1 wgmma_tf32_128x224x32_s5_wg2_swz4c_np_c1_k1 \
             wgmma_tf32_256x128x32_s4_wg2_swz1_pers_c1_k1; do
      specs="$specs 192x8064x$k:$s"
    done
  done
  FORGE_CACHE=$PWD/cache OUT="$O/ncu" timeout 400 bash ncu_traffic.sh $specs >> "$O/pitch.txt" 2>&1
fi
tar czf "$O/pitch.tgz" -C "$O" pitch pitch-log.txt $([ -d "$O/ncu" ] && echo ncu) \
  && rm -rf "$O/pitch" "$O/pitch-log.txt" "$O/ncu"
cat "$O/pitch.txt"
