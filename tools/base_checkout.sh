# Sourced by tools/same_results.sh and tools/bench/compare.sh, from the repository root:
# checkout_base REV FOLDER checks REV out, detached, in the scratch worktree FOLDER (made on first
# use) and prints REV's full hash. A base older than the repository's data/ folder reads its
# traces and profiles from a folder named shared beside its checkout; when that folder is missing,
# it is made with this checkout's data/ (the same files) inside.
checkout_base() {
  local rev sibling
  rev=$(git rev-parse --verify "$1^{commit}")
  if [ ! -d "$2" ]; then git worktree add -f --detach "$2" "$rev" >/dev/null; fi
  git -C "$2" checkout -q --detach "$rev"
  sibling="$(dirname "$2")/shared"
  if [ ! -d "$2/data/vidur" ] && [ ! -e "$sibling" ]; then
    mkdir -p "$sibling"
    ln -s "$PWD/data" "$sibling/data"
  fi
  echo "$rev"
}
