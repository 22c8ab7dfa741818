package export

import (
	"bytes"
	"encoding/json"
	"html/template"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/session"
)

// page is what the template renders. Strings are escaped by html/template;
// only markdown output (template.HTML), data: URIs we checked
// (template.URL) and our own embedded CSS and script are trusted.
type page struct {
	Title        string
	Name         string // the session's name, when it is not the title
	ID           string
	Cwd          string
	Created      string
	Parent       string
	Model        string // the model in use at export time
	SystemPrompt string
	Items        []item
	Totals       totals
	CSS          template.CSS
	JS           template.JS
}

// item is one entry of the conversation; exactly one of the pointer
// fields (or Note) is set.
type item struct {
	Anchor string
	Time   string
	Label  string

	User      *userView
	Assistant *assistantView
	Tool      *toolView // a tool result whose call is not on the branch
	Bash      *bashView
	Custom    *customView
	Summary   *summaryView
	Unknown   *unknownView
	// Note is a one-line event: a model or thinking level change, a
	// session name.
	Note string
}

type userView struct {
	Text   template.HTML
	Images []imageView
}

type imageView struct {
	URL  template.URL // "" when the image could not be embedded safely
	Mime string
}

type assistantView struct {
	Blocks  []blockView
	Model   string
	Usage   string
	Aborted bool
	Error   string
}

type blockView struct {
	Text     template.HTML
	Thinking string
	Redacted bool
	Images   []imageView
	Tool     *toolView
}

type toolView struct {
	Name   string
	CallID string
	Brief  string // the call's headline argument, one line
	Args   string // pretty JSON; "" for no arguments
	Result *resultView
}

type resultView struct {
	Text    string
	Images  []imageView
	IsError bool
}

type bashView struct {
	Command        string
	Output         string
	ExitCode       string
	Failed         bool
	Cancelled      bool
	Truncated      bool
	FullOutputPath string
	Excluded       bool
}

type customView struct {
	Type   string
	Text   template.HTML
	Images []imageView
}

type summaryView struct {
	Compaction bool
	Heading    string
	Text       template.HTML
}

type unknownView struct {
	Kind string
	Raw  string
}

// totals add up the branch.
type totals struct {
	Input, Output, CacheRead, CacheWrite int
	Cost                                 float64

	User, Assistant, ToolCalls, ToolResults int
	Bash, Custom, Compactions, Branches     int
	Models                                  []string
}

// Tokens is the sum of the four token counts.
func (t totals) Tokens() int { return t.Input + t.Output + t.CacheRead + t.CacheWrite }

func build(in Input) page {
	p := page{
		ID:           in.Header.ID,
		Cwd:          in.Header.Cwd,
		Created:      formatTime(in.Header.Timestamp),
		Parent:       in.Header.ParentSession,
		Model:        modelName(in.Provider, in.Model),
		SystemPrompt: in.SystemPrompt,
		CSS:          template.CSS(pageCSS),
		JS:           template.JS(pageJS), //nolint:gosec // our embedded script
	}

	labels := map[string]string{}
	// calls maps each tool call on the branch to its view, so the result
	// (a later entry) lands under its call.
	calls := map[string]*toolView{}
	models := map[string]bool{}
	for _, e := range in.Entries {
		switch e := e.(type) {
		case *session.LabelEntry:
			if e.Label == "" {
				delete(labels, e.TargetID)
			} else {
				labels[e.TargetID] = e.Label
			}
		case *session.SessionInfoEntry:
			p.Name = strings.TrimSpace(e.Name)
		}
	}

	for _, e := range in.Entries {
		it := item{Anchor: "entry-" + e.Base().ID, Time: formatTime(e.Base().Timestamp), Label: labels[e.Base().ID]}
		switch e := e.(type) {
		case *session.MessageEntry:
			if !p.message(&it, e.Message(), calls, models) {
				continue
			}
		case *session.ModelChangeEntry:
			it.Note = "Model changed to " + modelName(e.Provider, e.ModelID)
		case *session.ThinkingLevelChangeEntry:
			it.Note = "Thinking level set to " + string(e.ThinkingLevel)
		case *session.SessionInfoEntry:
			if name := strings.TrimSpace(e.Name); name != "" {
				it.Note = "Session named “" + name + "”"
			} else {
				it.Note = "Session name cleared"
			}
		case *session.CompactionEntry:
			p.Totals.Compactions++
			it.Summary = compactionView(e.Summary, e.TokensBefore)
		case *session.BranchSummaryEntry:
			p.Totals.Branches++
			it.Summary = &summaryView{Heading: "Summary of an abandoned branch", Text: markdown(e.Summary)}
		case *session.CustomMessageEntry:
			p.Totals.Custom++
			if !e.Display {
				continue
			}
			it.Custom = customContent(e.CustomType, e.Content)
		default:
			// Labels are shown on their targets; custom entries are
			// extension state; unknown entries are not conversation.
			continue
		}
		p.Items = append(p.Items, it)
	}

	for m := range models {
		p.Totals.Models = append(p.Totals.Models, m)
	}
	slices.Sort(p.Totals.Models)

	p.Title = in.Title
	switch {
	case p.Title == "" && p.Name != "":
		p.Title = p.Name
	case p.Title == "":
		p.Title = "Session " + in.Header.ID
	}
	if p.Name == p.Title {
		p.Name = ""
	}
	return p
}

