#!/usr/bin/env bash
# CPU machine: runs a device script from a `build_drop.sh` folder on the simulated device
# (FORGE_TEST_SIMULATED_DEVICE=1: workers answer from the cost model, see
# src/device/simulated.rs), with a stub nvidia-smi, so that a script's plumbing (paths, job
# files, parsers, tables, what lands in $OUT) is checked before a device call spends on it. The
# times it prints are not measurements. Needs libnvrtc on LD_LIBRARY_PATH (the tuner compiles).
#   bash tests/device/dry_run.sh DROP SCRIPT [VAR=VALUE …]
# e.g. bash tests/device/dry_run.sh target/drop11 session11_tune_ab.sh TUNE_S=60 ROUNDS=2
# Output: the script's stdout and exit status; its $OUT in /tmp/forge-dry-run/out.
set -uo pipefail
DROP=$(cd "${1:?usage: dry_run.sh DROP SCRIPT [VAR=VALUE …]}" && pwd)
SCRIPT=${2:?usage: dry_run.sh DROP SCRIPT [VAR=VALUE …]}
shift 2
DRY=/tmp/forge-dry-run
rm -rf "$DRY"
mkdir -p "$DRY/bin" "$DRY/out"
cat > "$DRY/bin/nvidia-smi" <<'SMI'
#!/bin/sh
echo "name, clocks.current.sm [MHz], clocks.max.sm [MHz], power.draw [W], power.limit [W], temperature.gpu"
echo "simulated H200, 1980 MHz, 1980 MHz, 0.00 W, 700.00 W, 30"
SMI
chmod +x "$DRY/bin/nvidia-smi"
cd "$DROP" || exit 1
env "$@" PATH="$DRY/bin:$PATH" OUT="$DRY/out" FORGE_TEST_SIMULATED_DEVICE=1 bash "$SCRIPT"
status=$?
echo "dry run of $SCRIPT: exit $status; \$OUT:"
ls -la "$DRY/out"
exit $status
