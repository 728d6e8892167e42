#!/usr/bin/env bash
# tools/same_results.sh BASE_COMMIT — the check a refactor runs before landing: builds the
# commands at BASE_COMMIT in a scratch worktree and from the working tree (Release), then runs
# every example and experiment config through `simulate`, and the E2.3, E2.8 and E2.9 studies,
# with both. It compares each summary.json (without the fields that name the build or the
# output paths) and each study's tables, lists what differs and exits 1 if anything does.
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:?usage: tools/same_results.sh BASE_COMMIT}
scratch=${SAME_SCRATCH:-/tmp/servesim-same-base}
work=$(mktemp -d /tmp/servesim-same.XXXXXX)
trap 'rm -rf "$work"' EXIT

build() {  # $1: source folder, $2: build folder
  cmake -S "$1" -B "$2" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$2" --target simulate sweep costmodel -j"$(nproc)" >/dev/null
}

source tools/base_checkout.sh
rev=$(checkout_base "$base" "$scratch")
echo "building $base ($rev) and the working tree…" >&2
build "$scratch" "$scratch/build-same"
build . build

# $1: a study's script; its path from the repository folder in which it runs (a base older than
# studies/ keeps its scripts in configs/experiments/).
study() {
  if [ -e "studies/$1" ]; then echo "studies/$1"; else echo "configs/experiments/$1"; fi
}

# $1: side (base|new), $2: repository folder, $3: build folder. Runs everything into $work/$1.
run_all() {
  local out="$work/$1" root=$2 bin=$3 c name
  mkdir -p "$out"
  # The base's own configs: a config new in the working tree has nothing to compare with.
  for c in $(cd "$root" && ls configs/*.yaml configs/experiments/*.yaml); do
    name=$(echo "$c" | tr / _)
    (cd "$root" && "$bin/tools/simulate" "$c" --out "$out/$name" -q >/dev/null)
  done
  (cd "$root" && SWEEP="$bin/tools/sweep" "$(study e2_9_chunk_budget.sh)" \
    --out "$out/e2_9" -q --no-plots >/dev/null)
  (cd "$root" && SWEEP="$bin/tools/sweep" "$(study e2_3_deadlines.sh)" \
    --out "$out/e2_3" -q --no-plots >/dev/null)
  (cd "$root" && COSTMODEL="$bin/tools/costmodel" "$(study e2_8_power_placement.sh)" \
    --json >"$out/e2_8.json")
}
run_all base "$scratch" "$scratch/build-same"
run_all new "$PWD" "$PWD/build"

/usr/bin/python3 - "$work/base" "$work/new" <<'EOF'
import json, pathlib, sys
base, new = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
# Fields that name the build, a path or the wall clock, not the result.
volatile = {"servesim_version", "outputs", "config", "inputs", "provenance", "wall_s",
            "timing", "elapsed_s", "command"}

def strip(x):
    if isinstance(x, dict):
        return {k: strip(v) for k, v in x.items() if k not in volatile}
    if isinstance(x, list):
        return [strip(v) for v in x]
    return x

checked, differ = 0, []
for b in sorted(base.rglob("*")):
    if b.is_dir() or b.suffix not in {".json", ".csv"} or b.name == "timing.csv":
        continue
    rel = b.relative_to(base)
    n = new / rel
    checked += 1
    if not n.exists():
        differ.append(f"{rel}: missing in the working tree")
    elif b.suffix == ".json":
        if strip(json.loads(b.read_text())) != strip(json.loads(n.read_text())):
            differ.append(f"{rel}: differs")
    elif b.read_bytes() != n.read_bytes():
        differ.append(f"{rel}: differs")
for line in differ:
    print(line)
print(f"{checked} files compared, {len(differ)} differ")
sys.exit(1 if differ else 0)
EOF
