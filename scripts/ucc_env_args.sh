#!/usr/bin/env bash
# ucc_env_args.sh FILE: mpirun's "-x VAR=value" for every UCC_* setting of
# an ompi-config environment file (shell syntax, one VAR=value a line, no
# spaces in values), as a user exports them; the tests and benchmarks that
# run the shipped configuration take its settings from here, all of them.
set -euo pipefail
sed -n 's/^\(UCC_[A-Z0-9_]*=[^ ]*\)$/-x \1/p' "${1:?usage: ucc_env_args.sh FILE}" | tr '\n' ' '
