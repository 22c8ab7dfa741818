module github.com/gopi-dev/gopi

go 1.26.8

require (
	github.com/anthropics/anthropic-sdk-go v1.84.0 // official SDK: anthropic-messages provider
	github.com/aymanbagabas/go-udiff v0.4.1 // line diffs for the edit tool
	github.com/bmatcuk/doublestar/v4 v4.10.4 // ** globs: find tool, --models scopes
	github.com/coder/acp-go-sdk v0.13.5 // ACP wire types (acp), generated from the official schema; named explicitly: the proxy lists versions up to v0.13.0 only
	github.com/elastic/go-seccomp-bpf v1.6.0 // the sandbox's seccomp filter: sockets other than Unix ones closed (core/sandbox)
	github.com/go-git/go-git/v5 v5.19.3 // only plumbing/format/gitignore: .gitignore rules for the Go grep/find fallback
	github.com/go-json-experiment/json v0.0.0-20260623181947-01eb4420fa68 // json/v2: the codec go.lsp.dev/protocol's types marshal through
	github.com/google/uuid v1.6.0 // uuidv7 session ids, UI request ids
	github.com/kaptinlin/jsonschema v0.9.8 // tool argument validation against JSON Schema (2020-12), every failure reported; it compiles nothing at start, where santhosh-tekuri/jsonschema cost 14 ms of startup; also checks every ACP frame against the vendored schema in the tests
	github.com/landlock-lsm/go-landlock v0.11.2 // the sandbox's Landlock rules: writes and TCP (core/sandbox)
	github.com/modelcontextprotocol/go-sdk v1.8.0 // official SDK: MCP client and its OAuth sign-in (core/mcp), and the test servers under core/mcp/testdata
	github.com/openai/openai-go/v3 v3.96.0 // official SDK: openai-responses; its SSE decoder for openai-completions
	github.com/sourcegraph/conc v0.3.0 // scoped goroutines for parallel tool calls
	github.com/stretchr/testify v1.12.1 // tests
	github.com/tetratelabs/wazero v1.12.0 // codemode's sandbox: runs QuickJS-NG compiled to WebAssembly (pi's own quickjs-wasi build), pure Go; chosen over goja for its hard memory limit and pi's engine (docs/performance.md, "Codemode's engine")
	github.com/yuin/goldmark v1.8.7 // markdown to HTML for export_html, rendered in Go so the page needs no script
	go.lsp.dev/jsonrpc2 v1.0.1 // JSON-RPC 2.0 peer for the editor dialect (lspbridge), the design card's choice
	go.lsp.dev/protocol v1.0.1 // LSP wire types the bridge reads and writes (initialize, dialogs, progress, cancel); pinned: @latest resolves to an old v0.12.0
	go.uber.org/goleak v1.3.0 // tests: no goroutine outlives a test
	go.yaml.in/yaml/v3 v3.0.6 // frontmatter of prompt templates and skills (maintained fork of gopkg.in/yaml.v3)
	golang.org/x/net v0.61.0 // only bpf: the sandbox's architecture guard, a seccomp filter (already in the module graph)
	golang.org/x/oauth2 v0.37.0 // OAuth token types and refresh for MCP sign-ins (the Go MCP SDK's own choice)
	golang.org/x/sys v0.49.0 // prctl and seccomp(2) for the sandbox's launcher (already in the module graph)
	golang.org/x/term v0.47.0 // gopi mcp login: whether stdin is a terminal to paste a redirect URL into (the version already in the module graph)
	golang.org/x/text v0.43.0 // Unicode normalisation for the edit tool's loose matching
	google.golang.org/genai v1.77.0 // official SDK: google-generative-ai provider
)

require (
	cloud.google.com/go v0.116.0 // indirect
	cloud.google.com/go/auth v0.24.4 // indirect; newer than genai asks for: up to v0.13 it imported OpenCensus, whose init cost every start about 1.5 ms
	cloud.google.com/go/compute/metadata v0.10.0 // indirect
	github.com/bahlo/generic-list-go v0.2.0 // indirect
	github.com/buger/jsonparser v1.1.2 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/coder/websocket v1.8.15 // indirect
	github.com/felixge/httpsnoop v1.1.0 // indirect
	github.com/go-git/gcfg v1.5.1-0.20230307220236-3a3c6141e376 // indirect
	github.com/go-git/go-billy/v5 v5.9.2 // indirect
	github.com/go-logr/logr v1.4.4 // indirect
	github.com/go-logr/stdr v1.2.2 // indirect
	github.com/goccy/go-yaml v1.19.2 // indirect
	github.com/google/go-cmp v0.7.0 // indirect
	github.com/google/jsonschema-go v0.4.3 // indirect
	github.com/google/s2a-go v0.1.11 // indirect
	github.com/googleapis/enterprise-certificate-proxy v0.3.23 // indirect
	github.com/googleapis/gax-go/v2 v2.27.0 // indirect
	github.com/gorilla/websocket v1.5.3 // indirect
	github.com/invopop/jsonschema v0.14.0 // indirect
	github.com/jbenet/go-context v0.0.0-20150711004518-d14ea06fba99 // indirect
	github.com/kaptinlin/jsonpointer v0.4.28 // indirect
	github.com/pb33f/ordered-map/v2 v2.3.1 // indirect
	github.com/segmentio/asm v1.1.3 // indirect
	github.com/segmentio/encoding v0.5.4 // indirect
	github.com/standard-webhooks/standard-webhooks/libraries v0.0.1 // indirect
	github.com/tidwall/gjson v1.20.0 // indirect
	github.com/tidwall/match v1.1.1 // indirect
	github.com/tidwall/pretty v1.2.1 // indirect
	github.com/tidwall/sjson v1.2.5 // indirect
	github.com/yosida95/uritemplate/v3 v3.0.2 // indirect
	go.lsp.dev/uri v1.0.1 // indirect
	go.opentelemetry.io/auto/sdk v1.2.1 // indirect
	go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp v0.72.0 // indirect
	go.opentelemetry.io/otel v1.47.0 // indirect
	go.opentelemetry.io/otel/log v1.47.0 // indirect
	go.opentelemetry.io/otel/metric v1.47.0 // indirect
	go.opentelemetry.io/otel/trace v1.47.0 // indirect
	go.yaml.in/yaml/v4 v4.0.0-rc.2 // indirect
	golang.org/x/crypto v0.58.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/time v0.16.0 // indirect
	google.golang.org/api v0.304.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20261012220534-4341edf3f941 // indirect
	google.golang.org/grpc v1.84.0 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
	gopkg.in/warnings.v0 v0.1.2 // indirect
)

// staticcheck for `make lint` (the tool directive below) and what it needs;
// none of these is linked into gopi.
require (
	github.com/BurntSushi/toml v1.6.0 // indirect
	golang.org/x/exp/typeparams v0.0.0-20260209203927-2842357ff358 // indirect
	golang.org/x/mod v0.42.0 // indirect
	golang.org/x/tools v0.51.0 // indirect
	honnef.co/go/tools v0.8.2 // indirect; staticcheck 2026.2.2, pinned here so `go tool staticcheck` needs only the module proxy
	kernel.org/pub/linux/libs/security/libcap/psx v1.2.78 // indirect; go-landlock's, never called: the launcher confines its one thread and executes
)

// `make lint` runs `go tool staticcheck ./...`: the version is pinned above
// and its sums are in go.sum, so CI builds it from the module proxy alone
// (GOFLAGS=-mod=readonly) and no binary is installed by hand.
tool honnef.co/go/tools/cmd/staticcheck
