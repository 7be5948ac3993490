# make demo   the main job: the wheel beside time.AfterFunc on a simulated server (needs only Go)
# make test   vet, then every module's tests under -race, Redis, PostgreSQL, timerd and bench included
#             (installs and starts Redis and PostgreSQL, installs Chromium for the dashboard's browser test)
# make timerd the delayed-task service on 127.0.0.1:8080, tasks in a SQLite file in .timerd/data (needs
#             only Go); flags in ARGS: make timerd ARGS="-allow-callback 127.0.0.1:9000";
#             TIMERD_WITH_REDIS=1 make timerd runs it on one Redis (scripts/redis.sh up-standalone)
# make bench  benchmarks and docs/BENCHMARKS.md (BENCH_QUICK=1 for a run under 8 minutes)
# make lint / make cover / make fuzz
#
# go.work puts every module in one workspace (so an editor and `go test` see them all, each
# module built against the others' code here); the targets below run in it. `make test`
# first checks, with scripts/modules.sh, that go.work lists every module and that each one
# also builds from its own go.mod alone and is tidy, as a user's `go get` builds it.
# go.work needs go 1.26 (timerd's and sqlitewheel's); `make demo` builds the core module
# alone (GOWORK=off), so it still needs only go 1.24.

GO      ?= go
FUZZTIME ?= 30s

.PHONY: all demo test modules vet test-core test-stores bench bench-core lint cover fuzz timerd

all: test

demo:
	GOWORK=off $(GO) run ./cmd/demo $(DEMO_FLAGS)

test: modules vet test-core test-stores

modules:
	GO=$(GO) $(CURDIR)/scripts/modules.sh

vet:
	$(GO) vet ./...
	cd durable && $(GO) vet ./...
	cd rediswheel && $(GO) vet ./...
	cd durable/durablemetrics && $(GO) vet ./...
	cd examples/cron && $(GO) vet ./...
	cd bench && $(GO) vet ./...
	cd timerd && $(GO) vet ./...
	cd pgwheel && $(GO) vet ./...
	cd sqlitewheel && $(GO) vet ./...
	cd bench/sqlbench && $(GO) vet ./...

# durable/'s tests need no store server (rediswheel runs its storetest suite
# on Redis in test-stores), nor do sqlitewheel's (a file per test). bench/'s own tests, not its benchmarks; redisbench's needs Redis and runs
# in test-stores, as do bench/sqlbench's PostgreSQL and Redis Cluster tests (its SQLite ones run here).
test-core:
	$(GO) test -race -count=1 -timeout 8m ./...
	cd durable && $(GO) test -race -count=1 -timeout 5m ./...
	cd durable/durablemetrics && $(GO) test -race -count=1 -timeout 3m ./...
	cd sqlitewheel && $(GO) test -race -count=1 -timeout 8m ./...
	cd examples/cron && $(GO) test -race -count=1 -timeout 3m ./...
	cd bench && $(GO) test -race -count=1 -timeout 5m ./...
	cd bench/sqlbench && $(GO) test -race -count=1 -timeout 5m ./...

# The Redis servers (scripts/redis.sh) and PostgreSQL (scripts/postgres.sh)
# are started and stopped by pid, even when the tests fail. timerd's tests run
# on all of them (and on SQLite files of their own); its dashboard's browser
# test saves its screenshots in .artifacts/.
test-stores:
	@set -e; \
	trap '$(CURDIR)/scripts/redis.sh down; $(CURDIR)/scripts/postgres.sh down' EXIT; \
	$(CURDIR)/scripts/redis.sh up; \
	$(CURDIR)/scripts/postgres.sh up; \
	$(CURDIR)/scripts/chromium.sh; \
	. ./.redis/env; \
	. ./.postgres/env; \
	(cd rediswheel && REDISWHEEL_REQUIRE=1 $(GO) test -race -count=1 -timeout 8m ./...); \
	(cd pgwheel && PGWHEEL_REQUIRE=1 $(GO) test -race -count=1 -timeout 8m ./...); \
	(cd timerd && TIMERD_REQUIRE=1 PGWHEEL_REQUIRE=1 TIMERD_ARTIFACTS=$(CURDIR)/.artifacts $(GO) test -race -count=1 -timeout 8m ./...); \
	(cd bench && $(GO) test -race -count=1 -timeout 5m ./redisbench); \
	(cd bench/sqlbench && PGWHEEL_REQUIRE=1 REDISWHEEL_REQUIRE=1 $(GO) test -race -count=1 -timeout 5m -run 'Postgres|RedisCluster' ./...)

# Root-package benchmarks against the runtime's timers, in one run; each
# HeapPerTimer iteration arms a million timers, so it runs once per count.
bench-core:
	$(GO) test -run '^$$' -bench 'AfterFuncStop|Reset' -benchtime=1s -count 6 . | tee bench-core.txt
	$(GO) test -run '^$$' -bench 'HeapPerTimer' -benchtime=1x -count 6 . | tee -a bench-core.txt

bench:
	$(MAKE) -C bench report

lint:
	@test -z "$$(gofmt -l . | tee /dev/stderr)" || (echo "gofmt: files above need formatting"; exit 1)
	$(GO) vet ./...
	cd rediswheel && $(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...

cover:
	$(GO) test -count=1 -coverprofile=coverage.out ./... && $(GO) tool cover -func=coverage.out | tail -1

fuzz:
	$(GO) test -run '^$$' -fuzz=FuzzAPISequence -fuzztime=$(FUZZTIME) .

# timerd in the foreground on 127.0.0.1:8080, its token in .timerd/token, ARGS its flags; Ctrl-C stops
# it and Redis.
timerd:
	$(CURDIR)/scripts/timerd.sh $(ARGS)
