#!/usr/bin/env bash
# The main job on an embedded default: local processes, no GPU, no UCC.
set -euo pipefail
bin=${1:-bin/goring}
echo "== topology: clusterB, 2 nodes"
"$bin" topo show --topo clusterB --nodes 2
