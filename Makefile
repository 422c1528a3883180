# lockwatch — every target works on a fresh Debian machine once .ci/run's packages are installed.
GO    ?= go
# Heavy tools (promtool, amtool, prometheus) live in tools/go.mod so they never enter the
# library's module graph. tools/ is not in the workspace (go.work), and -modfile needs
# workspace mode off.
TOOL  := GOWORK=off $(GO) tool -modfile=tools/go.mod
# The modules of the workspace, each tested and vetted on its own: the library (.), the exporter
# and demo commands (cmd), the pack generator (cmd/lockwatch-pack), the library's heavy tests
# (integration), the benchmarks and the peer-library tests.
MODULES := . cmd cmd/lockwatch-pack integration bench observe/rueidisobserve observe/peertest

VERSION    ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
REVISION   ?= $(shell git rev-parse HEAD 2>/dev/null)
BRANCH     ?= $(shell git rev-parse --abbrev-ref HEAD 2>/dev/null)
BUILD_USER ?= $(shell id -un 2>/dev/null)@$(shell hostname 2>/dev/null)
BUILD_DATE ?= $(shell date -u +%Y%m%d-%H:%M:%S)
# lock-exporter's --version and lock_exporter_build_info read prometheus/common/version.
VERSION_PKG   := github.com/prometheus/common/version
STAMP_LDFLAGS  = -X $(VERSION_PKG).Revision=$(REVISION) -X $(VERSION_PKG).Branch=$(BRANCH) \
	-X $(VERSION_PKG).BuildUser=$(BUILD_USER) -X $(VERSION_PKG).BuildDate=$(BUILD_DATE)
LDFLAGS  := -X $(VERSION_PKG).Version=$(VERSION) $(STAMP_LDFLAGS)

.PHONY: tidy build test test-loaded lint generate tools fuzz soak demo e2e bench bench-exporter release \
	image image-test chart-test chart-examples

## tidy: go mod tidy in every module (tools/tidy-modules: go mod tidy does not read go.work)
tidy:
	tools/tidy-modules

## build: compile every package, and the exporter into bin/ with its version stamped
build:
	@set -e; for m in $(MODULES); do (cd $$m && $(GO) build ./...); done
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/lock-exporter ./cmd/lock-exporter

## test: lint, then every test (real redis-server processes) with the race detector. -timeout 20m:
## cmd/internal/releasetest builds the commands from a fresh module cache, over 10 minutes on a
## loaded 2-core machine with a cold build cache (2.5 minutes warm)
test: lint tools
	@set -e; for m in $(MODULES); do echo "test module $$m"; (cd $$m && $(GO) test -race -count=1 -timeout 20m ./...); done
	$(MAKE) --no-print-directory fuzz

## test-loaded: `make test` LOADED_RUNS times (3) while LOAD_HOGS CPU-bound processes (2 x nproc) run
## beside it the whole time: stress-ng if installed, else `yes`. The hogs are stopped when the
## target ends, passes or fails. Each run's wall time is printed. To check a timing change in a
## few packages: make test-loaded LOADED_CMD='go test -race -count=1 ./lease/ ./integration/drills/'
LOAD_HOGS   ?= $(shell echo $$(( 2 * $$(nproc 2>/dev/null || echo 1) )))
LOADED_RUNS ?= 3
LOADED_CMD  ?= $(MAKE) --no-print-directory test
test-loaded:
	@set -eu; hogs=""; \
	trap 'kill $$hogs 2>/dev/null || true; wait 2>/dev/null || true' EXIT INT TERM; \
	if command -v stress-ng >/dev/null 2>&1; then \
		stress-ng --cpu $(LOAD_HOGS) --timeout 4h >/dev/null 2>&1 & hogs=$$!; \
		what="stress-ng --cpu $(LOAD_HOGS)"; \
	else \
		for i in $$(seq $(LOAD_HOGS)); do yes >/dev/null & hogs="$$hogs $$!"; done; \
		what="$(LOAD_HOGS) x yes >/dev/null"; \
	fi; \
	echo "test-loaded: $$what beside every run"; \
	for run in $$(seq $(LOADED_RUNS)); do \
		start=$$(date +%s); \
		if ! $(LOADED_CMD); then \
			echo "test-loaded: run $$run of $(LOADED_RUNS) FAILED after $$(( $$(date +%s) - start ))s"; exit 1; \
		fi; \
		echo "test-loaded: run $$run of $(LOADED_RUNS) passed in $$(( $$(date +%s) - start ))s (load $$(cut -d' ' -f1 /proc/loadavg))"; \
	done

