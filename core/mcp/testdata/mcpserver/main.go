// Command mcpserver is a small MCP server the tests of core/mcp and
// cmd/gopi drive: built with the same SDK gopi connects with, it serves
// stdio by default and streamable HTTP with -http.
//
// Its tools: echo (read-only), slow (blocks until cancelled), progress
// (reports progress, then answers), image, fail (isError), big (a long
// text), structured, link (a resource link; read-only), crash (the
// process exits), add_tool (adds a tool, which sends list_changed), log
// (sends a log message; the server logs at every level without waiting
// for logging/setLevel), and header (the value of a request header, over
// HTTP), and any tools -tool names. With -resources
// it offers resources too (see addResources), -page-size pages its lists;
// with -resources-only it offers one resource and no tools at all.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A 1×1 transparent PNG.
var png = []byte{
	0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
	0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
	0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x00, 0x01, 0x00, 0x00,
	0x05, 0x00, 0x01, 0x0d, 0x0a, 0x2d, 0xb4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae,
	0x42, 0x60, 0x82,
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

type echoArgs struct {
	Text string `json:"text" jsonschema:"the text to send back"`
}

type bigArgs struct {
	Size int `json:"size" jsonschema:"how many characters"`
}

type addArgs struct {
	Name string `json:"name" jsonschema:"the new tool's name"`
}

type headerArgs struct {
	Name string `json:"name" jsonschema:"the header to read"`
}

type progressArgs struct {
	Count    int `json:"count" jsonschema:"how many progress notifications"`
	Interval int `json:"interval" jsonschema:"milliseconds between them"`
}

type none struct{}

type logArgs struct {
	Level  string `json:"level" jsonschema:"the message's level"`
	Logger string `json:"logger" jsonschema:"the logger's name"`
	Text   string `json:"text" jsonschema:"the message"`
}

// logEverything sets a session's log level to debug before each tool
// call: the SDK sends no log message before a client sets a level (for
// protocol 2026-07-28, in each request), and gopi, like pi, sets none.
func logEverything(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if ss, ok := req.GetSession().(*mcp.ServerSession); ok && method == "tools/call" {
			_, err := next(ctx, "logging/setLevel", &mcp.ServerRequest[*mcp.SetLoggingLevelParams]{
				Session: ss, Params: &mcp.SetLoggingLevelParams{Level: "debug"}})
			if err != nil {
				log.Printf("setting the log level: %v", err)
			}
		}
		return next(ctx, method, req)
	}
}

// serverOptions are what main's flags ask of the server.
type serverOptions struct {
	resources bool
	pageSize  int
	// extra are more tools, by name (any name, odd ones too), each
	// answering "<name> of <id>".
	extra []string
	id    string
}

