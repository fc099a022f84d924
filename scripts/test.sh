#!/usr/bin/env bash
# The whole test suite, as the README promises: race detector on, coverage per package.
set -euo pipefail
cd "$(dirname "$0")/.."
go test -race -cover -count=1 ./... "$@"
