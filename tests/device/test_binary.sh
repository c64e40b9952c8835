# Sourced by the build scripts: test_binary NAME prints the path of the release test binary of
# tests/NAME.rs (building it if needed), for copying to a device machine.
test_binary() {
  cargo test --release --no-run --test "$1" --message-format=json 2>/dev/null |
    TEST_NAME=$1 python3 -c 'import json, os, sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == os.environ["TEST_NAME"]:
        print(m["executable"])'
}
