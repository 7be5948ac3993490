#!/usr/bin/env bash
# timerd.sh runs timerd locally, in the foreground, for `make timerd`:
#
#   1. one Redis up with scripts/redis.sh up-standalone (its port: REDIS_SH_PORT);
#   2. a random token in .timerd/token, made once and kept (mode 600);
#   3. timerd built into .timerd/timerd and run against the standalone Redis,
#      on 127.0.0.1:8080 unless TIMERD_LISTEN says otherwise.
#
# Ctrl-C (or SIGTERM to this script) stops timerd gracefully, then Redis.
# Other TIMERD_* variables and any arguments (flags) go to timerd:
# scripts/timerd.sh -log-level debug, or make timerd ARGS='-log-level debug'.
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$script_dir/.." && pwd)
state="$root/.timerd"

timerd_pid=
# stop_all stops timerd by its pid (SIGTERM: a graceful shutdown) and waits
# for it, then Redis.
stop_all() {
	if [[ -n $timerd_pid ]]; then
		kill -TERM "$timerd_pid" 2>/dev/null || true
		wait "$timerd_pid" 2>/dev/null || true
	fi
	"$script_dir/redis.sh" down
}
trap stop_all EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
"$script_dir/redis.sh" up-standalone
# shellcheck source=/dev/null
. "$root/.redis/env"

mkdir -p "$state"
chmod 700 "$state"
if [[ ! -s $state/token ]]; then
	(umask 077 && od -An -N32 -tx1 /dev/urandom | tr -d ' \n' >"$state/token" && echo >>"$state/token")
fi

(cd "$root/timerd" && go build -o "$state/timerd" ./cmd/timerd)

export TIMERD_LISTEN=${TIMERD_LISTEN:-127.0.0.1:8080}
export TIMERD_REDIS_URL=${TIMERD_REDIS_URL:-redis://$REDISWHEEL_ADDR/0}
export TIMERD_TOKEN_FILE=$state/token
cat >&2 <<MSG
timerd.sh: timerd on http://$TIMERD_LISTEN against $TIMERD_REDIS_URL; Ctrl-C stops it and Redis.
timerd.sh: token in $state/token:  export TOKEN=\$(cat .timerd/token)
MSG
# Not exec, and in the background: a signal to this script must reach timerd
# (stop_all) and then stop Redis, whoever sends it.
"$state/timerd" "$@" &
timerd_pid=$!
wait "$timerd_pid"
