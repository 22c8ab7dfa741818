package mcp

import (
	"bytes"
	"cmp"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/llm"
)

// The resource tools: pi's names, which are Codex's and OpenCode's, so
// models trained on those tools use them unchanged. They take a server
// argument and reach every server with resources.
const (
	ListResourcesTool         = "list_mcp_resources"
	ListResourceTemplatesTool = "list_mcp_resource_templates"
	ReadResourceTool          = "read_mcp_resource"
)

// ResourceToolNames are the resource tools, in the order they are
// declared.
var ResourceToolNames = []string{ListResourcesTool, ListResourceTemplatesTool, ReadResourceTool}

// maxListPages bounds a listing of every page of one server (pi's 1000): a
// server whose cursors never end would be listed forever.
const maxListPages = 1000

//go:embed descriptions
var descriptionFiles embed.FS

// description is a resource tool's embedded description.
func description(name string) string {
	data, err := descriptionFiles.ReadFile("descriptions/" + name + ".md")
	if err != nil {
		panic(fmt.Sprintf("mcp: embedded description of %s: %v", name, err))
	}
	return strings.TrimSpace(string(data))
}

// The tools' parameters, pi's.
const (
	listParameters = `{"type":"object","properties":{` +
		`"server":{"type":"string","description":"MCP server name. Omit to list every server with resources."},` +
		`"cursor":{"type":"string","description":"Opaque cursor from a previous call with the same server; omit for the first page."}},` +
		`"additionalProperties":false}`
	readParameters = `{"type":"object","properties":{` +
		`"server":{"type":"string","description":"MCP server name exactly as configured. Must match the 'server' field returned by list_mcp_resources."},` +
		`"uri":{"type":"string","description":"Resource URI to read. Must be one of the URIs returned by list_mcp_resources."}},` +
		`"required":["server","uri"],"additionalProperties":false}`
)

// resourceServers are the servers the resource tools reach, in order:
// those that offered resources when they connected and whose own exposure
// (toolExposure is about tools) is not hidden. A server that dropped
// since stays: the next request reconnects it.
func (m *Manager) resourceServers() []*server {
	if m.Empty() {
		return nil
	}
	var out []*server
	for _, s := range m.servers {
		s.mu.Lock()
		ok := s.resources && !s.closed
		s.mu.Unlock()
		if ok && s.cfg.IsEnabled() && s.cfg.ServerExposure() != ExposureHidden {
			out = append(out, s)
		}
	}
	return out
}

// ResourceServers names the servers the resource tools reach now, in
// order.
func (m *Manager) ResourceServers() []string {
	var out []string
	for _, s := range m.resourceServers() {
		out = append(out, s.name)
	}
	return out
}

// ResourceTools are list_mcp_resources, list_mcp_resource_templates and
// read_mcp_resource while some server they reach offers resources; nil
// while none does. Their exposure is the widest among those servers', as
// in pi: direct when one of them is direct, else codemode, else deferred.
func (m *Manager) ResourceTools() []*ResourceTool {
	exposure := Exposure("")
	for _, s := range m.resourceServers() {
		switch e := s.cfg.ServerExposure(); {
		case e == ExposureDirect:
			exposure = e
		case e == ExposureCodemode && exposure != ExposureDirect:
			exposure = e
		case e == ExposureDeferred && exposure == "":
			exposure = e
		}
	}
	if exposure == "" {
		return nil
	}
	out := make([]*ResourceTool, len(ResourceToolNames))
	for i, name := range ResourceToolNames {
		out[i] = &ResourceTool{m: m, name: name, exposure: exposure}
	}
	return out
}

// readsResources reports whether a result of server's may send the model
// to read_mcp_resource: the resource tools reach the server, and the tool
// selection leaves that tool.
func (m *Manager) readsResources(server string) bool {
	if m.opts.ToolAllowed != nil && !m.opts.ToolAllowed(ReadResourceTool) {
		return false
	}
	return slices.Contains(m.ResourceServers(), server)
}

// ResourceTool is one of the resource tools. They only read: the approval
// gate does not ask about them under "writes".
type ResourceTool struct {
	m        *Manager
	name     string
	exposure Exposure
}

var _ agent.Tool = (*ResourceTool)(nil)

// Spec is pi's description and parameters.
func (t *ResourceTool) Spec() llm.ToolSpec {
	params := listParameters
	if t.name == ReadResourceTool {
		params = readParameters
	}
	return llm.ToolSpec{Name: t.name, Description: description(t.name), Parameters: json.RawMessage(params)}
}

// Exposure is how the tool reaches the model (see [Manager.ResourceTools]).
func (t *ResourceTool) Exposure() Exposure { return t.exposure }

