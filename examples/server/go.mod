module github.com/crewlib/crew/examples/server

go 1.25.0

require (
	github.com/crewlib/crew v0.0.0
	github.com/crewlib/crew/promcrew v0.0.0
	github.com/prometheus/client_golang v1.24.1
	github.com/stretchr/testify v1.11.1
	go.uber.org/goleak v1.3.0
)

require (
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/davecgh/go-spew v1.1.1 // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/pmezard/go-difflib v1.0.0 // indirect
	github.com/prometheus/client_model v0.6.2 // indirect
	github.com/prometheus/common v0.70.1 // indirect
	github.com/prometheus/procfs v0.21.1 // indirect
	github.com/sourcegraph/conc v0.3.0 // indirect
	golang.org/x/sys v0.47.0 // indirect
	google.golang.org/protobuf v1.36.11 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)

// Inside this repository: the crew and promcrew in it. Outside it, point
// them at your clone of the repository until crew is released (see
// README.md).
replace (
	github.com/crewlib/crew => ../..
	github.com/crewlib/crew/promcrew => ../../promcrew
)
