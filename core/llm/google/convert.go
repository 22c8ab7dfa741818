package google

import (
	"encoding/base64"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/genai"

	"github.com/gopi-dev/gopi/core/llm"
)

// Model-visible stand-ins for content the request cannot carry.
const (
	imageOmitted     = "[image not shown: this model does not accept images]"
	toolImageOmitted = "[tool image not shown: this model does not accept images]"
	toolImageOnly    = "(the result is the attached image)"
	toolImagesIntro  = "Images returned by the tool:"
	missingResult    = "No result was recorded for this tool call."
)

// maxDefaultOutput caps the reply when the call sets no MaxTokens, as pi
// does for every API.
const maxDefaultOutput = 32000

// buildConfig assembles everything but the contents.
func buildConfig(model *llm.Model, req *llm.Request) *genai.GenerateContentConfig {
	cfg := &genai.GenerateContentConfig{
		// A dropped stream is reported, not silently resumed by the SDK.
		AutomaticContinuation: genai.Ptr(false),
	}
	if t := req.Options.Temperature; t != nil {
		cfg.Temperature = genai.Ptr(float32(*t))
	}
	maxTokens := req.Options.MaxTokens
	if maxTokens <= 0 && model.MaxTokens > 0 {
		maxTokens = min(model.MaxTokens, maxDefaultOutput)
	}
	if maxTokens > 0 {
		cfg.MaxOutputTokens = int32(maxTokens)
	}
	if req.SystemPrompt != "" {
		cfg.SystemInstruction = &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{Text: req.SystemPrompt}}}
	}
	if len(req.Tools) > 0 {
		cfg.Tools = convertTools(req.Tools)
	}
	cfg.ThinkingConfig = thinkingConfig(model, &req.Options)
	return cfg
}

// convertTools declares every tool as a function whose parameters are
// passed through as JSON Schema (parametersJsonSchema), not Google's
// OpenAPI subset, so anyOf, const and friends survive.
func convertTools(tools []llm.ToolSpec) []*genai.Tool {
	decls := make([]*genai.FunctionDeclaration, 0, len(tools))
	for _, t := range tools {
		params := t.Parameters
		if len(params) == 0 || !json.Valid(params) {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		decls = append(decls, &genai.FunctionDeclaration{
			Name:                 t.Name,
			Description:          t.Description,
			ParametersJsonSchema: params,
		})
	}
	return []*genai.Tool{{FunctionDeclarations: decls}}
}

var (
	gemini3Pro   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`gemini-3(\.\d+)?-pro`) })
	gemini3Flash = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`gemini-3(\.\d+)?-flash`) })
	gemma4       = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`gemma-?4`) })
)

// thinkingConfig picks the reasoning settings. Gemini 3 and Gemma 4 take a
// thinking level; older models a token budget. With thinking off, a
// reasoning model is turned down as far as it goes (Gemini 3 cannot switch
// it off entirely) and its thoughts are not requested.
func thinkingConfig(model *llm.Model, opts *llm.Options) *genai.ThinkingConfig {
	if !model.Reasoning {
		return nil
	}
	id := strings.ToLower(model.ID)
	usesLevel := gemini3Pro().MatchString(id) || gemini3Flash().MatchString(id) || gemma4().MatchString(id)
	level := opts.Thinking
	if level == "" || level == llm.ThinkingOff {
		switch {
		case gemini3Pro().MatchString(id):
			return &genai.ThinkingConfig{ThinkingLevel: genai.ThinkingLevelLow}
		case usesLevel:
			return &genai.ThinkingConfig{ThinkingLevel: genai.ThinkingLevelMinimal}
		default:
			return &genai.ThinkingConfig{ThinkingBudget: genai.Ptr[int32](0)}
		}
	}
	if level == llm.ThinkingXHigh {
		level = llm.ThinkingHigh
	}
	tc := &genai.ThinkingConfig{IncludeThoughts: true}
	if usesLevel {
		tc.ThinkingLevel = googleLevel(id, level)
	} else {
		tc.ThinkingBudget = genai.Ptr(int32(thinkingBudget(id, level, opts.ThinkingBudgets)))
	}
	return tc
}

// googleLevel maps a gopi level to Gemini 3's: Pro knows only LOW and HIGH,
// Gemma 4 only MINIMAL and HIGH.
func googleLevel(id string, level llm.ThinkingLevel) genai.ThinkingLevel {
	low := level == llm.ThinkingMinimal || level == llm.ThinkingLow
	switch {
	case gemini3Pro().MatchString(id):
		if low {
			return genai.ThinkingLevelLow
		}
		return genai.ThinkingLevelHigh
	case gemma4().MatchString(id):
		if low {
			return genai.ThinkingLevelMinimal
		}
		return genai.ThinkingLevelHigh
	}
	switch level {
	case llm.ThinkingMinimal:
		return genai.ThinkingLevelMinimal
	case llm.ThinkingLow:
		return genai.ThinkingLevelLow
	case llm.ThinkingMedium:
		return genai.ThinkingLevelMedium
	default:
		return genai.ThinkingLevelHigh
	}
}

