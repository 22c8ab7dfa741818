package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/gopi-dev/gopi/core/agent"

	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/llm"
)

// promptText joins the message arguments, @file contents and, when stdin
// is not a terminal, piped input.
func promptText(a *args, stdin io.Reader) (string, error) {
	var parts []string
	for _, f := range a.fileArgs {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", fmt.Errorf("reading @%s: %w", f, err)
		}
		parts = append(parts, fmt.Sprintf("<file name=%q>\n%s\n</file>", f, b))
	}
	parts = append(parts, a.messages...)
	if len(a.messages) == 0 {
		if f, ok := stdin.(*os.File); ok {
			if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice == 0 {
				b, err := io.ReadAll(bufio.NewReader(f))
				if err != nil {
					return "", fmt.Errorf("reading stdin: %w", err)
				}
				if s := strings.TrimSpace(string(b)); s != "" {
					parts = append(parts, s)
				}
			}
		}
	}
	text := strings.TrimSpace(strings.Join(parts, "\n\n"))
	if text == "" {
		return "", errNoPrompt
	}
	return text, nil
}

// runPrint runs one prompt (through the same path as RPC mode: expansion,
// retries, compaction) and prints the final reply.
func (ap *app) runPrint(ctx context.Context, a *args, stdin io.Reader, stdout io.Writer) error {
	text, err := promptText(a, stdin)
	if err != nil {
		return err
	}
	// Nobody watches events here; subscribing says the output is ready,
	// which extensions wait for before session_start.
	defer ap.host.Subscribe(func(api.Event) {})()
	if err := ap.host.PromptAndWait(ctx, text, nil); err != nil {
		return err
	}
	last := ap.host.LastAssistant()
	if last == nil {
		return errNoReply
	}
	switch last.StopReason {
	case llm.StopError:
		return fmt.Errorf("%w: %s", errModel, last.ErrorMessage)
	case llm.StopAborted:
		return context.Canceled
	}
	out := last.Content.Text()
	fmt.Fprint(stdout, out)
	if !strings.HasSuffix(out, "\n") {
		fmt.Fprintln(stdout)
	}
	return nil
}

// runJSON runs one prompt like runPrint and prints every event, retries
// and compaction included, as a JSON line.
func (ap *app) runJSON(ctx context.Context, a *args, stdin io.Reader, stdout io.Writer) error {
	text, err := promptText(a, stdin)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(stdout)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	unsub := ap.host.Subscribe(func(ev api.Event) {
		if e, ok := ev.(agent.Event); ok && !a.fullUpdates {
			ev = e.Lean() // pi 1.5: JSON mode's message_update is delta-only too
		} else if a.fullUpdates {
			var keep bool
			if ev, keep = olderEvent(ev); !keep {
				return
			}
		}
		_ = enc.Encode(ev)
		_ = w.Flush()
	})
	defer unsub()
	return ap.host.PromptAndWait(ctx, text, nil)
}

// listModels prints the known models and whether they can be used.
func (ap *app) listModels(stdout io.Writer, pattern string) int {
	w := bufio.NewWriter(stdout)
	defer w.Flush()
	fmt.Fprintf(w, "%-12s %-40s %-9s %-9s %s\n", "provider", "model", "context", "thinking", "credentials")
	for _, m := range ap.registry.All() {
		id := m.Provider + "/" + m.ID
		if pattern != "" && !strings.Contains(strings.ToLower(id+" "+m.Name), strings.ToLower(pattern)) {
			continue
		}
		cred := "no"
		if ap.registry.HasAuth(&m) {
			cred = "yes"
		}
		think := "no"
		if m.Reasoning {
			think = "yes"
		}
		fmt.Fprintf(w, "%-12s %-40s %-9d %-9s %s\n", m.Provider, m.ID, m.ContextWindow, think, cred)
	}
	return 0
}
