# adaptivelimit: make test runs everything CI runs.
GO ?= go
QEMU_ARM64 ?= qemu-aarch64
CORE := ./ ./internal/... ./httplimit
MODULES := ./bench/... ./cmd/limitsim/... ./grpclimit/... ./promlimit/... ./otellimit/...

.PHONY: test vet test-amd64 test-purego test-arm64 test-modules demo bench bench-check perf-baseline qemu soak

test: vet test-amd64 test-purego test-arm64 test-modules

vet:
	@files=$$(gofmt -l .); if [ -n "$$files" ]; then echo "gofmt needed: $$files"; exit 1; fi
	$(GO) vet $(CORE) $(MODULES)
	GOARCH=arm64 $(GO) vet $(CORE) $(MODULES)
	$(GO) vet -tags purego $(CORE)

# The assembly and the generic code run the same tests, natively and under the race detector.
test-amd64:
	$(GO) test -race -count=1 $(CORE)

test-purego:
	$(GO) test -race -count=1 -tags purego $(CORE)

# arm64's assembly runs under qemu-user (installed by .ci/run, or: make qemu).
test-arm64:
	GOARCH=arm64 $(GO) test -count=1 -exec $(QEMU_ARM64) $(CORE)
	GOARCH=arm64 $(GO) test -count=1 -tags purego -exec $(QEMU_ARM64) $(CORE)

# The other modules' tests, and one quick pass of every benchmark so that none rots.
# The simulator's default-scenario properties and LossDelay's scenario targets take minutes under
# the race detector, so they skip there and run here without it, with the check that
# docs/simulation.md shows what the simulator prints.
test-modules:
	$(GO) test -race -count=1 $(MODULES)
	LIMITSIM_DOCS=1 $(GO) test -count=1 ./cmd/limitsim/...
	$(GO) test -run='^$$' -bench=. -benchtime=100x -cpu=1,2 ./bench

# Not in CI: ten minutes of the stress suite (24 variants, 25 s each) with the race detector,
# printing what each variant did and how many invariants it checked.
soak:
	$(GO) test -race -count=1 -v -run '^TestStress$$' -soak=25s -timeout=30m .

qemu:
	command -v $(QEMU_ARM64) >/dev/null || (apt-get update -qq && apt-get install -y -qq qemu-user)

demo:
	$(GO) run ./cmd/limitsim

bench bench-check perf-baseline:
	$(MAKE) -C bench $@
