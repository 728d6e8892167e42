# Sourced by tools/same_results.sh and tools/bench/compare.sh, from the repository root:
# checkout_base REV FOLDER checks REV out, detached, in the scratch worktree FOLDER (made on first
# use) and prints REV's full hash. The base reads the same ../shared data as this checkout.
checkout_base() {
  local rev
  rev=$(git rev-parse --verify "$1^{commit}")
  if [ ! -d "$2" ]; then git worktree add -f --detach "$2" "$rev" >/dev/null; fi
  git -C "$2" checkout -q --detach "$rev"
  if [ -d ../shared ] && [ ! -e "$(dirname "$2")/shared" ]; then
    ln -s "$(cd .. && pwd)/shared" "$(dirname "$2")/shared"
  fi
  echo "$rev"
}