// ReadOnly: the resource tools change nothing.
func (t *ResourceTool) ReadOnly() bool { return true }

// Servers names the servers the tool reaches now.
func (t *ResourceTool) Servers() []string { return t.m.ResourceServers() }

// Run lists or reads. Each request ends at its server's timeout, at ctx's
// end (the SDK tells the server the request is cancelled) or when the
// manager closes.
func (t *ResourceTool) Run(ctx context.Context, call agent.Call, _ func(agent.Result)) (agent.Result, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(t.m.ctx, cancel)()
	var in struct {
		Server string `json:"server"`
		Cursor string `json:"cursor"`
		URI    string `json:"uri"`
	}
	if len(call.Args) > 0 {
		if err := json.Unmarshal(call.Args, &in); err != nil {
			return agent.ErrorResult("invalid arguments for %s: %v", t.name, err), nil
		}
	}
	server, cursor, uri := strings.TrimSpace(in.Server), strings.TrimSpace(in.Cursor), strings.TrimSpace(in.URI)
	var res agent.Result
	var err error
	switch t.name {
	case ListResourcesTool:
		res, err = listResources(ctx, t.m, server, cursor)
	case ListResourceTemplatesTool:
		res, err = listTemplates(ctx, t.m, server, cursor)
	default:
		res, err = t.m.readResource(ctx, server, uri)
	}
	switch {
	case ctx.Err() != nil:
		return agent.ErrorResult("Operation aborted"), nil
	case err != nil:
		return agent.ErrorResult("%v", err), nil
	}
	return res, nil
}

// findResourceServer is the server called name among those the resource
// tools reach; the error names those (pi's words).
func (m *Manager) findResourceServer(name string) (*server, error) {
	servers := m.resourceServers()
	names := make([]string, len(servers))
	for i, s := range servers {
		if s.name == name {
			return s, nil
		}
		names[i] = s.name
	}
	msg := fmt.Sprintf("MCP server %q has no resources", name)
	if len(names) > 0 {
		msg += ". Servers with resources: " + strings.Join(names, ", ")
	}
	return nil, errors.New(msg)
}

// request sends one read-only request (a listing's page, a read) with do
// on the server's session, connecting first when there is none. It ends
// at the server's timeout or with ctx. A request that finds the
// connection ended before it went out goes to a new connection, once, as
// a tool call does; one under way when the connection breaks is not sent
// again (pi retries neither).
func (s *server) request(ctx context.Context, method string, do func(context.Context, *sdk.ClientSession) error) error {
	timeout := s.timeout()
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, errTimedOut)
	defer cancel()
	sess, err := s.session(ctx)
	if err == nil {
		err = do(ctx, sess)
		if errors.Is(err, sdk.ErrConnectionClosed) && ctx.Err() == nil {
			s.dropped(sess)
			if sess, err = s.session(ctx); err == nil {
				err = do(ctx, sess)
			}
		}
		if errors.Is(err, sdk.ErrConnectionClosed) {
			s.dropped(sess)
		}
		if err != nil {
			// The SDK's text names the method: `calling "resources/read": …`.
			err = fmt.Errorf("MCP server %q: %w", s.name, err)
		}
	}
	if err != nil && errors.Is(context.Cause(ctx), errTimedOut) {
		return fmt.Errorf("MCP server %q did not answer %s within %v (its timeout)", s.name, method, timeout)
	}
	return err
}

// withoutServer is err's text without the server's name in front: a
// listing's errors entry names the server already.
func withoutServer(name string, err error) string {
	text := err.Error()
	for _, prefix := range []string{"mcp server", "MCP server"} {
		if rest, ok := strings.CutPrefix(text, fmt.Sprintf("%s %q", prefix, name)); ok {
			return strings.TrimPrefix(strings.TrimPrefix(rest, ":"), " ")
		}
	}
	return text
}

// pageFunc asks a session for one page of a list from cursor, and returns
// its items and the next page's cursor ("" after the last).
type pageFunc[T any] func(ctx context.Context, sess *sdk.ClientSession, cursor string) ([]T, string, error)

func resourcesPage(ctx context.Context, sess *sdk.ClientSession, cursor string) ([]*sdk.Resource, string, error) {
	r, err := sess.ListResources(ctx, &sdk.ListResourcesParams{Cursor: cursor})
	if err != nil {
		return nil, "", err
	}
	return r.Resources, r.NextCursor, nil
}

