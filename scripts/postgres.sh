#!/usr/bin/env bash
# postgres.sh starts and stops the PostgreSQL server that pgwheel's integration tests run against.
#
#   scripts/postgres.sh up                 install PostgreSQL if missing, initdb, start, write .postgres/env
#   scripts/postgres.sh restart-immediate  pg_ctl stop -m immediate (a crash: no shutdown checkpoint),
#                                          then start again on the same data
#   scripts/postgres.sh down               stop the server started here (pg_ctl stop -m fast, then by
#                                          pid), remove .postgres/ and the data directory
#   scripts/postgres.sh status             show what is running
#
# The server listens on 127.0.0.1 only, port POSTGRES_SH_PORT (default 15432), no Unix socket, with
# password (scram) authentication and the default fsync settings (durability is tested). It runs as a
# non-root system user (POSTGRES_SH_USER, default pgtest, created if absent when we are root), since
# PostgreSQL refuses to run as root. Its data lives in <repo>/.postgres/pg when that user can reach
# it, otherwise in a temporary directory that .postgres/datadir names. `up` creates the role and
# database pgwheel and writes .postgres/env:
#
#   export PGWHEEL_DSN=postgres://pgwheel:<password>@127.0.0.1:<port>/pgwheel?sslmode=disable
#   export PGWHEEL_RESTART="..."   a shell command (sh -c) that runs restart-immediate
#
# Typical use, making sure the server goes away even if the tests fail or are interrupted:
#
#   trap 'scripts/postgres.sh down' EXIT
#   scripts/postgres.sh up && . .postgres/env && (cd pgwheel && PGWHEEL_REQUIRE=1 go test -race ./...)
#
# `up` reuses a server that is already up and healthy; otherwise it stops ours and starts afresh.
# Only the process whose pid the server recorded in our data directory is ever signalled.
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$script_dir/.." && pwd)
base="$root/.postgres"
self="$script_dir/$(basename "${BASH_SOURCE[0]}")"

port=${POSTGRES_SH_PORT:-15432}
pguser=${POSTGRES_SH_USER:-pgtest}

