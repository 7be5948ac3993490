#!/usr/bin/env bash
# chromium.sh installs the headless browser that timerd's dashboard test drives.
#
#   scripts/chromium.sh        install Debian's chromium package if /usr/bin/chromium is missing
#
# It starts nothing: the test launches /usr/bin/chromium itself (headless, a fresh profile, no
# network services) and stops it by pid when it ends. Typical use, as `make test` does:
#
#   scripts/chromium.sh && (cd timerd && TIMERD_REQUIRE=1 go test -race ./internal/dashboard/)
#
# Only the Debian package is used: no download of a browser build from elsewhere.
set -euo pipefail

log() { printf 'chromium.sh: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

chromium=/usr/bin/chromium

install_chromium() {
	[[ -x $chromium ]] && return 0
	local sudo=()
	if [[ $EUID -ne 0 ]]; then
		command -v sudo >/dev/null || die "$chromium is missing and we are not root (no sudo either)"
		sudo=(sudo)
	fi
	log "installing chromium from Debian packages"
	"${sudo[@]}" apt-get update -qq
	"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		chromium fonts-liberation >/dev/null
	[[ -x $chromium ]] || die "the chromium package did not provide $chromium"
}

main() {
	case ${1:-} in
	"" | install) install_chromium ;;
	*) die "usage: $0 [install]" ;;
	esac
	log "$("$chromium" --version 2>/dev/null || echo "$chromium")"
}

# main runs from the last line, so bash has parsed the whole script before running any of it.
main "$@"; exit
