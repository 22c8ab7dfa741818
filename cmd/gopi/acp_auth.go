package main

import (
	"fmt"
	"strings"

	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/models"
	"github.com/gopi-dev/gopi/lspbridge/acp"
)

// acpAuth tells an ACP client where gopi's credentials come from: a
// provider's environment variable or its auth.json entry. There is no
// sign-in: authenticate reads auth.json again and says whether the key is
// there.
type acpAuth struct {
	registry *models.Registry
}

// acpAuthFamilies are the providers initialize lists a method for.
var acpAuthFamilies = []struct{ provider, name string }{
	{"anthropic", "Anthropic API key"},
	{"openai", "OpenAI API key"},
	{"google", "Google Gemini API key"},
}

func (a acpAuth) Methods() []acp.AuthMethod {
	out := make([]acp.AuthMethod, 0, len(acpAuthFamilies))
	for _, f := range acpAuthFamilies {
		out = append(out, acp.AuthMethod{ID: f.provider, Name: f.name, Description: a.howTo(f.provider)})
	}
	return out
}

func (a acpAuth) Check(id string) error {
	known := false
	for _, f := range acpAuthFamilies {
		known = known || f.provider == id
	}
	if !known {
		return fmt.Errorf("%w: %q", acp.ErrUnknownAuthMethod, id)
	}
	if err := a.registry.ReloadAuth(); err != nil {
		return fmt.Errorf("gopi cannot read its credentials: %w", err)
	}
	// A provider's own models share its credentials: any stands for it.
	if !a.registry.HasAuth(&llm.Model{Provider: id}) {
		return fmt.Errorf("gopi has no API key for %s: %s, then authenticate again", id, a.howTo(id))
	}
	return nil
}

func (a acpAuth) Missing(provider, id string) error {
	m, ok := a.registry.Find(provider, id)
	if !ok || a.registry.HasAuth(&m) {
		return nil // a model gopi does not know fails on its own
	}
	// A key stored in auth.json since counts without authenticate.
	if a.registry.ReloadAuth() == nil && a.registry.HasAuth(&m) {
		return nil
	}
	return fmt.Errorf("gopi has no API key for %s (model %s/%s): %s, then authenticate", provider, provider, id, a.howTo(provider))
}

// Logout forgets the auth.json keys of the providers the methods cover:
// the keys their descriptions have the user store. The environment's
// stay (the editor gives them), as do other providers' entries and pi's
// own sign-ins.
func (a acpAuth) Logout() ([]string, error) {
	providers := make([]string, 0, len(acpAuthFamilies))
	for _, f := range acpAuthFamilies {
		providers = append(providers, f.provider)
	}
	return a.registry.ForgetAPIKeys(providers...)
}

// howTo says how to give provider's key to gopi.
func (a acpAuth) howTo(provider string) string {
	entry := fmt.Sprintf(`store {"%s": {"type": "api_key", "key": "..."}} in %s`, provider, a.registry.AuthPath())
	env := models.EnvKeys(provider)
	if len(env) == 0 {
		return entry
	}
	return fmt.Sprintf("set %s in the environment the editor starts gopi with, or %s", strings.Join(env, " or "), entry)
}
