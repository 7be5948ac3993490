#!/usr/bin/env bash
# redis.sh starts and stops the Redis servers that rediswheel's integration tests run against.
#
#   scripts/redis.sh up           install redis-server if missing, start all servers, write .redis/env
#   scripts/redis.sh up-standalone  the same with the standalone server only (make timerd needs no more)
#   scripts/redis.sh restart-aof  kill -9 the AOF server and start it again on the same data (crash test)
#   scripts/redis.sh down         stop every server started here, by pid, and remove .redis/
#   scripts/redis.sh status       show what is running
#
# Servers (loopback only, persistence off unless noted), each in its own dir under <repo>/.redis/:
#   standalone  127.0.0.1:16379
#   cluster     127.0.0.1:17001-17003, 3 masters, no replicas (bus ports 27001-27003)
#   aof         127.0.0.1:16380, appendonly yes, appendfsync always
# Override the ports with REDIS_SH_PORT, REDIS_SH_CLUSTER_PORTS ("17001 17002 17003"), REDIS_SH_AOF_PORT.
#
# Typical use, making sure the servers go away even if the tests fail or are interrupted:
#
#   trap 'scripts/redis.sh down' EXIT
#   scripts/redis.sh up && . .redis/env && (cd rediswheel && REDISWHEEL_REQUIRE=1 go test -race ./...)
#
# `up` reuses servers that are already up and healthy; otherwise it stops ours and starts afresh.
# Only processes whose pids this script recorded are ever signalled.
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$script_dir/.." && pwd)
base="$root/.redis"
self="$script_dir/$(basename "${BASH_SOURCE[0]}")"

port=${REDIS_SH_PORT:-16379}
read -r -a cluster_ports <<<"${REDIS_SH_CLUSTER_PORTS:-17001 17002 17003}"
aof_port=${REDIS_SH_AOF_PORT:-16380}

