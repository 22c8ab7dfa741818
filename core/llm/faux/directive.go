package faux

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/gopi-dev/gopi/core/llm"
)

// directiveName is the keyword before the first colon of a message.
type directiveName string

const (
	dirReply  directiveName = "reply"
	dirStream directiveName = "stream"
	dirThink  directiveName = "think"
	dirTools  directiveName = "tools"
	dirError  directiveName = "error"
	dirBash   directiveName = "bash"
	dirRead   directiveName = "read"
	dirWrite  directiveName = "write"
	dirEdit   directiveName = "edit"
	dirLs     directiveName = "ls"
	dirGrep   directiveName = "grep"
	dirFind   directiveName = "find"
	// dirCall calls any tool the session offers, by name, with JSON
	// arguments: how a script reaches extension and MCP tools.
	dirCall directiveName = "call"
)

// toolDirectives are the directives that become a tool call; each calls
// the tool of the same name.
var toolDirectives = []directiveName{dirBash, dirRead, dirWrite, dirEdit, dirLs, dirGrep, dirFind, dirCall}

var allDirectives = append([]directiveName{dirReply, dirStream, dirThink, dirTools, dirError}, toolDirectives...)

// maxStream bounds "stream: N".
const maxStream = 10000

type directive struct {
	name directiveName
	arg  string
}

// parseDirective reads "name: argument". The name is case-insensitive and
// must be a known directive; the argument is everything after the colon,
// several lines included. Only leading blanks are trimmed here: write and
// edit keep their content's trailing whitespace, the others trim it.
func parseDirective(s string) (directive, bool) {
	head, arg, ok := strings.Cut(strings.TrimLeft(s, " \t\r\n"), ":")
	if !ok {
		return directive{}, false
	}
	name := directiveName(strings.ToLower(strings.TrimSpace(head)))
	if !slices.Contains(allDirectives, name) {
		return directive{}, false
	}
	return directive{name: name, arg: strings.TrimLeft(arg, " \t")}, true
}

func isToolDirective(n directiveName) bool { return slices.Contains(toolDirectives, n) }

// toolCall is one call the faux model makes.
type toolCall struct {
	name string
	args json.RawMessage
}

// trimOne drops a single space on either side of s, so "a => b" splits
// into "a" and "b" while deliberate indentation survives.
func trimOne(s string) string {
	s = strings.TrimPrefix(s, " ")
	return strings.TrimSuffix(s, " ")
}

// content is the text after "::": one separating space or line break is
// dropped, the rest is kept as written.
func content(s string) string {
	if rest, ok := strings.CutPrefix(s, " "); ok {
		return rest
	}
	if rest, ok := strings.CutPrefix(s, "\r\n"); ok {
		return rest
	}
	return strings.TrimPrefix(s, "\n")
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("faux: marshal tool arguments: %v", err)) // maps of strings always marshal
	}
	return b
}

// callFor turns a tool directive into a call, or explains what is wrong
// with it.
func callFor(d directive) (toolCall, string) {
	usage := func(form string) (toolCall, string) {
		return toolCall{}, fmt.Sprintf("The %s directive needs an argument: `%s`.", d.name, form)
	}
	arg := strings.TrimSpace(d.arg)
	switch d.name {
	case dirBash:
		if arg == "" {
			return usage("bash: <command>")
		}
		return toolCall{"bash", mustJSON(map[string]string{"command": arg})}, ""
	case dirRead:
		if arg == "" {
			return usage("read: <path>")
		}
		return toolCall{"read", mustJSON(map[string]string{"path": arg})}, ""
	case dirLs:
		if arg == "" {
			return toolCall{"ls", json.RawMessage(`{}`)}, ""
		}
		return toolCall{"ls", mustJSON(map[string]string{"path": arg})}, ""
	case dirGrep:
		if arg == "" {
			return usage("grep: <pattern>")
		}
		return toolCall{"grep", mustJSON(map[string]string{"pattern": arg})}, ""
	case dirFind:
		if arg == "" {
			return usage("find: <glob>")
		}
		return toolCall{"find", mustJSON(map[string]string{"pattern": arg})}, ""
	case dirCall:
		name, rest, _ := strings.Cut(arg, " ")
		if name == "" {
			return usage("call: <tool> [JSON object]")
		}
		args := json.RawMessage(`{}`)
		if rest = strings.TrimSpace(rest); rest != "" {
			var obj map[string]any
			if json.Unmarshal([]byte(rest), &obj) != nil || obj == nil {
				return toolCall{}, "The call directive's arguments must be a JSON object: `call: <tool> {\"key\": \"value\"}`."
			}
			args = json.RawMessage(rest)
		}
		return toolCall{name, args}, ""
	case dirWrite:
		path, body, ok := strings.Cut(d.arg, "::")
		path = strings.TrimSpace(path)
		if !ok || path == "" {
			return usage("write: <path> :: <content>")
		}
		return toolCall{"write", mustJSON(map[string]string{"path": path, "content": content(body)})}, ""
	case dirEdit:
		path, change, ok := strings.Cut(d.arg, "::")
		path = strings.TrimSpace(path)
		oldText, newText, ok2 := strings.Cut(content(change), "=>")
		if !ok || !ok2 || path == "" || trimOne(oldText) == "" {
			return usage("edit: <path> :: <old text> => <new text>")
		}
		return toolCall{"edit", mustJSON(map[string]any{
			"path":  path,
			"edits": []map[string]string{{"oldText": trimOne(oldText), "newText": trimOne(newText)}},
		})}, ""
	}
	return toolCall{}, fmt.Sprintf("`%s` is not a tool directive.", d.name)
}

// failure is a scripted provider error.
type failure struct {
	status int
	// times is how many attempts fail before the model recovers; zero
	// means every attempt fails.
	times int
}

// parseFailure reads "error: <status> [times]".
func parseFailure(arg string) (failure, string) {
	fields := strings.Fields(arg)
	bad := "The error directive needs an HTTP error status and, optionally, how many attempts should fail: `error: 429` or `error: 503 2`."
	if len(fields) == 0 || len(fields) > 2 {
		return failure{}, bad
	}
	status, err := strconv.Atoi(fields[0])
	if err != nil || status < 400 || status > 599 {
		return failure{}, bad
	}
	f := failure{status: status}
	if len(fields) == 2 {
		n, err := strconv.Atoi(fields[1])
		if err != nil || n < 1 {
			return failure{}, bad
		}
		f.times = n
	}
	return f, ""
}

// err is the error a provider would produce for the status: classified
// like a real HTTP error answer, so the runtime retries what it would
// retry from a real provider.
func (f failure) err() error {
	return &llm.ProviderError{Status: f.status, Message: f.message()}
}

// message is the error text: the status code first, then its meaning.
func (f failure) message() string {
	text := http.StatusText(f.status)
	switch f.status {
	case http.StatusTooManyRequests:
		text += ": rate limit reached"
	case 529:
		text = "Overloaded"
	case http.StatusServiceUnavailable:
		text += ": the model is overloaded"
	}
	if text == "" {
		text = "Error"
	}
	return fmt.Sprintf("%d %s (simulated by the faux model)", f.status, text)
}
