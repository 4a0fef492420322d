#!/usr/bin/env bash
# Starts a Streetflow deployment on this machine: N API processes and M worker processes sharing one
# PostgreSQL database and one Redis queue (docs/deployment.md). Ctrl-C (or SIGTERM) stops every process
# with SIGTERM, so workers hand their jobs back, and waits for them.
#
#   scripts/cluster.sh [--apis N] [--workers M] [--port P] [--job-workers K] [--no-demo]
#
# API i listens on port P+i-1 (default 8080, 8081, …); put any load balancer in front of them. The first
# API process makes the demo data in an empty database (unless --no-demo) before the others start.
# Environment: STREETFLOW_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/streetflow; the
# database must exist: createdb streetflow), STREETFLOW_REDIS_URL (default redis://127.0.0.1:6379),
# STREETFLOW_REDIS_PREFIX, STREETFLOW_DATA_DIR (demo key and password files; default ./var-cluster) and
# every other setting of `streetflow serve`, passed through.
set -euo pipefail

apis=2 workers=2 port=${PORT:-8080} job_workers=1 demo=()
while [ $# -gt 0 ]; do
  case "$1" in
    --apis) apis=$2; shift 2 ;;
    --workers) workers=$2; shift 2 ;;
    --port) port=$2; shift 2 ;;
    --job-workers) job_workers=$2; shift 2 ;;
    --no-demo) demo=(--no-demo); shift ;;
    -h | --help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
done

cd "$(dirname "$0")/.."
export STREETFLOW_DATABASE_URL=${STREETFLOW_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/streetflow}
export STREETFLOW_REDIS_URL=${STREETFLOW_REDIS_URL:-redis://127.0.0.1:6379}
export STREETFLOW_DATA_DIR=${STREETFLOW_DATA_DIR:-./var-cluster}
mkdir -p "$STREETFLOW_DATA_DIR"

# The same build as `npm start`: only when a source changed since the last one.
npx tsx scripts/build-if-changed.ts

pids=()
stop() {
  trap - INT TERM
  echo "stopping ${#pids[@]} processes (SIGTERM: workers hand their jobs back)" >&2
  kill -TERM "${pids[@]}" 2>/dev/null || true
  wait "${pids[@]}" 2>/dev/null || true
  exit 0
}
trap stop INT TERM

# One process, its output prefixed with its name; its pid is added to pids.
start() {
  local name=$1
  shift
  node dist/cli/index.js serve "$@" > >(sed -u "s/^/[$name] /") 2>&1 &
  pids+=($!)
}

wait_healthy() {
  local url=$1 pid=$2
  until curl -sf "$url/healthz" >/dev/null; do
    kill -0 "$pid" 2>/dev/null || { echo "the process for $url exited" >&2; stop; }
    sleep 0.5
  done
}

# The first API process migrates the database and makes the demo data; the others start on a ready store.
start api-1 --role api --port "$port" "${demo[@]}"
wait_healthy "http://127.0.0.1:$port" "${pids[0]}"
for i in $(seq 2 "$apis"); do start "api-$i" --role api --port $((port + i - 1)) --no-demo; done
for i in $(seq 1 "$workers"); do start "worker-$i" --role worker --job-workers "$job_workers"; done

echo "Streetflow cluster: $apis API processes on ports $port-$((port + apis - 1)), $workers workers" \
  "($job_workers job runner(s) each); database $STREETFLOW_DATABASE_URL, queue $STREETFLOW_REDIS_URL." \
  "Ctrl-C stops them all." >&2
wait
