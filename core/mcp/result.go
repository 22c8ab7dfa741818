package mcp

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/llm"
)

// TextLimit is the size in bytes above which a text block of a result
// reaches the model with its middle cut out (pi's 20 KB).
const TextLimit = 20 << 10

// ResultDetails are the "details" of an MCP call's result.
type ResultDetails struct {
	Server string `json:"server"`
	Tool   string `json:"tool"`
	// FullOutputPaths are the files holding the whole text of blocks that
	// were cut for the model.
	FullOutputPaths []string `json:"fullOutputPaths,omitempty"`
}

// toResult is a server's answer as the model reads it: text as text,
// images as images, structured content as JSON text, resource links as a
// line saying how to read them; isError makes it a tool error.
func (m *Manager) toResult(server, tool string, r *sdk.CallToolResult) agent.Result {
	d := ResultDetails{Server: server, Tool: tool}
	var out llm.Contents
	hasText := false
	addText := func(s string) {
		hasText = true
		s, path := m.cutText(s)
		if path != "" {
			d.FullOutputPaths = append(d.FullOutputPaths, path)
		}
		out = append(out, llm.TextContent{Text: s})
	}
	for _, c := range r.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			addText(c.Text)
		case *sdk.ImageContent:
			out = append(out, llm.ImageContent{Data: base64.StdEncoding.EncodeToString(c.Data), MimeType: c.MIMEType})
		case *sdk.AudioContent:
			addText(fmt.Sprintf("[audio (%s, %d bytes) not shown: gopi passes no audio to the model]", c.MIMEType, len(c.Data)))
		case *sdk.ResourceLink:
			addText(resourceLinkText(server, c))
		case *sdk.EmbeddedResource:
			if rc := c.Resource; rc != nil {
				switch {
				case rc.Text != "":
					addText(rc.Text)
				case strings.HasPrefix(rc.MIMEType, "image/"):
					out = append(out, llm.ImageContent{Data: base64.StdEncoding.EncodeToString(rc.Blob), MimeType: rc.MIMEType})
				default:
					addText(fmt.Sprintf("[resource %s (%s, %d bytes) not shown]", rc.URI, rc.MIMEType, len(rc.Blob)))
				}
			}
		default:
			if b, err := json.Marshal(c); err == nil {
				addText(string(b))
			}
		}
	}
	if r.StructuredContent != nil && !hasText {
		if b, err := json.Marshal(r.StructuredContent); err == nil {
			addText(string(b))
		}
	}
	if len(out) == 0 {
		out = llm.Contents{llm.TextContent{Text: "(no output)"}}
	}
	return agent.Result{Content: out, Details: d, IsError: r.IsError}
}

// resourceLinkText names a linked resource and how the model reads it.
func resourceLinkText(server string, l *sdk.ResourceLink) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Resource link: %s", l.URI)
	if l.Name != "" {
		fmt.Fprintf(&b, " (%s", l.Name)
		if l.MIMEType != "" {
			fmt.Fprintf(&b, ", %s", l.MIMEType)
		}
		b.WriteString(")")
	}
	if l.Description != "" {
		fmt.Fprintf(&b, ": %s", l.Description)
	}
	fmt.Fprintf(&b, "\nRead it with read_mcp_resource, server %q, uri %q.", server, l.URI)
	return b.String()
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
	path, err := m.saveFull(s)
	if err != nil {
		fmt.Fprintf(&b, "\n\n[The full text could not be saved: %v]", err)
		return b.String(), ""
	}
	fmt.Fprintf(&b, "\n\n[Full text (%d chars): %s]", utf8.RuneCountInString(s), path)
	return b.String(), path
}

func (m *Manager) saveFull(s string) (string, error) {
	f, err := os.CreateTemp(m.opts.TempDir, "gopi-mcp-*.txt")
	if err != nil {
		return "", err
	}
	if _, err := f.WriteString(s); err != nil {
		f.Close()
		return "", err
	}
	return f.Name(), f.Close()
}
