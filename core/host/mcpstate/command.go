package mcpstate

// This file owns the built-in /mcp command, pi 1.6.0's as it answers a
// client that is not its terminal UI: "/mcp" tells where each server
// stands, "/mcp reconnect|login|logout [server]" acts on one, asking which
// with a select dialog when the name is left out and more than one
// server fits. Everything it says goes out as notify requests.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/mcp"
)

// CommandName is the built-in command's name ("/mcp").
const CommandName = "mcp"

// Command's get_commands entry: pi 1.6.0's description and sourceInfo
// (a built-in extension), which clients check.
const commandDescription = "Manage MCP servers: sign in, reconnect, enable or disable, and change exposure"

// signInTimeout bounds a sign-in started with "/mcp login" (`gopi mcp
// login`'s default).
const signInTimeout = 5 * time.Minute

// UI is where the command asks and tells: the client's dialogs and
// notifications (api.Client's).
type UI interface {
	Ask(ctx context.Context, req api.UIRequest) api.UIResponse
	Notify(req api.UIRequest)
}

// dialogChecker is a UI that can say whether the client shows dialogs
// of a kind (the JSON-RPC dialect's and ACP's, which depend on the
// client's capabilities); a UI without it shows every kind.
type dialogChecker interface {
	CanShowDialog(m api.UIMethod) bool
}

// canAsk reports whether ui shows dialogs of kind m.
func canAsk(ui UI, m api.UIMethod) bool {
	dc, ok := ui.(dialogChecker)
	return !ok || dc.CanShowDialog(m)
}

// CommandEntry is /mcp as get_commands lists it; ok is false under
// --no-mcp, where pi 1.6.0 has no such command either.
func (s *State) CommandEntry() (api.SlashCommand, bool) {
	if s.cfg.Off {
		return api.SlashCommand{}, false
	}
	return api.SlashCommand{
		Name: CommandName, Description: commandDescription, Source: "extension",
		SourceInfo: &api.SourceInfo{Path: "builtin:mcp", Source: "builtin", Scope: "temporary", Origin: "top-level"},
		Input:      "[reconnect|login|logout|enable|disable|exposure] [server]",
	}, true
}

// HandlesCommand reports whether text is a /mcp command this state runs.
func (s *State) HandlesCommand(text string) bool {
	if s.cfg.Off {
		return false
	}
	name, _, _ := strings.Cut(text, " ")
	return name == "/"+CommandName
}

// RunCommand runs the /mcp command text (see [State.HandlesCommand]),
// asking and telling ui; nil ui tells nobody. It returns when the command
// is done, dialogs answered; ctx ends the dialogs and a sign-in.
func (s *State) RunCommand(ctx context.Context, text string, ui UI) {
	if ui == nil {
		ui = noUI{}
	}
	c := command{s: s, ui: ui}
	_, args, _ := strings.Cut(text, " ")
	fields := strings.Fields(args)
	if len(fields) == 0 {
		s.waitAll(ctx)
		c.tell("info", s.statusText())
		return
	}
	if len(fields) > 3 || len(fields) == 3 && fields[0] != "exposure" {
		c.tell("warning", commandUsage)
		return
	}
	name := ""
	if len(fields) >= 2 {
		name = fields[1]
	}
	switch fields[0] {
	case "reconnect":
		s.waitAll(ctx)
		if srv, ok := c.pick(ctx, name, reconnectPick); ok {
			c.reconnect(ctx, srv)
		}
	case "login":
		s.waitAll(ctx)
		if srv, ok := c.pick(ctx, name, oauthPick); ok {
			c.login(ctx, srv)
		}
	case "logout":
		s.waitAll(ctx)
		if srv, ok := c.pick(ctx, name, oauthPick); ok {
			c.logout(ctx, srv)
		}
	case "enable", "disable":
		enable := fields[0] == "enable"
		none := "Every MCP server of mcp.json is enabled already."
		if !enable {
			none = "No MCP server of mcp.json is enabled."
		}
		p := picking{
			eligible: func(t target) bool {
				return t.entry.Scope != mcp.ScopeExtension && t.entry.Server.IsEnabled() != enable
			},
			preferred: func(target) bool { return false },
			none:      none,
			refused: func(t target) string {
				if t.entry.Scope == mcp.ScopeExtension {
					return fmt.Sprintf("MCP server %q is registered by an extension, which decides whether it is enabled.", t.entry.Name)
				}
				return fmt.Sprintf("MCP server %q is %sd already.", t.entry.Name, fields[0])
			},
		}
		if srv, ok := c.pick(ctx, name, p); ok {
			c.setEnabled(ctx, srv, enable)
		}
	case "exposure":
		p := picking{
			eligible:  func(t target) bool { return t.entry.Scope != mcp.ScopeExtension },
			preferred: func(target) bool { return false },
			none:      "No MCP server comes from mcp.json.",
			refused: func(t target) string {
				return fmt.Sprintf("MCP server %q is registered by an extension, which decides its exposure.", t.entry.Name)
			},
		}
		if srv, ok := c.pick(ctx, name, p); ok {
			exposure := ""
			if len(fields) == 3 {
				exposure = fields[2]
			}
			c.setExposure(ctx, srv, exposure)
		}
	default:
		c.tell("warning", commandUsage)
	}
}

