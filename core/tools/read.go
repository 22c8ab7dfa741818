package tools

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/llm"
)

// ReadDetails is the details object of a read result.
type ReadDetails struct {
	Truncation *Truncation `json:"truncation,omitempty"`
}

type readTool struct {
	prompter
	cwd string
	c   *config
}

var (
	_ agent.Tool = (*readTool)(nil)
	_ Prompter   = (*readTool)(nil)
)

const readSchema = `{
	"type": "object",
	"properties": {
		"path": {"type": "string", "description": "File to read, relative to the working directory or absolute"},
		"offset": {"type": "number", "description": "First line to return, counting from 1"},
		"limit": {"type": "number", "description": "Most lines to return"}
	},
	"required": ["path"]
}`

func (t *readTool) Spec() llm.ToolSpec { return spec(NameRead, readSchema) }

type readArgs struct {
	Path   string   `json:"path"`
	Offset *float64 `json:"offset"`
	Limit  *float64 `json:"limit"`
}

// ReadImage is read's structured content for an image: the image block
// and the note beside it.
type ReadImage struct {
	Type     string `json:"type"` // "image"
	Data     string `json:"data"`
	MimeType string `json:"mimeType"`
	Note     string `json:"note"`
}

// readOutputSchema is the JSON Schema of read's structured content: the
// text, or a [ReadImage].
const readOutputSchema = `{"anyOf":[{"type":"string"},{"type":"object","properties":{` +
	`"type":{"const":"image"},"data":{"type":"string"},"mimeType":{"type":"string"},"note":{"type":"string"}},` +
	`"required":["type","data","mimeType","note"]}]}`

// OutputSchema is the schema of the result's structured content.
func (t *readTool) OutputSchema() json.RawMessage { return json.RawMessage(readOutputSchema) }

func (t *readTool) Run(ctx context.Context, call agent.Call, _ func(agent.Result)) (agent.Result, error) {
	res, err := t.read(ctx, call)
	if err == nil && !res.IsError {
		res.StructuredContent = readOutput(res.Content)
	}
	return res, err
}

// readOutput is a successful read's structured content (pi 1.5): the
// first text as the model reads it, or for an image a [ReadImage].
func readOutput(cs llm.Contents) any {
	var text string
	var img *llm.ImageContent
	seen := false
	for _, c := range cs {
		switch c := c.(type) {
		case llm.TextContent:
			if !seen {
				text, seen = c.Text, true
			}
		case llm.ImageContent:
			if img == nil {
				img = &c
			}
		}
	}
	if img != nil {
		return ReadImage{Type: "image", Data: img.Data, MimeType: img.MimeType, Note: text}
	}
	return text
}

func (t *readTool) read(ctx context.Context, call agent.Call) (agent.Result, error) {
	var a readArgs
	if r, ok := decodeArgs(call, &a); !ok {
		return r, nil
	}
	if ctx.Err() != nil {
		return agent.ErrorResult("Operation aborted"), nil
	}
	abs := resolveExisting(ctx, t.c.fs, a.Path, t.cwd)
	info, err := t.c.fs.Stat(ctx, abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return agent.ErrorResult("File not found: %s", a.Path), nil
	case err != nil:
		return agent.ErrorResult("Cannot read %s: %v", a.Path, err), nil
	case info.IsDir():
		return agent.ErrorResult("%s is a directory, not a file. Use ls to see what it contains.", a.Path), nil
	case !info.Mode().IsRegular():
		// Reading a FIFO would wait for a writer forever, a device may
		// never end: only regular files are read.
		return agent.ErrorResult("%s is %s, not a regular file; read only opens regular files.", a.Path, kindOf(info.Mode())), nil
	case info.Size() > smallFile:
		return t.readLarge(ctx, abs, a), nil
	}
	data, err := t.c.fs.ReadFile(ctx, abs)
	if err != nil {
		return agent.ErrorResult("Cannot read %s: %v", a.Path, err), nil
	}
	if ctx.Err() != nil {
		return agent.ErrorResult("Operation aborted"), nil
	}
	if mime := sniffImage(data); mime != "" {
		return t.image(data, mime), nil
	}
	return readText(string(data), a), nil
}

// readText renders the requested window of a text file with the note that
// tells the model how to go on.
func readText(content string, a readArgs) agent.Result {
	content = strings.ToValidUTF8(content, "\uFFFD")
	lines := strings.Split(content, "\n")
	offset, _ := intArg(a.Offset)
	start := max(0, offset-1)
	var selected []string
	firstLen := 0
	if start < len(lines) {
		selected = lines[start:]
		if limit, limited := intArg(a.Limit); limited {
			selected = lines[start:min(len(lines), max(start, start+limit))]
		}
		firstLen = len(lines[start])
	}
	return renderWindow(a, start, len(lines), selected, len(selected), firstLen)
}

