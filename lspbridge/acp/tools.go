package acp

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/gopi-dev/gopi/core/agent"
)

// toolView is how a tool call is shown to the client.
type toolView struct {
	title     string
	kind      sdk.ToolKind
	locations []sdk.ToolCallLocation
}

// titleMax bounds the target named in a title; the whole arguments ride
// rawInput.
const titleMax = 200

// describeTool gives a tool call its title, kind and the files it
// touches, from the tool's name and arguments. Tools gopi does not know
// (extension and MCP tools) are "other", titled by their name and main
// argument.
func describeTool(cwd, name string, args json.RawMessage) toolView {
	var a struct {
		Path    string `json:"path"`
		Command string `json:"command"`
		Pattern string `json:"pattern"`
		Offset  int    `json:"offset"`
		Limit   int    `json:"limit"`
	}
	_ = json.Unmarshal(args, &a)
	loc := func() []sdk.ToolCallLocation {
		if a.Path == "" {
			return nil
		}
		p := a.Path
		if !filepath.IsAbs(p) {
			p = filepath.Join(cwd, p)
		}
		l := sdk.ToolCallLocation{Path: p}
		if a.Offset > 0 {
			l.Line = sdk.Ptr(a.Offset)
		}
		return []sdk.ToolCallLocation{l}
	}
	short := func(s string) string {
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			s = s[:i] + " …"
		}
		if r := []rune(s); len(r) > titleMax {
			s = string(r[:titleMax]) + "…"
		}
		return s
	}
	switch name {
	case "read":
		return toolView{"Read " + short(a.Path) + lineRange(a.Offset, a.Limit), sdk.ToolKindRead, loc()}
	case "edit":
		return toolView{"Edit " + short(a.Path), sdk.ToolKindEdit, loc()}
	case "write":
		return toolView{"Write " + short(a.Path), sdk.ToolKindEdit, loc()}
	case "bash":
		return toolView{short(a.Command), sdk.ToolKindExecute, nil}
	case "grep":
		return toolView{"Search " + short(a.Pattern), sdk.ToolKindSearch, loc()}
	case "find":
		return toolView{"Find " + short(a.Pattern), sdk.ToolKindSearch, loc()}
	case "ls":
		p := a.Path
		if p == "" {
			p = "."
		}
		return toolView{"List " + short(p), sdk.ToolKindSearch, loc()}
	}
	return toolView{agent.Summary(name, args, titleMax), sdk.ToolKindOther, nil}
}

// lineRange is a read's lines as a title shows them: ":10-49" for offset
// 10 and limit 40, ":10" onwards for an offset alone, ":1-40" for a limit
// alone; "" for the whole file.
func lineRange(offset, limit int) string {
	switch {
	case offset <= 0 && limit <= 0:
		return ""
	case limit <= 0:
		return fmt.Sprintf(":%d", offset)
	}
	first := max(offset, 1)
	return fmt.Sprintf(":%d-%d", first, first+limit-1)
}
