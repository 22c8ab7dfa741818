package mcp

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/tools"
)

// TextLimit is the size in bytes above which a text block of a result
// reaches the model with its middle cut out (pi's 20 KB).
const TextLimit = 20 << 10

// ResultDetails are the "details" of an MCP call's result, and of a
// resource tool's.
type ResultDetails struct {
	// Server is the server called; "" for a listing of every server.
	Server string `json:"server"`
	Tool   string `json:"tool"`
	// FullOutputPaths are the files holding the whole text of blocks that
	// were cut for the model.
	FullOutputPaths []string `json:"fullOutputPaths,omitempty"`
}

// modelContent gathers a result's blocks as the model reads them: a text
// over TextLimit is cut (cutText), and the files that hold the whole
// texts are kept for the details.
type modelContent struct {
	m     *Manager
	out   llm.Contents
	paths []string
	// hasText reports whether some block is text.
	hasText bool
}

func (m *Manager) newContent() *modelContent { return &modelContent{m: m} }

func (c *modelContent) text(s string) {
	c.hasText = true
	s, path := c.m.cutText(s)
	if path != "" {
		c.paths = append(c.paths, path)
	}
	c.out = append(c.out, llm.TextContent{Text: s})
}

func (c *modelContent) image(data []byte, mimeType string) {
	c.out = append(c.out, llm.ImageContent{Data: base64.StdEncoding.EncodeToString(data), MimeType: mimeType})
}

// resource is a resource's contents, embedded in a result or read, as
// pi gives them: text as text, an image as an image, a blob of a textual
// type (text/*, JSON, XML) as text, and any other blob saved to a
// temporary file whose path the model gets.
func (c *modelContent) resource(rc *sdk.ResourceContents) {
	switch {
	case rc.Blob == nil:
		if rc.Text != "" {
			c.text(rc.Text)
		}
	case strings.HasPrefix(rc.MIMEType, "image/"):
		c.image(rc.Blob, rc.MIMEType)
	case isTextMIMEType(rc.MIMEType):
		c.text(strings.ToValidUTF8(string(rc.Blob), "\uFFFD"))
	default:
		kind := fmt.Sprintf("%s, %s", cmp.Or(rc.MIMEType, "unknown type"), tools.FormatSize(len(rc.Blob)))
		path, err := c.m.saveTemp(rc.Blob, extensionOf(rc.URI))
		if err != nil {
			c.text(fmt.Sprintf("[Binary resource %s (%s) could not be saved: %v]", rc.URI, kind, err))
			return
		}
		c.text(fmt.Sprintf("[Binary resource %s (%s) saved to %s]", rc.URI, kind, path))
	}
}

// toResult is a server's answer as the model reads it: text as text,
// images as images, structured content as JSON text, resource links as a
// line saying how to read them; isError makes it a tool error.
func (m *Manager) toResult(server, tool string, r *sdk.CallToolResult) agent.Result {
	c := m.newContent()
	for _, block := range r.Content {
		switch b := block.(type) {
		case *sdk.TextContent:
			c.text(b.Text)
		case *sdk.ImageContent:
			c.image(b.Data, b.MIMEType)
		case *sdk.AudioContent:
			c.text(fmt.Sprintf("[audio (%s, %d bytes) not shown: gopi passes no audio to the model]", b.MIMEType, len(b.Data)))
		case *sdk.ResourceLink:
			c.text(resourceLinkText(server, b, m.readsResources(server)))
		case *sdk.EmbeddedResource:
			if b.Resource != nil {
				c.resource(b.Resource)
			}
		default:
			if j, err := json.Marshal(b); err == nil {
				c.text(string(j))
			}
		}
	}
	if r.StructuredContent != nil && !c.hasText {
		if j, err := json.Marshal(r.StructuredContent); err == nil {
			c.text(string(j))
		}
	}
	out := c.out
	if len(out) == 0 {
		out = llm.Contents{llm.TextContent{Text: "(no output)"}}
	}
	return agent.Result{Content: out, Details: ResultDetails{Server: server, Tool: tool, FullOutputPaths: c.paths},
		StructuredContent: scriptResult{Content: r.Content, StructuredContent: r.StructuredContent, IsError: r.IsError}, IsError: r.IsError}
}

