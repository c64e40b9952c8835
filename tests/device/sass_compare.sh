#!/usr/bin/env bash
# CPU machine: is a kernel-source change invisible to the schedules it should not touch? Compiles
# SCHEDULES (default: every schedule of the shipped profile, the canonical and a split-K one)
# with the kernels of REV (default HEAD) and with the working tree's kernels/, disassembles
# both cubins with nvdisasm and compares the instruction streams with register names blanked
# (a renaming is the same code). Prints one line per kernel: instructions, differing lines.
# Needs libnvrtc on LD_LIBRARY_PATH and nvdisasm on PATH or in $NVDISASM
# (`pip install --target DIR nvidia-cuda-nvdisasm`: DIR/nvidia/cu13/bin/nvdisasm).
#   bash tests/device/sass_compare.sh [REV]
set -euo pipefail
cd "$(dirname "$0")/../.."
REV=${1:-HEAD}
NVDISASM=${NVDISASM:-$(command -v nvdisasm || true)}
[ -x "$NVDISASM" ] || { echo "sass_compare: no nvdisasm (set NVDISASM)" >&2; exit 2; }
cargo build --release --quiet
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/kernels"
for f in $(git ls-tree --name-only "$REV" kernels/); do
  [ "$(git cat-file -t "$REV:$f")" = blob ] && git show "$REV:$f" > "$T/kernels/$(basename "$f")"
done
SCHEDULES=${SCHEDULES:-$(python3 -c "
import tomllib
d = tomllib.load(open('profiles/sm_90a-h200.toml', 'rb'))
s = sorted({e['schedule'] for e in d['entry']})
print(','.join(s + ['mma_sync_tf32_128x128x32_s2_w8_swz1_np_c1_k1',
                    'wgmma_tf32_128x256x32_s4_wg2_swz8_pers_c1_k2']))")}
FORGE_KERNEL_DIR=$T/kernels ./target/release/forge check-kernels --schedule "$SCHEDULES" \
  --cubin-dir "$T/old" > /dev/null
./target/release/forge check-kernels --schedule "$SCHEDULES" --cubin-dir "$T/new" > /dev/null
sass() {
  "$NVDISASM" -c "$1" | grep -E '^\s+/\*[0-9a-f]{4}\*/' |
    sed -E 's@/\*[0-9a-f]+\*/@@; s@ ;.*@@; s/\bU?R[0-9]+\b/R/g'
}
changed=0 reordered=0
for old in "$T"/old/*.cubin; do
  v=$(basename "$old" .cubin)
  sass "$old" > "$T/a"
  sass "$T/new/$v.cubin" > "$T/b"
  d=$(diff "$T/a" "$T/b" | grep -c '^[<>]' || true)
  what=""
  if [ "$d" != 0 ]; then
    # The same instructions in another order (a scheduling change), or other instructions.
    if cmp -s <(sort "$T/a") <(sort "$T/b"); then
      what="  (the same instructions, reordered)"; reordered=$((reordered + 1))
    else
      what="  (other instructions)"; changed=$((changed + 1))
    fi
  fi
  printf '%-50s %6d instructions, %5d lines differ%s\n' "$v" "$(wc -l < "$T/a")" "$d" "$what"
done
echo "against $REV, register names aside: $reordered kernel(s) reordered, $changed with other instructions"
