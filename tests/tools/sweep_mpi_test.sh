#!/usr/bin/env bash
# `mpirun -np 2 sweep …` writes exactly the files one process writes (grid, selection, capacity).
# Usage: sweep_mpi_test.sh MPIEXEC SWEEP OUT_DIR (run from the repository root).
set -euo pipefail
mpiexec=$1 sweep=$2 out=$3
# Open MPI refuses to start as root (CI containers) unless told it is meant.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
rm -rf "$out" && mkdir -p "$out"
grid=(tests/tools/configs/seeded.yaml --vary scheduler.chunk_size=256..2048:x2 --seeds 3
      --slo tbt_p99_ms=60,120 --pick max:output_tok_s --baseline scheduler.chunk_size=512
      --no-plots)
capacity=(tests/tools/configs/seeded.yaml --vary scheduler.chunk_size=256,1024,4096
          --max-rate workload.arrival.qps --slo ttft_p99_ms=400 --rate-tol 0.05 --no-plots)
"$sweep" "${grid[@]}" --out "$out/grid1" --quiet
"$mpiexec" -np 2 --oversubscribe "$sweep" "${grid[@]}" --out "$out/grid2" > "$out/grid2.txt"
grep -q "× 2 ranks" "$out/grid2.txt" || { echo "the MPI run did not use 2 ranks:"; cat "$out/grid2.txt"; exit 1; }
"$sweep" "${capacity[@]}" --out "$out/cap1" --quiet
"$mpiexec" -np 2 --oversubscribe "$sweep" "${capacity[@]}" --out "$out/cap2" --quiet
for f in grid1/points.csv grid1/points.json grid1/means.csv grid1/selection.json \
         cap1/capacity.csv cap1/capacity.json; do
  cmp "$out/$f" "$out/${f/1\//2/}"
done
# Rank 0 alone writes: no file appears twice, and the other rank wrote nothing beside it.
[ "$(ls "$out/grid1" | sort)" = "$(ls "$out/grid2" | sort)" ]
echo "mpirun -np 2 sweep: the same files as one process"
