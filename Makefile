# Conveniences around the two commands of the README; nothing here is
# needed to run or test the service.

.PHONY: help run test test/race test/short lint bench build

help: ## list the targets
	@grep -E '^[a-z/]+:.*##' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

run: ## run the service on the embedded default
	go run ./cmd/facturad

build: ## build the binary into ./facturad
	go build -o facturad ./cmd/facturad

test: ## the whole suite with real PostgreSQL and Redis (deploy/test.sh)
	./deploy/test.sh

test/race: test ## the same: deploy/test.sh always runs with -race

test/short: ## unit tests only; services and tools missing are skipped
	go test ./...

lint: ## go vet, staticcheck, and govulncheck (which needs the Go vulnerability database online)
	go vet ./...
	go run honnef.co/go/tools/cmd/staticcheck@latest ./...
	go run golang.org/x/vuln/cmd/govulncheck@v1.1.4 ./...

bench: ## the benchmarks quoted in docs/performance.md (no services needed for most)
	go test -run '^$$' -bench . -benchmem -cpu 1 ./hacienda ./signer ./gateway
