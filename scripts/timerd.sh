#!/usr/bin/env bash
# timerd.sh runs timerd locally, in the foreground, for `make timerd`:
#
#   1. a random token in .timerd/token, made once and kept (mode 600);
#   2. timerd built into .timerd/timerd and run on its default store, a SQLite
#      file in .timerd/data (nothing to install), on 127.0.0.1:8080 unless
#      TIMERD_LISTEN says otherwise;
#   3. with TIMERD_WITH_REDIS=1 instead: one Redis up with scripts/redis.sh
#      up-standalone (its port: REDIS_SH_PORT), and timerd on it.
#
# Ctrl-C (or SIGTERM to this script) stops timerd gracefully, then Redis if
# it started one.
# Other TIMERD_* variables and any arguments (flags) go to timerd:
# scripts/timerd.sh -log-level debug, or make timerd ARGS='-log-level debug'.
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$script_dir/.." && pwd)
state="$root/.timerd"

timerd_pid=
with_redis=${TIMERD_WITH_REDIS:-0}
# stop_all stops timerd by its pid (SIGTERM: a graceful shutdown) and waits
# for it, then Redis.
stop_all() {
	if [[ -n $timerd_pid ]]; then
		kill -TERM "$timerd_pid" 2>/dev/null || true
		wait "$timerd_pid" 2>/dev/null || true
	fi
	if [[ $with_redis == 1 ]]; then
		"$script_dir/redis.sh" down
	fi
}
trap stop_all EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
if [[ $with_redis == 1 ]]; then
	"$script_dir/redis.sh" up-standalone
	# shellcheck source=/dev/null
	. "$root/.redis/env"
	export TIMERD_REDIS_URL=${TIMERD_REDIS_URL:-redis://$REDISWHEEL_ADDR/0}
	store="Redis at $TIMERD_REDIS_URL"
else
	export TIMERD_DATA_DIR=${TIMERD_DATA_DIR:-$state/data}
	store="SQLite in $TIMERD_DATA_DIR"
fi

mkdir -p "$state"
chmod 700 "$state"
if [[ ! -s $state/token ]]; then
	(umask 077 && od -An -N32 -tx1 /dev/urandom | tr -d ' \n' >"$state/token" && echo >>"$state/token")
fi

(cd "$root/timerd" && go build -o "$state/timerd" ./cmd/timerd)

export TIMERD_LISTEN=${TIMERD_LISTEN:-127.0.0.1:8080}
export TIMERD_TOKEN_FILE=$state/token
cat >&2 <<MSG
timerd.sh: timerd on http://$TIMERD_LISTEN, tasks in $store; Ctrl-C stops it.
timerd.sh: token in $state/token:  export TOKEN=\$(cat .timerd/token)
MSG
# Not exec, and in the background: a signal to this script must reach timerd
# (stop_all) and then stop Redis, whoever sends it.
"$state/timerd" "$@" &
timerd_pid=$!
wait "$timerd_pid"