// exposures are the exposures /mcp offers for a server, pi's.
var exposures = []string{string(mcp.ExposureDirect), string(mcp.ExposureDeferred), string(mcp.ExposureCodemode)}

// setEnabled enables or disables srv: saved to the mcp.json that defines
// it (its project override, if it has one), as pi saves it, then the
// session follows (a disabled server stops and its tools are gone; an
// enabled one connects).
func (c command) setEnabled(ctx context.Context, srv target, enable bool) {
	e := srv.entry
	e.Server.Enabled = &enable
	if !c.save(e, "enabled", enable) {
		return
	}
	if !enable {
		c.tell("info", fmt.Sprintf("MCP server %q is disabled (saved to %s).", e.Name, savedTo(e)))
		return
	}
	bounded, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	_ = c.s.mgr.Wait(bounded, func(name string, _ mcp.Server) bool { return name == e.Name })
	c.tell("info", fmt.Sprintf("MCP server %q is enabled (saved to %s): %s.", e.Name, savedTo(e), c.s.describe(e.Name)))
}

// setExposure sets srv's exposure, asking which with a select when
// exposure is empty; saved and followed as setEnabled's change (the
// server connects again, its tools with the new exposure).
func (c command) setExposure(ctx context.Context, srv target, exposure string) {
	e := srv.entry
	current := string(e.Server.ServerExposure())
	if exposure == "" {
		if !canAsk(c.ui, api.UISelect) {
			c.tell("warning", fmt.Sprintf("Name the exposure after the server: %s.", strings.Join(exposures, ", ")))
			return
		}
		resp := c.ui.Ask(ctx, api.UIRequest{Method: api.UISelect,
			Title:   fmt.Sprintf("Exposure of the tools of %s (now %s)", e.Name, current),
			Options: exposures})
		if resp.Cancelled || resp.Value == nil {
			return
		}
		exposure = *resp.Value
	}
	if !slices.Contains(exposures, exposure) {
		c.tell("error", fmt.Sprintf("%q is no exposure: use %s.", exposure, strings.Join(exposures, ", ")))
		return
	}
	if exposure == current {
		c.tell("info", fmt.Sprintf("The exposure of MCP server %q is %s already.", e.Name, exposure))
		return
	}
	e.Server.Exposure = mcp.Exposure(exposure)
	if !c.save(e, "exposure", exposure) {
		return
	}
	c.tell("info", fmt.Sprintf("The exposure of MCP server %q is %s now (saved to %s).", e.Name, exposure, savedTo(e)))
}

// savedTo is the file a change of e is saved to.
func savedTo(e mcp.Entry) string {
	if e.Override != "" {
		return e.Override
	}
	return e.Source
}

