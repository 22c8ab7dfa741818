package checkpoint

import "github.com/aymanbagabas/go-udiff"

// unified is a unified diff of a file from before to after, "" when they
// are equal.
func unified(name, before, after string) string {
	return udiff.Unified("a/"+name, "b/"+name, before, after)
}
