# adaptivelimit: make test runs everything CI runs, on a fresh machine too (see
# CONTRIBUTING.md). .ci/run calls it with REQUIRE_ARM64=1, so that a missing qemu fails CI instead of
# skipping the arm64 leg.
SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -ec

GO          ?= go
QEMU_ARM64  ?= qemu-aarch64
JOBS        ?= $(shell nproc 2>/dev/null || echo 2)
# Each fuzz target runs for a number of inputs, not a time: a -fuzztime duration races the
# engine's own deadline (go.dev/issue/75804, fixed in Go 1.27), which under load fails the run with
# "context deadline exceeded" and no failing input. FUZZEXECS is about 10 s of fuzzing on a 2-core
# machine; FUZZBUDGETS gives the slower targets their own (name=count).
FUZZEXECS   ?= 100000
FUZZBUDGETS ?= FuzzGate=60000 FuzzProperties=60000
# Minimizing each new interesting input may take up to a minute by default, and stalls the
# run meanwhile: a short cap leaves the budget to fuzzing.
FUZZMINIMIZETIME ?= 1s
COVER_MIN   ?= 90
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
# REQUIRE_ARM64=1 fails when qemu-user is missing and cannot be installed; else that leg is
# skipped with a notice.
REQUIRE_ARM64 ?=
# REQUIRE_PROMETHEUS=1 fails when Prometheus (prometheus, promtool) is missing and cannot be
# installed; else promlimit's tests of the real Prometheus and of its rules skip with a notice.
REQUIRE_PROMETHEUS ?=

# Every module in the tree, found rather than listed, so that a new one is tested the day it
# lands: each directory holding a go.mod, the core (./) first.
MODULES := $(shell find . -name go.mod -not -path './.git/*' -not -path '*/testdata/*' \
	-not -path '*/out/*' -printf '%h\n' | sort)
VETARCHES := amd64 arm64 386 riscv64
# The version of the next release, the one place that names it: every module requires the
# repository's modules at it, as release-check checks (RELEASING.md). A command line's
# VERSION=vX.Y.Z checks another.
VERSION = v0.1.0
# The modules that are never tagged (RELEASING.md says why): release-check builds them only
# in the workspace, and lets them use the core's internal packages.
UNPUBLISHED := ./bench ./cmd/limitsim ./internal/releasecheck
OUT := out/ci

# The legs start in this order, JOBS at a time: the longest first (their times on a 2-core
# machine with warm caches, a2dead3: modules 348 s, most of it the simulator's real-time tests,
# which leave the CPU to the leg beside them; vet 58; race 189; arm64 158; release-check 11;
# fuzz 92; staticcheck 32; the rest under 31), so that no long leg starts last and runs alone:
# 469 s in all (CONTRIBUTING.md says what empty caches add).
LEGS := modules vet race arm64 release-check fuzz staticcheck cover benchmarks tidy api-check fmt

# Each leg opens with its name and closes with its time, so that a slow one shows.
START = @mkdir -p $(OUT); echo "=== $@"; date +%s > $(OUT)/$@.start
END = @echo "--- $@: $$(( $$(date +%s) - $$(cat $(OUT)/$@.start) ))s"

.PHONY: test $(LEGS) api qemu prometheus demo bench bench-check perf-baseline soak

# The legs are independent; -Otarget prints each one's output whole when it finishes. What they
# install comes first, one install at a time: a leg waiting on one let the others take its
# place in the order, and the longest leg, modules, started last.
test:
	@rm -rf $(OUT) && mkdir -p $(OUT)
	@echo "modules: $(MODULES)"
	@$(MAKE) --no-print-directory qemu prometheus
	@$(MAKE) --no-print-directory -j$(JOBS) -Otarget $(LEGS) INSTALLED=1
	@if [ -e $(OUT)/arm64-skipped ]; then \
		echo "make test: passed, but the arm64 leg was SKIPPED: $$(cat $(OUT)/arm64-skipped)"; \
	else echo "make test: passed, all legs ($(LEGS))"; fi
	@if [ -e $(OUT)/prometheus-skipped ]; then \
		echo "make test: promlimit's tests of the real Prometheus were SKIPPED: $$(cat $(OUT)/prometheus-skipped)"; fi

fmt:
	$(START)
	@files=$$(gofmt -l .); if [ -n "$$files" ]; then echo "gofmt needed: $$files"; exit 1; fi
	$(END)

# Every module (the others have no code of their own per architecture, and vetting them for
# another one would compile all their dependencies again); the core for each architecture
# the README names, where asmdecl checks the assembly's frames and the generic code builds,
# and its purego build.
vet:
	$(START)
	for m in $(MODULES); do (cd $$m && $(GO) vet ./...); done
	for arch in $(VETARCHES); do GOARCH=$$arch $(GO) vet ./...; done
	for arch in amd64 arm64; do GOARCH=$$arch $(GO) vet -tags purego ./...; done
	$(END)

