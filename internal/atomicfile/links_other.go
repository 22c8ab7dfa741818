//go:build !unix

package atomicfile

import "io/fs"

const nonBlock = 0

// links is 1 where the link count is not known.
func links(fs.FileInfo) uint64 { return 1 }

// noFollow is 0 where opens cannot refuse links: [Pin] compares the file
// it opened with the pinned one all the same.
const noFollow = 0