func newServer(header func(string) string, o serverOptions) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "gopi-testserver", Version: "1.0.0"},
		&mcp.ServerOptions{Instructions: "A server for gopi's tests.\nSecond line.", HasTools: true, PageSize: o.pageSize})
	if o.resources {
		addResources(s)
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Sends the text back.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, a echoArgs) (*mcp.CallToolResult, any, error) {
			return text("echo: " + a.Text), nil, nil
		})
	s.AddReceivingMiddleware(logEverything)
	mcp.AddTool(s, &mcp.Tool{Name: "log", Description: "Sends a log message."},
		func(_ context.Context, req *mcp.CallToolRequest, a logArgs) (*mcp.CallToolResult, any, error) {
			// Under protocol 2026-07-28 a request's context carries its
			// own level (none, from gopi): log outside it, at the
			// session's level that logEverything set.
			err := req.Session.Log(context.Background(), &mcp.LoggingMessageParams{Level: mcp.LoggingLevel(a.Level), Logger: a.Logger, Data: a.Text})
			if err != nil {
				return nil, nil, err
			}
			return text("logged"), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "slow", Description: "Blocks until the call is cancelled."},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
			<-ctx.Done()
			return text("cancelled"), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "progress", Description: "Reports progress every interval ms, count times, then answers."},
		func(ctx context.Context, req *mcp.CallToolRequest, a progressArgs) (*mcp.CallToolResult, any, error) {
			for i := range a.Count {
				select {
				case <-time.After(time.Duration(a.Interval) * time.Millisecond):
				case <-ctx.Done():
					return text("cancelled"), nil, nil
				}
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
					ProgressToken: req.Params.GetProgressToken(), Progress: float64(i + 1), Total: float64(a.Count)})
			}
			return text("finished"), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "image", Description: "Returns an image and a caption."},
		func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: "a pixel"},
				&mcp.ImageContent{Data: png, MIMEType: "image/png"},
			}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Description: "Fails as a tool does."},
		func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
			r := text("it went wrong")
			r.IsError = true
			return r, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "big", Description: "Returns size characters of text."},
		func(_ context.Context, _ *mcp.CallToolRequest, a bigArgs) (*mcp.CallToolResult, any, error) {
			var b strings.Builder
			for i := 0; b.Len() < a.Size; i++ {
				fmt.Fprintf(&b, "line %d\n", i)
			}
			return text(b.String()[:a.Size]), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "structured", Description: "Returns structured content only."},
		func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{}, StructuredContent: map[string]any{"answer": 42}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "link", Description: "Returns a resource link.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.ResourceLink{URI: "test://notes/1", Name: "notes", MIMEType: "text/plain"},
			}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "crash", Description: "Ends the server process."},
		func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
			os.Exit(3)
			return nil, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "add_tool", Description: "Adds a tool that answers with its name."},
		func(_ context.Context, _ *mcp.CallToolRequest, a addArgs) (*mcp.CallToolResult, any, error) {
			name := a.Name
			mcp.AddTool(s, &mcp.Tool{Name: name, Description: "Added at run time."},
				func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
					return text("I am " + name), nil, nil
				})
			return text("added " + name), nil, nil
		})
	for _, name := range o.extra {
		mcp.AddTool(s, &mcp.Tool{Name: name, Description: "An extra tool named " + name + "."},
			func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
				return text(name + " of " + o.id), nil, nil
			})
	}
	if header != nil {
		mcp.AddTool(s, &mcp.Tool{Name: "header", Description: "Returns a request header."},
			func(_ context.Context, _ *mcp.CallToolRequest, a headerArgs) (*mcp.CallToolResult, any, error) {
				return text(header(a.Name)), nil, nil
			})
	}
	return s
}

// contents answers a read with one text.
func contents(uri, mimeType, text string) *mcp.ReadResourceResult {
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: mimeType, Text: text}}}
}

// addResources gives s its resources: notes (text, one with a title, an
// icon and _meta), a binary blob, a PNG image, a JSON blob, a directory of
// two texts, a long text, an empty one, one that blocks until the read is
// cancelled, and an MCP App (ui://, which clients leave out); and two
// templates, notes by id and an MCP App's.
func addResources(s *mcp.Server) {
	text := func(r *mcp.Resource, body string) {
		s.AddResource(r, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return contents(req.Params.URI, r.MIMEType, body), nil
		})
	}
	blob := func(r *mcp.Resource, data []byte) {
		s.AddResource(r, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: r.MIMEType, Blob: data}}}, nil
		})
	}
	text(&mcp.Resource{URI: "test://notes/1", Name: "notes", MIMEType: "text/plain"}, "a note")
	text(&mcp.Resource{URI: "test://notes/2", Name: "second", Title: "The second note", Description: "Another note.",
		MIMEType: "text/plain", Size: 13, Icons: []mcp.Icon{{Source: "https://example.com/note.png"}},
		Meta: mcp.Meta{"private": true}}, "another note!")
	blob(&mcp.Resource{URI: "test://files/data.bin", Name: "data", MIMEType: "application/octet-stream"}, []byte{0, 1, 2, 3, 0xff})
	blob(&mcp.Resource{URI: "test://images/pixel.png", Name: "pixel", MIMEType: "image/png"}, png)
	blob(&mcp.Resource{URI: "test://files/config.json", Name: "config", MIMEType: "application/json"}, []byte(`{"ok":true}`))
	s.AddResource(&mcp.Resource{URI: "test://dir/", Name: "dir", Description: "A directory of two notes."},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
				{URI: "test://dir/a.txt", MIMEType: "text/plain", Text: "note a"},
				{URI: "test://dir/b.txt", MIMEType: "text/plain", Text: "note b"},
			}}, nil
		})
	var big strings.Builder
	for i := 0; big.Len() < 50000; i++ {
		fmt.Fprintf(&big, "line %d\n", i)
	}
	text(&mcp.Resource{URI: "test://big", Name: "big", MIMEType: "text/plain"}, big.String()[:50000])
	s.AddResource(&mcp.Resource{URI: "test://empty", Name: "empty"},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{}}, nil
		})
	s.AddResource(&mcp.Resource{URI: "test://slow", Name: "slow", Description: "Blocks until the read is cancelled."},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			<-ctx.Done()
			return contents(req.Params.URI, "text/plain", "cancelled"), nil
		})
	text(&mcp.Resource{URI: "ui://widget", Name: "widget", MIMEType: "text/html;profile=mcp-app"}, "<p>app</p>")
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "test://notes/{id}", Name: "note",
		Description: "A note by its id.", MIMEType: "text/plain"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			id := strings.TrimPrefix(req.Params.URI, "test://notes/")
			return contents(req.Params.URI, "text/plain", "note "+id), nil
		})
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "ui://widgets/{id}", Name: "widgets"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return contents(req.Params.URI, "text/html", "<p>widget</p>"), nil
		})
}

