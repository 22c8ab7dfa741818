package acp

import (
	"fmt"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/gopi-dev/gopi/core/api"
)

// announceCommands sends s's available_commands_update: its prompt
// templates, skills and extension commands, which a prompt runs by
// starting with "/name". It is called once the response that opened the
// session is written (a client may drop updates of a session it has not
// heard of yet), and sends from a goroutine of its own: the list waits
// for the session's extensions to load.
func (a *conn) announceCommands(s *session) {
	s.work.Add(1)
	a.work.Go(func() {
		defer s.work.Done()
		cmds, err := s.rt.GetCommands(a.ctx)
		if err != nil {
			if a.ctx.Err() == nil {
				a.opts.Report(fmt.Errorf("acp: session %s: listing its commands: %w", s.id, err))
			}
			return
		}
		u := commandsUpdate(cmds)
		s.mu.Lock()
		defer s.mu.Unlock()
		s.update(u)
	})
}

// commandsUpdate is the available_commands_update listing cmds, named
// without the slash as ACP has them; one that takes arguments has an
// input hint.
func commandsUpdate(cmds api.CommandsResult) sdk.SessionUpdate {
	list := make([]sdk.AvailableCommand, 0, len(cmds.Commands)+1)
	// gopi's own, first (rewind.go); a template or skill of the same
	// name is not offered beside it.
	list = append(list, rewindCommand)
	for _, c := range cmds.Commands {
		if c.Name == rewindCommand.Name {
			continue
		}
		ac := sdk.AvailableCommand{Name: c.Name, Description: c.Description}
		if ac.Description == "" {
			ac.Description = commandKind(c.Source)
		}
		if c.Input != "" {
			ac.Input = &sdk.AvailableCommandInput{Unstructured: &sdk.UnstructuredCommandInput{Hint: c.Input}}
		}
		list = append(list, ac)
	}
	return sdk.SessionUpdate{AvailableCommandsUpdate: &sdk.SessionAvailableCommandsUpdate{AvailableCommands: list}}
}

// commandKind describes a command that has no description of its own.
func commandKind(source string) string {
	switch source {
	case "prompt":
		return "prompt template"
	case "skill":
		return "skill"
	case "extension":
		return "extension command"
	}
	return source
}
