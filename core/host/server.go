package host

import "github.com/gopi-dev/gopi/core/api"

var _ api.Server = (*Host)(nil)
