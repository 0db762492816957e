module github.com/resilience4cata/adaptivelimit/bench

go 1.26.0

require (
	github.com/failsafe-go/failsafe-go v0.9.8
	github.com/resilience4cata/adaptivelimit v0.1.0
	golang.org/x/perf v0.0.0-20260908200009-22c9c6c9d4da
	golang.org/x/sync v0.25.0
)

require (
	github.com/aclements/go-moremath v0.0.0-20210112150236-f10218a38794 // indirect
	github.com/bits-and-blooms/bitset v1.24.4 // indirect
	github.com/influxdata/tdigest v0.0.1 // indirect
	go.yaml.in/yaml/v3 v3.0.6 // indirect
	golang.org/x/sys v0.50.0 // indirect
)

replace github.com/resilience4cata/adaptivelimit => ../

tool golang.org/x/perf/cmd/benchstat