// message fills it from m and reports whether it is to be shown.
func (p *page) message(it *item, m llm.Message, calls map[string]*toolView, models map[string]bool) bool {
	switch m := m.(type) {
	case *llm.UserMessage:
		p.Totals.User++
		it.User = &userView{Text: markdown(m.Content.JoinText("\n")), Images: imagesOf(m.Content)}
	case *llm.AssistantMessage:
		p.Totals.Assistant++
		u := m.Usage
		p.Totals.Input += u.Input
		p.Totals.Output += u.Output
		p.Totals.CacheRead += u.CacheRead
		p.Totals.CacheWrite += u.CacheWrite
		p.Totals.Cost += u.Cost.Input + u.Cost.Output + u.Cost.CacheRead + u.Cost.CacheWrite
		name := modelName(m.Provider, m.Model)
		if name != "" {
			models[name] = true
		}
		a := &assistantView{Model: name, Usage: usageLine(u), Aborted: m.StopReason == llm.StopAborted}
		if m.StopReason == llm.StopError {
			a.Error = m.ErrorMessage
			if a.Error == "" {
				a.Error = "unknown error"
			}
		}
		for _, c := range m.Content {
			switch c := c.(type) {
			case llm.TextContent:
				if strings.TrimSpace(c.Text) != "" {
					a.Blocks = append(a.Blocks, blockView{Text: markdown(c.Text)})
				}
			case llm.ThinkingContent:
				if c.Redacted || strings.TrimSpace(c.Thinking) != "" {
					a.Blocks = append(a.Blocks, blockView{Thinking: c.Thinking, Redacted: c.Redacted})
				}
			case llm.ImageContent:
				a.Blocks = append(a.Blocks, blockView{Images: []imageView{image(c)}})
			case llm.ToolCall:
				p.Totals.ToolCalls++
				t := &toolView{Name: c.Name, CallID: c.ID, Brief: brief(c.Arguments), Args: prettyJSON(c.Arguments)}
				if c.ID != "" {
					calls[c.ID] = t
				}
				a.Blocks = append(a.Blocks, blockView{Tool: t})
			}
		}
		it.Assistant = a
	case *llm.ToolResultMessage:
		p.Totals.ToolResults++
		r := &resultView{Text: m.Content.JoinText("\n"), Images: imagesOf(m.Content), IsError: m.IsError}
		if t, ok := calls[m.ToolCallID]; ok && t.Result == nil {
			t.Result = r
			return false
		}
		it.Tool = &toolView{Name: m.ToolName, CallID: m.ToolCallID, Result: r}
	case *llm.BashExecutionMessage:
		p.Totals.Bash++
		b := &bashView{
			Command:        m.Command,
			Output:         m.Output,
			Cancelled:      m.Cancelled,
			Truncated:      m.Truncated,
			FullOutputPath: m.FullOutputPath,
			Excluded:       m.ExcludeFromContext,
		}
		switch {
		case m.ExitCode != nil:
			b.ExitCode = strconv.Itoa(*m.ExitCode)
			b.Failed = *m.ExitCode != 0
		case !m.Cancelled:
			b.ExitCode = "none"
		}
		b.Failed = b.Failed || m.Cancelled
		it.Bash = b
	case *llm.CustomMessage:
		p.Totals.Custom++
		if !m.Display {
			return false
		}
		it.Custom = customContent(m.CustomType, m.Content)
	case *llm.CompactionSummaryMessage:
		p.Totals.Compactions++
		it.Summary = compactionView(m.Summary, m.TokensBefore)
	case *llm.BranchSummaryMessage:
		p.Totals.Branches++
		it.Summary = &summaryView{Heading: "Summary of an abandoned branch", Text: markdown(m.Summary)}
	case *llm.UnknownMessage:
		it.Unknown = &unknownView{Kind: string(m.Role), Raw: prettyJSON(m.Raw)}
	default:
		return false
	}
	return true
}