# The core's tests under the race detector, one and two Ps, for the assembly and purego. The
# purego pass runs every test with a fifth of the stress tests' repetitions (-short: repeat in
# helpers_test.go): it differs from the first only in the stripes' adds.
race:
	$(START)
	$(GO) test -race -count=1 -cpu=1,2 ./...
	$(GO) test -race -count=1 -cpu=1,2 -short -tags purego ./...
	$(END)

# arm64's assembly and purego builds under qemu-user, on a CPU without LSE atomics (Cortex-A53:
# Go's atomics take their load/store-exclusive loops) and on one with them (max: CASAL, LDADDAL).
# The assembly on Cortex-A53 runs every repetition; the three others run every test with a
# fifth of the stress tests' repetitions (-short: repeat in helpers_test.go).
arm64: $(if $(INSTALLED),,qemu)
	$(START)
	@if [ -e $(OUT)/arm64-skipped ]; then echo "arm64: SKIPPED ($$(cat $(OUT)/arm64-skipped))"; exit 0; fi; \
	short=; for cpu in cortex-a53 max; do for tags in '' purego; do \
		echo "QEMU_CPU=$$cpu GOARCH=arm64 go test $$short -tags '$$tags' -exec $(QEMU_ARM64) ./..."; \
		QEMU_CPU=$$cpu GOARCH=arm64 $(GO) test -count=1 $$short -tags "$$tags" -exec $(QEMU_ARM64) ./...; \
		short=-short; \
	done; done
	$(END)

# qemu-user when it is missing: installed where we are root with apt-get, else the arm64 leg
# is skipped (or, with REQUIRE_ARM64=1, fails).
qemu:
	@mkdir -p $(OUT); command -v $(QEMU_ARM64) >/dev/null && exit 0; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "installing qemu-user for the arm64 leg"; \
		DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq qemu-user >/dev/null || true; \
	fi; \
	command -v $(QEMU_ARM64) >/dev/null && exit 0; \
	if [ -n "$(REQUIRE_ARM64)" ]; then echo "$(QEMU_ARM64) missing and not installable: the arm64 leg is required"; exit 1; fi; \
	echo "$(QEMU_ARM64) missing, and installing qemu-user needs root and apt-get" > $(OUT)/arm64-skipped; \
	echo "notice: skipping the arm64 leg: $$(cat $(OUT)/arm64-skipped)"

# Prometheus and promtool for promlimit's tests when they are missing: Debian's package,
# installed where we are root with apt-get, after qemu-user (apt-get runs one at a time); else
# those tests skip (or, with REQUIRE_PROMETHEUS=1, this fails). The modules leg requires them
# where they are present, so that none skips there.
prometheus: qemu
	@mkdir -p $(OUT); command -v prometheus >/dev/null && command -v promtool >/dev/null && exit 0; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "installing prometheus for promlimit's tests"; \
		DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null || true; \
	fi; \
	command -v prometheus >/dev/null && command -v promtool >/dev/null && exit 0; \
	if [ -n "$(REQUIRE_PROMETHEUS)" ]; then echo "prometheus or promtool missing and not installable: promlimit's tests of them are required"; exit 1; fi; \
	echo "prometheus missing, and installing it needs root and apt-get" > $(OUT)/prometheus-skipped; \
	echo "notice: promlimit's tests of the real Prometheus will be skipped: $$(cat $(OUT)/prometheus-skipped)"

staticcheck:
	$(START)
	GOBIN=$(CURDIR)/$(OUT)/bin $(GO) install $(STATICCHECK)
	for m in $(MODULES); do (cd $$m && echo "staticcheck $$m" && $(CURDIR)/$(OUT)/bin/staticcheck ./...); done
	$(CURDIR)/$(OUT)/bin/staticcheck -tags purego ./...
	$(END)

# The other modules' tests under the race detector. A module whose tests skip some work under
# it (a file built with !race) runs the tests that skipped, and only those, again without it:
# the simulator's scenarios, its real-time runs on 127.0.0.1, and with LIMITSIM_DOCS=1 the
# check that the README and docs/simulation.md show what the simulator prints, take minutes
# under the detector. The real-time runs mostly sleep: they run side by side (t.Parallel,
# -parallel 4), after the CPU-bound ones. The first pass's log is printed whole where it fails.
modules: $(if $(INSTALLED),,prometheus)
	$(START)
	prom=$$([ -e $(OUT)/prometheus-skipped ] || echo 1); for m in $(filter-out .,$(MODULES)); do \
		log=$(CURDIR)/$(OUT)/modules-$$(echo $$m | tr / _).log; \
		if ! (cd $$m && REQUIRE_PROMETHEUS=$$prom $(GO) test -race -count=1 -v ./... > $$log 2>&1); then cat $$log; exit 1; fi; \
		grep -E '^(ok|\?) ' $$log || true; \
		if grep -rlq --include='*_test.go' '^//go:build !race' $$m; then \
			skipped=$$(sed -nE 's/^ *--- SKIP: ([A-Za-z0-9_]+)[ /].*/\1/p' $$log | sort -u | paste -sd'|'); \
			echo "$$m without the race detector: $${skipped:-nothing skipped}"; \
			[ -z "$$skipped" ] || (cd $$m && LIMITSIM_DOCS=1 $(GO) test -count=1 -parallel 4 -run "^($$skipped)\$$" ./...); \
		fi; \
	done
	$(END)

