#!/usr/bin/env bash
# modules.sh checks that the workspace and the modules agree, for `make test`:
#
#   1. go.work uses every module of the repository (every directory with a
#      go.mod), so an editor and `go test` see them all;
#   2. each module builds from its own go.mod alone (GOWORK=off), as a user's
#      `go get` builds it: the workspace would hide a missing require;
#   3. each module's go.mod and go.sum are tidy (`go mod tidy -diff`).
#
# It changes nothing; it prints what to fix and exits 1.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
go=${GO:-go}

log() { printf 'modules.sh: %s\n' "$*" >&2; }

# The directories of go.mod files, as go.work spells them: ".", "./durable".
found=$(find . -name go.mod -not -path './.*' -not -path '*/testdata/*' | sed -e 's#/go.mod$##' -e 's#^\./##' -e 's#^$#.#' -e 's#^\([^.]\)#./\1#' | sort)
# go list -m in workspace mode lists the workspace's modules, by directory.
used=$($go list -m -f '{{.Dir}}' | sed -e "s#^$root##" -e 's#^/#./#' -e 's#^$#.#' | sort)
if [[ $found != "$used" ]]; then
	log "go.work's modules differ from the repository's go.mod files:"
	diff <(echo "$found") <(echo "$used") | sed 's/^/  /' >&2 || true
	log "fix go.work (go work use -r .)"
	exit 1
fi

status=0
for m in $found; do
	if ! (cd "$m" && GOWORK=off $go build ./... && GOWORK=off $go mod tidy -diff >/dev/null); then
		log "module $m: its own go.mod does not build it, or is not tidy (cd $m && GOWORK=off go mod tidy)"
		status=1
	fi
done
exit $status