// thinkingBudget is the token budget for level: the call's override, else
// the model family's table, else -1 (the model decides).
func thinkingBudget(id string, level llm.ThinkingLevel, custom map[llm.ThinkingLevel]int) int {
	if v, ok := custom[level]; ok {
		return v
	}
	var table map[llm.ThinkingLevel]int
	switch {
	case strings.Contains(id, "2.5-pro"):
		table = map[llm.ThinkingLevel]int{llm.ThinkingMinimal: 128, llm.ThinkingLow: 2048, llm.ThinkingMedium: 8192, llm.ThinkingHigh: 32768}
	case strings.Contains(id, "2.5-flash-lite"):
		table = map[llm.ThinkingLevel]int{llm.ThinkingMinimal: 512, llm.ThinkingLow: 2048, llm.ThinkingMedium: 8192, llm.ThinkingHigh: 24576}
	case strings.Contains(id, "2.5-flash"):
		table = map[llm.ThinkingLevel]int{llm.ThinkingMinimal: 128, llm.ThinkingLow: 2048, llm.ThinkingMedium: 8192, llm.ThinkingHigh: 24576}
	}
	if v, ok := table[level]; ok {
		return v
	}
	return -1
}

// requiresToolCallID reports whether the model behind the Google API needs
// ids on function calls and responses (Claude and gpt-oss served through
// it do; Gemini does not).
func requiresToolCallID(modelID string) bool {
	return strings.HasPrefix(modelID, "claude-") || strings.HasPrefix(modelID, "gpt-oss-")
}

var unsafeIDChars = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^a-zA-Z0-9_-]`) })

func normalizeToolCallID(id string) string {
	id = unsafeIDChars().ReplaceAllString(id, "_")
	if len(id) > 64 {
		id = id[:64]
	}
	return id
}

var geminiVersion = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^gemini(?:-live)?-(\d+)`) })

// multimodalToolResults reports whether images may ride inside a
// functionResponse: Gemini 3 and later, and non-Gemini models.
func multimodalToolResults(id string) bool {
	m := geminiVersion().FindStringSubmatch(strings.ToLower(id))
	if m == nil {
		return true
	}
	n, _ := strconv.Atoi(m[1])
	return n >= 3
}

// signature decodes a stored thought signature. Gemini's signatures are
// base64 bytes; anything else (another provider's signature) is dropped.
func signature(s string) []byte {
	if s == "" || len(s)%4 != 0 {
		return nil
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil
	}
	return b
}

// converter turns gopi's conversation into Gemini contents.
type converter struct {
	model  *llm.Model
	images bool
	out    []*genai.Content
	// idMap renames tool call ids that had to be normalized.
	idMap map[string]string
	// pending are the tool calls of the last assistant message still
	// waiting for a result; answered holds the ids that got one.
	pending  []llm.ToolCall
	answered map[string]bool
}

// convertMessages converts the request's messages. Failed and aborted
// assistant turns are left out; a tool call left without a result gets a
// synthetic error result, as the API requires every call answered.
func convertMessages(model *llm.Model, msgs []llm.Message) []*genai.Content {
	c := &converter{model: model, images: model.SupportsImages(), idMap: map[string]string{}}
	for _, m := range msgs {
		switch m := m.(type) {
		case *llm.UserMessage:
			c.flushPending()
			c.user(m)
		case *llm.AssistantMessage:
			c.flushPending()
			if m.StopReason == llm.StopError || m.StopReason == llm.StopAborted {
				continue
			}
			c.assistant(m)
		case *llm.ToolResultMessage:
			if c.answered != nil {
				c.answered[m.ToolCallID] = true
			}
			c.toolResult(m)
		}
	}
	c.flushPending()
	return c.out
}

func (c *converter) flushPending() {
	for _, tc := range c.pending {
		if !c.answered[tc.ID] {
			c.toolResult(&llm.ToolResultMessage{
				ToolCallID: tc.ID,
				ToolName:   tc.Name,
				Content:    llm.Contents{llm.TextContent{Text: missingResult}},
				IsError:    true,
			})
		}
	}
	c.pending, c.answered = nil, nil
}

func (c *converter) inline(img llm.ImageContent) *genai.Part {
	data, err := base64.StdEncoding.DecodeString(img.Data)
	if err != nil {
		return &genai.Part{Text: imageOmitted}
	}
	return &genai.Part{InlineData: &genai.Blob{MIMEType: img.MimeType, Data: data}}
}

