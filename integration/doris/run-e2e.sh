#!/usr/bin/env bash
# Starts Apache Doris (one FE, one BE) with Docker Compose, creates the
# tables of init.sql, and runs dorisio's e2e suite against it:
#
#   integration/doris/run-e2e.sh                       # Doris 2.1.11
#   DORIS_VERSION=3.0.8 integration/doris/run-e2e.sh   # the 3.0 line
#   KEEP=1 integration/doris/run-e2e.sh                # leave Doris running after
#
# Extra arguments go to `go test` (e.g. -run TestATableThatRejectsRows).
# Needs Docker with the compose plugin, Go, and vm.max_map_count >= 2000000.
set -euo pipefail
cd "$(dirname "$0")/../.."

export DORIS_VERSION="${DORIS_VERSION:-2.1.11}"
compose=(docker compose -f integration/doris/docker-compose.yml)

if [ "$(uname -s)" = Linux ] && [ "$(cat /proc/sys/vm/max_map_count)" -lt 2000000 ]; then
  echo "run-e2e: vm.max_map_count is $(cat /proc/sys/vm/max_map_count); the Doris BE needs 2000000:" >&2
  echo "  sudo sysctl -w vm.max_map_count=2000000" >&2
  exit 1
fi

echo "run-e2e: starting Apache Doris ${DORIS_VERSION} (first pull: a few GB)"
"${compose[@]}" up -d --wait fe be
if [ -z "${KEEP:-}" ]; then
  trap '"${compose[@]}" down' EXIT
fi
"${compose[@]}" run --rm init

echo "run-e2e: go test ./integration/e2e against http://127.0.0.1:8030"
DORISIO_TEST_FE=http://127.0.0.1:8030 \
DORISIO_TEST_USER=root \
DORISIO_TEST_PASSWORD= \
DORISIO_TEST_DB=dorisio_test \
  go test -count=1 -v "$@" ./integration/e2e/