func main() {
	httpAddr := flag.String("http", "", "serve streamable HTTP on this address instead of stdio")
	addrFile := flag.String("addrfile", "", "with -http, write the server's URL to this file")
	pidFile := flag.String("pidfile", "", "write the process id to this file")
	resourcesOnly := flag.Bool("resources-only", false, "offer one resource and no tools (no tools capability)")
	var o serverOptions
	flag.BoolVar(&o.resources, "resources", false, "offer resources and resource templates beside the tools")
	flag.IntVar(&o.pageSize, "page-size", 0, "the most items one page of a list holds (0: the SDK's default)")
	flag.Func("tool", "offer one more tool of this name, answering \"<name> of <id>\" (repeatable)", func(v string) error {
		o.extra = append(o.extra, v)
		return nil
	})
	flag.StringVar(&o.id, "id", "", "how the -tool tools name this server in their answers")
	flag.Parse()
	if *pidFile != "" {
		if err := os.WriteFile(*pidFile, fmt.Appendf(nil, "%d\n", os.Getpid()), 0o644); err != nil {
			log.Fatal(err)
		}
	}
	if *resourcesOnly {
		s := mcp.NewServer(&mcp.Implementation{Name: "gopi-testserver", Version: "1.0.0"}, nil)
		s.AddResource(&mcp.Resource{URI: "test://notes/1", Name: "notes", MIMEType: "text/plain"},
			func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "test://notes/1", Text: "a note"}}}, nil
			})
		if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			log.Fatal(err)
		}
		return
	}
	if *httpAddr == "" {
		if err := newServer(nil, o).Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			log.Fatal(err)
		}
		return
	}
	// The headers of the last request posted, for the header tool.
	var (
		mu   sync.Mutex
		last http.Header
	)
	srv := newServer(func(name string) string {
		mu.Lock()
		defer mu.Unlock()
		return last.Get(name)
	}, o)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	ln, err := net.Listen("tcp", *httpAddr)
	if err != nil {
		log.Fatal(err)
	}
	url := "http://" + ln.Addr().String() + "/mcp"
	if *addrFile != "" {
		if err := os.WriteFile(*addrFile+".tmp", []byte(url), 0o644); err != nil {
			log.Fatal(err)
		}
		if err := os.Rename(*addrFile+".tmp", *addrFile); err != nil {
			log.Fatal(err)
		}
	}
	log.Fatal(http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			mu.Lock()
			last = r.Header.Clone()
			mu.Unlock()
		}
		h.ServeHTTP(w, r)
	})))
}
