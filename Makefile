# Pressroom: `make dev` runs the whole stack, `make test` runs every test
# against real Postgres, Temporal and MinIO started once for the run.

GO ?= go
TEST_FLAGS ?= -count=1 -timeout 45m
PKGS ?= ./...

.PHONY: dev test build tools deps vet FORCE

DEVSTACK = .dev/bin/devstack

# Built rather than `go run`, so signals reach devstack itself.
$(DEVSTACK): FORCE
	@$(GO) build -o $(DEVSTACK) ./dev/cmd/devstack

dev: $(DEVSTACK) ## Postgres (found or private), Temporal + UI, MinIO, seed data, API and worker; Ctrl-C stops all
	$(DEVSTACK) up

test: $(DEVSTACK) ## every test, services started once per run
	$(DEVSTACK) exec -- $(GO) test $(TEST_FLAGS) $(PKGS)
	GO=$(GO) dev/fuzz.sh $(FUZZTIME_TEST)

build:
	$(GO) build -o bin/pressroom ./cmd/pressroom

tools: $(DEVSTACK) ## build (or find cached) Temporal CLI, MinIO, Helm and kubeconform binaries, and the chart check's Kubernetes schemas
	$(DEVSTACK) tools

# dev, test and tools run the same check first; this runs only the check.
deps: $(DEVSTACK) ## install missing system packages (libvips, vips tools, gcc, Chromium for the browser tests, PostgreSQL if none) as root or with sudo
	$(DEVSTACK) deps

FORCE:

# Fuzz targets (listed in dev/fuzz.sh): `make fuzz` runs each for FUZZTIME,
# `make test` for FUZZTIME_TEST. No services needed.
FUZZTIME ?= 2m
FUZZTIME_TEST ?= 10s

.PHONY: fuzz
fuzz: ## run every fuzz target for FUZZTIME each
	GO=$(GO) dev/fuzz.sh $(FUZZTIME)

# The chart check (devstack chart: helm lint, helm template | kubeconform
# -strict) uses the tools `make tools` builds; it builds them itself if missing.
# funclen fails for a function over 80 lines not in dev/funclen-allow.txt.
# dev/redocly/lint.sh lints the OpenAPI description with the pinned Redocly
# CLI (npm ci into dev/redocly/node_modules; needs Node.js 20.19+): no error,
# no warning but those dev/redocly/.redocly.lint-ignore.yaml accepts.
vet: $(DEVSTACK)
	$(GO) vet ./...
	dev/no-binaries.sh
	$(GO) run ./dev/cmd/funclen
	@test -z "$$(gofmt -l .)" || (echo "gofmt needed:"; gofmt -l .; exit 1)
	$(DEVSTACK) chart
	GO=$(GO) dev/redocly/lint.sh
