#!/usr/bin/env bash
# Prepared in session 18 for the next device calls, from a `build_drop.sh` folder holding
# device_lib.sh, session16_repeat.sh and session11_calibrate.sh. It branches on the card:
# - H200, CALL=1 (default): issue #12's whole suite head to head at this revision (every TN
#   entry of the shipped H200 profile against cuBLAS, ROUNDS rounds, default 3, both regimes;
#   ~330 s): $OUT/suite.tgz and summary.txt.
# - H200, CALL=2: calibration on held-out set 11's shapes (never calibrated on an H200: it
#   judges `resource_norm` held out; CAL_S, default 430): $OUT/cal.tgz.
# - any other card, CALL=1 or 2: calibration on held-out set 12's shapes (CAL_S): $OUT/cal.tgz.
# - CALL=3, any card: held-out selection (`session17_call1.sh` without #12's repeat): set 13 on an
#   H200, sets 12h and 13 elsewhere (jobs from `session18_select_jobs.py`, in the drop's set13/
#   and set12h/ folders), ROUND_BUDGET_S (default 330): sel.tgz, selection.txt, select-log.txt.
# $OUT also gets gpu.txt (the card).
set -uo pipefail
O=${OUT:?OUT must name the results folder}
SET11=1152x1408x8192,960x1920x12288,2432x2432x3072,3072x2560x4096,4096x3072x768,\
2816x5120x1280,2048x11008x4096,512x4096x11008,8192x256x4096,777x1999x1501
SET12=1088x1344x10240,1600x1600x6400,2688x2176x2560,3584x3584x1024,5632x1536x2048,\
4096x11008x2048,256x8192x8192,16384x512x2048,1500x2500x999,640x6400x4480
nvidia-smi --query-gpu=name --format=csv,noheader > "$O/gpu.txt" 2>&1
calibrate() {
  OUT=$O/cal SHAPES=$1 CAL_S=${CAL_S:-430} bash session11_calibrate.sh
  tar czf "$O/cal.tgz" -C "$O" cal && rm -rf "$O/cal"
}
if [ "${CALL:-1}" = 3 ]; then
  REPEAT=0 JOBS_H200=set13 JOBS_OTHER="set12h set13" TESTS=0 \
    ROUND_BUDGET_S=${ROUND_BUDGET_S:-330} bash session17_call1.sh
elif grep -q H200 "$O/gpu.txt"; then
  if [ "${CALL:-1}" = 1 ]; then
    OUT=$O/suite SHAPES=all ROUNDS=${ROUNDS:-3} timeout "${SUITE_S:-480}" bash session16_repeat.sh \
      > /dev/null
    # A cut run still returns what it timed.
    cp /tmp/forge-s16r/h2h.txt /tmp/forge-s16r/clocks.csv /tmp/forge-s16r/marks.csv "$O/suite/" \
      2> /dev/null
    cp "$O/suite/summary.txt" "$O/" 2> /dev/null
    tar czf "$O/suite.tgz" -C "$O" suite && rm -rf "$O/suite"
  else
    calibrate "$SET11"
  fi
else
  calibrate "$SET12"
fi
cat "$O/gpu.txt"
[ -f "$O/summary.txt" ] && cat "$O/summary.txt"
ls "$O"