# Fuzz targets: package, name and how many inputs `make fuzz` explores (about 5 s each on a
# 2-core machine). `go test` already replays their committed seed corpora. The budgets are
# counts, not durations: with a duration, Go 1.26's fuzz coordinator can fail a clean run with
# "context deadline exceeded" at the deadline (golang/go#75804, fixed in Go 1.27).
# `make fuzz FUZZTIME=500000x` overrides every budget (a duration works too, with that risk).
FUZZ_TARGETS := ./collectors/internal/walk:FuzzKeyLabel:50000x ./collectors:FuzzNamespace:80000x ./collectors/internal/index:FuzzKeyStore:50000x \
	./cmd/internal/exporterconfig:FuzzLoad:4000x ./cmd/internal/exporterconfig:FuzzParseNamespace:30000x \
	./internal/lockkeys:FuzzKindOf:200000x
FUZZTIME ?=

## fuzz: explore new inputs for every fuzz target (its budget above, or FUZZTIME)
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; rest=$${t#*:}; name=$${rest%%:*}; budget=$${rest#*:}; \
		budget=$${FUZZTIME:-$$budget}; \
		echo "fuzz $$name ($$pkg, $$budget)"; \
		$(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $$budget $$pkg; \
	done

## tools: build promtool and amtool once (minutes on a fresh machine) so no test pays for it
tools:
	$(TOOL) promtool --version >/dev/null
	$(TOOL) amtool --version >/dev/null

## lint: gofmt and go vet must be clean
lint:
	@unformatted="$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))"; \
	if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi
	@set -e; for m in $(MODULES); do (cd $$m && $(GO) vet ./...); done

## demo: build the demo command, lockwatch-demo, and lock-exporter (for the inspect it suggests),
## and run the demo (starts its own redis-server; DEMO_PROMETHEUS=1 also starts a Prometheus with
## the generated rules, tools/demo-prometheus, and prints where its alerts fire;
## DEMO_FLAGS="--duration 2m" etc.). Built, not `go run`: go run exits 1 on the terminal's Ctrl-C
## even when the demo stops cleanly, and make would report that as an error.
demo:
	$(GO) build -o bin/lockwatch-demo ./cmd/lockwatch-demo
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/lock-exporter ./cmd/lock-exporter
	@if [ -n "$(DEMO_PROMETHEUS)" ]; then \
		$(TOOL) prometheus --version >/dev/null && GO="$(GO)" tools/demo-prometheus $(DEMO_FLAGS); \
	else \
		./bin/lockwatch-demo $(DEMO_FLAGS); \
	fi

## e2e: redis-server, exporter, demo, real Prometheus and Alertmanager, webhook receiver
e2e: tools
	$(TOOL) prometheus --version >/dev/null
	LOCKWATCH_E2E=1 $(GO) test -count=1 -v -timeout 15m ./cmd/lockwatch-pack/internal/e2e

## bench: lease vs bsm/redislock, redsync and rueidislock, the redis-benchmark ceilings and the
## exporter's scrape cost, on a redis-server it starts; writes docs/performance-results.md (~6 min),
## then the exporter against redis_exporter (bench-exporter)
bench:
	cd bench && $(GO) run ./cmd/lockbench -root .. -out ../docs/performance-results.md
	$(MAKE) --no-print-directory bench-exporter

## bench-exporter: lock-exporter vs redis_exporter --count-keys on a mixed keyspace (100k and 1M
## lock keys plus as many other keys, interleaved rounds), then Redis CPU per 30 s scrape interval
## on 10M other keys + 10k churning lock keys for the index, the walk, redis_exporter and no
## exporter (about 35 minutes); writes bench/results/exporter-comparison.md and
## bench/results/index-comparison.md (not committed: docs/performance-exporter.md quotes named runs)
bench-exporter:
	cd bench && $(GO) run ./cmd/lockbench -exporter-comparison -out results/exporter-comparison.md
	cd bench && $(GO) run ./cmd/lockbench -index-comparison -out results/index-comparison.md

## generate: rewrite alerts/*.yml, dashboards/*.json and the generated deploy/kubernetes manifests
## from cmd/lockwatch-pack/internal/packconfig defaults, or
## from your overrides with `make generate PACK_CONFIG=my-pack.yml`
generate:
	$(GO) run ./cmd/lockwatch-pack $(if $(PACK_CONFIG),--config $(PACK_CONFIG))

## soak: the long soak drill (SOAK=2m by default) — many workers, few keys, pauses past the TTL
SOAK ?= 2m
soak:
	LOCKWATCH_SOAK=$(SOAK) $(GO) test -race -count=1 -run TestSoak -timeout 15m -v ./integration/drills

## image: the lock-exporter image, FROM scratch, built by podman (or CONTAINER_TOOL=buildah|docker)
## without a daemon and without pulling anything: the static binary and the host's CA bundle are
## staged in build/image/ and deploy/Dockerfile copies them. Tagged $(RELEASE_IMAGE):$(RELEASE_VERSION).
RELEASE_VERSION ?= $(shell cat VERSION)
RELEASE_IMAGE   ?= ghcr.io/lockwatch/lock-exporter
RELEASE_ARCHES  := amd64 arm64
CONTAINER_TOOL  ?= podman
IMAGE_ARCH      ?= $(shell $(GO) env GOARCH)
IMAGE_CA_BUNDLE ?= /etc/ssl/certs/ca-certificates.crt
image:
	@rm -rf build/image && mkdir -p build/image
	CGO_ENABLED=0 GOOS=linux GOARCH=$(IMAGE_ARCH) $(GO) build -trimpath \
		-ldflags "-s -w -X $(VERSION_PKG).Version=$(RELEASE_VERSION) $(STAMP_LDFLAGS)" \
		-o build/image/lock-exporter ./cmd/lock-exporter
	cp $(IMAGE_CA_BUNDLE) build/image/ca-certificates.crt
	$(CONTAINER_TOOL) build --platform linux/$(IMAGE_ARCH) -f deploy/Dockerfile \
		--build-arg VERSION=$(RELEASE_VERSION) --build-arg REVISION=$(REVISION) \
		--build-arg CREATED=$$(date -u +%Y-%m-%dT%H:%M:%SZ) \
		-t $(RELEASE_IMAGE):$(RELEASE_VERSION) build/image

## image-test: build the image, then run it against a real redis-server (podman, as root) and
## check /metrics, /scrape?target=, its user and its read-only root filesystem. .ci/run runs it.
## IMAGE_RUN_FLAGS are the podman run settings this machine needs (see docs/deploy.md#the-image).
IMAGE_RUN_FLAGS ?= --runtime=runc --ulimit nofile=1024:1024 --ulimit nproc=1024:1024
image-test: image
	LOCKWATCH_IMAGE=$(RELEASE_IMAGE):$(RELEASE_VERSION) LOCKWATCH_IMAGE_RUN_FLAGS="$(IMAGE_RUN_FLAGS)" \
		$(GO) test -count=1 -v -run '^TestImage(DocumentedRun)?$$' ./cmd/internal/deploytest

## chart-test: helm lint and helm template of deploy/helm/lock-exporter over a matrix of values,
## every object strictly decoded into the Kubernetes and prometheus-operator types, the chart's
## rules equal to alerts/, and the committed examples under deploy/helm/examples up to date.
## helm and those types live in tools/helm/go.mod, apart from tools/go.mod's Prometheus; like
## tools/, it is not in the workspace (go.work), so it runs with GOWORK=off.
chart-test:
	cd tools/helm && GOWORK=off $(GO) vet ./... && GOWORK=off $(GO) test -count=1 ./...

## chart-examples: rewrite deploy/helm/examples/*.yaml (helm template of the default values and of
## multi-target-values.yaml) after a change to the chart or the pack
chart-examples:
	cd tools/helm && GOWORK=off LOCKWATCH_UPDATE_CHART_EXAMPLES=1 $(GO) test -count=1 -run TestExamplesUpToDate ./charttest

## release: versioned lock-exporter binaries for linux/amd64 and linux/arm64, the image as an OCI
## archive and the Helm chart package in dist/, with SHA256SUMS over all of them.
## The version is the VERSION file (RELEASE_VERSION=v0.2.0-rc.1 overrides it, the chart's version
## and appVersion, so its default image tag, too); see docs/deploy.md.
CHART_DIR := deploy/helm/lock-exporter
HELM      := GOWORK=off $(GO) tool -modfile=tools/helm/go.mod helm
release:
	@case "$(RELEASE_VERSION)" in v[0-9]*.[0-9]*.[0-9]*) ;; \
	  *) echo "release: version \"$(RELEASE_VERSION)\" is not vMAJOR.MINOR.PATCH"; exit 2;; esac
	@rm -rf dist && mkdir -p dist
	@set -e; for arch in $(RELEASE_ARCHES); do \
		out=dist/lock-exporter-$(RELEASE_VERSION)-linux-$$arch; \
		CGO_ENABLED=0 GOOS=linux GOARCH=$$arch $(GO) build -trimpath \
			-ldflags "-s -w -X $(VERSION_PKG).Version=$(RELEASE_VERSION) $(STAMP_LDFLAGS)" \
			-o $$out ./cmd/lock-exporter; \
		echo "wrote $$out"; \
	done
	$(MAKE) --no-print-directory image
	$(CONTAINER_TOOL) save --format oci-archive \
		-o dist/lock-exporter-$(RELEASE_VERSION)-image-linux-$(IMAGE_ARCH).oci.tar $(RELEASE_IMAGE):$(RELEASE_VERSION)
	$(HELM) package $(CHART_DIR) --version $(patsubst v%,%,$(RELEASE_VERSION)) --app-version $(RELEASE_VERSION) --destination dist
	@cd dist && sha256sum lock-exporter-* > SHA256SUMS && echo "wrote dist/SHA256SUMS" && ls -l
