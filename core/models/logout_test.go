package models

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ForgetAPIKeys removes the named providers' API keys from auth.json and
// nothing else: another provider's key and a pi sign-in stay, in their
// order, and a key from the environment still counts.
func TestForgetAPIKeys(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "auth.json")
	require.NoError(t, os.WriteFile(path, []byte(`{
  "mistral": {"type": "api_key", "key": "sk-m"},
  "anthropic": {"type": "api_key", "key": "sk-a"},
  "google": {"type": "oauth", "refresh": "r", "access": "a", "expires": 1},
  "openai": {"type": "api_key", "key": "sk-o"}
}`), 0o644))
	r, err := Load(Options{AgentDir: dir, Getenv: env("OPENAI_API_KEY", "sk-env")})
	require.NoError(t, err)
	claude, _ := r.Find("anthropic", "claude-sonnet-4-5")
	gpt := find(t, r, "openai", "gpt-4o")
	require.True(t, r.HasAuth(&claude))

	forgot, err := r.ForgetAPIKeys("anthropic", "openai", "google")
	require.NoError(t, err)
	assert.Equal(t, []string{"anthropic", "openai"}, forgot)
	assert.False(t, r.HasAuth(&claude), "the registry read the file again")
	assert.True(t, r.HasAuth(&gpt), "the environment's key is not auth.json's")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.JSONEq(t, `{"mistral": {"type": "api_key", "key": "sk-m"}, "google": {"type": "oauth", "refresh": "r", "access": "a", "expires": 1}}`, string(data))
	assert.Less(t, strings.Index(string(data), "mistral"), strings.Index(string(data), "google"), "the entries kept stay in their order")
	info, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), info.Mode().Perm(), "the file keeps its mode")
	assert.NoDirExists(t, path+".lock", "pi's lock is released")

	forgot, err = r.ForgetAPIKeys("anthropic")
	require.NoError(t, err)
	assert.Empty(t, forgot, "nothing left to forget")

	// No file: nothing to do. A broken file: an error, and it stays.
	none, err := Load(Options{AgentDir: t.TempDir(), Getenv: env()})
	require.NoError(t, err)
	forgot, err = none.ForgetAPIKeys("anthropic")
	require.NoError(t, err)
	assert.Empty(t, forgot)
	require.NoError(t, os.WriteFile(path, []byte(`["anthropic"]`), 0o600))
	_, err = r.ForgetAPIKeys("anthropic")
	assert.Error(t, err)
	data, _ = os.ReadFile(path)
	assert.Equal(t, `["anthropic"]`, string(data))
}