# One iteration of every benchmark, at one and two Ps, so that none rots.
benchmarks:
	$(START)
	for m in $(MODULES); do (cd $$m && $(GO) test -count=1 -run='^$$' -bench=. -benchtime=1x -cpu=1,2 ./... | grep -v '^Benchmark'); done
	$(END)

# Every fuzz target, found by its name (func FuzzX in a _test.go file), for its budget of inputs.
fuzz:
	$(START)
	@found=0; for f in $$(grep -rlE --include='*_test.go' --exclude-dir=testdata --exclude-dir=.git '^func Fuzz[A-Za-z0-9_]*\(' . | sort); do \
		dir=$$(dirname $$f); mod=$$dir; while [ ! -e $$mod/go.mod ]; do mod=$$(dirname $$mod); done; \
		rel=$${dir#$$mod}; \
		for name in $$(sed -nE 's/^func (Fuzz[A-Za-z0-9_]*)\(.*/\1/p' $$f); do \
			found=$$((found+1)); \
			n=$(FUZZEXECS); for b in $(FUZZBUDGETS); do [ "$${b%%=*}" != "$$name" ] || n=$${b#*=}; done; \
			echo "fuzz $$name in $$dir for $$n inputs"; \
			(cd $$mod && $(GO) test -run='^$$' -fuzz="^$$name\$$" -fuzztime=$${n}x -fuzzminimizetime=$(FUZZMINIMIZETIME) ./$${rel#/}); \
		done; \
	done; echo "fuzz: $$found targets"
	$(END)

# Every module tidy and in go.work.
tidy:
	$(START)
	for m in $(MODULES); do (cd $$m && echo "go mod tidy -diff: $$m" && $(GO) mod tidy -diff); done
	@used=$$($(GO) work edit -json | sed -nE 's|.*"DiskPath": "(\./)?(.*)".*|\2|p'); \
	for m in $(MODULES); do \
		echo "$$used" | grep -qxF -- "$${m#./}" || { echo "$$m is not in go.work"; exit 1; }; \
	done
	$(END)

# Every module releasable at VERSION, and each published one built and vetted, tests included,
# by a user's module outside the workspace that gets the repository's modules at VERSION from
# a module proxy of the working tree (internal/releasecheck says what it checks).
release-check:
	$(START)
	$(GO) run ./internal/releasecheck -version $(VERSION) -unpublished '$(UNPUBLISHED)' $(MODULES)
	$(END)

# The exported API of each published module, listed under api/ one identifier a line as the Go
# project keeps api/go1.N.txt (internal/releasecheck/api says what it lists): api-check fails,
# naming each identifier, when the code's API is not the one listed, so that every change to
# the surface shows in review; make api writes the listings anew, to commit with the change.
api:
	$(GO) run ./internal/releasecheck/api -w -unpublished '$(UNPUBLISHED)' $(MODULES)

api-check:
	$(START)
	$(GO) run ./internal/releasecheck/api -unpublished '$(UNPUBLISHED)' $(MODULES)
	$(END)

# The core's tests outside the workspace, as a user's go get builds it, with their statement
# coverage: the core package must keep COVER_MIN%.
cover:
	$(START)
	GOWORK=off $(GO) test -count=1 -cover ./... | tee $(OUT)/cover.txt
	@core=$$(GOWORK=off $(GO) list -m); \
	pct=$$(sed -nE "s|^ok[[:space:]]+$$core[[:space:]].*coverage: ([0-9.]+)% of statements.*|\1|p" $(OUT)/cover.txt); \
	echo "core package coverage: $${pct:-?}% (minimum $(COVER_MIN)%)"; \
	awk -v p="$$pct" -v min=$(COVER_MIN) 'BEGIN { exit !(p != "" && p + 0 >= min) }'
	$(END)

demo:
	$(GO) run ./cmd/limitsim

bench bench-check perf-baseline:
	$(MAKE) -C bench $@

# Not in CI: ten minutes of the stress suite (24 variants, 25 s each) with the race detector,
# printing what each variant did and how many invariants it checked.
soak:
	$(GO) test -race -count=1 -v -run '^TestStress$$' -soak=25s -timeout=30m .
