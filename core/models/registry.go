package models

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gopi-dev/gopi/core/llm"
)

// EnvAgentDir names the environment variable that moves the agent dir.
const EnvAgentDir = "PI_CODING_AGENT_DIR"

// defaultCommandTimeout bounds a "!command" config value, as pi does.
const defaultCommandTimeout = 10 * time.Second

// AgentDir returns the agent config dir: $PI_CODING_AGENT_DIR (with a
// leading ~ expanded) or ~/.pi/agent. A nil getenv reads the process
// environment.
func AgentDir(getenv func(string) string) string {
	if getenv == nil {
		getenv = os.Getenv
	}
	if dir := getenv(EnvAgentDir); dir != "" {
		return expandTilde(dir, getenv)
	}
	return filepath.Join(homeDir(getenv), ".pi", "agent")
}

func homeDir(getenv func(string) string) string {
	if h := getenv("HOME"); h != "" {
		return h
	}
	h, _ := os.UserHomeDir()
	return h
}

func expandTilde(p string, getenv func(string) string) string {
	if p == "~" {
		return homeDir(getenv)
	}
	if strings.HasPrefix(p, "~/") {
		return filepath.Join(homeDir(getenv), p[2:])
	}
	return p
}

// Options configures [Load].
type Options struct {
	// AgentDir holds models.json and auth.json; empty means [AgentDir].
	AgentDir string
	// Getenv reads environment variables (API keys, env-var names in
	// config values, PI_CODING_AGENT_DIR); nil means os.Getenv.
	Getenv func(string) string
	// Builtin adds built-in models after the embedded catalog, such as the
	// faux provider's. Models whose API is [llm.APIFaux] need no key.
	Builtin []llm.Model
	// APIKeyOverrides maps a provider to a key that beats every other
	// source (pi's --api-key). See also [Registry.SetAPIKeyOverride].
	APIKeyOverrides map[string]string
	// CommandTimeout bounds a "!command" config value; zero means 10s.
	CommandTimeout time.Duration
}

// Registry holds every known model and resolves their credentials. Its
// model list is fixed at [Load] except for the providers extensions
// register ([Registry.RegisterProvider]); it is safe for concurrent use.
type Registry struct {
	getenv     func(string) string
	agentDir   string
	cmdTimeout time.Duration
	loadErr    error

	builtins     []llm.Model   // the catalog and Options.Builtin
	file         *modelsConfig // models.json; nil when absent or broken
	builtinProvs map[string]bool

	// cur is what the lookups read: rebuilt whole, never changed in place.
	cur     atomic.Pointer[view]
	dynMu   sync.Mutex // serialises changes to dynamic and the rebuild
	dynamic []dynamicProvider
	rev     atomic.Uint64 // bumped by every change to dynamic

	mu          sync.Mutex // guards runtimeKeys, cmdCache and auth
	runtimeKeys map[string]string
	cmdCache    map[string]string
	auth        map[string]credential // auth.json, as last read
}

type modelKey struct{ provider, id string }

// Load builds the registry from the embedded catalog, opts.Builtin and the
// agent dir's models.json and auth.json. It always returns a usable
// registry: when models.json or auth.json is broken, the error says how
// (pi's wording) and the registry carries on without that file, so the
// built-in catalog keeps working.
func Load(opts Options) (*Registry, error) {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	dir := opts.AgentDir
	if dir == "" {
		dir = AgentDir(getenv)
	}
	r := &Registry{
		getenv:       getenv,
		agentDir:     dir,
		cmdTimeout:   opts.CommandTimeout,
		builtinProvs: map[string]bool{},
		runtimeKeys:  map[string]string{},
		cmdCache:     map[string]string{},
	}
	if r.cmdTimeout <= 0 {
		r.cmdTimeout = defaultCommandTimeout
	}
	for p, k := range opts.APIKeyOverrides {
		if k != "" {
			r.runtimeKeys[p] = k
		}
	}

	builtins, catErr := loadCatalog()
	builtins = append(builtins, opts.Builtin...)
	for _, m := range builtins {
		r.builtinProvs[m.Provider] = true
	}

	cfg, cfgErr := readModelsFile(r.ModelsPath(), builtins, r.builtinProvs)
	r.builtins, r.file = builtins, cfg
	r.cur.Store(buildView(builtins, nil, cfg))

	auth, authErr := readAuthFile(r.AuthPath())
	r.auth = auth

	r.loadErr = errors.Join(catErr, cfgErr, authErr)
	return r, r.loadErr
}

// LoadError is the error [Load] returned, if any.
func (r *Registry) LoadError() error { return r.loadErr }

// AgentDir is the directory models.json and auth.json were read from.
func (r *Registry) AgentDir() string { return r.agentDir }

// ModelsPath is the models.json the registry reads.
func (r *Registry) ModelsPath() string { return filepath.Join(r.agentDir, "models.json") }

// AuthPath is the auth.json the registry reads.
func (r *Registry) AuthPath() string { return filepath.Join(r.agentDir, "auth.json") }

// All returns every model: built-in (with models.json overrides applied),
// then custom ones, in a fresh slice.
func (r *Registry) All() []llm.Model {
	return slices.Clone(r.cur.Load().models)
}

// Available returns the models that have credentials configured, in the
// order of [Registry.All]. The keyless faux models are among them only
// when no real provider has credentials: with a real key, listing or
// cycling must not move a session onto the scripted model (choosing it by
// name, with --model or set_model, still works). It runs no commands.
func (r *Registry) Available() []llm.Model {
	all := r.withAuth()
	real := slices.DeleteFunc(slices.Clone(all), func(m llm.Model) bool { return m.API == llm.APIFaux })
	if len(real) > 0 {
		return real
	}
	return all
}

// withAuth is every model with credentials, faux ones included.
func (r *Registry) withAuth() []llm.Model {
	var out []llm.Model
	models := r.cur.Load().models
	for i := range models {
		if r.HasAuth(&models[i]) {
			out = append(out, models[i])
		}
	}
	return out
}

// Find looks a model up by provider and exact id.
func (r *Registry) Find(provider, id string) (llm.Model, bool) {
	for _, m := range r.cur.Load().models {
		if m.Provider == provider && m.ID == id {
			return m, true
		}
	}
	return llm.Model{}, false
}

// FindAvailable is [Registry.Find] restricted to models with credentials,
// failing with pi's "Model not found: provider/id" (wrapping
// [ErrModelNotFound]), as the set_model command does.
func (r *Registry) FindAvailable(provider, id string) (llm.Model, error) {
	if m, ok := r.Find(provider, id); ok && r.HasAuth(&m) {
		return m, nil
	}
	return llm.Model{}, NotFound(provider, id)
}

// NotFound is pi's "Model not found: provider/id", wrapping
// [ErrModelNotFound].
func NotFound(provider, id string) error {
	return &resolveError{fmt.Sprintf("Model not found: %s/%s", provider, id), ErrModelNotFound}
}

// Providers lists the providers of all models, in first-seen order.
func (r *Registry) Providers() []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range r.cur.Load().models {
		if !seen[m.Provider] {
			seen[m.Provider] = true
			out = append(out, m.Provider)
		}
	}
	return out
}
