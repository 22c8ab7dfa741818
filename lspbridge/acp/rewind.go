package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/llm"
)

// rewindCommand is gopi's own slash command over ACP: it restores a
// checkpoint (the files, the conversation or both) the way the other
// dialects' restore_checkpoint does.
var rewindCommand = sdk.AvailableCommand{
	Name:        "rewind",
	Description: "Undo what the agent did since an earlier prompt: its file changes, the conversation, or both",
	Input: &sdk.AvailableCommandInput{Unstructured: &sdk.UnstructuredCommandInput{
		Hint: "[checkpoint id] [code|conversation|both]",
	}},
}

// rewindRequest is a parsed "/rewind [id] [what]".
type rewindRequest struct {
	id   string
	what api.RestoreWhat
}

// parseRewind reads a prompt that is the /rewind command; ok is false
// for any other prompt.
func parseRewind(text string) (r rewindRequest, ok bool, err error) {
	fields := strings.Fields(text)
	if len(fields) == 0 || fields[0] != "/"+rewindCommand.Name {
		return r, false, nil
	}
	for _, f := range fields[1:] {
		switch w := api.RestoreWhat(f); w {
		case api.RestoreCode, api.RestoreConversation, api.RestoreBoth:
			r.what = w
		default:
			if r.id != "" {
				return r, true, fmt.Errorf("/rewind takes a checkpoint id and code, conversation or both; %q is neither", api.Clip(f, api.ClipName))
			}
			r.id = f
		}
	}
	return r, true, nil
}

// rewind answers a /rewind prompt: it picks the checkpoint (the one
// named, else through the client's form elicitation, else it lists them
// and says how to name one), restores it, and says what changed as the
// agent's message. session/cancel ends it (an elicitation waiting is
// withdrawn) and it answers cancelled.
func (s *session) rewind(ctx context.Context, a *conn, id json.RawMessage, req rewindRequest) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.mu.Lock()
	s.stopRewind = cancel
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.stopRewind = nil
		s.mu.Unlock()
	}()
	say := func(text string) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.sending() {
			s.update(sdk.UpdateAgentMessageText(text))
		}
	}
	end := func(err error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.rewinding = false
		switch {
		case ctx.Err() != nil:
			s.respond(id, sdk.Ptr(sdk.StopReasonCancelled), nil, nil)
		case err != nil:
			s.respond(id, nil, err, nil)
		default:
			s.respond(id, sdk.Ptr(sdk.StopReasonEndTurn), nil, nil)
		}
	}

	list, err := runCommand[api.CheckpointsResult](s, api.CmdListCheckpoints, struct{}{})
	if err != nil {
		end(err)
		return
	}
	cps := slices.Clone(list.Checkpoints)
	slices.Reverse(cps) // newest first
	if len(cps) == 0 {
		say("This session has no checkpoints yet. gopi records one before each prompt in a git work tree, and outside git when write or edit first changes a file.")
		end(nil)
		return
	}
	labels := s.checkpointLabels(cps)
	var chosen *api.Checkpoint
	switch {
	case req.id != "":
		for i := range cps {
			if cps[i].ID == req.id || len(req.id) >= 4 && strings.HasPrefix(cps[i].ID, req.id) {
				chosen = &cps[i]
				break
			}
		}
		if chosen == nil {
			say(fmt.Sprintf("There is no checkpoint %q in this session.\n\n%s", req.id, rewindList(cps, labels)))
			end(nil)
			return
		}
	case a.caps.formElicitation():
		var what api.RestoreWhat
		chosen, what, err = s.pickCheckpoint(ctx, a, cps, labels)
		if err != nil || chosen == nil {
			if err == nil && ctx.Err() == nil {
				say("Nothing was rewound.")
			}
			end(nil)
			return
		}
		if req.what == "" {
			req.what = what
		}
	default:
		say(rewindList(cps, labels))
		end(nil)
		return
	}
	if req.what == "" {
		req.what = api.RestoreBoth
	}
	res, err := runCommand[api.RestoreCheckpointResult](s, api.CmdRestoreCheckpoint,
		api.RestoreCheckpointParams{CheckpointID: chosen.ID, Restore: req.what})
	if err != nil {
		end(err)
		return
	}
	say(rewindSummary(*chosen, req.what, res))
	end(nil)
}

// runCommand runs one command in the session's order and returns its
// data as R.
func runCommand[R any](s *session, name string, params any) (R, error) {
	var out R
	raw, err := json.Marshal(params)
	if err != nil {
		return out, err
	}
	type reply struct {
		data any
		err  error
	}
	done := make(chan reply, 1)
	s.sched.Queue().Run(s.rt, api.Command{Name: name, Params: raw, Reply: func(data any, err error) {
		done <- reply{data, err}
	}})
	r := <-done
	if r.err != nil {
		return out, r.err
	}
	if v, ok := r.data.(R); ok {
		return v, nil
	}
	return out, fmt.Errorf("%s: unexpected result %T", name, r.data)
}

