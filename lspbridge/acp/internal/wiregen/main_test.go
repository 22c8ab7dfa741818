package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The checked-in wire_gen.go is what the generator writes from the
// vendored schema: run `go generate ./lspbridge/acp` after changing
// either.
func TestWireGenIsCurrent(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(schemaFile)))
	require.NoError(t, err)
	want, err := render(raw)
	require.NoError(t, err)
	got, err := os.ReadFile(filepath.Join("..", "..", out))
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got), "lspbridge/acp/wire_gen.go is stale: run go generate ./lspbridge/acp")
}

// A definition the schema does not have is an error, not an empty type.
func TestUnknownDefinition(t *testing.T) {
	saved := specs
	defer func() { specs = saved }()
	specs = []spec{{Name: "x", Def: "NoSuchThing"}}
	_, err := render([]byte(`{"$defs":{}}`))
	assert.ErrorContains(t, err, "no NoSuchThing")
}