log() { printf 'postgres.sh: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

# bindir prints the directory holding initdb and pg_ctl: Debian keeps them in
# /usr/lib/postgresql/<version>/bin, off PATH; the newest version wins.
bindir() {
	local d
	if command -v initdb >/dev/null && command -v pg_ctl >/dev/null; then
		d=$(dirname "$(readlink -f "$(command -v pg_ctl)")")
		[[ -x $d/initdb && -x $d/postgres ]] && { echo "$d"; return 0; }
	fi
	d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
	[[ -n $d && -x $d/initdb && -x $d/pg_ctl && -x $d/postgres ]] || return 1
	echo "$d"
}

as_root() {
	if [[ $EUID -eq 0 ]]; then
		"$@"
	else
		command -v sudo >/dev/null || die "need root for: $* (no sudo either)"
		sudo "$@"
	fi
}

install_postgres() {
	bindir >/dev/null && command -v psql >/dev/null && return 0
	log "installing postgresql from Debian packages"
	as_root apt-get update -qq
	# Where an init system runs, the package also starts its own cluster on :5432; we neither use
	# nor touch it.
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql postgresql-client >/dev/null
	bindir >/dev/null || die "postgresql installed, but no initdb/pg_ctl under /usr/lib/postgresql/*/bin"
}

# ensure_user makes sure the non-root user the server runs as exists (root only).
ensure_user() {
	[[ $EUID -ne 0 ]] && return 0
	id -u "$pguser" >/dev/null 2>&1 && return 0
	log "creating system user $pguser"
	useradd -r -M -d /nonexistent -s /usr/sbin/nologin "$pguser"
}

# as_pg runs a command as the server's user (as ourselves when we are not root), from /: the
# current directory may be one that user cannot enter.
as_pg() {
	if [[ $EUID -eq 0 ]]; then
		(cd / && runuser -u "$pguser" -- "$@")
	else
		"$@"
	fi
}

# pgdir prints the directory holding data/ and postgres.log, once up has chosen it.
pgdir() {
	[[ -s $base/datadir ]] || return 1
	cat "$base/datadir"
}

alive() {
	local stat
	{ stat=$(<"/proc/$1/stat"); } 2>/dev/null || return 1
	stat=${stat##*) }
	[[ ${stat%% *} != Z ]]
}

# our_pid prints the postmaster's pid if it is alive and is the postgres running on our data
# directory (the pid may have been reused since).
our_pid() {
	local dir pid cmd
	dir=$(pgdir) || return 1
	[[ -s $dir/data/postmaster.pid ]] || return 1
	pid=$(head -n 1 "$dir/data/postmaster.pid")
	[[ $pid =~ ^[0-9]+$ ]] || return 1
	cmd=$(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline") || return 1
	[[ $cmd == *postgres*"$dir/data"* ]] || return 1
	echo "$pid"
}

port_in_use() {
	(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

superuser_dsn() {
	local dir
	dir=$(pgdir) || return 1
	echo "postgres://postgres:$(<"$dir/superpw")@127.0.0.1:$port/postgres?sslmode=disable"
}

sql() { psql "$(superuser_dsn)" -X -q -t -A -v ON_ERROR_STOP=1 "$@"; }

healthy() {
	our_pid >/dev/null || return 1
	[[ -s $base/env ]] || return 1
	[[ $(sql -c 'select 1' 2>/dev/null) == 1 ]]
}

pg_start() {
	local dir bin
	dir=$(pgdir) || die "no data directory; run '$0 up'"
	bin=$(bindir)
	port_in_use "$port" && die "port $port is already in use by a process that is not ours; set POSTGRES_SH_PORT"
	# 9<&-: the server must not inherit, and so hold forever, the lock below.
	as_pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w -t 120 -s \
		-o "-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories=''" start 9<&- ||
		die "postgres did not start; see $dir/postgres.log"
}

pg_stop() { # mode
	local dir bin pid i
	pid=$(our_pid) || return 0
	dir=$(pgdir)
	bin=$(bindir)
	as_pg "$bin/pg_ctl" -D "$dir/data" -m "$1" -w -t 30 -s stop || true
	for ((i = 0; i < 100; i++)); do
		alive "$pid" || return 0
		sleep 0.05
	done
	log "postgres (pid $pid) still running after pg_ctl stop -m $1; sending SIGQUIT"
	kill -QUIT "$pid" 2>/dev/null || true
	for ((i = 0; i < 100; i++)); do
		alive "$pid" || return 0
		sleep 0.05
	done
	log "postgres (pid $pid) ignored SIGQUIT for 5s; sending SIGKILL"
	kill -9 "$pid" 2>/dev/null || true
	for ((i = 0; i < 100; i++)); do
		alive "$pid" || return 0
		sleep 0.05
	done
	die "postgres (pid $pid) survived SIGKILL"
}

random_password() { od -An -N16 -tx1 /dev/urandom | tr -d ' \n'; }

write_env() {
	local dir
	dir=$(pgdir)
	{
		echo "export PGWHEEL_DSN=postgres://pgwheel:$(<"$dir/userpw")@127.0.0.1:$port/pgwheel?sslmode=disable"
		echo "export PGWHEEL_RESTART=\"POSTGRES_SH_PORT=$port POSTGRES_SH_USER=$pguser $(printf %q "$self") restart-immediate\""
	} >"$base/env.tmp"
	mv "$base/env.tmp" "$base/env"
}

cmd_up() {
	install_postgres
	ensure_user
	if healthy; then
		write_env
		log "already up; reusing (env in $base/env)"
		return 0
	fi
	cmd_down
	mkdir -p "$base"
	local dir="$base/pg"
	mkdir -p "$dir"
	[[ $EUID -eq 0 ]] && chown "$pguser" "$dir"
	if ! as_pg test -w "$dir"; then
		# The repository sits where the server's user cannot reach (a private home directory).
		rmdir "$dir"
		dir=$(mktemp -d "${TMPDIR:-/tmp}/pgwheel-postgres.XXXXXX")
		chmod 0755 "$dir"
		[[ $EUID -eq 0 ]] && chown "$pguser" "$dir"
	fi
	echo "$dir" >"$base/datadir"

	local superpw userpw bin
	superpw=$(random_password)
	userpw=$(random_password)
	bin=$(bindir)
	# The passwords go through files the server's user can read only while initdb runs.
	(umask 077 && echo "$superpw" >"$dir/superpw" && echo "$userpw" >"$dir/userpw")
	[[ $EUID -eq 0 ]] && chown "$pguser" "$dir/superpw"
	as_pg "$bin/initdb" -D "$dir/data" -U postgres --pwfile="$dir/superpw" -E UTF8 --locale=C.UTF-8 \
		--auth-local=scram-sha-256 --auth-host=scram-sha-256 >"$dir/initdb.log" 2>&1 ||
		die "initdb failed; see $dir/initdb.log"
	[[ $EUID -eq 0 ]] && chown root "$dir/superpw"
	pg_start
	sql -c "CREATE ROLE pgwheel LOGIN PASSWORD '$userpw'" >/dev/null
	sql -c "CREATE DATABASE pgwheel OWNER pgwheel" >/dev/null
	write_env
	log "up on 127.0.0.1:$port (env in $base/env)"
}

cmd_restart_immediate() {
	pgdir >/dev/null || die "the server was never started; run '$0 up' first"
	pg_stop immediate
	pg_start
}

cmd_down() {
	local dir=""
	dir=$(pgdir) || true
	pg_stop fast
	if [[ -n $dir && $dir != "$base/pg" && $dir == "${TMPDIR:-/tmp}"/pgwheel-postgres.* ]]; then
		rm -rf "$dir"
	fi
	rm -rf "$base"
}

cmd_status() {
	local pid
	if pid=$(our_pid); then
		echo "postgres 127.0.0.1:$port pid $pid $(sql -c 'select version()' 2>&1 | head -n 1)"
	else
		echo "postgres 127.0.0.1:$port down"
	fi
}

# main runs from the last line, so bash has parsed the whole script before running any of it and
# an edit to the file (a git pull) during a run cannot change what runs.
main() {
	# One invocation at a time: two concurrent `up`s would race for the port and the data directory.
	exec 9<"$self"
	if command -v flock >/dev/null; then flock 9; fi

	case ${1:-} in
	up) cmd_up ;;
	restart-immediate) cmd_restart_immediate ;;
	down) cmd_down ;;
	status) cmd_status ;;
	*) die "usage: $0 up|restart-immediate|down|status" ;;
	esac
}

main "$@"; exit
