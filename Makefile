# gopi — see README.md. Every target works offline once modules are cached.
GO      ?= go
BIN     ?= bin/gopi
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)

.PHONY: build run test bench lint fmtcheck clean

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/gopi

# Starts gopi; with no API key in the environment it runs on the offline
# faux model. Until the RPC mode lands it runs one prompt (ARGS).
ARGS ?= -p help
run: build
	./$(BIN) $(ARGS)

test:
	$(GO) vet ./...
	$(GO) test -race -count=1 ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

lint: fmtcheck
	$(GO) vet ./...

fmtcheck:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

clean:
	rm -rf bin
