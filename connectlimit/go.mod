module github.com/resilience4cata/adaptivelimit/connectlimit

go 1.26.0

require (
	connectrpc.com/connect v1.21.1
	github.com/resilience4cata/adaptivelimit v0.1.0
	github.com/stretchr/testify v1.12.1
	google.golang.org/protobuf v1.36.11
)

require (
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.50.0 // indirect
)

replace github.com/resilience4cata/adaptivelimit => ../