// save writes key: value into e's entry of the file that defines it and,
// once that worked, gives the session's server the configuration e. A
// failed write is said and changes nothing.
func (c command) save(e mcp.Entry, key string, value any) bool {
	s := c.s
	s.changing.Lock()
	defer s.changing.Unlock()
	if err := mcp.SetServerFields(savedTo(e), e.Name, map[string]any{key: value}); err != nil {
		c.tell("error", fmt.Sprintf("Could not save the change of MCP server %q: %v", e.Name, err))
		return false
	}
	s.registered.mu.Lock()
	if i := slices.IndexFunc(s.registered.configured, func(x mcp.Entry) bool { return x.Name == e.Name }); i >= 0 {
		s.registered.configured[i] = e
	}
	s.registered.mu.Unlock()
	if err := s.mgr.Replace(e); err != nil {
		s.cfg.Report(err)
	}
	// The tools follow (and the client hears of it) as after any change.
	s.changed(mcp.Status{})
	return true
}

const commandUsage = "Usage: /mcp (where each server stands), /mcp reconnect [server], /mcp login [server], " +
	"/mcp logout [server], /mcp enable [server], /mcp disable [server], /mcp exposure [server] [direct|deferred|codemode]"

// noUI tells nobody and answers every question with a cancel.
type noUI struct{}

func (noUI) Ask(_ context.Context, req api.UIRequest) api.UIResponse { return api.Cancelled(req.ID) }
func (noUI) Notify(api.UIRequest)                                    {}

// command is one run of /mcp.
type command struct {
	s  *State
	ui UI
}

// tell sends a notification of kind typ ("info", "warning", "error").
func (c command) tell(typ, msg string) {
	c.ui.Notify(api.UIRequest{Method: api.UINotify, NotifyType: typ, Message: msg})
}

// target is a configured server as the command sees it.
type target struct {
	entry mcp.Entry
	state mcp.State
	tools int
}

// servers are the session's servers with their states, in listing order.
func (s *State) servers() []target {
	states := map[string]mcp.Status{}
	for _, st := range s.mgr.Statuses() {
		states[st.Name] = st
	}
	var out []target
	for _, e := range s.entries() {
		srv := target{entry: e, state: mcp.StateDisabled}
		if st, ok := states[e.Name]; ok {
			srv.state, srv.tools = st.State, st.Tools
		}
		out = append(out, srv)
	}
	return out
}

// picking says which servers a subcommand acts on.
type picking struct {
	eligible  func(target) bool
	preferred func(target) bool
	// none is said when no server is eligible.
	none string
	// refused, when set, says why the server named is not eligible
	// (none is said otherwise).
	refused func(target) string
}

var reconnectPick = picking{
	eligible: func(s target) bool { return s.entry.Server.IsEnabled() },
	preferred: func(s target) bool {
		return s.state == mcp.StateFailed || s.state == mcp.StateDisconnected
	},
	none: "There is no enabled MCP server to reconnect.",
}

var oauthPick = picking{
	eligible:  func(s target) bool { return s.entry.Server.IsEnabled() && s.entry.Server.UsesOAuth() },
	preferred: func(s target) bool { return s.state == mcp.StateNeedsAuth },
	none:      "No enabled MCP server signs in with OAuth: only HTTP servers without an Authorization header do.",
}

