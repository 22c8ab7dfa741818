package tools

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// overlayFS is an FS over the local disk, as an editor's buffers are.
type overlayFS struct{ LocalFS }

func (overlayFS) OnLocalDisk() bool { return true }

// remoteFS is an FS elsewhere.
type remoteFS struct{ LocalFS }

// grep and find search with rg and fd on the local disk, or on an FS that
// says its files are the local disk's.
func TestLocalFSSeesOverlays(t *testing.T) {
	assert.True(t, newConfig(nil).localFS())
	assert.True(t, newConfig([]Option{WithFS(overlayFS{})}).localFS())
	assert.False(t, newConfig([]Option{WithFS(remoteFS{})}).localFS())
}