// checkpointLabels describes each checkpoint for a person: when, and the
// first line of the user message it precedes.
func (s *session) checkpointLabels(cps []api.Checkpoint) map[string]string {
	texts := map[string]string{}
	if entries, err := runCommand[api.EntriesResult](s, api.CmdGetEntries, api.EntriesParams{}); err == nil {
		for _, raw := range entries.Entries {
			var e struct {
				ID      string          `json:"id"`
				Message json.RawMessage `json:"message"`
			}
			if json.Unmarshal(raw, &e) != nil || len(e.Message) == 0 {
				continue
			}
			if m, err := llm.UnmarshalMessage(e.Message); err == nil {
				if u, ok := m.(*llm.UserMessage); ok {
					line, _, _ := strings.Cut(strings.TrimSpace(u.Content.Text()), "\n")
					if r := []rune(line); len(r) > 60 {
						line = string(r[:60]) + "…"
					}
					texts[e.ID] = line
				}
			}
		}
	}
	out := map[string]string{}
	for _, c := range cps {
		when := c.CreatedAt
		if t, err := time.Parse(time.RFC3339Nano, c.CreatedAt); err == nil {
			when = t.Local().Format("Jan 2 15:04:05")
		}
		what := texts[c.EntryID]
		switch {
		case c.Label != "":
			what = c.Label
		case what == "":
			what = string(c.Trigger)
		default:
			what = "before “" + what + "”"
		}
		out[c.ID] = when + " — " + what
	}
	return out
}

// rewindList lists the checkpoints, newest first, and says how to name
// one.
func rewindList(cps []api.Checkpoint, labels map[string]string) string {
	var b strings.Builder
	b.WriteString("Checkpoints of this session, newest first:\n\n")
	for _, c := range cps {
		fmt.Fprintf(&b, "- `%s` %s\n", c.ID, labels[c.ID])
	}
	b.WriteString("\nSend `/rewind <id>` to restore the files and the conversation as they were, or add `code` or `conversation` to restore only one.")
	return b.String()
}

// pickCheckpoint asks the client, with a form, which checkpoint to
// restore and what; nil when the user declined or cancelled.
func (s *session) pickCheckpoint(ctx context.Context, a *conn, cps []api.Checkpoint, labels map[string]string) (*api.Checkpoint, api.RestoreWhat, error) {
	options := make([]enumOption, 0, len(cps))
	for _, c := range cps {
		options = append(options, enumOption{Const: c.ID, Title: labels[c.ID]})
	}
	both := string(api.RestoreBoth)
	params := elicitationForm{
		Mode:      "form",
		Message:   "Rewind to which checkpoint?",
		SessionID: sdk.SessionId(s.id),
		RequestedSchema: elicitationSchema{
			Type: "object",
			Properties: map[string]elicitationProperty{
				"checkpoint": {Type: "string", Title: "Checkpoint", OneOf: options},
				"restore": {Type: "string", Title: "Restore", Default: &both, OneOf: []enumOption{
					{Const: string(api.RestoreBoth), Title: "Files and conversation"},
					{Const: string(api.RestoreCode), Title: "Files only"},
					{Const: string(api.RestoreConversation), Title: "Conversation only"},
				}},
			},
			Required: []string{"checkpoint"},
		},
	}
	var res sdk.UnstableCreateElicitationResponse
	if err := a.call(ctx, sdk.ClientMethodElicitationCreate, params, &res); err != nil {
		if ctx.Err() != nil || errors.Is(err, errConnectionEnded) {
			return nil, "", nil
		}
		return nil, "", fmt.Errorf("asking which checkpoint: %w", err)
	}
	if res.Accept == nil {
		return nil, "", nil
	}
	id, _ := res.Accept.Content["checkpoint"].(string)
	what, _ := res.Accept.Content["restore"].(string)
	for i := range cps {
		if cps[i].ID == id {
			return &cps[i], api.RestoreWhat(what), nil
		}
	}
	return nil, "", fmt.Errorf("the client chose %q, which is not one of the checkpoints offered", api.Clip(id, api.ClipName))
}

// rewindSummary says what a restore did.
func rewindSummary(c api.Checkpoint, what api.RestoreWhat, res api.RestoreCheckpointResult) string {
	var b strings.Builder
	if what != api.RestoreConversation {
		if len(res.Files) == 0 {
			b.WriteString("The files were already as the checkpoint recorded them.\n")
		} else {
			fmt.Fprintf(&b, "Restored %d file(s):\n", len(res.Files))
			for _, f := range res.Files {
				verb := map[string]string{"added": "removed", "deleted": "brought back", "modified": "restored"}[f.Status]
				fmt.Fprintf(&b, "- %s (%s)\n", f.Path, verb)
			}
		}
		if res.UndoCheckpointID != "" {
			fmt.Fprintf(&b, "\nTo undo this, send `/rewind %s code`.\n", res.UndoCheckpointID)
		}
	}
	if what == api.RestoreConversation && res.UndoCheckpointID != "" {
		fmt.Fprintf(&b, "To undo this, send `/rewind %s conversation`.\n", res.UndoCheckpointID)
	}
	if what != api.RestoreCode {
		b.WriteString("\nThe conversation continues from before that prompt; load the session again to see it without what followed.")
		if res.Text != nil && *res.Text != "" {
			fmt.Fprintf(&b, " The prompt was:\n\n> %s", strings.ReplaceAll(*res.Text, "\n", "\n> "))
		}
	}
	return strings.TrimSpace(b.String())
}