// templatesPage is a page of templates; a server that does not implement
// resources/templates/list has none.
func templatesPage(ctx context.Context, sess *sdk.ClientSession, cursor string) ([]*sdk.ResourceTemplate, string, error) {
	r, err := sess.ListResourceTemplates(ctx, &sdk.ListResourceTemplatesParams{Cursor: cursor})
	var wire *jsonrpc.Error
	if errors.As(err, &wire) && wire.Code == jsonrpc.CodeMethodNotFound {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", err
	}
	return r.ResourceTemplates, r.NextCursor, nil
}

// listPage is one page of s's list, from cursor.
func listPage[T any](ctx context.Context, s *server, method string, page pageFunc[T], cursor string) ([]T, string, error) {
	var items []T
	var next string
	err := s.request(ctx, method, func(ctx context.Context, sess *sdk.ClientSession) error {
		var err error
		items, next, err = page(ctx, sess, cursor)
		return err
	})
	return items, next, err
}

// listAll is every page of s's list, each request bounded by the
// server's timeout. A cursor seen before, or more than maxListPages
// pages, end it with an error (pi's).
func listAll[T any](ctx context.Context, s *server, method string, page pageFunc[T]) ([]T, error) {
	var all []T
	seen := map[string]bool{}
	cursor := ""
	for range maxListPages {
		items, next, err := listPage(ctx, s, method, page, cursor)
		if err != nil {
			return nil, err
		}
		all = append(all, items...)
		if next == "" {
			return all, nil
		}
		if seen[next] {
			return nil, fmt.Errorf("MCP server %q: %s returned duplicate cursor: %s", s.name, method, next)
		}
		seen[next] = true
		cursor = next
	}
	return nil, fmt.Errorf("MCP server %q: %s exceeded %d pages", s.name, method, maxListPages)
}

// listingError is a server that could not be listed, in a listing of
// every server.
type listingError struct {
	Server string `json:"server"`
	Error  string `json:"error"`
}

// listed is a listing's answer: the items of one page of one server's
// list (with the next page's cursor), or of every page of every server
// (with the servers that failed).
type listed[T any] struct {
	server  string // "" when every server was listed
	items   []T
	servers []string // items[i] is servers[i]'s
	next    string
	errs    []listingError
}

// list is a listing tool's work: with a server's name, the page of its
// list at cursor; without, every page of every server the resource tools reach,
// at once, in the order of the servers' names.
func list[T any](ctx context.Context, m *Manager, method string, page pageFunc[T], name, cursor string) (listed[T], error) {
	if name != "" {
		s, err := m.findResourceServer(name)
		if err != nil {
			return listed[T]{}, err
		}
		items, next, err := listPage(ctx, s, method, page, cursor)
		if err != nil {
			return listed[T]{}, err
		}
		out := listed[T]{server: s.name, items: items, next: next}
		for range items {
			out.servers = append(out.servers, s.name)
		}
		return out, nil
	}
	if cursor != "" {
		return listed[T]{}, errors.New("cursor can only be used when a server is specified")
	}
	servers := m.resourceServers()
	slices.SortFunc(servers, func(a, b *server) int {
		return cmp.Or(strings.Compare(strings.ToLower(a.name), strings.ToLower(b.name)), strings.Compare(a.name, b.name))
	})
	items := make([][]T, len(servers))
	errs := make([]error, len(servers))
	var wg sync.WaitGroup
	for i, s := range servers {
		wg.Go(func() { items[i], errs[i] = listAll(ctx, s, method, page) })
	}
	wg.Wait()
	var out listed[T]
	for i, s := range servers {
		if errs[i] != nil {
			out.errs = append(out.errs, listingError{Server: s.name, Error: withoutServer(s.name, errs[i])})
			continue
		}
		for _, it := range items[i] {
			out.items = append(out.items, it)
			out.servers = append(out.servers, s.name)
		}
	}
	return out, nil
}

// mcpApp matches the MIME type of an MCP App's user interface.
var mcpApp = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i);\s*profile\s*=\s*"?mcp-app"?`) })

// isMCPApp reports whether a resource is an MCP App's user interface
// (a ui:// URI, or HTML with profile=mcp-app), which only hosts that
// render them can use: listings leave them out, as pi's do.
func isMCPApp(uri, mimeType string) bool {
	return strings.HasPrefix(uri, "ui://") || mcpApp().MatchString(mimeType)
}

// listedResource is a resource in a listing: the server's fields without
// _meta and icons, tagged with the server; a resource without a name is
// named by its URI.
type listedResource struct {
	Server      string           `json:"server"`
	URI         string           `json:"uri"`
	Name        string           `json:"name"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	MIMEType    string           `json:"mimeType,omitempty"`
	Size        int64            `json:"size,omitempty"`
	Annotations *sdk.Annotations `json:"annotations,omitempty"`
}