// renderWindow is read's result for the lines of a file from start on:
// total lines in the file, window of them asked for, kept the first of
// those (at least as many as the output limits can show; fewer than window
// only when the rest would be cut anyway), firstLen the whole length of the
// window's first line.
func renderWindow(a readArgs, start, total int, kept []string, window, firstLen int) agent.Result {
	offset, _ := intArg(a.Offset)
	if start >= total {
		return agent.ErrorResult("Offset %d is beyond the end of the file (%d lines in total)", offset, total)
	}
	_, limited := intArg(a.Limit)
	tr := TruncateHead(strings.Join(kept, "\n"), Limits{})
	first := start + 1
	switch {
	case tr.FirstLineExceedsLimit:
		text := fmt.Sprintf("[Line %d is %s, over the %s limit. Read it with bash: sed -n '%dp' %s | head -c %d]",
			first, FormatSize(firstLen), FormatSize(MaxBytes), first, a.Path, MaxBytes)
		return agent.Result{Content: llm.Contents{llm.TextContent{Text: text}}, Details: ReadDetails{Truncation: &tr}}
	case tr.Truncated || len(kept) < window:
		if !tr.Truncated { // kept stopped short: the window is cut by bytes
			tr.Truncated, tr.TruncatedBy = true, TruncatedByBytes
		}
		tr.TotalLines = window
		last := first + tr.OutputLines - 1
		limitNote := ""
		if tr.TruncatedBy == TruncatedByBytes {
			limitNote = fmt.Sprintf(" (%s limit)", FormatSize(MaxBytes))
		}
		text := fmt.Sprintf("%s\n\n[Showing lines %d-%d of %d%s. Use offset=%d to continue.]",
			tr.Content, first, last, total, limitNote, last+1)
		return agent.Result{Content: llm.Contents{llm.TextContent{Text: text}}, Details: ReadDetails{Truncation: &tr}}
	case limited && start+window < total:
		rest := total - (start + window)
		next := start + window + 1
		return agent.TextResult(fmt.Sprintf("%s\n\n[%d more lines in file. Use offset=%d to continue.]", tr.Content, rest, next))
	}
	return agent.TextResult(tr.Content)
}

// smallFile is the size up to which read loads a file whole; larger ones
// are streamed, so memory stays near what the result shows.
const smallFile = 2 << 20

// maxImage is the largest image read sends to the model.
const maxImage = 20 << 20

// readLarge reads a file over smallFile in one pass without holding it:
// it keeps only what the result can show (MaxLines lines, a little over
// MaxBytes) and counts the rest of the lines, so the result is the one
// readText gives for the whole file. ctx ends the pass at once.
func (t *readTool) readLarge(ctx context.Context, abs string, a readArgs) agent.Result {
	f, err := t.c.fs.Open(ctx, abs)
	if err != nil {
		return agent.ErrorResult("Cannot read %s: %v", a.Path, err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 256<<10)
	head, _ := br.Peek(512)
	if mime := sniffImage(head); mime != "" {
		data, err := io.ReadAll(io.LimitReader(br, maxImage+1))
		switch {
		case ctx.Err() != nil:
			return agent.ErrorResult("Operation aborted")
		case err != nil:
			return agent.ErrorResult("Cannot read %s: %v", a.Path, err)
		case len(data) > maxImage:
			return agent.ErrorResult("%s is an image over %s, too large to send to the model.", a.Path, FormatSize(maxImage))
		}
		return t.image(data, mime)
	}

	offset, _ := intArg(a.Offset)
	start := max(0, offset-1)
	limit, limited := intArg(a.Limit)
	var (
		total     int      // lines in the file
		window    int      // lines from start on (up to limit)
		kept      []string // the start of the window, as much as can show
		keptBytes int
		firstLen  int // the window's first line, whole
		line      []byte
		lineLen   int
	)
	keep := func() {
		if total >= start && (!limited || total < start+max(0, limit)) {
			if window == 0 {
				firstLen = lineLen
			}
			window++
			if len(kept) <= MaxLines && keptBytes <= MaxBytes {
				s := strings.ToValidUTF8(string(line), "\uFFFD")
				kept = append(kept, s)
				keptBytes += len(s) + 1
			}
		}
		total++
		line, lineLen = line[:0], 0
	}
	for {
		chunk, err := br.ReadSlice('\n')
		body := bytes.TrimSuffix(chunk, []byte("\n"))
		lineLen += len(body)
		if room := MaxBytes + 1 - len(line); room > 0 {
			line = append(line, body[:min(len(body), room)]...)
		}
		if len(chunk) > 0 && chunk[len(chunk)-1] == '\n' {
			keep()
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			if ctx.Err() != nil {
				return agent.ErrorResult("Operation aborted")
			}
			if !errors.Is(err, io.EOF) {
				return agent.ErrorResult("Cannot read %s: %v", a.Path, err)
			}
			keep() // the last line, newline or not (strings.Split counts it)
			break
		}
	}
	return renderWindow(a, start, total, kept, window, firstLen)
}
