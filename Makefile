# lockwatch — every target works on a fresh Debian machine once .ci/run's packages are installed.
GO    ?= go
# Heavy tools (promtool, amtool, prometheus) live in tools/go.mod so they never enter the
# library's module graph.
TOOL  := $(GO) tool -modfile=tools/go.mod

.PHONY: build test lint generate

## build: compile every package and command
build:
	$(GO) build ./...

## test: lint, then every test (real redis-server processes) with the race detector
test: lint
	$(GO) test -race -count=1 ./...

## lint: gofmt and go vet must be clean
lint:
	@unformatted="$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))"; \
	if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi
	$(GO) vet ./...

## generate: rewrite alerts/*.yml and dashboards/*.json from internal/packconfig defaults, or
## from your overrides with `make generate PACK_CONFIG=my-pack.yml`
generate:
	$(GO) run ./cmd/lockwatch-pack $(if $(PACK_CONFIG),--config $(PACK_CONFIG))
