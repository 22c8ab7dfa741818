package acp

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/gopi-dev/gopi/core/llm"
)

// promptInput is a prompt as gopi's prompt command takes it: the user
// message's text and its images.
type promptInput struct {
	text   string
	images []llm.ImageContent
}

// promptContent turns a prompt's content blocks into the user message, in
// their order: text as it is; images as images; a resource link as a line
// naming the file (its path) or URI for the model to read with its tools;
// an embedded resource's text in a tagged section naming its path or URI
// (the content as the editor has it, saved or not); an embedded image as an
// image, any other binary noted by name and size. Audio is refused: it is
// not in the capabilities gopi advertises.
func promptContent(blocks []json.RawMessage) (promptInput, error) {
	var in promptInput
	var parts []string
	for i, raw := range blocks {
		b, err := contentBlock(i, raw)
		if err != nil {
			return in, err
		}
		switch {
		case b.Text != nil:
			parts = append(parts, b.Text.Text)
		case b.Image != nil:
			img, err := image(fmt.Sprintf("prompt[%d]", i), "data", b.Image.Data, b.Image.MimeType)
			if err != nil {
				return in, err
			}
			in.images = append(in.images, img)
		case b.Audio != nil:
			return in, errorf(codeInvalidParams, "invalid params: prompt[%d] is audio, which gopi does not take (promptCapabilities.audio is false)", i)
		case b.ResourceLink != nil:
			parts = append(parts, linkLine(b.ResourceLink))
		case b.Resource != nil:
			r := b.Resource.Resource
			switch {
			case r.TextResourceContents != nil:
				parts = append(parts, embeddedText(r.TextResourceContents))
			case r.BlobResourceContents != nil:
				blob := r.BlobResourceContents
				mime := deref(blob.MimeType)
				if strings.HasPrefix(mime, "image/") {
					img, err := image(fmt.Sprintf("prompt[%d].resource", i), "blob", blob.Blob, mime)
					if err != nil {
						return in, err
					}
					in.images = append(in.images, img)
					parts = append(parts, fmt.Sprintf("[Attached image: %s]", where(blob.Uri)))
					continue
				}
				n, err := blobSize(blob.Blob)
				if err != nil {
					return in, errorf(codeInvalidParams, "invalid params: prompt[%d].resource.blob is not base64: %v", i, err)
				}
				parts = append(parts, binaryNote(blob.Uri, mime, n))
			}
		}
	}
	in.text = strings.Join(parts, "\n")
	if strings.TrimSpace(in.text) == "" && len(in.images) == 0 {
		return in, errorf(codeInvalidParams, "invalid params: \"prompt\" has no content")
	}
	return in, nil
}

// contentBlock decodes block i of a prompt, checking the fields the
// schema requires of its type.
func contentBlock(i int, raw json.RawMessage) (sdk.ContentBlock, error) {
	var b sdk.ContentBlock
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(raw, &probe); err != nil {
		return b, errorf(codeInvalidParams, "invalid params: prompt[%d] must be an object", i)
	}
	var typ string
	if err := json.Unmarshal(probe["type"], &typ); err != nil || typ == "" {
		return b, errorf(codeInvalidParams, "invalid params: prompt[%d] needs a string \"type\"", i)
	}
	required := map[string][]string{
		"text":          {"text"},
		"image":         {"data", "mimeType"},
		"audio":         {"data", "mimeType"},
		"resource_link": {"uri", "name"},
		"resource":      {"resource"},
	}
	fields, known := required[typ]
	if !known {
		return b, errorf(codeInvalidParams, "invalid params: prompt[%d] has type %q, not one of text, image, resource_link, resource", i, typ)
	}
	for _, f := range fields {
		if v, ok := probe[f]; !ok || string(v) == "null" {
			return b, errorf(codeInvalidParams, "invalid params: prompt[%d] (%s) needs %q", i, typ, f)
		}
	}
	if typ == "resource" {
		var r map[string]json.RawMessage
		if json.Unmarshal(probe["resource"], &r) != nil || r["uri"] == nil || (r["text"] == nil && r["blob"] == nil) {
			return b, errorf(codeInvalidParams, "invalid params: prompt[%d].resource needs \"uri\" and \"text\" or \"blob\"", i)
		}
	}
	if err := json.Unmarshal(raw, &b); err != nil {
		return b, errorf(codeInvalidParams, "invalid params: prompt[%d] is not a valid %s block: a field has the wrong type", i, typ)
	}
	return b, nil
}

