module github.com/resilience4cata/adaptivelimit/failsafelimit

go 1.26.0

require (
	github.com/failsafe-go/failsafe-go v0.9.8
	github.com/resilience4cata/adaptivelimit v0.1.0
	github.com/stretchr/testify v1.12.1
)

require (
	github.com/bits-and-blooms/bitset v1.24.4 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.50.0 // indirect
)

replace github.com/resilience4cata/adaptivelimit => ../
