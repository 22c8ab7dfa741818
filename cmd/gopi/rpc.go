package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/gopi-dev/gopi/rpc"
)

// runRPC serves pi's RPC protocol on stdin/stdout until stdin ends or a
// signal cancels ctx; the caller then closes the host, which aborts any
// run and leaves the session file complete.
func (ap *app) runRPC(ctx context.Context, a *args, stdin io.Reader, stdout io.Writer) error {
	type detected struct {
		d   rpc.Detection
		err error
	}
	// Detection blocks until the client writes; a signal must still end
	// gopi before that.
	ch := make(chan detected, 1)
	go func() {
		d, err := rpc.Detect(stdin)
		ch <- detected{d, err}
	}()
	var det rpc.Detection
	select {
	case <-ctx.Done():
		return nil
	case r := <-ch:
		if errors.Is(r.err, io.EOF) {
			return nil // the client left without a word
		}
		if r.err != nil {
			return fmt.Errorf("reading stdin: %w", r.err)
		}
		det = r.d
	}
	if a.mode == "jsonrpc" || det.Dialect == rpc.DialectJSONRPC {
		return errors.New("the JSON-RPC 2.0 dialect is not available in this version of gopi yet; send pi's native JSONL commands")
	}
	w := rpc.NewWriter(stdout, rpc.FramingNewline)
	conn := rpc.NewConn(w, func(err error) { fmt.Fprintln(ap.stderr, "gopi:", err) })
	ap.host.Bind(conn)
	defer ap.host.Bind(nil)
	unsubscribe := ap.host.Subscribe(conn.Emit)
	defer unsubscribe()
	err := conn.Serve(ctx, rpc.NewLineReader(det.Reader, 0), ap.host)
	// Abort what still runs while the client can still hear about it.
	ap.close()
	return err
}