// image is an image block's data as the user message's image; at names
// the block and field its data field.
func image(at, field, data, mime string) (llm.ImageContent, error) {
	if !strings.HasPrefix(mime, "image/") {
		return llm.ImageContent{}, errorf(codeInvalidParams, "invalid params: %s.mimeType must be an image type such as \"image/png\", not %q", at, mime)
	}
	if _, err := base64.StdEncoding.DecodeString(data); err != nil || data == "" {
		return llm.ImageContent{}, errorf(codeInvalidParams, "invalid params: %s.%s must be the image's bytes in base64", at, field)
	}
	return llm.ImageContent{Data: data, MimeType: mime}, nil
}

// linkLine names a linked resource for the model: a file by its path,
// anything else by its URI, with what the link says about it.
func linkLine(l *sdk.ContentBlockResourceLink) string {
	var b strings.Builder
	if p, ok := filePath(l.Uri); ok {
		fmt.Fprintf(&b, "[Linked file: %s", p)
	} else {
		fmt.Fprintf(&b, "[Linked resource: %s", l.Uri)
	}
	var about []string
	if l.Name != "" && !strings.HasSuffix(l.Uri, "/"+l.Name) {
		about = append(about, "name "+l.Name)
	}
	if t := deref(l.Title); t != "" {
		about = append(about, "title "+t)
	}
	if d := deref(l.Description); d != "" {
		about = append(about, d)
	}
	if m := deref(l.MimeType); m != "" {
		about = append(about, m)
	}
	if l.Size != nil {
		about = append(about, fmt.Sprintf("%d bytes", *l.Size))
	}
	if len(about) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(about, ", "))
	}
	b.WriteString("]")
	return b.String()
}

// embeddedText is an embedded text resource as the model sees it: its
// content in a section tagged with its path (a file) or URI.
func embeddedText(r *sdk.TextResourceContents) string {
	attr := fmt.Sprintf("uri=%q", r.Uri)
	if p, ok := filePath(r.Uri); ok {
		attr = fmt.Sprintf("path=%q", p)
	}
	text := strings.TrimSuffix(r.Text, "\n")
	return fmt.Sprintf("<attached_file %s>\n%s\n</attached_file>", attr, text)
}

// binaryNote stands for an embedded binary resource that is not an image:
// the model is told it is there, not given its bytes.
func binaryNote(uri, mime string, size int) string {
	kind := "binary"
	if mime != "" {
		kind = mime
	}
	return fmt.Sprintf("[Attached %s: %s, %d bytes; its content is not included]", kind, where(uri), size)
}

// where is a resource's path when it is a file, else its URI.
func where(uri string) string {
	if p, ok := filePath(uri); ok {
		return p
	}
	return uri
}

// filePath is the path of a file:// URI.
func filePath(uri string) (string, bool) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" || u.Path == "" {
		return "", false
	}
	return u.Path, true
}

// blobSize is the number of bytes a base64 blob holds.
func blobSize(blob string) (int, error) {
	b, err := base64.StdEncoding.DecodeString(blob)
	return len(b), err
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// promptCapabilities are the content gopi takes in a prompt beyond text
// and resource links: images and embedded resources, not audio.
var promptCapabilities = sdk.PromptCapabilities{Image: true, EmbeddedContext: true}
