package lspbridge

import "github.com/gopi-dev/gopi/internal/rpccodec"

// marshal is json.Marshal without HTML escaping, like JavaScript's
// JSON.stringify and the native dialect's writer.
func marshal(v any) ([]byte, error) { return rpccodec.Std{}.Marshal(v) }
