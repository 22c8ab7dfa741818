package resources

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// frontmatter is the YAML header of a markdown resource. A header that is
// valid YAML but not a mapping (a bare string, a list) counts as empty, as in
// pi.
type frontmatter map[string]any

// str returns a string field, or "" when it is missing or not a string.
func (f frontmatter) str(key string) string {
	s, _ := f[key].(string)
	return s
}

// normalizeNewlines turns CRLF and lone CR line ends into LF.
func normalizeNewlines(s string) string {
	if !strings.Contains(s, "\r") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}

// splitFrontmatter separates a leading "---" YAML block from the body. Like
// pi, the header ends at the first "\n---" after the opening marker, the body
// after a header is trimmed, and a file without a header keeps its body as is
// (newlines normalized).
func splitFrontmatter(content string) (header string, body string, ok bool) {
	s := normalizeNewlines(content)
	if !strings.HasPrefix(s, "---") {
		return "", s, false
	}
	end := strings.Index(s[3:], "\n---")
	if end < 0 {
		return "", s, false
	}
	end += 3
	body = strings.TrimSpace(s[end+4:])
	if end <= 4 {
		// "---\n---": an empty header.
		return "", body, true
	}
	return s[4:end], body, true
}

// parseFrontmatter decodes the header of content and returns it with the
// body. Invalid YAML is an error; the caller names the file.
func parseFrontmatter(content string) (frontmatter, string, error) {
	header, body, _ := splitFrontmatter(content)
	if header == "" {
		return frontmatter{}, body, nil
	}
	var v any
	if err := yaml.Unmarshal([]byte(header), &v); err != nil {
		return nil, body, fmt.Errorf("parsing frontmatter: %w", err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return frontmatter{}, body, nil
	}
	return frontmatter(m), body, nil
}

// stripFrontmatter returns content without its header.
func stripFrontmatter(content string) string {
	_, body, _ := splitFrontmatter(content)
	return body
}