// listedTemplate is a resource template in a listing, as listedResource.
type listedTemplate struct {
	Server      string           `json:"server"`
	URITemplate string           `json:"uriTemplate"`
	Name        string           `json:"name"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	MIMEType    string           `json:"mimeType,omitempty"`
	Annotations *sdk.Annotations `json:"annotations,omitempty"`
}

// listResources is list_mcp_resources: its text is pi's JSON,
// {server?, resources, nextCursor?, errors?}.
func listResources(ctx context.Context, m *Manager, server, cursor string) (agent.Result, error) {
	l, err := list(ctx, m, "resources/list", resourcesPage, server, cursor)
	if err != nil {
		return agent.Result{}, err
	}
	payload := struct {
		Server     string           `json:"server,omitempty"`
		Resources  []listedResource `json:"resources"`
		NextCursor string           `json:"nextCursor,omitempty"`
		Errors     []listingError   `json:"errors,omitempty"`
	}{Server: l.server, Resources: []listedResource{}, NextCursor: l.next, Errors: l.errs}
	for i, r := range l.items {
		if r == nil || isMCPApp(r.URI, r.MIMEType) {
			continue
		}
		payload.Resources = append(payload.Resources, listedResource{
			Server: l.servers[i], URI: r.URI, Name: cmp.Or(r.Name, r.URI), Title: r.Title,
			Description: r.Description, MIMEType: r.MIMEType, Size: r.Size, Annotations: r.Annotations,
		})
	}
	return m.jsonResult(ListResourcesTool, l.server, payload)
}

// listTemplates is list_mcp_resource_templates, as listResources.
func listTemplates(ctx context.Context, m *Manager, server, cursor string) (agent.Result, error) {
	l, err := list(ctx, m, "resources/templates/list", templatesPage, server, cursor)
	if err != nil {
		return agent.Result{}, err
	}
	payload := struct {
		Server            string           `json:"server,omitempty"`
		ResourceTemplates []listedTemplate `json:"resourceTemplates"`
		NextCursor        string           `json:"nextCursor,omitempty"`
		Errors            []listingError   `json:"errors,omitempty"`
	}{Server: l.server, ResourceTemplates: []listedTemplate{}, NextCursor: l.next, Errors: l.errs}
	for i, r := range l.items {
		if r == nil || isMCPApp(r.URITemplate, r.MIMEType) {
			continue
		}
		payload.ResourceTemplates = append(payload.ResourceTemplates, listedTemplate{
			Server: l.servers[i], URITemplate: r.URITemplate, Name: cmp.Or(r.Name, r.URITemplate), Title: r.Title,
			Description: r.Description, MIMEType: r.MIMEType, Annotations: r.Annotations,
		})
	}
	return m.jsonResult(ListResourceTemplatesTool, l.server, payload)
}

// jsonResult is a listing as one line of JSON (written as JavaScript's
// JSON.stringify writes it: no escaping of <, > and &), cut as any long
// text is.
func (m *Manager) jsonResult(tool, server string, payload any) (agent.Result, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(payload); err != nil {
		return agent.Result{}, err
	}
	c := m.newContent()
	c.text(strings.TrimSuffix(b.String(), "\n"))
	return agent.Result{Content: c.out, Details: ResultDetails{Server: server, Tool: tool, FullOutputPaths: c.paths}}, nil
}

// readResource is read_mcp_resource: text reaches the model as text,
// images as images, other binary contents as the path of a temporary file
// that holds them (see modelContent.resource); several contents (a
// directory, say) each follow a line with their URI.
func (m *Manager) readResource(ctx context.Context, server, uri string) (agent.Result, error) {
	if server == "" {
		return agent.Result{}, errors.New("server must be provided")
	}
	if uri == "" {
		return agent.Result{}, errors.New("uri must be provided")
	}
	s, err := m.findResourceServer(server)
	if err != nil {
		return agent.Result{}, err
	}
	var res *sdk.ReadResourceResult
	err = s.request(ctx, "resources/read", func(ctx context.Context, sess *sdk.ClientSession) error {
		var err error
		res, err = sess.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
		return err
	})
	if err != nil {
		return agent.Result{}, err
	}
	c := m.newContent()
	var contents []*sdk.ResourceContents
	for _, rc := range res.Contents {
		if rc != nil {
			contents = append(contents, rc)
		}
	}
	for _, rc := range contents {
		if len(contents) > 1 {
			c.text(rc.URI + ":")
		}
		c.resource(rc)
	}
	if len(c.out) == 0 {
		c.text(fmt.Sprintf("Resource %s is empty.", uri))
	}
	return agent.Result{Content: c.out, Details: ResultDetails{Server: s.name, Tool: ReadResourceTool, FullOutputPaths: c.paths}}, nil
}