// pick finds the server a subcommand acts on: the one named, else the
// only eligible one, else the only preferred one, else the user's choice
// in a select dialog whose options are the eligible servers' names. ok is
// false when there is none or the dialog was cancelled (which changes
// nothing).
func (c command) pick(ctx context.Context, name string, p picking) (target, bool) {
	all := c.s.servers()
	if name != "" {
		for _, srv := range all {
			if srv.entry.Name != name {
				continue
			}
			if !p.eligible(srv) {
				if p.refused != nil {
					c.tell("error", p.refused(srv))
					return target{}, false
				}
				c.tell("error", p.none)
				return target{}, false
			}
			return srv, true
		}
		c.tell("error", fmt.Sprintf("There is no MCP server called %q.", name))
		return target{}, false
	}
	var candidates, preferred []target
	for _, srv := range all {
		if p.eligible(srv) {
			candidates = append(candidates, srv)
			if p.preferred(srv) {
				preferred = append(preferred, srv)
			}
		}
	}
	switch {
	case len(candidates) == 0:
		c.tell("info", p.none)
		return target{}, false
	case len(candidates) == 1:
		return candidates[0], true
	case len(preferred) == 1:
		return preferred[0], true
	}
	if !canAsk(c.ui, api.UISelect) {
		c.tell("warning", "Name the MCP server after the subcommand; it could be any of: "+serverNames(candidates)+".")
		return target{}, false
	}
	options := make([]string, len(candidates))
	for i, srv := range candidates {
		options[i] = srv.entry.Name
	}
	resp := c.ui.Ask(ctx, api.UIRequest{Method: api.UISelect, Title: "MCP server", Options: options})
	if resp.Cancelled || resp.Value == nil {
		return target{}, false
	}
	for _, srv := range candidates {
		if srv.entry.Name == *resp.Value {
			return srv, true
		}
	}
	return target{}, false
}

// serverNames lists the servers' names, comma-separated.
func serverNames(servers []target) string {
	out := make([]string, len(servers))
	for i, srv := range servers {
		out[i] = srv.entry.Name
	}
	return strings.Join(out, ", ")
}

// reconnect connects srv anew and says how that went.
func (c command) reconnect(ctx context.Context, srv target) {
	name := srv.entry.Name
	if err := c.s.mgr.Reconnect(ctx, name); err != nil {
		c.tell("error", fmt.Sprintf("Reconnecting MCP server %q failed: %s", name, c.s.reason(name, err)))
		return
	}
	c.tell("info", fmt.Sprintf("MCP server %q is connected again (%s).", name, c.s.describe(name)))
}

// login signs in to srv with OAuth: the authorization address goes out
// as a notification, for the user to open in a browser, and an input
// dialog waits meanwhile for the address the browser was sent back to,
// for a browser that cannot reach this machine. Cancelling the dialog
// cancels the sign-in. Once signed in, the server connects again with
// the new tokens.
func (c command) login(ctx context.Context, srv target) {
	name := srv.entry.Name
	store := c.s.auth()
	if store == nil {
		c.tell("error", fmt.Sprintf("This session keeps no credentials (it has no agent directory): run `gopi mcp login %s`.", name))
		return
	}
	ctx, cancel := context.WithTimeout(ctx, signInTimeout)
	defer cancel()
	pasted := make(chan string)
	var asking sync.WaitGroup
	var userCancelled bool // written by the asking goroutine; read after it ended
	defer asking.Wait()
	defer cancel() // ends the dialog before asking.Wait
	ask := func(title string) {
		asking.Go(func() {
			for {
				resp := c.ui.Ask(ctx, api.UIRequest{Method: api.UIInput, Title: title,
					Placeholder: "http://127.0.0.1:…/callback?code=…"})
				if resp.Cancelled || resp.Value == nil {
					if ctx.Err() == nil {
						userCancelled = true
						cancel()
					}
					return
				}
				select {
				case pasted <- strings.TrimSpace(*resp.Value):
				case <-ctx.Done():
					return
				}
				title = fmt.Sprintf("Still waiting for the sign-in to %q: paste the whole address from the browser's address bar.", name)
			}
		})
	}
	tools, err := mcp.SignIn(ctx, mcp.SignInOptions{
		Name: name, Server: srv.entry.Server, Store: store, Version: c.s.cfg.Version, Pasted: pasted,
		Prompt: func(authURL, _ string) {
			c.tell("info", fmt.Sprintf("Open this address in a browser to sign in to MCP server %q:\n%s", name, authURL))
			if !canAsk(c.ui, api.UIInput) {
				// Nobody can paste an address: the browser must reach
				// this machine's loopback listener.
				return
			}
			ask(fmt.Sprintf("Waiting for the sign-in to %q. If the browser cannot reach this machine, paste the address it ended on.", name))
		},
		Problem: func(err error) { c.tell("warning", fmt.Sprintf("That is not the sign-in's answer: %v", err)) },
	})
	cancel()
	asking.Wait()
	switch {
	case userCancelled:
		c.tell("info", "Sign-in cancelled.")
		return
	case err != nil && ctx.Err() != nil && !errors.Is(err, context.Canceled):
		c.tell("error", fmt.Sprintf("The sign-in to MCP server %q did not finish in time.", name))
		return
	case err != nil:
		c.tell("error", fmt.Sprintf("The sign-in to MCP server %q failed: %v", name, err))
		return
	}
	// The session's connection uses the new tokens from now on.
	if err := c.s.mgr.Reconnect(c.s.life, name); err != nil {
		c.tell("error", fmt.Sprintf("Signed in to MCP server %q, but connecting failed: %s", name, c.s.reason(name, err)))
		return
	}
	c.tell("info", fmt.Sprintf("Signed in to MCP server %q (%d tools).", name, tools))
}