func compactionView(summary string, tokensBefore int) *summaryView {
	return &summaryView{
		Compaction: true,
		Heading:    "Earlier conversation compacted from " + commas(tokensBefore) + " tokens",
		Text:       markdown(summary),
	}
}

func customContent(kind string, cs llm.Contents) *customView {
	return &customView{Type: kind, Text: markdown(cs.JoinText("\n")), Images: imagesOf(cs)}
}

func imagesOf(cs llm.Contents) []imageView {
	var out []imageView
	for _, c := range cs {
		if img, ok := c.(llm.ImageContent); ok {
			out = append(out, image(img))
		}
	}
	return out
}

var (
	mimeRE   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^image/[a-z0-9][a-z0-9.+-]*$`) })
	base64RE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9+/=\r\n]*$`) })
)

// image embeds img as a data: URI when its type is an image type and its
// payload is plain base64; anything else is left out (URL "").
func image(img llm.ImageContent) imageView {
	v := imageView{Mime: img.MimeType}
	mime := strings.ToLower(img.MimeType)
	if mimeRE().MatchString(mime) && img.Data != "" && base64RE().MatchString(img.Data) {
		v.URL = template.URL("data:" + mime + ";base64," + img.Data) //nolint:gosec // checked above
	}
	return v
}

// brief picks the argument that says what a call does (a command, a path,
// a pattern), first line only, shortened.
func brief(args json.RawMessage) string {
	var m map[string]any
	if json.Unmarshal(args, &m) != nil {
		return ""
	}
	for _, k := range []string{"command", "path", "file_path", "pattern", "url", "query"} {
		s, ok := m[k].(string)
		if !ok || s == "" {
			continue
		}
		s, _, cut := strings.Cut(s, "\n")
		if r := []rune(s); len(r) > 100 {
			s, cut = string(r[:100]), true
		}
		if cut {
			s += " …"
		}
		return s
	}
	return ""
}

// prettyJSON indents raw; an empty object or nothing gives "".
func prettyJSON(raw json.RawMessage) string {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || bytes.Equal(t, []byte("{}")) || bytes.Equal(t, []byte("null")) {
		return ""
	}
	var b bytes.Buffer
	if err := json.Indent(&b, t, "", "  "); err != nil {
		return string(raw)
	}
	return b.String()
}

func usageLine(u llm.Usage) string {
	if u.Input == 0 && u.Output == 0 && u.CacheRead == 0 && u.CacheWrite == 0 {
		return ""
	}
	parts := []string{"in " + commas(u.Input), "out " + commas(u.Output)}
	if u.CacheRead > 0 {
		parts = append(parts, "cache read "+commas(u.CacheRead))
	}
	if u.CacheWrite > 0 {
		parts = append(parts, "cache write "+commas(u.CacheWrite))
	}
	cost := u.Cost.Input + u.Cost.Output + u.Cost.CacheRead + u.Cost.CacheWrite
	if cost > 0 {
		parts = append(parts, "$"+strconv.FormatFloat(cost, 'f', 4, 64))
	}
	return strings.Join(parts, " · ")
}

func modelName(provider, model string) string {
	switch {
	case model == "":
		return ""
	case provider == "":
		return model
	default:
		return provider + "/" + model
	}
}

// formatTime renders an entry's ISO timestamp in UTC, to the second; ""
// when it does not parse. The page shows UTC because it cannot ask the
// reader's browser for its zone without a script.
func formatTime(iso string) string {
	t, err := time.Parse(time.RFC3339Nano, iso)
	if err != nil {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

// commas writes n with thousands separators.
func commas(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}