// scriptResult is the server's CallToolResult without its _meta, whole
// and untruncated: the structured content of an MCP call, what a codemode
// script's call resolves to (pi's).
type scriptResult struct {
	Content           []sdk.Content `json:"content"`
	StructuredContent any           `json:"structuredContent,omitempty"`
	IsError           bool          `json:"isError,omitempty"`
}

// resultSchema is the JSON Schema of [scriptResult]: every MCP tool's
// output schema.
const resultSchema = `{"type":"object","properties":{` +
	`"content":{"type":"array","items":{"type":"object","properties":{"type":{"type":"string"}},"required":["type"]}},` +
	`"structuredContent":{},"isError":{"type":"boolean"}},"required":["content"]}`

// resourceLinkText is pi's line for a linked resource: its URI, title (or
// name), type, size and description, and, when readable, the tool and
// server that read it.
func resourceLinkText(server string, l *sdk.ResourceLink, readable bool) string {
	var details []string
	if l.MIMEType != "" {
		details = append(details, l.MIMEType)
	}
	if l.Size != nil {
		details = append(details, tools.FormatSize(int(*l.Size)))
	}
	var b strings.Builder
	fmt.Fprintf(&b, `[Resource %s "%s"`, l.URI, cmp.Or(l.Title, l.Name))
	if len(details) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(details, ", "))
	}
	if l.Description != "" {
		fmt.Fprintf(&b, ": %s", l.Description)
	}
	if readable {
		fmt.Fprintf(&b, `. Read it with %s (server "%s")`, ReadResourceTool, server)
	}
	b.WriteString("]")
	return b.String()
}

// isTextMIMEType reports whether a blob of this type is shown as text.
func isTextMIMEType(mimeType string) bool {
	t, _, _ := strings.Cut(mimeType, ";")
	t = strings.ToLower(strings.TrimSpace(t))
	return strings.HasPrefix(t, "text/") || t == "application/json" || strings.HasSuffix(t, "+json") || strings.HasSuffix(t, "+xml")
}

// extension matches a file name's extension, as pi keeps it for a saved
// blob.
var extension = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\.[A-Za-z0-9]{1,8}$`) })

// extensionOf is the extension a saved blob's file gets: the one its URI's
// path ends in, else .bin.
func extensionOf(uri string) string {
	p := uri
	if u, err := url.Parse(uri); err == nil && u.Scheme != "" {
		p = u.Path
	}
	return cmp.Or(extension().FindString(p), ".bin")
}

// cutText keeps the head and tail of a text over TextLimit around a
// "…N chars truncated…" marker and saves the whole text to a temporary
// file, whose path it returns and names in the text.
func (m *Manager) cutText(s string) (string, string) {
	if len(s) <= TextLimit {
		return s, ""
	}
	half := TextLimit / 2
	head := s[:half]
	for !utf8.ValidString(head) && len(head) > 0 {
		head = head[:len(head)-1]
	}
	tail := s[len(s)-half:]
	for !utf8.ValidString(tail) && len(tail) > 0 {
		tail = tail[1:]
	}
	cut := utf8.RuneCountInString(s) - utf8.RuneCountInString(head) - utf8.RuneCountInString(tail)
	var b strings.Builder
	b.WriteString(head)
	fmt.Fprintf(&b, "\n\n…%d chars truncated…\n\n", cut)
	b.WriteString(tail)
	path, err := m.saveTemp([]byte(s), ".txt")
	if err != nil {
		fmt.Fprintf(&b, "\n\n[The full text could not be saved: %v]", err)
		return b.String(), ""
	}
	fmt.Fprintf(&b, "\n\n[Full text (%d chars): %s]", utf8.RuneCountInString(s), path)
	return b.String(), path
}

// saveTemp writes data to a new temporary file named with ext and returns
// its path.
func (m *Manager) saveTemp(data []byte, ext string) (string, error) {
	f, err := os.CreateTemp(m.opts.TempDir, "gopi-mcp-*"+ext)
	if err != nil {
		return "", err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return "", err
	}
	return f.Name(), f.Close()
}