// logout deletes srv's stored credentials; the server then connects
// again without them (and needs a sign-in).
func (c command) logout(ctx context.Context, srv target) {
	name := srv.entry.Name
	store := c.s.auth()
	removed := false
	if store != nil {
		var err error
		if removed, err = store.Remove(name, srv.entry.Server.URL); err != nil {
			c.tell("error", fmt.Sprintf("Could not delete the credentials of MCP server %q: %v", name, err))
			return
		}
	}
	if !removed {
		c.tell("info", fmt.Sprintf("No credentials are stored for MCP server %q.", name))
		return
	}
	_ = c.s.mgr.Reconnect(ctx, name) // it needs a sign-in now, which its state says
	c.tell("info", fmt.Sprintf("Signed out of MCP server %q: its credentials are deleted.", name))
}

// reason is err without the "mcp server NAME: " its messages start with.
func (s *State) reason(name string, err error) string {
	return strings.TrimPrefix(err.Error(), fmt.Sprintf("mcp server %q: ", name))
}

// describe says where the server named name stands, in a few words.
func (s *State) describe(name string) string {
	for _, srv := range s.servers() {
		if srv.entry.Name == name {
			if srv.state == mcp.StateConnected {
				return fmt.Sprintf("%s, %d tools", srv.state, srv.tools)
			}
			return string(srv.state)
		}
	}
	return "gone"
}

// statusText is what "/mcp" says: one line per server (its state, its
// tools when connected, its exposure), a failed one's reason indented
// below it.
func (s *State) statusText() string {
	all := s.Servers()
	if len(all) == 0 {
		return "No MCP servers are configured: add them to mcp.json in the agent directory, " +
			"or to .pi/mcp.json in a trusted project (gopi mcp add)."
	}
	var b strings.Builder
	for i, srv := range all {
		if i > 0 {
			b.WriteByte('\n')
		}
		switch srv.State {
		case api.MCPConnected:
			fmt.Fprintf(&b, "%s: connected, %d tools (%s)", srv.Name, len(srv.Tools), srv.Exposure)
		case api.MCPNeedsAuth:
			fmt.Fprintf(&b, "%s: needs a sign-in, /mcp login %s (%s)", srv.Name, srv.Name, srv.Exposure)
		case api.MCPDisconnected:
			fmt.Fprintf(&b, "%s: disconnected, the next call connects again (%s)", srv.Name, srv.Exposure)
		default:
			fmt.Fprintf(&b, "%s: %s (%s)", srv.Name, srv.State, srv.Exposure)
		}
		if srv.Error != "" && srv.State != api.MCPNeedsAuth {
			b.WriteString("\n    " + strings.ReplaceAll(srv.Error, "\n", "\n    "))
		}
	}
	return b.String()
}
