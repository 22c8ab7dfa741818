package ext

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.lsp.dev/jsonrpc2"

	"github.com/gopi-dev/gopi/internal/rpccodec"
)

// notedPeer records the notifications gopi receives.
type notedPeer struct {
	mu      sync.Mutex
	methods []string
}

func (p *notedPeer) Request(context.Context, Method, json.RawMessage) (any, error) { return nil, nil }

func (p *notedPeer) Notification(method Method, _ json.RawMessage) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.methods = append(p.methods, string(method))
}

// readOnly is a stream end that reads r and discards what is written.
type readOnly struct{ r io.Reader }

func (s readOnly) Read(b []byte) (int, error) { return s.r.Read(b) }
func (readOnly) Write(b []byte) (int, error)  { return len(b), nil }
func (readOnly) Close() error                 { return nil }

// A request handed to the handler borrows jsonrpc2's read buffer, which
// the read loop reuses for the next message. A notification the ordered
// queue delivers later must not read its method from there: a
// sendUserMessage used to be lost now and then under load.
func TestQueuedNotificationOwnsWhatItDelivers(t *testing.T) {
	peer := &notedPeer{}
	n := &NodeHost{peer: peer}
	p := &hostProc{queue: newOrderedQueue()}
	r, w := io.Pipe()
	conn := jsonrpc2.NewConn(jsonrpc2.NewNDJSONStream(readOnly{r}), jsonrpc2.WithCodec(rpccodec.Std{}))
	conn.Go(context.Background(), n.handler(p))
	t.Cleanup(func() {
		_ = w.Close()
		_ = conn.Close()
	})

	// Queued notifications, each followed by one the read loop handles
	// inline, all read before the queue delivers any of them.
	const count = 200
	var lines strings.Builder
	for i := range count {
		fmt.Fprintf(&lines, `{"jsonrpc":"2.0","method":"sendUserMessage","params":{"n":%d}}`+"\n", i)
		fmt.Fprintf(&lines, `{"jsonrpc":"2.0","method":"ui/XXXXXXXXXXXXX","params":{"n":%d}}`+"\n", i)
	}
	go func() { _, _ = io.WriteString(w, lines.String()) }()
	require.Eventually(t, func() bool { return p.queue.count() == count }, 10*time.Second, 5*time.Millisecond)

	p.queue.close()
	p.queue.run(n.deliver)
	peer.mu.Lock()
	defer peer.mu.Unlock()
	queued := 0
	for _, m := range peer.methods {
		if m == "sendUserMessage" {
			queued++
		}
	}
	assert.Equal(t, count, queued, "every queued notification keeps its method")
}