log() { printf 'redis.sh: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

# standalone_only: set by up-standalone, so that all_servers (and with it
# healthy and write_env) knows of the standalone server alone; down still
# stops every server, whichever up started them.
standalone_only=

# all_servers prints "name port" for every server this script manages.
all_servers() {
	echo "standalone $port"
	[[ -z $standalone_only ]] || return 0
	local p
	for p in "${cluster_ports[@]}"; do echo "cluster-$p $p"; done
	echo "aof $aof_port"
}

install_redis() {
	command -v redis-server >/dev/null && command -v redis-cli >/dev/null && return 0
	local sudo=()
	if [[ $EUID -ne 0 ]]; then
		command -v sudo >/dev/null || die "redis-server is missing and we are not root (no sudo either)"
		sudo=(sudo)
	fi
	log "installing redis-server and redis-tools from Debian packages"
	"${sudo[@]}" apt-get update -qq
	# Where an init system runs, the package also starts its own service on :6379; we neither use
	# nor touch it.
	"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server redis-tools >/dev/null
}

# port_in_use succeeds if something accepts TCP connections on 127.0.0.1:$1.
port_in_use() {
	(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# our_pid prints the pid of the server called $1 on port $2 if it is alive and is the
# redis-server this script started (the pid may have been reused since).
our_pid() {
	local pidfile="$base/$1/redis.pid" pid cmd
	[[ -s $pidfile ]] || return 1
	pid=$(<"$pidfile")
	[[ $pid =~ ^[0-9]+$ ]] || return 1
	cmd=$(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline") || return 1
	[[ $cmd == *redis-server*":$2"* ]] || return 1
	echo "$pid"
}

# alive succeeds while process $1 exists and is not a zombie: pid 1 here may take seconds to
# reap an exited daemon, and kill -0 succeeds on a zombie.
alive() {
	local stat
	{ stat=$(<"/proc/$1/stat"); } 2>/dev/null || return 1
	stat=${stat##*) }
	[[ ${stat%% *} != Z ]]
}

cli() { local p=$1; shift; redis-cli -h 127.0.0.1 -p "$p" "$@"; }

# wait_ready waits until the server on port $1 answers PING with PONG (a server still
# loading its data set answers LOADING instead) and reports loading:0.
wait_ready() {
	local p=$1 i
	for ((i = 0; i < 200; i++)); do
		if [[ $(cli "$p" ping 2>/dev/null) == PONG &&
			$(cli "$p" info persistence 2>/dev/null) == *loading:0* ]]; then
			return 0
		fi
		sleep 0.05
	done
	die "server on port $p did not become ready; see $base/*/redis.log"
}

write_conf() { # name port extra-lines...
	local name=$1 p=$2 dir="$base/$1"
	shift 2
	mkdir -p "$dir"
	{
		echo "bind 127.0.0.1"
		echo "port $p"
		echo "daemonize yes"
		echo "pidfile \"$dir/redis.pid\""
		echo "logfile \"$dir/redis.log\""
		echo "dir \"$dir\""
		echo 'save ""'
		echo "appendonly no"
		echo "maxmemory-policy noeviction"
		printf '%s\n' "$@"
	} >"$dir/redis.conf"
}

# wait_port_free waits until nothing listens on port $1 any more: a killed multi-threaded
# server's main thread can be a zombie while its other threads still hold the socket.
wait_port_free() {
	local i
	for ((i = 0; i < 200; i++)); do
		port_in_use "$1" || return 0
		sleep 0.025
	done
	return 1
}

start_server() { # name port
	local name=$1 p=$2
	port_in_use "$p" && die "port $p is already in use by a process that is not ours; set REDIS_SH_*PORT*"
	# A cluster node also listens on its bus port, port + 10000.
	if grep -q '^cluster-enabled yes' "$base/$name/redis.conf" && port_in_use $((p + 10000)); then
		die "cluster bus port $((p + 10000)) (port $p + 10000) is already in use; set REDIS_SH_CLUSTER_PORTS"
	fi
	rm -f "$base/$name/redis.pid"
	# 9<&-: the daemon must not inherit, and so hold forever, the lock below.
	redis-server "$base/$name/redis.conf" >/dev/null 9<&-
	wait_ready "$p"
}

stop_server() { # name port
	local name=$1 p=$2 pid i
	pid=$(our_pid "$name" "$p") || return 0
	kill "$pid" 2>/dev/null || return 0
	for ((i = 0; i < 100; i++)); do
		alive "$pid" || { wait_port_free "$p"; return 0; }
		sleep 0.05
	done
	log "server $name (pid $pid) ignored SIGTERM for 5s; sending SIGKILL"
	kill -9 "$pid" 2>/dev/null || true
	for ((i = 0; i < 100; i++)); do
		alive "$pid" || { wait_port_free "$p"; return 0; }
		sleep 0.05
	done
	die "server $name (pid $pid) survived SIGKILL"
}

cluster_ok() {
	local p
	for p in "${cluster_ports[@]}"; do
		[[ $(cli "$p" cluster info 2>/dev/null) == *cluster_state:ok* ]] || return 1
	done
}

healthy() {
	local name p
	while read -r name p; do
		our_pid "$name" "$p" >/dev/null || return 1
		[[ $(cli "$p" ping 2>/dev/null) == PONG ]] || return 1
	done < <(all_servers)
	[[ -n $standalone_only ]] || cluster_ok
}

write_env() {
	local addrs=() p
	for p in "${cluster_ports[@]}"; do addrs+=("127.0.0.1:$p"); done
	if [[ -n $standalone_only ]]; then
		echo "export REDISWHEEL_ADDR=127.0.0.1:$port" >"$base/env.tmp"
		mv "$base/env.tmp" "$base/env"
		return 0
	fi
	{
		echo "export REDISWHEEL_ADDR=127.0.0.1:$port"
		echo "export REDISWHEEL_CLUSTER_ADDRS=$(IFS=,; echo "${addrs[*]}")"
		echo "export REDISWHEEL_AOF_ADDR=127.0.0.1:$aof_port"
		# A shell command (run it with sh -c) that needs nothing else from the environment.
		echo "export REDISWHEEL_AOF_RESTART=\"REDIS_SH_AOF_PORT=$aof_port $(printf %q "$self") restart-aof\""
	} >"$base/env.tmp"
	mv "$base/env.tmp" "$base/env"
}

cmd_up() {
	install_redis
	if healthy; then
		write_env
		log "already up; reusing (env in $base/env)"
		return 0
	fi
	cmd_down
	mkdir -p "$base"
	write_conf standalone "$port"
	start_server standalone "$port"
	if [[ -n $standalone_only ]]; then
		write_env
		log "up, standalone only (env in $base/env)"
		return 0
	fi

	local p nodes=()
	for p in "${cluster_ports[@]}"; do
		write_conf "cluster-$p" "$p" "cluster-enabled yes" "cluster-config-file nodes.conf" \
			"cluster-node-timeout 5000"
		start_server "cluster-$p" "$p"
		nodes+=("127.0.0.1:$p")
	done
	redis-cli --cluster create "${nodes[@]}" --cluster-replicas 0 --cluster-yes >"$base/cluster-create.log" 2>&1 ||
		die "cluster create failed; see $base/cluster-create.log"
	local i
	for ((i = 0; i < 200; i++)); do
		cluster_ok && break
		sleep 0.05
	done
	cluster_ok || die "cluster did not reach cluster_state:ok in 10s"

	write_conf aof "$aof_port" "appendonly yes" "appendfsync always"
	start_server aof "$aof_port"

	write_env
	log "up (env in $base/env)"
}

cmd_restart_aof() {
	local pid i
	[[ -f $base/aof/redis.conf ]] || die "the AOF server was never started; run '$0 up' first"
	if pid=$(our_pid aof "$aof_port"); then
		kill -9 "$pid"
		for ((i = 0; i < 200; i++)); do
			alive "$pid" || break
			sleep 0.025
		done
		alive "$pid" && die "AOF server (pid $pid) survived SIGKILL"
		wait_port_free "$aof_port" || die "port $aof_port still in use 5s after killing the AOF server"
	fi
	start_server aof "$aof_port"
}

cmd_down() {
	local name p standalone_only= # every server, whichever up started them
	while read -r name p; do
		stop_server "$name" "$p"
	done < <(all_servers)
	rm -rf "$base"
}

cmd_status() {
	local name p pid
	while read -r name p; do
		if pid=$(our_pid "$name" "$p"); then
			echo "$name 127.0.0.1:$p pid $pid $(cli "$p" ping 2>&1)"
		else
			echo "$name 127.0.0.1:$p down"
		fi
	done < <(all_servers)
}

# main runs from the last line, so bash has parsed the whole script before running any of it and
# an edit to the file (a git pull) during a run cannot change what runs.
main() {
	# One invocation at a time: two concurrent `up`s would race for the same ports and pidfiles.
	exec 9<"$self"
	if command -v flock >/dev/null; then flock 9; fi

	case ${1:-} in
	up) cmd_up ;;
	up-standalone) standalone_only=1 cmd_up ;;
	restart-aof) cmd_restart_aof ;;
	down) cmd_down ;;
	status) cmd_status ;;
	*) die "usage: $0 up|up-standalone|restart-aof|down|status" ;;
	esac
}

main "$@"; exit
