#!/usr/bin/env bash
# tests/data_paths_test.sh SOURCE_DIR — fails when a tracked file outside data/ names a folder
# beside the checkout (a parent-relative "shared" folder, or its data/ and reference/ paths): the
# repository's commands, example configs, scripts, tests and docs read only what it holds, the
# measured data and traces included (data/, see data/README.md).
set -euo pipefail
cd "$1"
pattern='[.][.]/shared|shared/(data|reference)'

git rev-parse --is-inside-work-tree >/dev/null
hits=$(git ls-files -z -- . ':(exclude)data/' | xargs -0 grep -H -a -s -E "$pattern" -- || true)
if [ -n "$hits" ]; then
  echo "tracked files name data outside the repository (use data/ instead):"
  echo "$hits"
  exit 1
fi
echo "no tracked file outside data/ names a folder beside the checkout"
