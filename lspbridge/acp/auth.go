package acp

import (
	"context"
	"errors"
	"fmt"

	sdk "github.com/coder/acp-go-sdk"
)

// Auth is where a model's credentials come from, as the client is told
// about them: initialize's authMethods, authenticate, and the
// auth-required error of a session whose model has none.
type Auth interface {
	// Methods are the ways to give gopi credentials, one per provider
	// family.
	Methods() []AuthMethod
	// Check reads the credentials again (auth.json; the environment is
	// the process's) and reports whether method id's provider has some
	// now: nil when it has, an error saying what to set when not, one
	// wrapping [ErrUnknownAuthMethod] for an id Methods does not list.
	Check(id string) error
	// Missing is nil when provider's model id has credentials (a model
	// that needs none has them), else an error saying what to set.
	Missing(provider, id string) error
	// Logout forgets the credentials the methods have the user store
	// for gopi (their keys in auth.json) and returns the providers whose
	// key it forgot; keys gopi did not store (the environment's) stay.
	Logout() ([]string, error)
}

// AuthMethod is one way to give gopi credentials.
type AuthMethod struct {
	ID, Name, Description string
}

// ErrUnknownAuthMethod: authenticate named a method gopi did not
// advertise.
var ErrUnknownAuthMethod = errors.New("no such authentication method")

// codeAuthRequired is the schema's ErrorCode "Authentication required".
const codeAuthRequired = -32000

// authMethods are initialize's authMethods: the "agent" type (gopi reads
// the credentials itself); the schema's stable AuthMethod has no
// environment-variable type.
func (a *conn) authMethods() []sdk.AuthMethod {
	out := []sdk.AuthMethod{}
	if a.opts.Auth == nil {
		return out
	}
	for _, m := range a.opts.Auth.Methods() {
		am := &sdk.AuthMethodAgent{Id: m.ID, Name: m.Name}
		if m.Description != "" {
			am.Description = sdk.Ptr(m.Description)
		}
		out = append(out, sdk.AuthMethod{Agent: am})
	}
	return out
}

// authCapabilities are initialize's auth: logout when there are methods
// to log out of.
func (a *conn) authCapabilities() sdk.AgentAuthCapabilities {
	if a.opts.Auth == nil {
		return sdk.AgentAuthCapabilities{}
	}
	return sdk.AgentAuthCapabilities{Logout: &sdk.LogoutCapabilities{}}
}

// authenticate checks that the method's credentials are there now: there
// is nothing to sign in to, the keys come from the environment or
// auth.json, which the user edits.
func (a *conn) authenticate(m *message) error {
	var p sdk.AuthenticateRequest
	if err := decodeParams(m, &p, "methodId"); err != nil {
		return err
	}
	if a.opts.Auth == nil {
		return errorf(codeInvalidParams, "invalid params: \"methodId\": gopi advertised no authentication methods")
	}
	err := a.opts.Auth.Check(string(p.MethodId))
	switch {
	case errors.Is(err, ErrUnknownAuthMethod):
		return errorf(codeInvalidParams, "invalid params: \"methodId\" %q is not one initialize listed", p.MethodId)
	case err != nil:
		return &rpcError{Code: codeAuthRequired, Message: fmt.Sprintf("authentication required: %v", err), Data: map[string]string{"methodId": string(p.MethodId)}}
	}
	return a.w.result(m.ID, sdk.AuthenticateResponse{})
}

// logout is the schema's logout: the stored credentials of every method
// initialize listed are forgotten, so new sessions (and prompts) of
// those providers need authentication again, unless the environment
// gopi was started with has their key.
func (a *conn) logout(m *message) error {
	if len(m.Params) == 0 || string(m.Params) == "null" {
		m.Params = []byte("{}") // every field is optional
	}
	var p sdk.LogoutRequest
	if err := decodeParams(m, &p); err != nil {
		return err
	}
	if a.opts.Auth == nil {
		return errorf(codeMethodNotFound, "method not found: logout: gopi advertised no authentication methods")
	}
	if _, err := a.opts.Auth.Logout(); err != nil {
		return errorf(codeInternalError, "logout: %v", err)
	}
	return a.w.result(m.ID, sdk.LogoutResponse{})
}

// needsAuth is the auth-required error when rt's model has no
// credentials, else nil.
func (a *conn) needsAuth(ctx context.Context, rt Runtime) error {
	if a.opts.Auth == nil {
		return nil
	}
	st, err := rt.GetState(ctx)
	if err != nil || st.Model == nil {
		return nil // nothing known to check: the prompt says what fails
	}
	if err := a.opts.Auth.Missing(st.Model.Provider, st.Model.ID); err != nil {
		return &rpcError{Code: codeAuthRequired, Message: fmt.Sprintf("authentication required: %v", err), Data: map[string]string{"provider": st.Model.Provider, "model": st.Model.ID}}
	}
	return nil
}

// discard closes the runtime of a session that was refused.
func (a *conn) discard(rt Runtime) {
	ctx, cancel := context.WithTimeout(context.Background(), closeWait)
	defer cancel()
	if err := rt.Close(ctx); err != nil {
		a.opts.Report(fmt.Errorf("acp: closing a refused session: %w", err))
	}
}