func (c *converter) user(m *llm.UserMessage) {
	var parts []*genai.Part
	lastPlaceholder := false
	for _, block := range m.Content {
		switch b := block.(type) {
		case llm.TextContent:
			parts = append(parts, &genai.Part{Text: b.Text})
			lastPlaceholder = false
		case llm.ImageContent:
			if c.images {
				parts = append(parts, c.inline(b))
			} else if !lastPlaceholder {
				parts = append(parts, &genai.Part{Text: imageOmitted})
				lastPlaceholder = true
			}
		}
	}
	if len(parts) > 0 {
		c.out = append(c.out, &genai.Content{Role: genai.RoleUser, Parts: parts})
	}
}

func (c *converter) assistant(m *llm.AssistantMessage) {
	same := m.Provider == c.model.Provider && m.API == c.model.API && m.Model == c.model.ID
	var parts []*genai.Part
	var calls []llm.ToolCall
	for _, block := range m.Content {
		switch b := block.(type) {
		case llm.TextContent:
			if strings.TrimSpace(b.Text) == "" {
				continue
			}
			p := &genai.Part{Text: b.Text}
			if same {
				p.ThoughtSignature = signature(b.TextSignature)
			}
			parts = append(parts, p)
		case llm.ThinkingContent:
			if strings.TrimSpace(b.Thinking) == "" || (b.Redacted && !same) {
				continue
			}
			if !same {
				// Another model's reasoning is context, not our thoughts.
				parts = append(parts, &genai.Part{Text: b.Thinking})
				continue
			}
			parts = append(parts, &genai.Part{Text: b.Thinking, Thought: true, ThoughtSignature: signature(b.ThinkingSignature)})
		case llm.ToolCall:
			args := map[string]any{}
			if len(b.Arguments) > 0 {
				_ = json.Unmarshal(b.Arguments, &args)
				if args == nil {
					args = map[string]any{}
				}
			}
			fc := &genai.FunctionCall{Name: b.Name, Args: args}
			if requiresToolCallID(c.model.ID) {
				id := b.ID
				if !same {
					id = normalizeToolCallID(b.ID)
					if id != b.ID {
						c.idMap[b.ID] = id
					}
				}
				fc.ID = id
			}
			p := &genai.Part{FunctionCall: fc}
			if same {
				p.ThoughtSignature = signature(b.ThoughtSignature)
			}
			parts = append(parts, p)
			calls = append(calls, b)
		}
	}
	if len(calls) > 0 {
		c.pending, c.answered = calls, map[string]bool{}
	}
	if len(parts) > 0 {
		c.out = append(c.out, &genai.Content{Role: genai.RoleModel, Parts: parts})
	}
}

func (c *converter) toolResult(m *llm.ToolResultMessage) {
	var texts []string
	var images []*genai.Part
	lastPlaceholder := false
	for _, block := range m.Content {
		switch b := block.(type) {
		case llm.TextContent:
			texts = append(texts, b.Text)
			lastPlaceholder = false
		case llm.ImageContent:
			if c.images {
				images = append(images, c.inline(b))
			} else if !lastPlaceholder {
				texts = append(texts, toolImageOmitted)
				lastPlaceholder = true
			}
		}
	}
	value := strings.Join(texts, "\n")
	if value == "" && len(images) > 0 {
		value = toolImageOnly
	}
	key := "output"
	if m.IsError {
		key = "error"
	}
	fr := &genai.FunctionResponse{Name: m.ToolName, Response: map[string]any{key: value}}
	if requiresToolCallID(c.model.ID) {
		id := m.ToolCallID
		if mapped, ok := c.idMap[id]; ok {
			id = mapped
		}
		fr.ID = id
	}
	nested := len(images) > 0 && multimodalToolResults(c.model.ID)
	if nested {
		for _, img := range images {
			if img.InlineData != nil {
				fr.Parts = append(fr.Parts, &genai.FunctionResponsePart{
					InlineData: &genai.FunctionResponseBlob{MIMEType: img.InlineData.MIMEType, Data: img.InlineData.Data},
				})
			}
		}
	}
	part := &genai.Part{FunctionResponse: fr}

	// All function responses of one turn travel in one user content.
	if n := len(c.out); n > 0 && c.out[n-1].Role == genai.RoleUser && hasFunctionResponse(c.out[n-1]) {
		c.out[n-1].Parts = append(c.out[n-1].Parts, part)
	} else {
		c.out = append(c.out, &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{part}})
	}
	if len(images) > 0 && !nested {
		c.out = append(c.out, &genai.Content{Role: genai.RoleUser, Parts: append([]*genai.Part{{Text: toolImagesIntro}}, images...)})
	}
}

func hasFunctionResponse(c *genai.Content) bool {
	for _, p := range c.Parts {
		if p.FunctionResponse != nil {
			return true
		}
	}
	return false
}
